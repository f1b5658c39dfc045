import { existsSync } from 'node:fs'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import { runOf, confirmEverything, entriesOf, fold, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'

/** The optional session methods: list (import), resume, close, delete, fork; each used only when announced. */

let root: string
let dataDir: string
let stateDir: string
let projectDir: string
let host: Host
let projectId: string

beforeEach(async () => {
  root = await tempDir('lifecycle')
  dataDir = join(root, 'data')
  stateDir = join(root, 'agent-state')
  projectDir = join(root, 'project')
  await mkdir(projectDir)
  host = await openHost(dataDir)
  projectId = (await host.request('projects.add', { cwd: projectDir })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

function agentWith(sessions: string, env: Record<string, string> = {}, name = 'Scripted') {
  return host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: sessions, ...env }, name))
}

async function threadOf(id: string) {
  return fold((await host.request('sessions.open', { id })).records)
}

/** A session another client made with the same agent: only the agent's own files know it. */
async function sessionMadeElsewhere(sessionId: string, cwd: string, title: string): Promise<void> {
  await mkdir(stateDir, { recursive: true })
  const history = [
    { sessionUpdate: 'user_message_chunk', messageId: `${sessionId}-u`, content: { type: 'text', text: `question in ${title}` } },
    { sessionUpdate: 'agent_message_chunk', messageId: `${sessionId}-a`, content: { type: 'text', text: `answer in ${title}` } }
  ]
  await writeFile(join(stateDir, `${sessionId}.json`), JSON.stringify(history))
  await writeFile(join(stateDir, `${sessionId}.meta.json`), JSON.stringify({ cwd, title, updatedAt: '2026-11-01T10:00:00.000Z' }))
}

describe('session/list: importing sessions made in other clients', () => {
  it('imports every page of the project folder’s sessions once, and opens them through load', async () => {
    await sessionMadeElsewhere('sess-a', projectDir, 'From the terminal')
    await sessionMadeElsewhere('sess-b', projectDir, 'From the editor')
    await sessionMadeElsewhere('sess-c', projectDir, 'From another editor')
    await sessionMadeElsewhere('sess-x', join(root, 'elsewhere'), 'Another project')
    const agent = await agentWith('list')

    const { imported } = await host.request('sessions.import', { projectId, agentId: agent.id })
    // Three sessions over two pages (the scripted agent pages by two); the other folder's is left out.
    expect(imported.map((r) => r.title).sort()).toEqual(['From another editor', 'From the editor', 'From the terminal'])
    expect(imported.every((r) => r.updatedAt === '2026-11-01T10:00:00.000Z')).toBe(true)
    expect((await host.request('sessions.import', { projectId, agentId: agent.id })).imported).toEqual([])
    expect(await host.request('sessions.list', { projectId })).toHaveLength(3)

    const terminal = imported.find((r) => r.title === 'From the terminal')!
    await host.request('sessions.continue', { id: terminal.id })
    const thread = await threadOf(terminal.id)
    expect(thread.entries.map((e) => [e.kind, (e as { text?: string }).text])).toEqual([
      ['user', 'question in From the terminal'],
      ['assistant', 'answer in From the terminal']
    ])
  })

  it('says so when the agent cannot list its sessions', async () => {
    const agent = await agentWith('')
    await expect(host.request('sessions.import', { projectId, agentId: agent.id })).rejects.toThrow(
      /cannot list its sessions \(it does not announce session\/list\)/
    )
  })
})

describe('resume, close, delete, fork', () => {
  it('continues through session/resume when announced: no replay, the local view is kept as it was', async () => {
    const agent = await agentWith('resume')
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: 'remember this' })
    await host.close()
    host = await openHost(dataDir)
    await host.request('sessions.continue', { id: record.id })
    const snapshot = await host.request('sessions.open', { id: record.id })
    expect(snapshot.records.some((r) => r.t === 'reset')).toBe(false)
    expect(fold(snapshot.records).entries.map((e) => e.kind)).toEqual(['user', 'assistant', 'stop'])
    await host.request('sessions.prompt', { id: record.id, text: 'and this' })
    expect(entriesOf(await threadOf(record.id), 'user')).toHaveLength(2)
  })

  it('closes a session with session/close, and a later prompt brings it back', async () => {
    const agent = await agentWith('close,resume')
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: 'one' })
    await host.request('sessions.close', { id: record.id })
    expect((await host.request('sessions.open', { id: record.id })).state.status).toBe('idle')
    expect((await host.request('sessions.prompt', { id: record.id, text: 'two' })).stopReason).toBe('end_turn')
  })

  it('deletes a session in the agent and here; the transcript goes too unless kept', async () => {
    const agent = await agentWith('delete')
    const first = await host.request('sessions.new', { projectId, agentId: agent.id })
    const second = await host.request('sessions.new', { projectId, agentId: agent.id })
    expect(existsSync(join(stateDir, `${first.acpSessionId}.json`))).toBe(true)

    expect(await host.request('sessions.delete', { id: first.id })).toEqual({ agentDeleted: true })
    expect(existsSync(join(stateDir, `${first.acpSessionId}.json`))).toBe(false)
    expect(existsSync(join(dataDir, 'transcripts', `${first.id}.jsonl`))).toBe(false)

    await host.request('sessions.delete', { id: second.id, keepTranscript: true })
    expect(await readdir(join(dataDir, 'deleted-transcripts'))).toEqual([`${second.id}.jsonl`])
    expect(await host.request('sessions.list', {})).toEqual([])
    await expect(host.request('sessions.open', { id: first.id })).rejects.toThrow(/No session/)
  })

  it('deletes locally and says why when the agent cannot delete', async () => {
    const agent = await agentWith('')
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    const result = await host.request('sessions.delete', { id: record.id })
    expect(result).toEqual({ agentDeleted: false, note: expect.stringMatching(/does not announce session\/delete/) })
    expect(await host.request('sessions.list', {})).toEqual([])
  })

  it('forks a session: the fork starts with the history and goes its own way', async () => {
    const agent = await agentWith('fork')
    const parent = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: parent.id, text: 'shared beginning' })
    const fork = await host.request('sessions.fork', { id: parent.id })
    expect(fork.title).toBe('Fork of shared beginning')
    expect(fork.acpSessionId).not.toBe(parent.acpSessionId)
    await host.request('sessions.prompt', { id: fork.id, text: 'only in the fork' })

    const forked = await threadOf(fork.id)
    expect(entriesOf(forked, 'user').map((e) => (e as { text: string }).text)).toEqual(['shared beginning', 'only in the fork'])
    expect(entriesOf(await threadOf(parent.id), 'user')).toHaveLength(1)
  })

  it('refuses to fork when the agent does not announce it', async () => {
    const agent = await agentWith('')
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await expect(host.request('sessions.fork', { id: record.id })).rejects.toThrow(/cannot fork sessions/)
  })
})

