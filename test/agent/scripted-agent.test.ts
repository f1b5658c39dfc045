import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type ClientContext,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type WriteTextFileRequest
} from '@agentclientprotocol/sdk'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { scriptedAgentCommand } from './spawn'

const agentPath = fileURLToPath(new URL('./scripted-agent.ts', import.meta.url))

interface Handlers {
  readTextFile?: (params: ReadTextFileRequest) => Promise<ReadTextFileResponse>
  writeTextFile?: (params: WriteTextFileRequest) => Promise<void>
  requestPermission?: (params: RequestPermissionRequest) => Promise<RequestPermissionResponse>
}

interface Running {
  child: ChildProcessWithoutNullStreams
  agent: ClientContext
  updates: SessionNotification[]
  stderr: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const children: ChildProcessWithoutNullStreams[] = []
let stateDir: string

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'scripted-agent-'))
})

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  await rm(stateDir, { recursive: true, force: true })
})

function start(env: Record<string, string> = {}, handlers: Handlers = {}): Running {
  const { command, args } = scriptedAgentCommand()
  const child = spawn(command, args, {
    cwd: tmpdir(), // the command works from any folder
    env: { ...process.env, SCRIPTED_AGENT_STATE_DIR: stateDir, ...env },
    stdio: ['pipe', 'pipe', 'pipe']
  })
  children.push(child)
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  child.stdin.on('error', () => undefined)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal }))
  )
  const updates: SessionNotification[] = []
  const app = client({ name: 'test' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params)
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      if (!handlers.readTextFile) throw new RequestError(-32601, 'no fs/read_text_file in this test')
      return handlers.readTextFile(params)
    })
    .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
      if (!handlers.writeTextFile) throw new RequestError(-32601, 'no fs/write_text_file in this test')
      await handlers.writeTextFile(params)
      return {}
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      if (!handlers.requestPermission) throw new RequestError(-32601, 'no permission handler in this test')
      return handlers.requestPermission(params)
    })
  const connection = app.connect(
    ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>)
  )
  return { child, agent: connection.agent, updates, stderr: () => stderr, exited }
}

async function initialize(running: Running) {
  return running.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    clientInfo: { name: 'test', version: '0.0.0' }
  })
}

async function newSession(running: Running): Promise<string> {
  await initialize(running)
  const { sessionId } = await running.agent.request(methods.agent.session.new, { cwd: stateDir, mcpServers: [] })
  return sessionId
}

function prompt(running: Running, sessionId: string, text: string) {
  return running.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] })
}

/** A stored session as a second process replays it on session/load; that process is left running. */
async function replayed(sessionId: string): Promise<SessionNotification[]> {
  const next = start()
  await initialize(next)
  await next.agent.request(methods.agent.session.load, { sessionId, cwd: stateDir, mcpServers: [] })
  return next.updates
}

function texts(updates: SessionNotification[], kind: SessionUpdate['sessionUpdate'] = 'agent_message_chunk'): string[] {
  return updates.flatMap(({ update }) =>
    update.sessionUpdate === kind && 'content' in update && !Array.isArray(update.content) && update.content?.type === 'text'
      ? [update.content.text]
      : []
  )
}

