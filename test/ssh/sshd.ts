import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import type { SshTarget } from '../../shared/transport'
import { TEST_RUN_ENV } from '../leak-check'
import { freePort, removeDir, tempDir, waitUntil } from '../helpers'

/**
 * A real OpenSSH server (Debian's openssh-server) on 127.0.0.1 for the tests:
 * its own host key, configuration and authorised key in a temporary folder,
 * no system file touched (as root, sshd wants its privilege-separation folder
 * /run/sshd, made when missing, as the Debian package does). Clients reach it
 * through a small TCP relay the test controls: `freeze()` stops the current
 * connections passing anything (the client's keep-alive gives up, then the
 * server's), `drop()` cuts them; new connections go through either way.
 * The remote side is this machine, as the same user: what the Host does
 * "there" is seen in /proc here, and sshd passes the test run's mark on
 * (`SetEnv`) so the suite's leak check sees remote processes too.
 */

export interface TestSshd {
  /** Where clients connect (the relay). */
  port: number
  /** sshd's own port, for a connection without the relay (its key is in `knownHosts` too). */
  sshdPort: number
  /** The key sshd accepts. */
  identityFile: string
  /** A key it does not. */
  otherKey: string
  /** known_hosts files: with the server's key, with another key for the same host, and empty. */
  knownHosts: string
  wrongKnownHosts: string
  emptyKnownHosts: string
  /** The host's temporary folder (its commands' TMPDIR), this server's own: what the Host leaves "there" in it is this test's. */
  remoteTmp: string
  /** Every command line sshd was asked to run, in order: what ran "there". */
  commands(): Promise<string[]>
  /** The target of an agent on this server (the right key and known_hosts unless overridden). */
  target(overrides?: Partial<SshTarget>): SshTarget
  freeze(): void
  drop(): void
  /**
   * Commands named `switchboard-<what>` (null: none) keep their session open two seconds after they end: their answer
   * is not complete until then, whatever the Host does meanwhile (closes the connection under them).
   */
  lingerAfter(what: string | null): void
  close(): Promise<void>
}

const SSHD = ['/usr/sbin/sshd', '/usr/local/sbin/sshd', '/usr/bin/sshd'].find((p) => existsSync(p)) ?? 'sshd'