describe('additional directories', () => {
  it('sends a project’s extra folders to an agent that announces them, and lets it read there', async () => {
    const shared = join(root, 'shared-lib')
    await mkdir(shared)
    await writeFile(join(shared, 'lib.txt'), 'shared code')
    await writeFile(join(root, 'secret.txt'), 'secret')
    await expect(host.request('projects.setAdditionalDirectories', { projectId, directories: ['relative/dir'] })).rejects.toThrow(/must be absolute/)
    const project = await host.request('projects.setAdditionalDirectories', { projectId, directories: [shared, shared, projectDir] })
    expect(project.additionalDirectories).toEqual([shared])

    const agent = await agentWith('additionalDirectories')
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    expect(record.additionalDirectories).toEqual([shared])
    await host.request('sessions.prompt', { id: record.id, text: `/dirs\n/read ${join(shared, 'lib.txt')}\n/read ${join(root, 'secret.txt')}` })
    const said = (entriesOf(await threadOf(record.id), 'assistant') as { text: string }[]).map((e) => e.text).join('')
    expect(said).toContain(`additionalDirectories=${JSON.stringify([shared])}`)
    expect(said).toContain('read 11 chars')
    expect(said).toContain('read failed: Refused: ')
  })

  it('does not send them to an agent that does not announce them, nor lets it use them', async () => {
    const shared = join(root, 'shared-lib')
    await mkdir(shared)
    await writeFile(join(shared, 'lib.txt'), 'shared code')
    await host.request('projects.setAdditionalDirectories', { projectId, directories: [shared] })
    const agent = await agentWith('')
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: `/dirs\n/read ${join(shared, 'lib.txt')}` })
    const said = (entriesOf(await threadOf(record.id), 'assistant') as { text: string }[]).map((e) => e.text).join('')
    expect(said).toContain('additionalDirectories=null')
    expect(said).toContain('read failed: Refused: ')
  })
})