describe('the scripted ACP agent, as a subprocess over stdio', () => {
  it('answers initialize with its capabilities', async () => {
    const running = start()
    const response = await initialize(running)
    expect(response.protocolVersion).toBe(PROTOCOL_VERSION)
    expect(response.agentCapabilities?.loadSession).toBe(true)
    expect(response.agentCapabilities?.promptCapabilities).toEqual({ image: false, audio: false, embeddedContext: true })
    expect(response.agentInfo).toEqual({ name: 'scripted-agent', version: '1.0.0' })
    expect(response.authMethods).toEqual([])
  })

  it('streams /stream N chunks in order under one messageId and ends the turn', async () => {
    const running = start()
    const sessionId = await newSession(running)
    expect(sessionId).toMatch(/^sess-/)
    const result = await prompt(running, sessionId, '/stream 5')
    expect(result.stopReason).toBe('end_turn')
    expect(running.updates.every((n) => n.sessionId === sessionId)).toBe(true)
    expect(texts(running.updates)).toEqual(['chunk 1 ', 'chunk 2 ', 'chunk 3 ', 'chunk 4 ', 'chunk 5 '])
    const ids = new Set(running.updates.map(({ update }) => ('messageId' in update ? update.messageId : undefined)))
    expect(ids.size).toBe(1)
    expect([...ids][0]).toEqual(expect.any(String))
  })

  it('echoes a prompt without commands in a few chunks', async () => {
    const running = start()
    const sessionId = await newSession(running)
    expect((await prompt(running, sessionId, 'hello there, agent')).stopReason).toBe('end_turn')
    const chunks = texts(running.updates)
    expect(chunks.length).toBeGreaterThanOrEqual(2)
    expect(chunks.join('')).toBe('You said: hello there, agent')
  })

  it('reads a file through the client and reports it, and reports a refusal', async () => {
    const calls: ReadTextFileRequest[] = []
    const running = start(
      {},
      {
        readTextFile: async (params) => {
          calls.push(params)
          if (params.path.endsWith('secret.txt')) throw new RequestError(-32002, 'outside the session folder')
          return { content: 'file contents' }
        }
      }
    )
    const sessionId = await newSession(running)
    const notes = join(stateDir, 'notes.txt')
    const secret = join(stateDir, 'secret.txt')
    const result = await prompt(running, sessionId, `/read ${notes}\n/read ${secret}`)
    expect(result.stopReason).toBe('end_turn')
    expect(calls).toEqual([
      { sessionId, path: notes },
      { sessionId, path: secret }
    ])
    const kinds = running.updates.map(({ update }) => update.sessionUpdate)
    expect(kinds).toEqual(['tool_call', 'tool_call_update', 'agent_message_chunk', 'tool_call', 'tool_call_update', 'agent_message_chunk'])
    expect(running.updates[0].update).toMatchObject({ toolCallId: 'tool-1', kind: 'read', title: `Read ${notes}`, locations: [{ path: notes }] })
    expect(running.updates[1].update).toMatchObject({
      toolCallId: 'tool-1',
      status: 'completed',
      content: [{ type: 'content', content: { type: 'text', text: 'file contents' } }]
    })
    expect(running.updates[4].update).toMatchObject({
      toolCallId: 'tool-2',
      status: 'failed',
      content: [{ type: 'content', content: { type: 'text', text: 'outside the session folder' } }]
    })
    expect(texts(running.updates)).toEqual(['read 13 chars', 'read failed: outside the session folder'])
  })

  it('writes through the client, asks permission, and sends plans, titles and thoughts', async () => {
    const writes: WriteTextFileRequest[] = []
    const running = start(
      {},
      {
        writeTextFile: async (params) => void writes.push(params),
        requestPermission: async (params) => {
          expect(params.options.map((o) => o.optionId)).toEqual(['allow', 'reject'])
          return { outcome: { outcome: 'selected', optionId: 'allow' } }
        }
      }
    )
    const sessionId = await newSession(running)
    const out = join(stateDir, 'out.txt')
    const script = ['/think pondering', '/plan a;b;c', `/write ${out} some text`, '/permission', '/title My title', '/tool Format'].join('\n')
    expect((await prompt(running, sessionId, script)).stopReason).toBe('end_turn')
    expect(writes).toEqual([{ sessionId, path: out, content: 'some text' }])
    const updates = running.updates.map((n) => n.update)
    expect(texts(running.updates, 'agent_thought_chunk')).toEqual(['pondering'])
    expect(updates.find((u) => u.sessionUpdate === 'plan')).toMatchObject({
      entries: [
        { content: 'a', priority: 'medium', status: 'in_progress' },
        { content: 'b', priority: 'medium', status: 'pending' },
        { content: 'c', priority: 'medium', status: 'pending' }
      ]
    })
    expect(updates).toContainEqual(
      expect.objectContaining({
        sessionUpdate: 'tool_call_update',
        status: 'completed',
        content: [{ type: 'diff', path: out, oldText: null, newText: 'some text' }]
      })
    )
    expect(texts(running.updates)).toContain('permission: allow')
    expect(updates).toContainEqual({ sessionUpdate: 'session_info_update', title: 'My title' })
    const tool = updates.filter((u) => 'toolCallId' in u && u.toolCallId === 'tool-3')
    expect(tool.map((u) => ('status' in u ? u.status : undefined))).toEqual(['pending', 'in_progress', 'completed'])
    expect(tool[0]).toMatchObject({ sessionUpdate: 'tool_call', title: 'Format', kind: 'other' })
  })

  it('replays a stored session in order on session/load in a second process, before answering', async () => {
    const first = start()
    const sessionId = await newSession(first)
    await prompt(first, sessionId, '/stream 3\n/tool Format\n/say **done**')
    const firstTurn = first.updates.map((n) => n.update)
    await prompt(first, sessionId, 'and then')
    const secondTurn = first.updates.slice(firstTurn.length).map((n) => n.update)
    first.child.stdin.end()
    expect((await first.exited).code).toBe(0)

    const stored = JSON.parse(await readFile(join(stateDir, `${sessionId}.json`), 'utf8')) as SessionUpdate[]
    const userChunk = (text: string) => ({ sessionUpdate: 'user_message_chunk', messageId: expect.any(String), content: { type: 'text', text } })
    const expected: SessionUpdate[] = [stored[0], ...firstTurn, stored[firstTurn.length + 1], ...secondTurn]
    expect(stored[0]).toEqual(userChunk('/stream 3\n/tool Format\n/say **done**'))
    expect(stored[firstTurn.length + 1]).toEqual(userChunk('and then'))

    const second = start()
    await initialize(second)
    let seenAtResponse = -1
    await second.agent.request(methods.agent.session.load, { sessionId, cwd: stateDir, mcpServers: [] }).then(() => {
      seenAtResponse = second.updates.length
    })
    expect(stored).toEqual(expected)
    expect(second.updates.map((n) => n.update)).toEqual(expected)
    expect(seenAtResponse).toBe(expected.length)
    expect(second.updates.every((n) => n.sessionId === sessionId)).toBe(true)

    // The session goes on, and tool call ids keep counting.
    second.updates.length = 0
    expect((await prompt(second, sessionId, '/tool Again')).stopReason).toBe('end_turn')
    expect(second.updates[0].update).toMatchObject({ sessionUpdate: 'tool_call', toolCallId: 'tool-2' })

    await expect(second.agent.request(methods.agent.session.load, { sessionId: 'sess-nope', cwd: stateDir, mcpServers: [] })).rejects.toThrow(
      /Unknown session sess-nope/
    )
  })

  it('stops a turn on session/cancel', async () => {
    const running = start()
    const sessionId = await newSession(running)
    const turn = prompt(running, sessionId, '/stream 2\n/sleep 30000\n/stream 2')
    while (running.updates.length < 2) await new Promise((r) => setTimeout(r, 10))
    await running.agent.notify(methods.agent.session.cancel, { sessionId })
    expect((await turn).stopReason).toBe('cancelled')
    expect(texts(running.updates)).toEqual(['chunk 1 ', 'chunk 2 '])
  })

  it('spaces chunks by SCRIPTED_AGENT_CHUNK_DELAY_MS and stops streaming once cancelled', async () => {
    const running = start({ SCRIPTED_AGENT_CHUNK_DELAY_MS: '40' })
    const sessionId = await newSession(running)
    const turn = prompt(running, sessionId, '/stream 100')
    while (running.updates.length < 3) await new Promise((r) => setTimeout(r, 5))
    await running.agent.notify(methods.agent.session.cancel, { sessionId })
    expect((await turn).stopReason).toBe('cancelled')
    const sent = texts(running.updates)
    expect(sent.length).toBeGreaterThanOrEqual(3)
    expect(sent.length).toBeLessThan(10)
    expect(sent).toEqual(sent.map((_, i) => `chunk ${i + 1} `))
  })

  it('fails a turn with /fail, tolerates /garbage, and dies mid-turn with /exit', async () => {
    const running = start()
    const sessionId = await newSession(running)
    await expect(prompt(running, sessionId, '/say before\n/fail scripted boom')).rejects.toThrow(/scripted boom/)
    expect(texts(running.updates)).toEqual(['before'])
    expect((await prompt(running, sessionId, '/garbage\n/say after')).stopReason).toBe('end_turn')
    expect(texts(running.updates)).toContain('after')

    const turn = prompt(running, sessionId, '/stream 2\n/stderr hello stderr\n/exit 7')
    turn.catch(() => undefined)
    expect((await running.exited).code).toBe(7)
    await expect(turn).rejects.toThrow()
    expect(running.stderr()).toContain('hello stderr')
    expect(running.stderr()).toContain('scripted-agent: exiting with 7 mid-turn')
    // What it sent before dying is kept: the next process replays it.
    expect(texts(await replayed(sessionId)).slice(-2)).toEqual(['chunk 1 ', 'chunk 2 '])
  })

  it('keeps every update it sent when killed mid-turn: the next process replays them', async () => {
    const running = start()
    const sessionId = await newSession(running)
    await prompt(running, sessionId, '/say first turn')
    const firstTurn = running.updates.map((n) => n.update)
    const turn = prompt(running, sessionId, '/stream 50\n/tool Format\n/stream 2\n/sleep 30000')
    turn.catch(() => undefined)
    // Killed asleep after its last update, the turn not ended.
    while (texts(running.updates).filter((t) => t === 'chunk 2 ').length < 2) await new Promise((r) => setTimeout(r, 10))
    const secondTurn = running.updates.slice(firstTurn.length).map((n) => n.update)
    running.child.kill('SIGKILL')
    await running.exited

    const userChunk = (text: string) => ({ sessionUpdate: 'user_message_chunk', messageId: expect.any(String), content: { type: 'text', text } })
    expect(secondTurn).toHaveLength(50 + 3 + 2)
    expect((await replayed(sessionId)).map((n) => n.update)).toEqual([
      userChunk('/say first turn'),
      ...firstTurn,
      userChunk('/stream 50\n/tool Format\n/stream 2\n/sleep 30000'),
      ...secondTurn
    ])
  })

  it('refuses a relative cwd', async () => {
    const running = start()
    await initialize(running)
    await expect(running.agent.request(methods.agent.session.new, { cwd: 'relative/dir', mcpServers: [] })).rejects.toThrow(/absolute/)
  })

  it('does not offer session/load with SCRIPTED_AGENT_LOAD=0', async () => {
    const running = start({ SCRIPTED_AGENT_LOAD: '0', SCRIPTED_AGENT_NAME: 'no-load' })
    const response = await initialize(running)
    expect(response.agentCapabilities?.loadSession).toBe(false)
    expect(response.agentInfo?.name).toBe('no-load')
    await expect(running.agent.request(methods.agent.session.load, { sessionId: 'sess-x', cwd: stateDir, mcpServers: [] })).rejects.toThrow()
  })

  it('exits with code 3 and a message on stderr with SCRIPTED_AGENT_INIT=exit', async () => {
    const running = start({ SCRIPTED_AGENT_INIT: 'exit' })
    const answer = initialize(running)
    answer.catch(() => undefined)
    expect((await running.exited).code).toBe(3)
    expect(running.stderr()).toContain('scripted-agent: cannot start: missing credentials')
    await expect(answer).rejects.toThrow()
  })

  it('can be started directly by path too', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', agentPath], {
      env: { ...process.env, SCRIPTED_AGENT_STATE_DIR: stateDir, SCRIPTED_AGENT_INIT: 'exit' },
      stdio: ['pipe', 'pipe', 'pipe']
    })
    children.push(child)
    const code = new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)))
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } })}\n`)
    expect(await code).toBe(3)
  })
})
