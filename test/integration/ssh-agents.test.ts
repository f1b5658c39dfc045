import { pathToFileURL } from 'node:url'
import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { link, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import type { RequestParams } from '../../shared/contract'
import type { SshTarget } from '../../shared/transport'
import { scriptedTransport, type ProcessTransportInput } from '../agent/spawn'
import {
  allowCommands,
  confirmEverything,
  sessionMethodsReceived,
  entriesOf,
  fold,
  processesWithEnv,
  removeDir,
  tempDir,
  waitUntil
} from '../helpers'
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
function sshAgent(
  target: SshTarget,
  tag: string,
  { name = 'Over SSH', ...extra }: { name?: string } & Partial<Omit<ProcessTransportInput, 'kind'>> = {}
): RequestParams<'agents.add'> {
  return { name, transport: { ...scriptedTransport({ SCRIPTED_AGENT_STATE_DIR: stateDir, SB_SSH_TEST: tag }, extra), kind: 'ssh', ...target } }
}

function lastMessage(records: Parameters<typeof fold>[0]): string {
  return (entriesOf(fold(records), 'assistant').at(-1) as { text: string } | undefined)?.text ?? ''
}

describe('an agent over SSH', () => {
  it('runs a whole session on the host: streamed reply, files read and written there, a terminal there, its secret only in its environment', async () => {
    const tag = randomUUID()
    const secret = `s3cret-${randomUUID()}`
    const host = await startHost()
    // Its command runs on the host once the user allows it.
    allowCommands(host)
    const agent = await host.request('agents.add', sshAgent(sshd.target(), tag, { secretEnv: { SB_TOKEN: secret } }))
    expect(agent.transport).toEqual(expect.objectContaining({ kind: 'ssh', ...sshd.target() }))
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
      '/env SSH_CONNECTION',
      // Processes the agent leaves running on the host, one tree in its group and one that left it (setsid).
      '/forkbomb 2 2'
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

    // @-mention completion lists the project's files on the host (.git skipped, as here).
    await mkdir(join(projectDir, '.git'))
    await writeFile(join(projectDir, '.git', 'out-of-sight'), '')
    const listed = await host.request('files.list', { projectId: project.id, query: 'out', limit: 10 })
    expect(listed.files.map((f) => f.relative)).toEqual(['deep/out.txt'])

    // What sshd was asked to run: the agent, the file requests, the terminal, the listing; never the secret.
    const commands = await sshd.commands()
    for (const what of ['agent', 'resolve', 'read', 'write', 'terminal', 'files'])
      expect(commands.some((c) => c.endsWith(`switchboard-${what}`))).toBe(true)
    expect(commands.join('\n')).not.toContain(secret)
    expect(commandLinesWith(secret)).toEqual([])

    // Inside the project only, resolved on the host: a path outside, and a link inside that leads out, are refused there.
    await symlink('/etc', join(projectDir, 'escape'))
    await host.request('sessions.prompt', { id: record.id, text: `/read /etc/hostname\n/read ${join(projectDir, 'escape', 'hostname')}` })
    const refused = fold((await host.request('sessions.open', { id: record.id })).records)
    const errors = entriesOf(refused, 'error').map((e) => (e as { message: string }).message)
    expect(errors).toHaveLength(2)
    for (const error of errors)
      expect(error).toMatch(/^The agent asked to read a path outside the project\. Refused: .* is outside the session's folder on 127\.0\.0\.1:\d+/)

    // Its sessions' folders are on this host: the agent cannot be moved to another under them.
    await expect(host.request('agents.update', { agentId: agent.id, ...sshAgent(sshd.target({ port: 1 }), tag) })).rejects.toThrow(
      /^Over SSH has 1 session in projects it could not work in once it runs on 127\.0\.0\.1:1: add another agent for that instead/
    )

    // Closing the Host leaves nothing running on the host: the agent, and what it started (the agent alone would leave those).
    expect(text).toContain('forked 10 processes')
    const forked = (await readFile(join(stateDir, 'forkbomb.pids'), 'utf8')).trim().split('\n').map(Number)
    expect(processesWithEnv(`SB_SSH_TEST=${tag}`)).toEqual(expect.arrayContaining(forked))
    await host.close()
    await waitUntil('the agent and what it started gone from the host', () => processesWithEnv(`SB_SSH_TEST=${tag}`).length === 0)
    const db = await readFile(join(root, 'data', 'db.json'), 'utf8')
    expect(db).not.toContain(secret)
  })
})

describe('a hard link on the host', () => {
  it('inside the project to a file outside is neither read nor written through; a write replaces the file, keeping its mode', async () => {
    const host = await startHost()
    const agent = await host.request('agents.add', sshAgent(sshd.target(), randomUUID()))
    const project = await host.request('projects.add', { cwd: projectDir, agentId: agent.id })
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    const outside = join(root, 'secret.txt')
    await writeFile(outside, 'SECRET-over-ssh')
    await link(outside, join(projectDir, 'linked.txt'))
    await writeFile(join(projectDir, 'plain.sh'), 'old', { mode: 0o751 })
    const { ino } = await stat(join(projectDir, 'plain.sh'))
    const linked = join(projectDir, 'linked.txt')
    await host.request('sessions.prompt', {
      id: record.id,
      text: `/read ${linked}\n/write ${linked} overwritten\n/write ${join(projectDir, 'plain.sh')} new`
    })
    const said = entriesOf(fold((await host.request('sessions.open', { id: record.id })).records), 'assistant').map(
      (e) => (e as { text: string }).text
    )
    expect(said.join('\n')).not.toContain('SECRET-over-ssh')
    const refusal = /Refused: '.*linked\.txt' has 2 hard links, so it may be a file outside the project under another name on 127\.0\.0\.1:\d+/
    expect(said.find((m) => m.startsWith('read failed:'))).toMatch(refusal)
    expect(said.find((m) => m.startsWith('write failed:'))).toMatch(refusal)
    expect(await readFile(outside, 'utf8')).toBe('SECRET-over-ssh')
    // A file with one name is written by replacement: a new file moved over it, with the old one's mode.
    expect(said).toContain('wrote 3 chars')
    expect(await readFile(join(projectDir, 'plain.sh'), 'utf8')).toBe('new')
    const after = await stat(join(projectDir, 'plain.sh'))
    expect(after.ino).not.toBe(ino)
    expect(after.mode & 0o777).toBe(0o751)
    expect((await readdir(projectDir)).sort()).toEqual(['linked.txt', 'plain.sh'])

    // Nor is it sent as an @-mention: the prompt is refused on the host's word, naming the file; a file with one name goes.
    const before = said.length
    await expect(
      host.request('sessions.prompt', {
        id: record.id,
        text: 'look at @linked.txt',
        attachments: [{ type: 'resource_link', uri: pathToFileURL(linked).href, name: 'linked.txt' }]
      })
    ).rejects.toThrow(
      /Not sent: '.*linked\.txt' has 2 hard links, so it may be a file outside the project under another name on 127\.0\.0\.1:\d+; .*mention another file or remove the link/
    )
    await host.request('sessions.prompt', {
      id: record.id,
      text: 'look at @plain.sh',
      attachments: [{ type: 'resource_link', uri: pathToFileURL(join(projectDir, 'plain.sh')).href, name: 'plain.sh' }]
    })
    const after2 = entriesOf(fold((await host.request('sessions.open', { id: record.id })).records), 'assistant')
    expect(after2).toHaveLength(before + 1)
  })
})

describe('a connection to the host', () => {
  it('frozen mid-turn is noticed by its keep-alive, reported in the turn, and the session resumes on a new connection; nothing is left of the first', async () => {
    const tag = randomUUID()
    const host = await startHost()
    const agent = await host.request(
      'agents.add',
      sshAgent(sshd.target(), tag, {
        env: { SCRIPTED_AGENT_STATE_DIR: stateDir, SB_SSH_TEST: tag, SCRIPTED_AGENT_CHUNK_DELAY_MS: '25', SCRIPTED_AGENT_SESSIONS: 'resume' }
      })
    )
    const project = await host.request('projects.add', { cwd: projectDir, agentId: agent.id })
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    const turn = host.request('sessions.prompt', { id: record.id, text: '/stream 1000' }).then(
      () => null,
      (error: Error) => error
    )
    await waitUntil('some chunks streamed', async () =>
      lastMessage((await host.request('sessions.open', { id: record.id })).records).includes('chunk 5 ')
    )
    const first = processesWithEnv(`SB_SSH_TEST=${tag}`)
    sshd.freeze()

    const failure = await turn
    expect(failure?.message).toMatch(
      /^The connection to agent 'Over SSH' on 127\.0\.0\.1:\d+ was lost: 127\.0\.0\.1:\d+ stopped answering \(no reply to the keep-alive messages\)/
    )
    // Polled as the whole state, so a failure shows what the session said instead (its error names the failed attempt).
    await expect
      .poll(async () => (await host.request('sessions.states', {})).find((s) => s.id === record.id), { timeout: 60_000 })
      .toMatchObject({ status: 'ready' })
    expect(await sessionMethodsReceived(stateDir)).toEqual(['session/new', 'session/resume'])
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(thread.entries.at(-1)).toMatchObject({ kind: 'notice', severity: 'warning', title: 'Reconnected to Over SSH' })
    expect((entriesOf(thread, 'assistant')[0] as { text: string }).text).not.toContain('chunk 1000 ')

    const after = await host.request('sessions.prompt', { id: record.id, text: 'still there?' })
    expect(after.stopReason).toBe('end_turn')
    expect(lastMessage((await host.request('sessions.open', { id: record.id })).records)).toBe('You said: still there?')
    // Still streaming into the frozen connection, the host's sshd has not noticed: the agent started on the new connection ended it.
    await waitUntil('the first agent gone from the host', () => first.every((pid) => !processesWithEnv(`SB_SSH_TEST=${tag}`).includes(pid)))
  })

  it('is refused with a sentence saying what to do, never a hang: a changed host key, an unknown host, a refused key', async () => {
    const host = await startHost()
    const good = await host.request('agents.add', sshAgent(sshd.target(), randomUUID(), { name: 'Good' }))
    const project = await host.request('projects.add', { cwd: projectDir, agentId: good.id })
    const attempt = async (name: string, target: SshTarget): Promise<{ message: string; state?: string }> => {
      const agent = await host.request('agents.add', sshAgent(target, randomUUID(), { name }))
      const message = await host.request('sessions.new', { projectId: project.id, agentId: agent.id }).then(
        () => 'started',
        (error: Error) => error.message
      )
      return { message, state: (await host.request('agents.states', {})).find((s) => s.agentId === agent.id)?.message }
    }
    // The agent's own known_hosts, a copy: the command the message gives is run on it.
    const changedHosts = join(root, `changed-${randomUUID()}`, 'wrong_known_hosts')
    await mkdir(join(changedHosts, '..'))
    await writeFile(changedHosts, readFileSync(sshd.wrongKnownHosts))
    const changed = await attempt('Changed key', sshd.target({ knownHostsFile: changedHosts }))
    expect(changed.message).toMatch(
      /^Agent 'Changed key' could not connect to 127\.0\.0\.1:\d+ over SSH: the host key 127\.0\.0\.1:\d+ sent is not the one .*wrong_known_hosts has for it \(it changed\)/
    )
    const command = /replace the old one \((ssh-keygen .*?)\); otherwise/.exec(changed.message)?.[1] ?? ''
    const entry = `[127.0.0.1]:${sshd.target().port}`
    expect(command).toBe(`ssh-keygen -f '${changedHosts}' -R '${entry}'`)
    const known = (): boolean => spawnSync('ssh-keygen', ['-F', entry, '-f', changedHosts]).status === 0
    expect(known()).toBe(true)
    // Pasted into a terminal, it removes the entry ssh refused.
    expect(spawnSync('sh', ['-c', command], { encoding: 'utf8' })).toMatchObject({ status: 0 })
    expect(known()).toBe(false)
    const unknown = await attempt('Unknown host', sshd.target({ knownHostsFile: sshd.emptyKnownHosts }))
    expect(unknown.message).toMatch(
      /127\.0\.0\.1:\d+ is not a known host: its key is not in .*empty_known_hosts\. Connect once with ssh in a terminal/
    )
    const refused = await attempt('Refused key', sshd.target({ identityFile: sshd.otherKey }))
    expect(refused.message).toMatch(
      /127\.0\.0\.1:\d+ refused the key \(Permission denied \(publickey\)\)\. Add your public key to ~\/\.ssh\/authorized_keys there/
    )
    for (const { message, state } of [changed, unknown, refused]) {
      expect(message).not.toMatch(/code 255/)
      expect(state).toBe(message.split('; stderr:')[0])
    }
    // An agent over SSH works only in projects on its host, and a local project takes no agent over SSH.
    const here = await host.request('projects.add', { cwd: root })
    await expect(host.request('sessions.new', { projectId: here.id, agentId: good.id })).rejects.toThrow(
      /^Good runs on 127\.0\.0\.1:\d+, and .* is on this computer: choose an agent that runs where the project is/
    )
    // A project cannot be added through an agent that cannot connect: the same sentence.
    const bad = (await host.request('agents.list', {})).find((a) => a.name === 'Refused key')!
    await expect(host.request('projects.add', { cwd: root, agentId: bad.id })).rejects.toThrow(/refused the key \(Permission denied/)
    // Nor a folder that is not there.
    await expect(host.request('projects.add', { cwd: join(root, 'missing'), agentId: good.id })).rejects.toThrow(
      /The project folder not found on 127\.0\.0\.1:\d+: .*missing/
    )

    // The capability check works on it as on a local agent, in a scratch folder made on the host (and removed).
    const report = await host.request('agents.check', { agentId: good.id })
    const outcome = (id: string): string | undefined => report.lines.find((l) => l.id === id)?.outcome
    expect(outcome('initialize')).toBe('worked')
    expect(outcome('session/new')).toBe('worked')
    expect(outcome('session/load')).toBe('worked')
    expect(report.lines.find((l) => l.id === 'session/new')?.detail).toMatch(/^session sess-/)
    // Made in the host's TMPDIR (the server's own folder: the machine's /tmp is shared with whatever else runs).
    expect(await readdir(sshd.remoteTmp)).toEqual([])

    // A check the Host's close cuts short (here while its agent takes its time to load a session) removes its
    // scratch folder on the host all the same: the SSH connections close after it.
    const slowState = join(root, 'slow-agent-state')
    const slow = await host.request(
      'agents.add',
      sshAgent(sshd.target(), randomUUID(), {
        name: 'Slow load',
        env: { SCRIPTED_AGENT_STATE_DIR: slowState, SCRIPTED_AGENT_LOAD_DELAY_MS: '60000' }
      })
    )
    const cut = host.request('agents.check', { agentId: slow.id }).catch((error: Error) => error)
    await waitUntil('the check to make its scratch folder on the host', async () => (await readdir(sshd.remoteTmp)).length === 1)
    await host.close()
    await cut
    expect(await readdir(sshd.remoteTmp)).toEqual([])
  })

  it("a check the Host's close cuts before the host has said which scratch folder it made leaves none there", async () => {
    const host = await startHost()
    const agent = await host.request('agents.add', sshAgent(sshd.target(), randomUUID()))
    // The host's answer (the folder's name) comes two seconds after the folder is made; its removal's too.
    sshd.lingerAfter('scratch')
    try {
      const cut = host.request('agents.check', { agentId: agent.id }).catch((error: Error) => error)
      await waitUntil('the check to make its scratch folder on the host', async () => (await readdir(sshd.remoteTmp)).length === 1)
      await host.close()
      await cut
      expect(await readdir(sshd.remoteTmp)).toEqual([])
    } finally {
      sshd.lingerAfter(null)
    }
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
