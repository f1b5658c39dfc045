import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { HostEvent } from '../../shared/contract'
import type { TranscriptRecord } from '../../shared/transcript'
import { scriptedAgentCommand } from '../agent/spawn'
import { entriesOf, fold, isProcessRunning, openHost, recordEvents, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * The walking skeleton's vertical slice against a real agent subprocess: the
 * scripted ACP agent over stdio, through the Host exactly as the transports
 * drive it.
 */

let root: string
let dataDir: string
let projectDir: string
let stateDir: string
const hosts: Host[] = []

beforeEach(async () => {
  root = await tempDir('slice')
  dataDir = join(root, 'data')
  projectDir = join(root, 'project')
  stateDir = join(root, 'agent-state')
  await mkdir(projectDir, { recursive: true })
})

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()))
  await removeDir(root)
})

async function startHost(): Promise<Host> {
  const host = await openHost(dataDir)
  hosts.push(host)
  return host
}

function recordsFor(events: HostEvent[], id: string): { seq: number; records: TranscriptRecord[] }[] {
  return events.flatMap((e) => (e.type === 'session.records' && e.payload.id === id ? [e.payload] : []))
}

describe('one conversation, end to end through the Host', () => {
  it('streams a reply in order, persists it, and continues after a restart via session/load', async () => {
    const host = await startHost()
    const events = recordEvents(host)
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    expect(record.acpSessionId).toMatch(/^sess-/)

    const result = await host.request('sessions.prompt', { id: record.id, text: '/stream 20' })
    expect(result.stopReason).toBe('end_turn')
    host.events.flush()

    // Live events: consecutive seqs, and the chunks arrive in the order the agent sent them.
    const batches = recordsFor(events, record.id)
    let expectedSeq = batches[0].seq
    for (const batch of batches) {
      expect(batch.seq).toBe(expectedSeq)
      expectedSeq += batch.records.length
    }
    const live = fold(batches.flatMap((b) => b.records))
    const expectedText = Array.from({ length: 20 }, (_, i) => `chunk ${i + 1} `).join('')
    expect(entriesOf(live, 'assistant').map((e) => (e as { text: string }).text)).toEqual([expectedText])
    expect(live.entries.at(-1)).toMatchObject({ kind: 'stop', stopReason: 'end_turn' })
    const agentStates = events.filter((e) => e.type === 'agent.state').map((e) => (e.payload as { status: string }).status)
    expect(agentStates).toContain('starting')
    expect(agentStates).toContain('ready')
    await host.close()

    // A new Host on the same data folder: the session is listed and readable without starting the agent.
    const reopened = await startHost()
    const sessions = await reopened.request('sessions.list', { projectId: project.id })
    expect(sessions.map((s) => s.id)).toEqual([record.id])
    expect(sessions[0].title).toBe('/stream 20')
    expect(sessions[0].lastStopReason).toBe('end_turn')
    const snapshot = await reopened.request('sessions.open', { id: record.id })
    expect(snapshot.state.status).toBe('idle')
    const fromDisk = fold(snapshot.records)
    expect(fromDisk.entries.map((e) => e.kind)).toEqual(['user', 'assistant', 'stop'])
    expect((fromDisk.entries[1] as { text: string }).text).toBe(expectedText)
    const states = await reopened.request('agents.states', {})
    expect(states.find((s) => s.agentId === agent.id)?.status).toBe('stopped')

    // Continue: the agent replays the conversation; the view Switchboard recorded is kept (no duplicates, its turn end too).
    const state = await reopened.request('sessions.continue', { id: record.id })
    expect(state.status).toBe('ready')
    const afterLoad = fold((await reopened.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(afterLoad, 'user')).toHaveLength(1)
    expect(entriesOf(afterLoad, 'assistant').map((e) => (e as { text: string }).text)).toEqual([expectedText])

    // And the conversation goes on.
    const second = await reopened.request('sessions.prompt', { id: record.id, text: 'hello again' })
    expect(second.stopReason).toBe('end_turn')
    const final = fold((await reopened.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(final, 'user').map((e) => (e as { text: string }).text)).toEqual(['/stream 20', 'hello again'])
    expect((entriesOf(final, 'assistant').at(-1) as { text: string }).text).toBe('You said: hello again')
  })

  it('folds thoughts, tool calls and plans, and answers file requests inside the project only', async () => {
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await writeFile(join(projectDir, 'notes.txt'), 'inside the project')
    const outside = join(root, 'secret.txt')
    await writeFile(outside, 'do not read me')

    const text = [
      '/think weighing options',
      '/plan read;write;report',
      `/read ${join(projectDir, 'notes.txt')}`,
      `/write ${join(projectDir, 'out', 'new.txt')} written by the agent`,
      `/read ${outside}`,
      `/read ${join(projectDir, '..', 'secret.txt')}`,
      `/read ${join(projectDir, 'not-yet.txt')}`,
      // A relative path is not refused as 'outside': the protocol wants absolute paths, and the agent is told so.
      '/read notes.txt'
    ].join('\n')
    await host.request('sessions.prompt', { id: record.id, text })

    expect(await readFile(join(projectDir, 'out', 'new.txt'), 'utf8')).toBe('written by the agent')
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'thought')).toHaveLength(1)
    expect(entriesOf(thread, 'plan')).toHaveLength(1)
    const tools = entriesOf(thread, 'tool_call') as { status: string; title: string }[]
    expect(tools.map((t) => t.status)).toEqual(['completed', 'completed', 'failed', 'failed', 'failed', 'failed'])
    const refusals = entriesOf(thread, 'error') as { message: string }[]
    expect(refusals.map((r) => r.message)).toEqual([
      `The agent asked to read a path outside the project. Refused: '${outside}' is outside the session's folder (${projectDir})`,
      `The agent asked to read a path outside the project. Refused: '${join(projectDir, '..', 'secret.txt')}' is outside the session's folder (${projectDir})`,
      "The agent asked to read a path Switchboard cannot use. Refused: 'notes.txt' is a relative path; it must be absolute (ACP requires absolute paths)"
    ])
    const assistant = (entriesOf(thread, 'assistant') as { text: string }[]).map((e) => e.text).join('')
    expect(assistant).toContain('read 18 chars')
    // A file that does not exist is said in the protocol's own words (agents such as Gemini CLI then create it).
    expect(assistant).toContain(`read failed: Resource not found: ${join(projectDir, 'not-yet.txt')} (ENOENT: no such file or directory)`)
    expect(assistant).toContain("read failed: Refused: 'notes.txt' is a relative path; it must be absolute (ACP requires absolute paths)")
    expect(assistant).not.toContain('do not read me')
  })

  it('answers an agent known to misread a missing file (Gemini CLI) an empty one, inside the project only', async () => {
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_NAME: 'gemini-cli' }, 'Gemini-like'))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await host.request('sessions.prompt', {
      id: record.id,
      text: [`/read ${join(projectDir, 'fresh.md')}`, `/read ${join(root, 'elsewhere.md')}`].join('\n')
    })
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    const said = (entriesOf(thread, 'assistant') as { text: string }[]).map((e) => e.text).join('')
    expect(said).toContain('read 0 chars')
    // Outside the project the boundary answers first, as for any agent.
    expect(said).toMatch(/read failed: .*outside/)
  })

  it('asks the user for permission and passes the answer to the agent', async () => {
    const host = await startHost()
    const events = recordEvents(host)
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })

    const turn = host.request('sessions.prompt', { id: record.id, text: '/permission' })
    const permission = await waitFor(() => {
      host.events.flush()
      const state = events.findLast((e) => e.type === 'session.state' && e.payload.id === record.id)
      return state?.type === 'session.state' ? state.payload.permissions?.[0] : undefined
    })
    expect(permission.options.map((o) => o.optionId)).toEqual(['allow', 'reject'])
    await host.request('sessions.respondPermission', { id: record.id, requestId: permission.requestId, optionId: 'allow' })
    expect((await turn).stopReason).toBe('end_turn')
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect((entriesOf(thread, 'assistant') as { text: string }[]).map((e) => e.text).join('')).toContain('permission: allow')
  })

  it('cancels a running turn: the prompt ends with stopReason cancelled and a pending permission is answered', async () => {
    const host = await startHost()
    const events = recordEvents(host)
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })

    const turn = host.request('sessions.prompt', { id: record.id, text: '/stream 2\n/permission\n/sleep 10000\n/say never' })
    await waitFor(() => {
      host.events.flush()
      const state = events.findLast((e) => e.type === 'session.state' && e.payload.id === record.id)
      return state?.type === 'session.state' ? state.payload.permissions?.[0] : undefined
    })
    // A window that (re)loads now learns the session is running.
    expect((await host.request('sessions.states', {})).find((s) => s.id === record.id)).toMatchObject({ status: 'running' })
    await host.request('sessions.cancel', { id: record.id })
    expect((await turn).stopReason).toBe('cancelled')
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    const said = (entriesOf(thread, 'assistant') as { text: string }[]).map((e) => e.text).join('')
    expect(said).toContain('permission: cancelled')
    expect(said).not.toContain('never')
    expect(thread.entries.at(-1)).toMatchObject({ kind: 'stop', stopReason: 'cancelled' })
    // The session is usable again right away.
    expect((await host.request('sessions.prompt', { id: record.id, text: 'next' })).stopReason).toBe('end_turn')
  })

  it('keeps a session read-only, saying why, when its agent cannot load sessions', async () => {
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_LOAD: '0' }, 'Forgetful'))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: 'first words' })
    await host.close()

    const reopened = await startHost()
    const snapshot = await reopened.request('sessions.open', { id: record.id })
    expect(entriesOf(fold(snapshot.records), 'user')).toHaveLength(1)
    await expect(reopened.request('sessions.continue', { id: record.id })).rejects.toThrow(
      /Forgetful cannot reopen past sessions \(it announces neither loadSession nor session\/resume\)/
    )
    const after = await reopened.request('sessions.open', { id: record.id })
    expect(after.state).toMatchObject({ status: 'idle', continueBlockedReason: expect.stringMatching(/Start a new session/) })
    // Nothing was lost or reset by the refused attempt.
    expect(after.records).toEqual(snapshot.records)
  })
})