export async function startSshd(): Promise<TestSshd> {
  const dir = await tempDir('sshd')
  const key = (name: string): string => {
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', join(dir, name)])
    return join(dir, name)
  }
  const hostKey = key('host_key')
  const identityFile = key('client_key')
  const otherKey = key('other_key')
  await writeFile(join(dir, 'authorized_keys'), await readFile(`${identityFile}.pub`))
  const sshdPort = await freePort()
  const run = process.env[TEST_RUN_ENV]
  // Its own temporary folder: another test or suite running at once, or a run killed earlier, leaves nothing in it.
  const remoteTmp = join(dir, 'remote-tmp')
  mkdirSync(remoteTmp, { mode: 0o700 })
  // Each command is written down, then run as sshd would have (the same process: session leader, no terminal; one
  // named by lingerAfter as a child, its session held open two seconds after it ends).
  const commandsFile = join(dir, 'commands.log')
  const runCommand = join(dir, 'run-command')
  const lingerFile = join(dir, 'linger')
  await writeFile(
    runCommand,
    [
      '#!/bin/sh',
      `printf '%s\\n' "$SSH_ORIGINAL_COMMAND" >> '${commandsFile}'`,
      `l=$(cat '${lingerFile}' 2>/dev/null)`,
      `if [ -n "$l" ] && [ "\${SSH_ORIGINAL_COMMAND##* }" = "switchboard-$l" ]; then /bin/sh -c "$SSH_ORIGINAL_COMMAND"; c=$?; sleep 2; exit $c; fi`,
      'exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"',
      ''
    ].join('\n'),
    { mode: 0o755 }
  )
  await writeFile(
    join(dir, 'sshd_config'),
    [
      `Port ${sshdPort}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      // The server notices a frozen connection too, and ends the session (its commands see their stdin close).
      'ClientAliveInterval 1',
      'ClientAliveCountMax 3',
      `ForceCommand ${runCommand}`,
      'LogLevel VERBOSE',
      `SetEnv TMPDIR=${remoteTmp}${run ? ` ${TEST_RUN_ENV}=${run}` : ''}`
    ].join('\n') + '\n'
  )
  // sshd run by root insists on its privilege-separation folder (Debian's service makes it at boot).
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 })
  const logFile = join(dir, 'sshd.log')
  const sshd: ChildProcess = spawn(SSHD, ['-D', '-f', join(dir, 'sshd_config'), '-E', logFile], { stdio: ['ignore', 'ignore', 'pipe'] })
  let failed = ''
  sshd.stderr?.on('data', (chunk: Buffer) => (failed += chunk.toString()))
  sshd.once('error', (error) => (failed += error.message))
  await waitUntil(`sshd listening on ${sshdPort}${failed ? `: ${failed}` : ''}`, async () => {
    if (sshd.exitCode !== null || failed) throw new Error(`sshd did not start: ${failed}`)
    return canConnect(sshdPort)
  })

  const pairs: { client: Socket; server: Socket }[] = []
  const frozen: Socket[] = []
  const relay: Server = createServer((client) => {
    const server = createConnection({ host: '127.0.0.1', port: sshdPort })
    client.pipe(server).pipe(client)
    client.on('error', () => server.destroy())
    server.on('error', () => client.destroy())
    client.on('close', () => server.destroy())
    server.on('close', () => client.destroy())
    pairs.push({ client, server })
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  const port = (relay.address() as { port: number }).port

  const hostPub = (await readFile(`${hostKey}.pub`, 'utf8')).split(' ').slice(0, 2).join(' ')
  const otherPub = (await readFile(`${otherKey}.pub`, 'utf8')).split(' ').slice(0, 2).join(' ')
  const knownHosts = join(dir, 'known_hosts')
  const wrongKnownHosts = join(dir, 'wrong_known_hosts')
  const emptyKnownHosts = join(dir, 'empty_known_hosts')
  await writeFile(knownHosts, `[127.0.0.1]:${port} ${hostPub}\n[127.0.0.1]:${sshdPort} ${hostPub}\n`)
  await writeFile(wrongKnownHosts, `[127.0.0.1]:${port} ${otherPub}\n`)
  await writeFile(emptyKnownHosts, '')

  return {
    port,
    sshdPort,
    remoteTmp,
    identityFile,
    otherKey,
    knownHosts,
    wrongKnownHosts,
    emptyKnownHosts,
    commands: async () => (await readFile(commandsFile, 'utf8').catch(() => '')).split('\n').filter(Boolean),
    target: (overrides = {}) => ({ destination: '127.0.0.1', port, identityFile, knownHostsFile: knownHosts, ...overrides }),
    freeze: () => {
      for (const { client, server } of pairs.splice(0)) {
        client.unpipe(server)
        server.unpipe(client)
        client.pause()
        server.pause()
        // Kept, to be cut at close: a frozen connection neither passes data nor ends.
        frozen.push(client, server)
      }
    },
    drop: () => {
      for (const { client, server } of pairs.splice(0)) {
        client.destroy()
        server.destroy()
      }
    },
    lingerAfter: (what) => writeFileSync(lingerFile, what ?? ''),
    close: async () => {
      for (const socket of frozen.splice(0)) socket.destroy()
      for (const { client, server } of pairs.splice(0)) {
        client.destroy()
        server.destroy()
      }
      await new Promise<void>((resolve) => relay.close(() => resolve()))
      sshd.kill('SIGTERM')
      if (sshd.exitCode === null) await new Promise((resolve) => sshd.once('exit', resolve))
      await removeDir(dir)
    }
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
