import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { RequestParams } from '../../shared/contract'
import type { SessionState } from '../../shared/domain'
import { Host } from '../../electron/host/host'
import { confirmEverything, entriesOf, fold, recordEvents, removeDir, tempDir, waitUntil } from '../helpers'
import { StubAgents, type StubBehaviour } from '../host/stub-agent'

/**
 * The Host's rooms with an in-process stub agent: sessions, turns, what the
 * agent asks, titles and memory, in milliseconds. The same flows against real
 * agent processes are in test/integration.
 */

let root: string
let host: Host
let stub: StubAgents
let projectId: string

const agent: RequestParams<'agents.add'> = { name: 'Stub', transport: { kind: 'process', command: 'stub-agent', args: [], env: {}, secretEnv: {} } }

async function start(behaviour: StubBehaviour = {}): Promise<string> {
  stub = new StubAgents(behaviour)
  host = await Host.open({ dataDir: join(root, 'data'), version: 'test', confirmCommand: confirmEverything, presets: [], connectAgent: stub.connect })
  await mkdir(join(root, 'project'), { recursive: true })
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
  return (await host.request('agents.add', agent)).id
}

async function stateOf(id: string): Promise<SessionState> {
  return (await host.request('sessions.open', { id })).state
}

beforeEach(async () => {
  root = await tempDir('host-rooms')
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

describe('a session with an in-process agent', () => {
  it('streams a turn into the transcript and titles the session from the prompt, then from the agent, never over the user', async () => {
    const agentId = await start({
      turn: async (turn) => {
        turn.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `heard: ${turn.text}` } })
        if (turn.text.startsWith('/title ')) turn.update({ sessionUpdate: 'session_info_update', title: turn.text.slice(7) })
      }
    })
    const record = await host.request('sessions.new', { projectId, agentId })
    expect(record).toMatchObject({ title: 'New session', titleSource: 'default', acpSessionId: 'stub-1' })
    expect(await host.request('sessions.prompt', { id: record.id, text: 'Fix the build\nplease' })).toEqual({ stopReason: 'end_turn' })
    const list = async (): Promise<unknown> => (await host.request('sessions.list', {}))[0]
    expect(await list()).toMatchObject({ title: 'Fix the build', titleSource: 'prompt' })
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'assistant').map((e) => (e.kind === 'assistant' ? e.text : ''))).toEqual(['heard: Fix the build\nplease'])

    await host.request('sessions.prompt', { id: record.id, text: '/title From the agent' })
    expect(await list()).toMatchObject({ title: 'From the agent', titleSource: 'agent' })
    await host.request('sessions.rename', { id: record.id, title: 'Mine' })
    await host.request('sessions.prompt', { id: record.id, text: '/title Not any more' })
    expect(await list()).toMatchObject({ title: 'Mine', titleSource: 'user' })
  })

  it('applies updates that arrive before session/new has answered', async () => {
    const agentId = await start({ early: () => [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'early words' } }] })
    const record = await host.request('sessions.new', { projectId, agentId })
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'assistant')).toMatchObject([{ text: 'early words' }])
  })

  it('shows two permission requests asked at once, and answers each on its own', async () => {
    const agentId = await start({
      turn: async (turn) => {
        const answers = await Promise.all([turn.askPermission('Step 1'), turn.askPermission('Step 2')])
        turn.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `permissions: ${answers.join(', ')}` } })
      }
    })
    const record = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: record.id, text: 'two steps' })
    await expect.poll(async () => (await stateOf(record.id)).permissions?.map((p) => p.title)).toEqual(['Step 1', 'Step 2'])
    const [first, second] = (await stateOf(record.id)).permissions ?? []

    await host.request('sessions.respondPermission', { id: record.id, requestId: second.requestId, optionId: 'reject' })
    expect((await stateOf(record.id)).permissions?.map((p) => p.title)).toEqual(['Step 1'])
    await expect(host.request('sessions.respondPermission', { id: record.id, requestId: second.requestId, optionId: 'allow' })).rejects.toThrow(
      'no longer pending'
    )
    await host.request('sessions.respondPermission', { id: record.id, requestId: first.requestId, optionId: 'allow' })
    expect(await turn).toEqual({ stopReason: 'end_turn' })

    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'assistant')).toMatchObject([{ text: 'permissions: allow, reject' }])
    expect(entriesOf(thread, 'permission').map((e) => (e.kind === 'permission' ? e.answer : ''))).toEqual(['Reject', 'Allow'])
    expect((await stateOf(record.id)).permissions).toEqual([])
  })

  it("a turn the agent says failed mid-turn and answers end_turn (Codex 2.x's systemError) fails, its reason said once", async () => {
    const status = (type: string) => ({ sessionUpdate: 'session_info_update' as const, _meta: { codex: { threadStatus: { type } } } })
    const say = (text: string, messageId?: string) => ({
      sessionUpdate: 'agent_message_chunk' as const,
      content: { type: 'text' as const, text },
      ...(messageId ? { messageId } : {})
    })
    const body = '{"error":{"message":"The model refuses this.","type":"invalid_request_error","code":null,"param":null}}\n\n'
    const agentId = await start({
      turn: async (turn) => {
        turn.update(status('active'))
        if (turn.text === 'fail') {
          turn.update(say('Half an answer', 'm1'))
          turn.update(status('systemError'))
          turn.update(say(body))
        } else if (turn.text === 'recover') {
          // A failure the thread recovers from within the turn: the turn goes on, its text is the reply's.
          turn.update(status('systemError'))
          turn.update(status('active'))
          turn.update(say('Recovered.', 'm2'))
        } else turn.update(say(`heard: ${turn.text}`, 'm3'))
      }
    })
    const record = await host.request('sessions.new', { projectId, agentId })
    const failed = await host.handle('sessions.prompt', { id: record.id, text: 'fail' })
    expect(failed).toMatchObject({ ok: false, error: { code: 'turn_failed', message: 'Stub failed the turn: The model refuses this.' } })
    expect(await stateOf(record.id)).toMatchObject({ status: 'error', errorInThread: true })
    const shown = async () =>
      fold((await host.request('sessions.open', { id: record.id })).records).entries.map((e) =>
        e.kind === 'assistant' || e.kind === 'error' || e.kind === 'user' ? `${e.kind}: ${e.kind === 'error' ? e.message : e.text}` : e.kind
      )
    expect(await shown()).toEqual(['user: fail', 'assistant: Half an answer', 'error: Stub failed the turn: The model refuses this.'])
    expect(await host.request('sessions.prompt', { id: record.id, text: 'recover' })).toEqual({ stopReason: 'end_turn' })
    expect(await host.request('sessions.prompt', { id: record.id, text: 'next' })).toEqual({ stopReason: 'end_turn' })
    expect((await shown()).slice(3)).toEqual(['user: recover', 'assistant: Recovered.', 'stop', 'user: next', 'assistant: heard: next', 'stop'])
  })

  it('cancelling a turn answers every pending request cancelled and ends the turn', async () => {
    const agentId = await start({
      turn: async (turn) => {
        await Promise.all([turn.askPermission('A'), turn.askPermission('B')])
      }
    })
    const record = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: record.id, text: 'wait' })
    await expect.poll(async () => (await stateOf(record.id)).permissions?.length).toBe(2)
    await host.request('sessions.cancel', { id: record.id })
    expect(await turn).toEqual({ stopReason: 'cancelled' })
    expect((await stateOf(record.id)).permissions).toEqual([])
  })
})

