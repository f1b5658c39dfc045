import { randomUUID } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import type { HostEvent } from '../../shared/contract'
import type { AgentRuntimeState } from '../../shared/domain'
import type { Thread, ToolCallEntry } from '../../shared/thread'
import { confirmEverything, entriesOf, fold, processesWithEnv, recordEvents, removeDir, scriptedAgent, tempDir } from '../helpers'
import { schemaChecker } from '../schema-check'

/**
 * ACP protocol version 2 (the draft behind the SDK's `/experimental/v2`
 * entry), for agents set to ask for it: a turn over version 2 arrives in the
 * thread exactly as over version 1; an agent that answers 1 is spoken to in
 * version 1; one that answers a version we do not speak is refused and
 * stopped. Every message the Host sends over version 2, and every one the
 * scripted agent sends back, is checked against the SDK's version 2 schema.
 */

const require = createRequire(import.meta.url)
const schema = require('@agentclientprotocol/sdk/schema/v2/schema.json') as { $defs: Record<string, unknown> }
const sdkV1ExampleAgent = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', 'acp-sdk-v1', 'dist', 'examples', 'agent.js')

/** What the client may send in version 2, by method (requests and notifications), and its answers to the agent. */
const clientSends: Record<string, string> = {
  initialize: 'InitializeRequest',
  'auth/login': 'LoginAuthRequest',
  'auth/logout': 'LogoutAuthRequest',
  'session/new': 'NewSessionRequest',
  'session/list': 'ListSessionsRequest',
  'session/resume': 'ResumeSessionRequest',
  'session/close': 'CloseSessionRequest',
  'session/delete': 'DeleteSessionRequest',
  'session/set_config_option': 'SetSessionConfigOptionRequest',
  'session/prompt': 'PromptRequest',
  'session/cancel': 'CancelSessionNotification',
  '$/cancel_request': 'CancelRequestNotification'
}
const clientAnswers: Record<string, string> = { 'session/request_permission': 'RequestPermissionResponse' }
/** What the (scripted) agent sends: checked too, so the adapter is tested against real version 2 shapes. */
const agentSends: Record<string, string> = { 'session/update': 'UpdateSessionNotification', 'session/request_permission': 'RequestPermissionRequest' }
const agentAnswers: Record<string, string> = {
  initialize: 'InitializeResponse',
  'session/new': 'NewSessionResponse',
  'session/list': 'ListSessionsResponse',
  'session/resume': 'ResumeSessionResponse',
  'session/prompt': 'PromptResponse',
  'session/set_config_option': 'SetSessionConfigOptionResponse'
}

const { validator, unknownKeys } = schemaChecker(schema.$defs, { validateFormats: false })

interface Traffic {
  agentId: string
  direction: 'in' | 'out'
  message: Record<string, unknown>
}

let root: string
let projectDir: string
let stateDir: string
let projectId: string
let traffic: Traffic[]
let events: HostEvent[]
let host: Host

