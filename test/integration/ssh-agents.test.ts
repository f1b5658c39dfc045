import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import type { RequestParams } from '../../shared/contract'
import type { SshTarget } from '../../shared/domain'
import { scriptedAgentCommand } from '../agent/spawn'
import { confirmEverything, entriesOf, fold, processesWithEnv, removeDir, tempDir, waitUntil } from '../helpers'
import { startSshd, type TestSshd } from '../ssh/sshd'

/**
 * Agents over SSH: the scripted agent started on the "remote" side of a real
 * sshd on 127.0.0.1 (this machine, reached only through ssh), its files and
 * terminals answered there, its connection cut and resumed, host keys and
 * keys refused with a sentence, nothing left running, secrets kept off
 * command lines. One sshd for the file.
 */

let sshd: TestSshd
let root: string
let projectDir: string
let stateDir: string
const hosts: Host[] = []

beforeAll(async () => {
  sshd = await startSshd()
})

afterAll(async () => {
  await sshd?.close()
})

beforeEach(async () => {
  root = await tempDir('ssh')
  projectDir = join(root, 'project')
  stateDir = join(root, 'agent-state')
  await mkdir(projectDir, { recursive: true })
})

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()))
  await removeDir(root)
})

async function startHost(): Promise<Host> {
  const host = await Host.open({
    dataDir: join(root, 'data'),
    version: 'test',
    presets: [],
    initializeTimeoutMs: 30_000,
    confirmCommand: confirmEverything,
    reconnectDelaysMs: [200, 500, 1000, 2000],
    // A frozen connection is noticed in about two seconds.
    ssh: { keepAliveSeconds: 1, keepAliveCount: 2 }
  })
  hosts.push(host)
  return host
}

/** The scripted agent on the "host": its command, a tag to find its processes by, and a secret. */
function sshAgent(target: SshTarget, tag: string, extra: Partial<RequestParams<'agents.add'>> = {}): RequestParams<'agents.add'> {
  const { command, args } = scriptedAgentCommand()
  return {
    name: 'Over SSH',
    command,
    args,
    env: { SCRIPTED_AGENT_STATE_DIR: stateDir, SB_SSH_TEST: tag },
    secretEnv: {},
    ssh: target,
    ...extra
  }
}

function lastMessage(records: Parameters<typeof fold>[0]): string {
  return (entriesOf(fold(records), 'assistant').at(-1) as { text: string } | undefined)?.text ?? ''
}

describe('an agent over SSH', () => {
  it('runs a whole session on the host: streamed reply, files read and written there, a terminal there, its secret only in its environment', async () => {
    const tag = randomUUID()
    const secret = `s3cret-${randomUUID()}`
    const host = await startHost()
    const agent = await host.request('agents.add', sshAgent(sshd.target(), tag, { secretEnv: { SB_TOKEN: secret } }))
    expect(agent.ssh).toEqual(sshd.target())
    const project = await host.request('projects.add', { cwd: projectDir, agentId: agent.id })
    expect(project.sshHost).toBe(`127.0.0.1:${sshd.port}`)

    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await writeFile(join(projectDir, 'notes.txt'), 'one\ntwo\nthree')
    const script = [
      '/stream 3',
      `/read ${join(projectDir, 'notes.txt')}`,
      `/write ${join(projectDir, 'deep', 'out.txt')} written-over-ssh`,
      '/terminal echo "pwd=$(pwd) conn=${SSH_CONNECTION:+yes}"',
      '/env SB_TOKEN',
      '/env SSH_CONNECTION'
    ].join('\n')
    // While the turn runs, the secret is on no command line of any process (here and "there": the same machine).
    const result = await host.request('sessions.prompt', { id: record.id, text: script })
    expect(result.stopReason).toBe('end_turn')
    const records = (await host.request('sessions.open', { id: record.id })).records
    const text = JSON.stringify(fold(records).entries)
    expect(text).toContain('chunk 1 chunk 2 chunk 3 ')
    expect(text).toContain('read 13 chars')
    expect(text).toContain('wrote 16 chars')
    expect(await readFile(join(projectDir, 'deep', 'out.txt'), 'utf8')).toBe('written-over-ssh')
    expect(text).toContain(`pwd=${projectDir} conn=yes`)
    expect(text).toContain(`SB_TOKEN=${secret}`)
    // The agent itself runs in an SSH session.
    expect(text).toMatch(/SSH_CONNECTION=127\.0\.0\.1 \d+ 127\.0\.0\.1 \d+/)

    // What sshd was asked to run: the agent, the file requests, the terminal; never the secret.
    const commands = await sshd.commands()
    for (const what of ['agent', 'resolve', 'read', 'write', 'terminal']) expect(commands.some((c) => c.endsWith(`switchboard-${what}`))).toBe(true)
    expect(commands.join('\n')).not.toContain(secret)
    expect(commandLinesWith(secret)).toEqual([])

    // Closing the Host leaves nothing running on the host.
    expect(processesWithEnv(`SB_SSH_TEST=${tag}`).length).toBeGreaterThan(0)
    await host.close()
    await waitUntil('the agent gone from the host', () => processesWithEnv(`SB_SSH_TEST=${tag}`).length === 0)
    const db = await readFile(join(root, 'data', 'db.json'), 'utf8')
    expect(db).not.toContain(secret)
  })
})

/** The command lines of every process here that hold `text`. */
function commandLinesWith(text: string): string[] {
  return processCommandLines().filter((line) => line.includes(text))
}

function processCommandLines(): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        return [readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ')]
      } catch {
        return []
      }
    })
}