describe('cancelling a slow reopen', () => {
  it('sends $/cancel_request for the load under way and leaves the session ready to try again', async () => {
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_LOAD_DELAY_MS: '5000' }, 'Slow'))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: 'remember' })
    await host.close()
    const sent: unknown[] = []
    host = await Host.open({
      dataDir,
      version: 'test',
      confirmCommand: confirmEverything,
      presets: [],
      onAgentMessage: (_a, direction, m) => direction === 'out' && sent.push(m)
    })
    const reopening = host.request('sessions.continue', { id: record.id })
    await expect.poll(async () => (await host.request('sessions.open', { id: record.id })).state.status).toBe('starting')
    await host.request('sessions.cancel', { id: record.id })
    await expect(reopening).rejects.toThrow('Reopening the session was cancelled')
    const load = sent.find((m) => (m as { method?: string }).method === 'session/load') as { id: number }
    expect(sent).toContainEqual({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: load.id } })
    expect((await host.request('sessions.open', { id: record.id })).state.status).toBe('idle')
  })
})

/**
 * A reopen through session/load that goes wrong, as real agents do it: the
 * load fails (Gemini CLI's "No previous sessions found for this project"), or
 * answers before its replay is over (Gemini CLI does not await it).
 */
describe('session/load as real agents answer it', () => {
  async function conversationThenRestart(env: Record<string, string>): Promise<string> {
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_NO_MESSAGE_ID: '1' }, 'Loader'))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: 'first question' })
    await host.request('sessions.prompt', { id: record.id, text: 'second question' })
    await host.close()
    host = await openHost(dataDir)
    await host.request('agents.update', {
      agentId: agent.id,
      name: 'Loader',
      transport: { kind: 'process', command: runOf(agent).command, args: runOf(agent).args, env: { ...runOf(agent).env, ...env } }
    })
    return record.id
  }

  const shown = async (id: string) => (await threadOf(id)).entries.map((e) => `${e.kind}${'text' in e ? `: ${e.text}` : ''}`)

  it('a load that fails keeps the view as it was (no reset written), says why, and offers a new session given it as context', async () => {
    const id = await conversationThenRestart({ SCRIPTED_AGENT_LOAD_FAIL: 'No previous sessions found for this project.' })
    const before = await shown(id)
    expect(before.filter((e) => e.startsWith('user'))).toEqual(['user: first question', 'user: second question'])
    await expect(host.request('sessions.continue', { id })).rejects.toThrow(
      /could not reopen this conversation \(session\/load: Internal error: No previous sessions found for this project\)\. Everything shown here is kept/
    )
    await expect(host.request('sessions.continue', { id })).rejects.toThrow(/could not reopen/)
    const snapshot = await host.request('sessions.open', { id })
    // Half the history was replayed before the failure: none of it replaced what was shown, however often retried.
    expect(snapshot.records.some((r) => r.t === 'reset')).toBe(false)
    expect(await shown(id)).toEqual(before)
    expect(snapshot.state).toMatchObject({ status: 'error', reopenFailed: 'Internal error: No previous sessions found for this project' })

    const next = await host.request('sessions.continueInNew', { id })
    expect(next).toMatchObject({ title: expect.stringContaining('(continued)'), cwd: projectDir })
    const thread = await threadOf(next.id)
    expect(thread.entries.at(-1)).toMatchObject({
      kind: 'notice',
      title: expect.stringContaining('Continued from'),
      description: expect.stringContaining('No previous sessions found')
    })
    await host.request('sessions.prompt', { id: next.id, text: 'third question' })
    const after = await shown(next.id)
    // The bubble shows what the user typed; the agent got the earlier conversation first, as a marked note.
    expect(after.filter((e) => e.startsWith('user'))).toEqual(['user: first question', 'user: second question', 'user: third question'])
    const prompt = (await host.request('sessions.open', { id: next.id })).records.filter((r) => r.t === 'prompt').at(-1)
    expect(prompt?.t === 'prompt' && prompt.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/earlier conversation[\s\S]*User: first question[\s\S]*User: second question/),
      _meta: { switchboard: { note: true } }
    })
  })

  it('a replay that comes after the load has answered stays before the next prompt, and the new reply is an entry of its own', async () => {
    // The replay begins 600 ms after the load's answer, as an agent answering first does on a loaded machine (the
    // Host once took the replay as over 300 ms after the answer, and wrote it after the next prompt).
    const id = await conversationThenRestart({
      SCRIPTED_AGENT_LATE_REPLAY: '1',
      SCRIPTED_AGENT_LATE_REPLAY_AFTER_MS: '600',
      SCRIPTED_AGENT_SESSIONS: ''
    })
    const before = await shown(id)
    await host.request('sessions.prompt', { id, text: 'third question' })
    // The replay takes about a second from the load's answer: read the view once all of it has come, wherever it landed.
    await new Promise((r) => setTimeout(r, 1000))
    const after = await shown(id)
    const kept = after.slice(0, after.indexOf('user: third question'))
    // The view Switchboard recorded is kept as it was (its turn ends too); the late replay wrote nothing into it.
    expect(kept).toEqual(before)
    const rest = after.slice(after.indexOf('user: third question'))
    expect(rest.filter((e) => e.startsWith('assistant'))).toHaveLength(1)
    expect(rest.find((e) => e.startsWith('assistant'))).toMatch(/third question/)
    expect(after.filter((e) => e === 'user: third question')).toHaveLength(1)
    expect(after.filter((e) => e === 'user: first question')).toHaveLength(1)
    expect((await host.request('sessions.open', { id })).records.some((r) => r.t === 'reset')).toBe(false)
  })

  it("a reopen through session/load keeps Switchboard's view (turn ends, usage) and writes nothing of the replay, however often reopened (issue 36.8, 37)", async () => {
    const id = await conversationThenRestart({})
    const before = await shown(id)
    // The scripted agent's replay has no turn ends: Switchboard's view has one per turn.
    expect(before.filter((e) => e === 'stop')).toHaveLength(2)
    const recordsBefore = (await host.request('sessions.open', { id })).records.length
    for (let reopen = 0; reopen < 2; reopen++) {
      await host.request('sessions.continue', { id })
      expect(await shown(id)).toEqual(before)
      await host.close()
      host = await openHost(dataDir)
    }
    const records = (await host.request('sessions.open', { id })).records
    // Nothing of the two replays was written: no reset, no replayed message (only session state may be added).
    expect(records.some((r) => r.t === 'reset')).toBe(false)
    expect(records.slice(recordsBefore).filter((r) => r.t === 'update' && /chunk|tool_call|plan/.test(r.update.sessionUpdate))).toEqual([])
    await host.request('sessions.prompt', { id, text: 'third question' })
    expect((await shown(id)).filter((e) => e.startsWith('user'))).toEqual(['user: first question', 'user: second question', 'user: third question'])
  })
})