beforeEach(async () => {
  root = await tempDir('v2')
  projectDir = join(root, 'project')
  stateDir = join(root, 'agent-state')
  await mkdir(projectDir)
  traffic = []
  host = await Host.open({
    dataDir: join(root, 'data'),
    version: 'test',
    confirmCommand: confirmEverything,
    presets: [],
    initializeTimeoutMs: 20_000,
    onAgentMessage: (agentId, direction, message) => traffic.push({ agentId, direction, message: message as Record<string, unknown> })
  })
  events = recordEvents(host)
  projectId = (await host.request('projects.add', { cwd: projectDir })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function addAgent(name: string, env: Record<string, string>, protocol?: 1 | 2): Promise<string> {
  return (await host.request('agents.add', { ...scriptedAgent(stateDir, env, name), ...(protocol ? { protocol } : {}) })).id
}

async function agentState(agentId: string): Promise<AgentRuntimeState> {
  return (await host.request('agents.states', {})).find((s) => s.agentId === agentId)!
}

async function threadOf(id: string): Promise<Thread> {
  return fold((await host.request('sessions.open', { id })).records)
}

/** Runs a prompt, allowing the permission request it raises. */
async function promptAllowing(id: string, text: string): Promise<string> {
  const turn = host.request('sessions.prompt', { id, text })
  let requestId: string | undefined
  await expect
    .poll(async () => (requestId = (await host.request('sessions.open', { id })).state.permissions?.[0]?.requestId), { timeout: 20_000 })
    .toBeTruthy()
  await host.request('sessions.respondPermission', { id, requestId: requestId!, optionId: 'allow' })
  return (await turn).stopReason
}

/** A turn with everything the thread shows, then a cancelled one; the folded thread without entry ids (message ids are random). */
async function scriptedTurns(agentId: string): Promise<{ id: string; entries: unknown[]; title?: string }> {
  const record = await host.request('sessions.new', { projectId, agentId })
  const script = [
    '/stream 3',
    '/think pondering',
    '/tool lint',
    `/read ${join(projectDir, 'a.txt')}`,
    `/write ${join(projectDir, 'b.txt')} new`,
    '/plan First;Second',
    '/title Renamed by the agent',
    '/permission',
    '/say done'
  ].join('\n')
  expect(await promptAllowing(record.id, script)).toBe('end_turn')
  const long = host.request('sessions.prompt', { id: record.id, text: '/sleep 20000' })
  await expect.poll(async () => (await host.request('sessions.open', { id: record.id })).state.status).toBe('running')
  await host.request('sessions.cancel', { id: record.id })
  expect((await long).stopReason).toBe('cancelled')
  const thread = await threadOf(record.id)
  const title = (await host.request('sessions.list', {})).find((s) => s.id === record.id)?.title
  return { id: record.id, entries: thread.entries.map(({ id: _, ...entry }) => entry), title }
}

/** Checks each message of the agent's traffic against the version 2 schema; returns what was seen. */
function checkV2Traffic(agentId: string): { failures: string[]; seen: Set<string> } {
  const failures: string[] = []
  const seen = new Set<string>()
  const methodOf = { in: new Map<unknown, string>(), out: new Map<unknown, string>() }
  const mine = traffic.filter((t) => t.agentId === agentId)
  for (const { direction, message } of mine) {
    if (typeof message.method === 'string' && 'id' in message) methodOf[direction].set(message.id, message.method)
  }
  for (const { direction, message } of mine) {
    let type: string | undefined
    let payload: unknown
    let label: string
    if (typeof message.method === 'string') {
      label = `${direction === 'out' ? 'sent' : 'received'} ${message.method}`
      type = direction === 'out' ? clientSends[message.method] : agentSends[message.method]
      payload = message.params
      if (direction === 'out' && !type) failures.push(`sent ${message.method}, which is not a version 2 client method`)
    } else if ('result' in message) {
      const answered = direction === 'out' ? methodOf.in.get(message.id) : methodOf.out.get(message.id)
      label = `${direction === 'out' ? 'answered' : 'answer to'} ${String(answered)}`
      type = answered ? (direction === 'out' ? clientAnswers : agentAnswers)[answered] : undefined
      payload = message.result
      if (direction === 'out' && !type) failures.push(`answered ${String(answered)}, which a version 2 client does not serve`)
    } else {
      label = `${direction === 'out' ? 'sent' : 'received'} an error`
    }
    seen.add(label)
    if (!type) continue
    const validate = validator(type)
    if (!validate(payload))
      failures.push(`${label} (${type}): ${JSON.stringify(validate.errors?.slice(0, 3))} in ${JSON.stringify(payload).slice(0, 300)}`)
    if (direction === 'out') for (const key of unknownKeys(payload)) failures.push(`${label} (${type}): field ${key} is not in the protocol`)
  }
  return { failures, seen }
}

describe('an agent set to protocol version 2 that speaks it', () => {
  it('runs a whole turn over version 2 that folds exactly like the same turn over version 1', async () => {
    await writeFile(join(projectDir, 'a.txt'), 'hello')
    const v1Agent = await addAgent('Over v1', { SCRIPTED_AGENT_V2: '1' })
    const v2Agent = await addAgent('Over v2', { SCRIPTED_AGENT_V2: '1', SCRIPTED_AGENT_NAME: 'scripted-v2' }, 2)

    const overV1 = await scriptedTurns(v1Agent)
    const overV2 = await scriptedTurns(v2Agent)
    expect(overV2.entries).toEqual(overV1.entries)
    expect(overV2.title).toBe('Renamed by the agent')
    expect(overV1.title).toBe('Renamed by the agent')
    // The turn really happened (and not twice: the agent's echo of the prompt is not a second user message).
    expect(overV2.entries.filter((e) => (e as { kind: string }).kind === 'user')).toHaveLength(2)
    expect(overV2.entries).toContainEqual(expect.objectContaining({ kind: 'assistant', text: 'chunk 1 chunk 2 chunk 3 ' }))
    expect(overV2.entries).toContainEqual(
      expect.objectContaining({ kind: 'tool_call', title: 'Read ' + join(projectDir, 'a.txt'), status: 'completed' })
    )
    expect(overV2.entries).toContainEqual(
      expect.objectContaining({ kind: 'tool_call', content: [{ type: 'diff', path: join(projectDir, 'b.txt'), oldText: null, newText: 'new' }] })
    )
    expect(overV2.entries).toContainEqual(expect.objectContaining({ kind: 'permission', title: 'Run dangerous command', allowed: true }))
    expect(overV2.entries.slice(-2)).toMatchObject([
      { kind: 'user', text: '/sleep 20000' },
      { kind: 'stop', stopReason: 'cancelled' }
    ])
    expect(overV2.entries.filter((e) => (e as { kind: string }).kind === 'unsupported')).toEqual([])

    // The session record takes the agent's title, as over version 1.
    expect((await host.request('sessions.list', {})).find((s) => s.id === overV2.id)?.title).toBe('Renamed by the agent')
    expect(await agentState(v2Agent)).toMatchObject({
      status: 'ready',
      protocolVersion: 2,
      agentInfo: { name: 'scripted-v2', title: 'Scripted Agent', version: '1.0.0' },
      capabilities: { protocolVersion: 2, loadSession: true, session: { list: true, resume: true, close: true, fork: false } }
    })
    expect((await agentState(v2Agent)).protocolNote).toBeUndefined()
    // Version 1 stays the default, even with an agent that also speaks 2.
    expect(await agentState(v1Agent)).toMatchObject({ protocolVersion: 1, capabilities: { protocolVersion: 1 } })
    const initializes = traffic.filter((t) => t.direction === 'out' && t.message.method === 'initialize')
    expect(initializes.map((t) => [t.agentId, (t.message.params as { protocolVersion: number }).protocolVersion])).toEqual([
      [v1Agent, 1],
      [v2Agent, 2]
    ])
    expect(initializes[1].message.params).toEqual({
      protocolVersion: 2,
      info: { name: 'switchboard', title: 'Switchboard', version: 'test' },
      capabilities: { auth: { terminal: {} }, elicitation: { form: {}, url: {} } }
    })

    const { failures, seen } = checkV2Traffic(v2Agent)
    expect(failures).toEqual([])
    for (const expected of [
      'sent initialize',
      'sent session/new',
      'sent session/prompt',
      'sent session/cancel',
      'answered session/request_permission',
      'received session/update'
    ]) {
      expect(seen).toContain(expected)
    }
  }, 90_000)

  it('lists, resumes, replays, closes and deletes sessions, sets options, and shows agent-owned terminals', async () => {
    const env = { SCRIPTED_AGENT_V2: '1', SCRIPTED_AGENT_SESSIONS: 'delete', SCRIPTED_AGENT_SESSION_STATE: '1' }
    // A conversation made elsewhere (another client of the same agent, over version 1).
    const elsewhere = await addAgent('Elsewhere', env)
    const kept = await host.request('sessions.new', { projectId, agentId: elsewhere })
    await host.request('sessions.prompt', { id: kept.id, text: 'hello from before' })

    // Set to version 2 through agents.update, as the UI does.
    const agentId = await addAgent('V2', env)
    expect(await host.request('agents.setProtocol', { agentId, protocol: 2 })).toMatchObject({ id: agentId, protocol: 2 })
    expect((await host.request('agents.list', {})).find((a) => a.id === agentId)?.protocol).toBe(2)

    // session/list: the conversation made elsewhere comes in; continuing it replays it (session/resume from the start).
    const { imported } = await host.request('sessions.import', { projectId, agentId })
    expect(imported.map((r) => r.acpSessionId)).toEqual([kept.acpSessionId])
    await host.request('sessions.continue', { id: imported[0].id })
    let thread = await threadOf(imported[0].id)
    expect(thread.entries.map((e) => [e.kind, (e as { text?: string }).text])).toEqual([
      ['user', 'hello from before'],
      ['assistant', 'You said: hello from before']
    ])

    // Configuration options, in version 1's shape for the UI, set through version 2.
    const record = await host.request('sessions.new', { projectId, agentId })
    thread = await threadOf(record.id)
    expect(thread.configOptions?.map((o) => [o.id, o.currentValue])).toEqual([
      ['model', 'fast'],
      ['verbose', false]
    ])
    await host.request('sessions.setConfigOption', { id: record.id, configId: 'model', value: 'smart' })
    await host.request('sessions.setConfigOption', { id: record.id, configId: 'verbose', value: true })
    await host.request('sessions.prompt', { id: record.id, text: '/state' })
    thread = await threadOf(record.id)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toContain('model=smart verbose=true')
    await expect(host.request('sessions.setMode', { id: record.id, modeId: 'code' })).rejects.toThrow(/does not offer modes/)
    await expect(host.request('sessions.fork', { id: record.id })).rejects.toThrow(/cannot fork/)

    // An agent-owned terminal (version 2 has no client terminals): command, output and exit on the tool call.
    await host.request('sessions.prompt', { id: record.id, text: '/terminal echo from-the-agent' })
    thread = await threadOf(record.id)
    const call = entriesOf(thread, 'tool_call').at(-1) as ToolCallEntry
    expect(call).toMatchObject({ title: 'Run echo from-the-agent', status: 'completed' })
    const terminalId = (call.content[0] as { terminalId: string }).terminalId
    expect(thread.terminals[terminalId]).toEqual({
      command: 'echo from-the-agent',
      output: 'from-the-agent\n',
      exitStatus: { exitCode: 0, signal: null }
    })

    // session/close, then a prompt resumes it without replay: nothing doubled.
    const before = (await threadOf(record.id)).entries.length
    await host.request('sessions.close', { id: record.id })
    await host.request('sessions.prompt', { id: record.id, text: 'back again' })
    thread = await threadOf(record.id)
    expect(thread.entries.slice(before).map((e) => e.kind)).toEqual(['user', 'assistant', 'stop'])
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('You said: back again')

    // session/delete, announced by the agent.
    expect(await host.request('sessions.delete', { id: record.id, keepTranscript: false })).toEqual({ agentDeleted: true })

    const { failures, seen } = checkV2Traffic(agentId)
    expect(failures).toEqual([])
    const sent = [...seen].filter((s) => s.startsWith('sent ')).sort()
    expect(sent).toEqual(
      [
        'sent initialize',
        'sent session/list',
        'sent session/resume',
        'sent session/new',
        'sent session/set_config_option',
        'sent session/prompt',
        'sent session/close',
        'sent session/delete'
      ].sort()
    )
    const resumes = traffic
      .filter((t) => t.agentId === agentId && t.message.method === 'session/resume')
      .map((t) => t.message.params as Record<string, unknown>)
    expect(resumes.map((p) => p.replayFrom ?? null)).toEqual([{ type: 'start' }, null])
  }, 90_000)

  it('reports a failed turn and an agent that dies mid-turn as over version 1, and starts it again', async () => {
    const agentId = await addAgent('Fragile', { SCRIPTED_AGENT_V2: '1' }, 2)
    const record = await host.request('sessions.new', { projectId, agentId })
    // The idle state that ends the turn says it failed, with the agent's error.
    await expect(host.request('sessions.prompt', { id: record.id, text: '/say partial\n/fail the build broke' })).rejects.toThrow(
      'Fragile failed the turn: the build broke'
    )
    // The state agrees with the thread: in error, saying why (the next prompt clears it).
    expect((await host.request('sessions.open', { id: record.id })).state).toMatchObject({
      status: 'error',
      error: 'Fragile failed the turn: the build broke',
      errorInThread: true
    })
    await expect(host.request('sessions.prompt', { id: record.id, text: '/stderr dying now\n/exit 7' })).rejects.toThrow(
      /Agent 'Fragile' exited with code 7; stderr: .*dying now.*send again to restart the agent/s
    )
    let thread = await threadOf(record.id)
    expect(entriesOf(thread, 'error').map((e) => (e as { message: string }).message)).toEqual([
      'Fragile failed the turn: the build broke',
      expect.stringMatching(/^Agent 'Fragile' exited with code 7/)
    ])
    // Sending again starts the agent (in version 2) and resumes the session.
    await host.request('sessions.prompt', { id: record.id, text: 'still here?' })
    thread = await threadOf(record.id)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('You said: still here?')
    expect(await agentState(agentId)).toMatchObject({ status: 'ready', protocolVersion: 2 })
  }, 60_000)

  it('signs in and out with auth/login and auth/logout', async () => {
    const agentId = await addAgent('Needs sign-in', { SCRIPTED_AGENT_V2: '1', SCRIPTED_AGENT_AUTH: '1' }, 2)
    const refused = await host.handle('sessions.new', { projectId, agentId })
    expect(refused).toMatchObject({ ok: false, error: { code: 'auth_required', message: expect.stringContaining('Log in with the browser') } })
    expect(await agentState(agentId)).toMatchObject({
      protocolVersion: 2,
      authMethods: [
        { id: 'browser', type: 'agent' },
        { id: 'cli-login', type: 'terminal', args: ['--login'] }
      ],
      capabilities: { auth: { logout: true } }
    })
    await expect(host.request('agents.authenticate', { agentId, methodId: 'cli-login' })).rejects.toThrow(/signs in from a terminal/)
    await host.request('agents.authenticate', { agentId, methodId: 'browser' })
    await host.request('sessions.new', { projectId, agentId })
    await host.request('agents.logout', { agentId })
    expect(await host.handle('sessions.new', { projectId, agentId })).toMatchObject({ ok: false, error: { code: 'auth_required' } })
    const { failures, seen } = checkV2Traffic(agentId)
    expect(failures).toEqual([])
    expect(seen).toContain('sent auth/login')
    expect(seen).toContain('sent auth/logout')
  }, 60_000)
})

describe('an agent set to protocol version 2 that speaks only version 1', () => {
  it('is started again in version 1, says so, and works with everything version 1 has', async () => {
    await writeFile(join(projectDir, 'a.txt'), 'hello')
    const agentId = await addAgent('Only v1', {}, 2)
    const record = await host.request('sessions.new', { projectId, agentId })
    const state = await agentState(agentId)
    expect(state).toMatchObject({ status: 'ready', protocolVersion: 1, capabilities: { protocolVersion: 1 } })
    expect(state.protocolNote).toMatch(/Asked for ACP protocol version 2; Only v1 speaks version 1/)
    // The version 2 attempt was put away quietly: no exit reported, one process left.
    const agentStates = events.filter((e) => e.type === 'agent.state').map((e) => (e.payload as AgentRuntimeState).status)
    expect(agentStates).not.toContain('exited')
    expect(agentStates).not.toContain('error')
    const initializes = traffic
      .filter((t) => t.direction === 'out' && t.message.method === 'initialize')
      .map((t) => t.message.params as Record<string, unknown>)
    expect(initializes.map((p) => p.protocolVersion)).toEqual([2, 1])
    expect(validator('InitializeRequest')(initializes[0])).toBe(true)
    expect(initializes[1]).toMatchObject({ clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } })

    // Version 1's client methods work: the agent reads a file through the Host.
    expect(await promptAllowing(record.id, `/read ${join(projectDir, 'a.txt')}\n/permission`)).toBe('end_turn')
    const thread = await threadOf(record.id)
    expect(entriesOf(thread, 'assistant').map((e) => (e as { text: string }).text)).toEqual(['read 5 chars', 'permission: allow'])
    expect(traffic.some((t) => t.direction === 'in' && t.message.method === 'fs/read_text_file')).toBe(true)
  }, 60_000)

  it('works with the SDK 1.x example agent too, which knows nothing of version 2', async () => {
    const agentId = (
      await host.request('agents.add', {
        name: 'SDK example',
        transport: { kind: 'process', command: process.execPath, args: [sdkV1ExampleAgent], env: {} },
        protocol: 2
      })
    ).id
    await host.request('sessions.new', { projectId, agentId })
    expect(await agentState(agentId)).toMatchObject({ status: 'ready', protocolVersion: 1, protocolNote: expect.stringMatching(/speaks version 1/) })
  }, 60_000)
})

describe('an agent set to protocol version 2 that answers a version Switchboard does not speak', () => {
  it('is refused with a clear message and stopped', async () => {
    const mark = randomUUID()
    const agentId = await addAgent(
      'From the future',
      { SCRIPTED_AGENT_V2: '1', SCRIPTED_AGENT_PROTOCOL_VERSION: '3', SWITCHBOARD_TEST_MARK: mark },
      2
    )
    await expect(host.request('sessions.new', { projectId, agentId })).rejects.toThrow(
      /From the future' answered with a newer ACP protocol version \(3\); Switchboard speaks versions 1 and 2 \(it asked for 2\)\. Update Switchboard/
    )
    expect(await agentState(agentId)).toMatchObject({ status: 'error', message: expect.stringMatching(/version \(3\)/) })
    // The raw answer really was 3, and no other initialize was tried.
    const answers = traffic
      .filter((t) => t.direction === 'in' && 'result' in t.message)
      .map((t) => (t.message.result as { protocolVersion?: number }).protocolVersion)
    expect(answers).toEqual([3])
    expect(traffic.filter((t) => t.direction === 'out' && t.message.method === 'initialize')).toHaveLength(1)
    await expect.poll(() => processesWithEnv(`SWITCHBOARD_TEST_MARK=${mark}`)).toEqual([])
  }, 60_000)
})
