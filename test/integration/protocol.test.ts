import { createRequire } from 'node:module'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { Host as HostClass } from '../../electron/host/host'
import { confirmEverything, entriesOf, fold, removeDir, scriptedAgent, tempDir } from '../helpers'
import { schemaChecker } from '../schema-check'

/**
 * What the Host sends to agents is checked against the protocol's JSON schema
 * shipped with the SDK, and for fields the schema does not define.
 * And what agents send that the SDK could not parse is kept, not dropped.
 */

const require = createRequire(import.meta.url)
const schema = require('@agentclientprotocol/sdk/schema/v1/schema.unstable.json') as { $defs: Record<string, Record<string, unknown>> }

/** The schema type of each message the client may send, by method. */
const outgoingRequests: Record<string, string> = {
  initialize: 'InitializeRequest',
  authenticate: 'AuthenticateRequest',
  logout: 'LogoutRequest',
  'session/new': 'NewSessionRequest',
  'session/load': 'LoadSessionRequest',
  'session/list': 'ListSessionsRequest',
  'session/resume': 'ResumeSessionRequest',
  'session/close': 'CloseSessionRequest',
  'session/delete': 'DeleteSessionRequest',
  'session/fork': 'ForkSessionRequest',
  'session/set_mode': 'SetSessionModeRequest',
  'session/set_config_option': 'SetSessionConfigOptionRequest',
  'session/set_model': 'SetSessionModelRequest',
  'session/prompt': 'PromptRequest'
}
const outgoingNotifications: Record<string, string> = { 'session/cancel': 'CancelNotification', '$/cancel_request': 'CancelRequestNotification' }
/** Our answers to the agent's requests, by the method they answer. */
const outgoingResults: Record<string, string> = {
  'fs/read_text_file': 'ReadTextFileResponse',
  'fs/write_text_file': 'WriteTextFileResponse',
  'session/request_permission': 'RequestPermissionResponse'
}

/**
 * Validators for the schema's types. session/set_model left the schema for
 * config options; it is checked against the shape the seed request schema
 * (shared/spec) gives it.
 */
/** The v1 schema, plus `session/set_model`, which older agents still announce and the SDK's schema no longer defines. */
const { validator: schemaValidator, unknownKeys } = schemaChecker(
  {
    ...schema.$defs,
    SetSessionModelRequest: {
      type: 'object',
      properties: { sessionId: { type: 'string' }, modelId: { type: 'string' }, _meta: { type: ['object', 'null'] } },
      required: ['sessionId', 'modelId']
    }
  },
  { extraKeys: ['sessionId', 'modelId'] }
)

interface Traffic {
  direction: 'in' | 'out'
  message: Record<string, unknown>
}

let root: string
let dataDir: string
let projectDir: string
let traffic: Traffic[]
let host: Host

async function start(): Promise<Host> {
  host = await HostClass.open({
    dataDir,
    version: 'test',
    confirmCommand: confirmEverything,
    presets: [],
    onAgentMessage: (_agent, direction, message) => traffic.push({ direction, message: message as Record<string, unknown> })
  })
  return host
}