describe('bad input gets a clear error and loses nothing', () => {
  it('refuses a relative project folder', async () => {
    const host = await startHost()
    await host.request('projects.add', { cwd: projectDir })
    const before = await readFile(join(dataDir, 'db.json'), 'utf8')
    await expect(host.request('projects.add', { cwd: 'code/app' })).rejects.toThrow(/must be an absolute path.*code\/app/)
    await expect(host.request('projects.add', { cwd: join(root, 'missing') })).rejects.toThrow(/Folder not found/)
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).toBe(before)
    expect(await host.request('projects.list', {})).toHaveLength(1)
  })

  it('names the command when an agent binary does not exist', async () => {
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', {
      name: 'Ghost',
      transport: { kind: 'process', command: 'switchboard-no-such-agent', args: [], env: {} }
    })
    // Known before anything is started.
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agent.id)).toMatchObject({
      installed: false,
      message: "Ghost: the command 'switchboard-no-such-agent' was not found. Install it, or fix the agent's command."
    })
    const before = await readFile(join(dataDir, 'db.json'), 'utf8')
    await expect(host.request('sessions.new', { projectId: project.id, agentId: agent.id })).rejects.toThrow(
      /command 'switchboard-no-such-agent' was not found/
    )
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).toBe(before)
    const state = (await host.request('agents.states', {})).find((s) => s.agentId === agent.id)
    expect(state?.status).toBe('error')
  })

  it('reports an agent that exits during initialize with its stderr tail', async () => {
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_INIT: 'exit' }, 'Broken'))
    const before = await readFile(join(dataDir, 'db.json'), 'utf8')
    await expect(host.request('sessions.new', { projectId: project.id, agentId: agent.id })).rejects.toThrow(
      /Agent 'Broken' exited during initialize with code 3; stderr: .*missing credentials/
    )
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).toBe(before)
    expect(existsSync(join(dataDir, 'logs', `${agent.id}.log`))).toBe(true)
  })

  it('keeps every update when the agent dies mid-turn, and continues after restarting it', async () => {
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await expect(host.request('sessions.prompt', { id: record.id, text: '/stream 3\n/exit 7' })).rejects.toThrow(
      /exited with code 7.*exiting with 7 mid-turn/s
    )
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect((entriesOf(thread, 'assistant')[0] as { text: string }).text).toBe('chunk 1 chunk 2 chunk 3 ')
    expect(entriesOf(thread, 'error')).toHaveLength(1)

    // Sending again restarts the agent, loads the session and runs the turn.
    const again = await host.request('sessions.prompt', { id: record.id, text: 'still there?' })
    expect(again.stopReason).toBe('end_turn')
    const after = fold((await host.request('sessions.open', { id: record.id })).records)
    expect((entriesOf(after, 'assistant') as { text: string }[]).map((e) => e.text)).toContain('chunk 1 chunk 2 chunk 3 ')
    expect((entriesOf(after, 'assistant').at(-1) as { text: string }).text).toBe('You said: still there?')
  })

  it('moves a corrupt db.json aside and recovers sessions from their transcripts', async () => {
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const agent = await host.request('agents.add', scriptedAgent(stateDir))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: 'remember me' })
    await host.close()
    await writeFile(join(dataDir, 'db.json'), '{"version": 1, "projects": [tor')

    const reopened = await startHost()
    const info = await reopened.request('app.info', {})
    expect(info.warnings[0]).toMatch(/db.json could not be read.*moved to .*db\.corrupt-.*1 session\(s\) were recovered/s)
    const sessions = await reopened.request('sessions.list', {})
    expect(sessions.map((s) => s.id)).toEqual([record.id])
    expect((await reopened.request('projects.list', {}))[0].cwd).toBe(projectDir)
    const thread = fold((await reopened.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'user').map((e) => (e as { text: string }).text)).toEqual(['remember me'])
  })

  it.skipIf(process.platform === 'win32')('leaves no process behind: the agent and what it started die with the host', async () => {
    const host = await startHost()
    const project = await host.request('projects.add', { cwd: projectDir })
    const { command, args } = scriptedAgentCommand()
    const pidFile = join(root, 'grandchild.pid')
    // The agent starts a long-lived child of its own before it speaks ACP.
    const wrapper = `sleep 300 & echo $! > '${pidFile}'; exec "$0" "$@"`
    const agent = await host.request('agents.add', {
      name: 'Parent',
      transport: { kind: 'process', command: '/bin/sh', args: ['-c', wrapper, command, ...args], env: { SCRIPTED_AGENT_STATE_DIR: stateDir } }
    })
    await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    const grandchild = Number((await readFile(pidFile, 'utf8')).trim())
    const agentPid = (await host.request('agents.states', {})).find((s) => s.agentId === agent.id)?.pid
    expect(isProcessRunning(grandchild)).toBe(true)
    expect(agentPid && isProcessRunning(agentPid)).toBe(true)
    await host.close()
    await expect.poll(() => isProcessRunning(grandchild)).toBe(false)
    expect(isProcessRunning(agentPid!)).toBe(false)
  })

  it('refuses malformed requests with a message instead of throwing', async () => {
    const host = await startHost()
    expect(await host.handle('projects.add', { cwd: 42 })).toMatchObject({ ok: false, error: { code: 'invalid_params' } })
    expect(await host.handle('no.such.method', {})).toMatchObject({ ok: false, error: { code: 'unknown_method' } })
    expect(await host.handle('sessions.prompt', { id: 'nope', text: 'hi' })).toMatchObject({
      ok: false,
      error: { message: "No session with id 'nope'" }
    })
  })
})

async function waitFor<T>(probe: () => T | undefined | null, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error('waitFor timed out')
    await new Promise((r) => setTimeout(r, 20))
  }
}