describe('sessions in memory', () => {
  it('are let go when their agent stops, and continue from the tail of the transcript (resume keeps what was written meanwhile)', async () => {
    const agentId = await start()
    const record = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: record.id, text: 'first' })
    await stub.latest.stop()
    expect((await stateOf(record.id)).status).toBe('idle')

    // A record written while the session is not in memory (a second window, a recovery tool): the next load reads it.
    const file = join(root, 'data', 'transcripts', `${record.id}.jsonl`)
    // Once the session's own last record (the end of the turn) is on disk.
    await waitUntil('the transcript written out', async () => (await readFile(file, 'utf8')).trimEnd().split('\n').at(-1)?.includes('"t":"stop"'))
    const note = { t: 'error', at: new Date().toISOString(), message: 'written while not loaded' }
    await appendFile(file, JSON.stringify(note) + '\n')

    const events = recordEvents(host)
    expect(await host.request('sessions.prompt', { id: record.id, text: 'second' })).toEqual({ stopReason: 'end_turn' })
    expect(stub.connections).toHaveLength(2)
    expect(stub.latest.calls.map((c) => c.method)).toEqual(['session/resume', 'session/prompt'])
    const snapshot = await host.request('sessions.open', { id: record.id })
    const thread = fold(snapshot.records)
    expect(entriesOf(thread, 'error')).toMatchObject([{ message: 'written while not loaded' }])
    expect(entriesOf(thread, 'assistant').map((e) => (e.kind === 'assistant' ? e.text : ''))).toEqual(['echo: first', 'echo: second'])
    // The session was read again from disk, not kept in memory: the seq the Host announced for the new prompt is its line.
    host.events.flush() // events go out in batches: the turn can end before its batch does
    const announced = events.flatMap((e) => (e.type === 'session.records' ? e.payload.records.map((r, i) => ({ r, seq: e.payload.seq + i })) : []))
    const prompt = announced.find(({ r }) => r.t === 'prompt' && r.content.some((c) => c.type === 'text' && c.text === 'second'))
    expect(prompt).toBeDefined()
    expect(prompt && snapshot.records[prompt.seq]).toEqual(prompt?.r)
  })

  it('an agent that dies mid-turn leaves the session idle with why, and the next prompt starts it again', async () => {
    let turns = 0
    const agentId = await start({
      turn: async (turn) => {
        if (++turns === 1) {
          turn.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'half an answer' } })
          setTimeout(() => stub.latest.crash("Agent 'Stub' exited with code 1"), 10)
          await new Promise(() => undefined)
        }
        turn.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'whole answer' } })
      }
    })
    const record = await host.request('sessions.new', { projectId, agentId })
    await expect(host.request('sessions.prompt', { id: record.id, text: 'go' })).rejects.toThrow(/exited with code 1.*conversation so far is kept/s)
    expect(await stateOf(record.id)).toMatchObject({ status: 'idle', error: expect.stringContaining('exited with code 1') })
    expect(await host.request('sessions.prompt', { id: record.id, text: 'again' })).toEqual({ stopReason: 'end_turn' })
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'assistant').map((e) => (e.kind === 'assistant' ? e.text : ''))).toEqual(['half an answer', 'whole answer'])
  })
})