beforeEach(async () => {
  root = await tempDir('protocol')
  dataDir = join(root, 'data')
  projectDir = join(root, 'project')
  await mkdir(projectDir)
  traffic = []
  await start()
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

describe('what the Host sends agents', () => {
  it('conforms to the ACP JSON schema across every method it uses', async () => {
    const stateDir = join(root, 'state')
    const agent = await host.request(
      'agents.add',
      scriptedAgent(stateDir, {
        SCRIPTED_AGENT_SESSION_STATE: '1',
        SCRIPTED_AGENT_SESSIONS: 'list,resume,close,delete,fork',
        SCRIPTED_AGENT_MCP: 'http,sse'
      })
    )
    const { id: projectId } = await host.request('projects.add', { cwd: projectDir })
    // MCP servers of every transport ride along on session/new, load, resume and fork.
    await host.request('mcp.save', { name: 'local', transport: 'stdio', command: 'node', args: ['server.js'], env: [{ name: 'MODE', value: 'ro' }] })
    await host.request('mcp.save', { name: 'remote', transport: 'http', url: 'https://example.com/mcp', headers: [{ name: 'X-Trace', value: 'on' }] })
    await host.request('mcp.save', { name: 'legacy', transport: 'sse', url: 'https://example.com/sse' })
    await writeFile(join(projectDir, 'a.txt'), 'hello')
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.setMode', { id: record.id, modeId: 'code' })
    await host.request('sessions.setConfigOption', { id: record.id, configId: 'model', value: 'smart' })
    await host.request('sessions.setConfigOption', { id: record.id, configId: 'verbose', value: true })
    await host.request('sessions.setModel', { id: record.id, modelId: 'scripted-large' })
    const turn = host.request('sessions.prompt', {
      id: record.id,
      text: `/read ${join(projectDir, 'a.txt')}\n/write ${join(projectDir, 'b.txt')} new\n/read ${join(root, 'outside.txt')}\n/permission`
    })
    await expect.poll(() => traffic.some((t) => t.message.method === 'session/request_permission')).toBe(true)
    const state = (await host.request('sessions.open', { id: record.id })).state
    await host.request('sessions.respondPermission', { id: record.id, requestId: state.permissions![0].requestId, optionId: 'allow' })
    await turn
    await host.request('sessions.prompt', {
      id: record.id,
      text: 'with files',
      attachments: [
        { type: 'resource_link', uri: 'file:///project/a.txt', name: 'a.txt', mimeType: 'text/plain' },
        { type: 'resource', uri: 'file:///project/b.txt', text: 'b', mimeType: 'text/plain' }
      ]
    })
    const long = host.request('sessions.prompt', { id: record.id, text: '/sleep 5000' })
    await expect.poll(async () => (await host.request('sessions.open', { id: record.id })).state.status).toBe('running')
    await host.request('sessions.cancel', { id: record.id })
    await long
    await host.request('sessions.import', { projectId, agentId: agent.id })
    const fork = await host.request('sessions.fork', { id: record.id })
    await host.request('sessions.close', { id: record.id })
    await host.request('sessions.prompt', { id: record.id, text: 'back again' }) // resumes
    await host.request('sessions.delete', { id: fork.id })
    await host.close()
    // A fresh host: continue through session/load for an agent without resume.
    await start()
    const plain = await host.request('agents.add', scriptedAgent(stateDir, {}, 'Plain'))
    const other = await host.request('sessions.new', { projectId, agentId: plain.id })
    await host.request('sessions.prompt', { id: other.id, text: 'hi' })
    await host.close()
    await start()
    await host.request('sessions.continue', { id: other.id })

    const validator = schemaValidator
    const requestMethods = new Map<unknown, string>()
    for (const { direction, message } of traffic) {
      if (direction === 'in' && typeof message.method === 'string' && 'id' in message) requestMethods.set(message.id, message.method)
    }
    const failures: string[] = []
    const seen = new Set<string>()
    for (const { direction, message } of traffic) {
      if (direction !== 'out') continue
      expect(message.jsonrpc).toBe('2.0')
      let type: string | undefined
      let payload: unknown
      if (typeof message.method === 'string') {
        type = 'id' in message ? outgoingRequests[message.method] : outgoingNotifications[message.method]
        payload = message.params
        seen.add(message.method)
        if (!type) failures.push(`sent ${message.method}, which is not a client method`)
      } else if ('result' in message) {
        const answered = requestMethods.get(message.id)
        type = answered ? outgoingResults[answered] : undefined
        payload = message.result
        if (answered) seen.add(`answer to ${answered}`)
        if (!type) failures.push(`answered ${String(answered)}, which the client does not serve`)
      } else {
        const error = message.error as { code?: unknown; message?: unknown }
        if (typeof error?.code !== 'number' || typeof error.message !== 'string') failures.push(`malformed error ${JSON.stringify(message)}`)
        seen.add('error')
        continue
      }
      if (!type) continue
      const validate = validator(type)
      if (!validate(payload)) failures.push(`${type}: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${JSON.stringify(payload).slice(0, 300)}`)
      for (const key of unknownKeys(payload)) failures.push(`${type}: field ${key} is not in the protocol`)
    }
    expect(failures).toEqual([])
    // Each agent got the MCP servers over the transports it announces (the plain one: stdio only).
    const newSessions = traffic.filter((t) => t.direction === 'out' && t.message.method === 'session/new')
    expect(newSessions.map((t) => (t.message.params as { mcpServers: { name: string }[] }).mcpServers.map((m) => m.name))).toEqual([
      ['local', 'remote', 'legacy'],
      ['local']
    ])
    // The scenario reached every method the Host uses today.
    expect([...seen].sort()).toEqual(
      [
        'answer to fs/read_text_file',
        'answer to fs/write_text_file',
        'answer to session/request_permission',
        'error',
        'initialize',
        'session/cancel',
        'session/close',
        'session/delete',
        'session/fork',
        'session/list',
        'session/load',
        'session/new',
        'session/prompt',
        'session/resume',
        'session/set_config_option',
        'session/set_mode',
        'session/set_model'
      ].sort()
    )
  })
})

describe('what agents send that the SDK cannot parse', () => {
  it('keeps unknown and malformed updates verbatim and shows them, and logs stdout garbage, without breaking the turn', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
    const { id: projectId } = await host.request('projects.add', { cwd: projectDir })
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    const result = await host.request('sessions.prompt', {
      id: record.id,
      text: [
        '/raw {"sessionUpdate":"hologram_update","beam":1}',
        '/raw {"sessionUpdate":"agent_message_chunk"}',
        '/raw {"sessionUpdate":"tool_call","toolCallId":"t1","title":"x","content":[{"type":"diff"}]}',
        '/garbage',
        '/say still fine'
      ].join('\n')
    })
    expect(result.stopReason).toBe('end_turn')
    const snapshot = await host.request('sessions.open', { id: record.id })
    const kept = snapshot.records.filter((r) => r.t === 'unsupported')
    expect(kept.map((r) => (r as { raw: unknown }).raw)).toEqual([
      { sessionUpdate: 'hologram_update', beam: 1 },
      { sessionUpdate: 'agent_message_chunk' },
      { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'x', content: [{ type: 'diff' }] }
    ])
    const thread = fold(snapshot.records)
    const shown = entriesOf(thread, 'unsupported') as { reason: string; raw: string }[]
    expect(shown.map((e) => e.reason)).toEqual([
      "an update kind this version of Switchboard does not know ('hologram_update')",
      'agent_message_chunk without a valid content block',
      'tool_call without a toolCallId and title, or with malformed content'
    ])
    expect(shown[0].raw).toContain('"beam": 1')
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('still fine')
    await expect
      .poll(async () => readFile(join(dataDir, 'logs', `${agent.id}.log`), 'utf8'))
      .toContain('ignored a line on stdout that is not JSON-RPC: this is not json')
  })
})
