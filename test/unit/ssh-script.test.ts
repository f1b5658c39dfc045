import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { SshEndpoint } from '../../electron/host/ssh/endpoint'
import { DEFAULT_SSH_SETTINGS, describeSshFailure, forgetHostKeyCommand } from '../../electron/host/ssh/options'
import { removeRemoteScratch } from '../../electron/host/ssh/remote-files'
import { lifelineScript } from '../../electron/host/ssh/script'
import { freePort, isProcessRunning, waitUntil } from '../helpers'

/**
 * What runs on an SSH agent's host, run here by a local sh the way sshd's
 * would (the script first on stdin, in a session of its own): values of
 * every shape arrive whole, names sh cannot set are refused, and closing
 * stdin ends the command and what it started. And ssh's failures in words.
 */

function runScript(script: string): { child: ChildProcessWithoutNullStreams; output: Promise<string>; sofar: () => string } {
  // detached: a session and process group of its own, as sshd gives a command (the script signals its group).
  const child = spawn('sh', ['-c', 'IFS= read -r l && eval "$l"', 'switchboard-test'], { stdio: 'pipe', detached: true })
  child.stdin.write(`${script}\n`)
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  return { child, output: new Promise((resolve) => child.on('close', () => resolve(out))), sofar: () => out }
}

describe('the lifeline script', () => {
  it('gives the command its variables exactly, whatever they hold', async () => {
    const value = `it's "quoted" $HOME \`date\` \\back\\slash\nsecond line\n`
    const { child, output } = runScript(
      lifelineScript({ env: { SB_VALUE: value }, command: { argv: ['printenv', 'SB_VALUE'] }, mark: 'sb.test', stdin: 'none' })
    )
    // The command ends by itself (and the script with it); stdin closed first would end it before it printed.
    expect(await output).toBe(`${value}\n`)
    child.stdin.end()
  })

  it('refuses a variable name sh would read as code', () => {
    expect(() => lifelineScript({ env: { 'A;rm -rf': 'x' }, command: { shell: 'true' }, mark: 'sb.test', stdin: 'none' })).toThrow(
      /not a variable name sh can set/
    )
  })

  it('ends the command and what it started when its stdin closes', async () => {
    const { child, output, sofar } = runScript(
      lifelineScript({ env: {}, command: { shell: 'sleep 600 & echo $!; sleep 600' }, mark: 'sb.test', stdin: 'none' })
    )
    const pid = Number(await waitUntil('the background pid', () => /^\d+\n/.exec(sofar())?.[0]))
    expect(isProcessRunning(pid)).toBe(true)
    child.stdin.end()
    await output
    await waitUntil('the background sleep ended', () => !isProcessRunning(pid))
  })
})

describe('ssh failures', () => {
  const target = { destination: 'me@devbox', knownHostsFile: '/keys/known_hosts' }
  it("give the command that removes a changed key: the host without user@, [host]:port off port 22, the agent's own file", () => {
    expect(forgetHostKeyCommand(target)).toBe("ssh-keygen -f '/keys/known_hosts' -R 'devbox'")
    expect(forgetHostKeyCommand({ destination: 'me@devbox', port: 22 })).toBe("ssh-keygen -R 'devbox'")
    expect(forgetHostKeyCommand({ destination: 'me@10.0.0.5', port: 2222 })).toBe("ssh-keygen -R '[10.0.0.5]:2222'")
    expect(forgetHostKeyCommand({ destination: 'devbox', port: 2222, knownHostsFile: "/o'brien/known hosts" })).toBe(
      "ssh-keygen -f '/o'\\''brien/known hosts' -R '[devbox]:2222'"
    )
  })
  it('say what happened and what to do', () => {
    expect(describeSshFailure('WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!\nHost key verification failed.\n', target)).toMatch(
      /^the host key me@devbox sent is not the one \/keys\/known_hosts has for it \(it changed\)/
    )
    expect(
      describeSshFailure('No ED25519 host key is known for devbox and you have requested strict checking.\nHost key verification failed.', target)
    ).toMatch(/^me@devbox is not a known host: its key is not in \/keys\/known_hosts\. Connect once with ssh in a terminal/)
    expect(describeSshFailure('me@devbox: Permission denied (publickey).', target)).toMatch(
      /^me@devbox refused the key \(Permission denied \(publickey\)\)/
    )
    expect(describeSshFailure('Timeout, server devbox not responding.', target)).toBe(
      'me@devbox stopped answering (no reply to the keep-alive messages)'
    )
    expect(describeSshFailure('ssh: connect to host devbox port 22: Connection refused', target)).toMatch(
      /^nothing is listening for SSH at me@devbox/
    )
    expect(describeSshFailure('ssh: Could not resolve hostname devbox: Name or service not known', target)).toMatch(/cannot be resolved/)
    expect(describeSshFailure('the agent wrote this', target)).toBeNull()
  })
  it("a capability check's scratch folder that cannot be removed from the host: said, with the command that removes it", async () => {
    // Nothing listens on the port: ssh fails at once, as with a host gone while the check ran.
    const port = await freePort()
    const endpoint = new SshEndpoint({ destination: '127.0.0.1', port }, { settings: DEFAULT_SSH_SETTINGS, env: { PATH: process.env.PATH ?? '' } })
    await expect(removeRemoteScratch(endpoint, '/tmp/switchboard-check-Ab12Cd')).rejects.toThrow(
      /^The scratch folder \/tmp\/switchboard-check-Ab12Cd could not be removed from 127\.0\.0\.1:\d+ \(Could not reach .*nothing is listening .*\): remove it there with rm -rf -- '\/tmp\/switchboard-check-Ab12Cd'$/
    )
  })
})
