/**
 * A scripted ACP agent for tests: a real subprocess speaking ACP over stdio,
 * standing in for Claude Code, Gemini or Codex. Run it with
 * `node --import tsx test/agent/scripted-agent.ts` (or see ./spawn.ts).
 *
 * stdout is the protocol pipe: nothing but ACP messages is written there
 * (except on purpose by `/garbage`). Diagnostics go to stderr.
 *
 * The prompt text is a script; see README.md in this folder for the commands
 * and the environment variables.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { dirname, isAbsolute, join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import {
  agent,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type AgentContext,
  type ClientCapabilities,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type ContentBlock,
  type CreateTerminalRequest,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionConfigOption,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
  type ToolKind
} from '@agentclientprotocol/sdk'
import type * as v2 from '@agentclientprotocol/sdk/experimental/v2'
import { createTwoFilesPatch } from 'diff'
import { XSS_CORPUS } from './xss-corpus'
import { hostileCommand } from './hostile'
import { pathologicalText } from './pathological'

// ---------------------------------------------------------------------------
// Configuration

const env = process.env
const stateDir = env.SCRIPTED_AGENT_STATE_DIR ? env.SCRIPTED_AGENT_STATE_DIR : null
const loadSession = env.SCRIPTED_AGENT_LOAD !== '0'
const initMode = env.SCRIPTED_AGENT_INIT ?? ''
const chunkDelayMs = Math.max(0, Number(env.SCRIPTED_AGENT_CHUNK_DELAY_MS ?? '0') || 0)
/** How many chunks go out between two delays (a steady rate above 1,000 chunks/s with whole-millisecond delays). */
const chunksPerDelay = Math.max(1, Math.floor(Number(env.SCRIPTED_AGENT_CHUNKS_PER_DELAY ?? '1') || 1))
const agentName = env.SCRIPTED_AGENT_NAME || 'scripted-agent'
/** Answer initialize with this protocol version instead of the SDK's (tests version negotiation). */
const protocolVersion = env.SCRIPTED_AGENT_PROTOCOL_VERSION ? Number(env.SCRIPTED_AGENT_PROTOCOL_VERSION) : PROTOCOL_VERSION
/**
 * `1`: the agent needs signing in: session/new and prompts fail with
 * auth_required (-32000) until `authenticate` succeeds with `browser`, or with
 * `api-key` while SCRIPTED_KEY=sekret is in its environment. Announces logout.
 */
const needsAuth = env.SCRIPTED_AGENT_AUTH === '1'
/**
 * `1` (with SCRIPTED_AGENT_AUTH): also offers `pasted-key`, a method that takes
 * an API key the way Gemini CLI does: announced with `_meta["api-key"]`, the
 * key read from authenticate's `_meta["api-key"]` and kept in this process only.
 */
const keyInMeta = env.SCRIPTED_AGENT_KEY_META === '1'
/** Where a terminal sign-in (`--login`) leaves its credentials; an agent started later finds them. */
const credentialsFile = stateDir ? join(stateDir, 'credentials') : null
let authenticated = credentialsFile !== null && existsSync(credentialsFile)
function requireAuth(): void {
  if (needsAuth && !authenticated) throw new RequestError(-32000, 'Authentication required')
}
/** SCRIPTED_AGENT_PROMPT: the prompt content it accepts beyond text and links (comma-separated image, audio, embeddedContext). */
function promptCapabilities(): { image: boolean; audio: boolean; embeddedContext: boolean } {
  const accepted = new Set((env.SCRIPTED_AGENT_PROMPT ?? 'embeddedContext').split(',').map((k) => k.trim()))
  return { image: accepted.has('image'), audio: accepted.has('audio'), embeddedContext: accepted.has('embeddedContext') }
}
/** The content of the prompt being answered (for /blocks). */
let currentPrompt: ContentBlock[] = []
/** Optional session methods to announce and serve: any of list, resume, close, delete, fork (comma-separated). */
const sessionMethods = new Set(
  (env.SCRIPTED_AGENT_SESSIONS ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
)
/** SCRIPTED_AGENT_MCP: the MCP transports it announces besides stdio (comma-separated http, sse; `mcpCapabilities`). */
const mcpTransports = new Set(
  (env.SCRIPTED_AGENT_MCP ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
)

/**
 * Every session request's `mcpServers`, appended as one JSON line
 * `{ method, sessionId, mcpServers }` to `<state dir>/mcp-received.jsonl`, so a
 * test can read exactly what the client sent (also for session/new, before any prompt).
 */
function recordMcpServers(method: string, sessionId: string, mcpServers: unknown): void {
  if (!stateDir) return
  appendFileSync(join(stateDir, 'mcp-received.jsonl'), `${JSON.stringify({ method, sessionId, mcpServers })}\n`)
}
/**
 * `1`: announces that it takes prompts mid-turn as Claude Code does
 * (`agentCapabilities._meta.claudeCode.promptQueueing`): a prompt that comes
 * while a turn runs is taken at once, the running turn stops at its next step
 * and answers `end_turn`, and the new prompt's script runs on in the same turn.
 */
const promptQueueing = env.SCRIPTED_AGENT_PROMPT_QUEUEING === '1'
/**
 * `1`: announces the steering extension as claude-agent-acp does (top-level
 * `_meta.steering.supported`) and takes `_session/steering`: while a turn
 * runs, the text is taken into it (answer `injected`, then message
 * `steered: TEXT` at the turn's next step); with no turn running, `promptRequired` (with that `_meta`) and
 * nothing happens. Each request is appended to `steering.jsonl` in the state folder.
 */
const steering = env.SCRIPTED_AGENT_STEERING === '1' || env.SCRIPTED_AGENT_STEERING === 'idle'
/** `1`: sessions offer modes, configuration options (a model select, a boolean) and older-style models. */
const offerSessionState = env.SCRIPTED_AGENT_SESSION_STATE === '1'
/**
 * `1`: announces `sessionCapabilities.systemPrompt: {}` (unstable; `append` mode only) and keeps the
 * `systemPrompt` each session/new, load, resume and fork carried (`/system` says it). Without it, a
 * session request that carries one fails with -32602, as the protocol lets an agent that did not announce it.
 */
const takesSystemPrompt = env.SCRIPTED_AGENT_SYSTEM_PROMPT === '1'
/**
 * What the raw session requests carried as `systemPrompt`, which the SDK's stable schema drops: read off the
 * wire in arrival order (see the stream set up at the end), taken by each handler as it starts, in the same order.
 */
const rawSystemPrompts: { method: string; systemPrompt: unknown }[] = []
function receivedSystemPrompt(method: string): unknown {
  const index = rawSystemPrompts.findIndex((r) => r.method === method)
  const [taken] = index >= 0 ? rawSystemPrompts.splice(index, 1) : []
  if (taken?.systemPrompt === undefined || taken.systemPrompt === null) return undefined
  if (!takesSystemPrompt) throw new RequestError(-32602, 'systemPrompt sent, but this agent does not announce sessionCapabilities.systemPrompt')
  const prompt = taken.systemPrompt as { mode?: unknown; content?: unknown }
  if (prompt.mode !== 'append') throw new RequestError(-32602, `System prompt mode '${String(prompt.mode)}' is not supported (only append)`)
  if (!Array.isArray(prompt.content) || prompt.content.length === 0) throw new RequestError(-32602, 'systemPrompt.content must not be empty')
  return taken.systemPrompt
}
/** `1`: also speak ACP protocol version 2 (the draft), to clients that ask for it, with the same sessions and scripts. */
const speaksV2 = env.SCRIPTED_AGENT_V2 === '1'
type V2Sdk = typeof v2
/**
 * Version 2's SDK, loaded only by an agent that speaks it: building its schemas took every start of this agent about
 * 0.2 s more CPU (0.45 against 0.25 s of user time to load the build, on a loaded machine), and the suite starts it
 * several hundred times, nearly always without version 2.
 */
const v2sdk: V2Sdk | null = speaksV2 ? await import('@agentclientprotocol/sdk/experimental/v2') : null

if (stateDir) mkdirSync(stateDir, { recursive: true })

/**
 * SCRIPTED_AGENT_SCRIPTS: a JSON file mapping a prompt's exact text to the
 * script to run for it, so a prompt can read like a person's (screenshots)
 * while the agent still follows a script.
 */
const promptScripts: Record<string, string> = env.SCRIPTED_AGENT_SCRIPTS
  ? (JSON.parse(readFileSync(env.SCRIPTED_AGENT_SCRIPTS, 'utf8')) as Record<string, string>)
  : {}
function scriptFor(text: string): string {
  return promptScripts[text.trim()] ?? text
}

/** Synchronous stderr write: survives an immediate `process.exit`. */
function log(text: string): void {
  try {
    writeSync(2, text.endsWith('\n') ? text : `${text}\n`)
  } catch {
    // stderr gone: nothing to do
  }
}

// ---------------------------------------------------------------------------
// Sessions

interface Turn {
  controller: AbortController
  /** SCRIPTED_AGENT_PROMPT_QUEUEING: a later prompt took the turn over; this one ends `end_turn`. */
  handedOff?: boolean
  /** Settles once the turn's prompt has been answered. */
  done?: Promise<void>
  /** Version 2: settles once the turn's final idle state has been sent. */
  finished?: Promise<void>
}

/**
 * The client as a turn sees it. Turns are written in protocol version 1's
 * terms; the version 2 peer (SCRIPTED_AGENT_V2=1) converts what they send.
 */
interface Peer {
  update(sessionId: string, update: SessionUpdate): Promise<void>
  requestPermission(request: RequestPermissionRequest, options?: { cancellationSignal?: AbortSignal }): Promise<RequestPermissionResponse>
  /** Version 1's client, for fs/* and terminal/*; null in version 2, which has neither (the agent does the work itself). */
  v1: AgentContext | null
  /** Version 2 only: updates that have no version 1 form (agent-owned terminals). */
  v2Update?(sessionId: string, update: v2.SessionUpdate): Promise<void>
  /** elicitation/create and elicitation/complete, which have the same shape in both versions. */
  elicit(request: CreateElicitationRequest): Promise<CreateElicitationResponse>
  elicitationComplete(elicitationId: string): Promise<void>
}

function v1Peer(client: AgentContext): Peer {
  return {
    update: (sessionId, update) => client.notify(methods.client.session.update, { sessionId, update }),
    requestPermission: (request, options) => client.request(methods.client.session.requestPermission, request, options),
    elicit: (request) => client.request(methods.client.elicitation.create, request),
    elicitationComplete: (elicitationId) => client.notify(methods.client.elicitation.complete, { elicitationId }),
    v1: client
  }
}

interface Session {
  id: string
  history: SessionUpdate[]
  /** SCRIPTED_AGENT_STEERING: texts steered into the running turn, taken at its next step. */
  steered?: string[]
  toolCounter: number
  turn: Turn | null
  cwd: string
  /** What the client sent as additionalDirectories when the session started (null: none sent). */
  additionalDirectories: string[] | null
  /** The mcpServers of the last session/new, load, resume or fork for this session. */
  mcpServers: unknown[]
  /** The `systemPrompt` of the last session/new, load, resume or fork (undefined: none sent), as on the wire. */
  systemPrompt?: unknown
  title: string | null
  /** Modes, configuration and model, when SCRIPTED_AGENT_SESSION_STATE=1. */
  modeId: string
  config: { model: string; verbose: boolean }
  modelId: string
  /** `/cost`: this process's cumulative cost per currency (from zero in each process, as Claude Code counts). */
  costs: Record<string, number>
  /** `/tokens`: what the running turn's prompt response counts. */
  turnTokens: { input: number; output: number } | null
}

/**
 * SCRIPTED_AGENT_MODES (with SCRIPTED_AGENT_SESSION_STATE): `<start>:<id>,<id>…`, the modes sessions offer
 * and the one they start in (as Claude Code 0.101 starts in `auto`); default `ask:ask,code`.
 */
const [startingModeId, ...modeIds] = (() => {
  const [start, list] = (env.SCRIPTED_AGENT_MODES ?? '').split(':')
  return start && list ? [start, ...list.split(',')] : ['ask']
})()
const availableModes = modeIds.length
  ? modeIds.map((id) => ({ id, name: id, description: `The ${id} mode` }))
  : [
      { id: 'ask', name: 'Ask', description: 'Answers questions, changes nothing' },
      { id: 'code', name: 'Code', description: 'Edits files' }
    ]
const availableModels = [
  { modelId: 'scripted-small', name: 'Scripted Small' },
  { modelId: 'scripted-large', name: 'Scripted Large' }
]

function newSessionState(id: string, cwd: string, history: SessionUpdate[] = []): Session {
  return {
    id,
    cwd,
    additionalDirectories: null,
    mcpServers: [],
    title: null,
    history,
    toolCounter: countToolCalls(history),
    turn: null,
    modeId: startingModeId!,
    config: { model: 'fast', verbose: false },
    modelId: 'scripted-small',
    costs: {},
    turnTokens: null
  }
}

function configOptions(session: Session): SessionConfigOption[] {
  return [
    {
      id: 'model',
      name: 'Model',
      category: 'model',
      type: 'select',
      currentValue: session.config.model,
      options: [
        { value: 'fast', name: 'Fast' },
        { value: 'smart', name: 'Smart' }
      ]
    },
    { id: 'verbose', name: 'Verbose', type: 'boolean', currentValue: session.config.verbose }
  ]
}

/** What session/new and session/load answer besides the id. */
function sessionStateAnswer(session: Session): Record<string, unknown> {
  if (!offerSessionState) return {}
  return {
    modes: { currentModeId: session.modeId, availableModes },
    configOptions: configOptions(session),
    models: { currentModelId: session.modelId, availableModels }
  }
}

const sessions = new Map<string, Session>()
let clientCapabilities: ClientCapabilities & { subagents?: unknown } = {}
/** The client's `subagents` capability as sent (see the stream set up at the end). */
let rawSubagents: unknown

function historyFile(sessionId: string): string | null {
  return stateDir ? join(stateDir, `${sessionId}.json`) : null
}

/** Writes the session's whole history (and its meta) and drops its tail, now in the whole: at session/new, a prompt, a turn's end. */
function persist(session: Session): void {
  const file = historyFile(session.id)
  if (!file) return
  writeWhole(file, JSON.stringify(session.history, null, 1))
  rmSync(tailFile(file), { force: true })
  persistMeta(session, file)
}

/** What session/list says of it: its folder, title, and when it last changed. */
function persistMeta(session: Session, file: string): void {
  const meta: StoredMeta = { cwd: session.cwd, title: session.title, updatedAt: new Date().toISOString() }
  writeWhole(metaFile(file), JSON.stringify(meta))
}

/**
 * Appends the update just pushed to the session's history to its tail on disk (`<id>.tail.jsonl`, a line each: its
 * place in the history and the update), before it is sent, so that an agent killed mid-turn keeps what it sent. A turn's
 * updates cost an append each, not the whole history written again each (what `persist` did at every chunk until issue
 * 40's nineteenth round: its cost grew with the session, and held the soak's four streams to a third of their rate).
 */
function persistLast(session: Session): void {
  const file = historyFile(session.id)
  if (!file) return
  const update = session.history.at(-1)!
  appendFileSync(tailFile(file), `${JSON.stringify({ at: session.history.length - 1, update })}\n`)
  // A new title is listed at once (its meta's `updatedAt` otherwise moves at the prompt and the turn's end).
  if (update.sessionUpdate === 'session_info_update') persistMeta(session, file)
}

function tailFile(historyPath: string): string {
  return historyPath.replace(/\.json$/, '.tail.jsonl')
}

/** The history file's updates, then its tail's that follow on (a tail line already in the whole, or torn by a kill, is left out). */
function withTail(file: string, history: SessionUpdate[]): SessionUpdate[] {
  if (!existsSync(tailFile(file))) return history
  for (const line of readFileSync(tailFile(file), 'utf8').split('\n')) {
    let entry: { at?: unknown; update?: SessionUpdate } | null = null
    try {
      entry = JSON.parse(line) as { at?: unknown; update?: SessionUpdate }
    } catch {
      // The last line, cut short by a kill mid-append (or the empty string after the last newline).
    }
    if (entry?.update && entry.at === history.length) history.push(entry.update)
  }
  return history
}

/** Written aside, then renamed into place: an agent killed mid-write (a lost connection's, ended by the next) leaves the last whole history. */
function writeWhole(file: string, text: string): void {
  const aside = `${file}.${process.pid}.tmp`
  writeFileSync(aside, text)
  renameSync(aside, file)
}

interface StoredMeta {
  cwd: string
  title: string | null
  updatedAt: string
}

function metaFile(historyPath: string): string {
  return historyPath.replace(/\.json$/, '.meta.json')
}

/** Every stored session (for session/list), oldest id order. */
function storedSessions(): ({ sessionId: string } & StoredMeta)[] {
  if (!stateDir) return [...sessions.values()].map((s) => ({ sessionId: s.id, cwd: s.cwd, title: s.title, updatedAt: new Date().toISOString() }))
  return readdirSync(stateDir)
    .filter((name) => name.endsWith('.meta.json'))
    .sort()
    .map((name) => ({ sessionId: name.slice(0, -'.meta.json'.length), ...(JSON.parse(readFileSync(join(stateDir, name), 'utf8')) as StoredMeta) }))
}

function storedMeta(sessionId: string): StoredMeta | undefined {
  const file = historyFile(sessionId)
  if (!file || !existsSync(metaFile(file))) return undefined
  return JSON.parse(readFileSync(metaFile(file), 'utf8')) as StoredMeta
}

/** Reads a stored session's history; undefined when unknown. */
function readHistory(sessionId: string): SessionUpdate[] | undefined {
  // Session ids name files: refuse anything that could escape the state folder.
  if (!/^[A-Za-z0-9_.-]+$/.test(sessionId) || sessionId.startsWith('.')) return undefined
  const file = historyFile(sessionId)
  if (file) {
    if (!existsSync(file)) return undefined
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'))
    if (!Array.isArray(parsed)) throw new Error(`Corrupt history file ${file}`)
    return withTail(file, parsed as SessionUpdate[])
  }
  // Without a state folder, only sessions of this process exist.
  return sessions.get(sessionId)?.history.slice()
}

function unknownSession(sessionId: string): RequestError {
  return new RequestError(-32002, `Unknown session ${sessionId}`, { sessionId })
}

function countToolCalls(history: SessionUpdate[]): number {
  return history.filter((u) => u.sessionUpdate === 'tool_call').length
}

// ---------------------------------------------------------------------------
// A prompt turn

class Cancelled extends Error {
  constructor() {
    super('cancelled')
  }
}

/** Waits `ms`, resolving early (with false) if `signal` aborts. */
function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  if (ms <= 0) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    const onAbort = (): void => {
      clearTimeout(timer)
      resolve(false)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

function errorMessage(error: unknown): string {
  if (error instanceof RequestError) {
    const data = error.data as { details?: unknown } | undefined
    const details = data && typeof data === 'object' && typeof data.details === 'string' ? data.details : ''
    return details && !error.message.includes(details) ? `${error.message}: ${details}` : error.message
  }
  if (error instanceof Error) return error.message
  return String(error)
}

/** Splits text into about `parts` non-empty pieces (by code point). */
/**
 * Starts the session's stdio MCP server SERVER as agents do (Gemini CLI, Claude
 * Code: their own environment plus the server's `env`), lists its tools and
 * stops it; answers with what it found, or why it failed.
 */
async function connectMcpServer(mcpServers: unknown[], server: string): Promise<string> {
  type Stdio = { name: string; command?: string; args?: string[]; env?: { name: string; value: string }[] }
  const given = (mcpServers as Stdio[]).find((s) => s.name === server && typeof s.command === 'string')
  if (!given?.command) return `mcp-connect failed: no stdio MCP server '${server}' in this session`
  // Loaded here: only this command needs the MCP SDK, and every other start of the agent stays as quick.
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js')
  const ownEnv = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined))
  const transport = new StdioClientTransport({
    command: given.command,
    args: given.args ?? [],
    env: { ...ownEnv, ...Object.fromEntries((given.env ?? []).map((v) => [v.name, v.value])) },
    stderr: 'ignore'
  })
  const client = new Client({ name: 'scripted-agent', version: '1.0.0' })
  try {
    await client.connect(transport)
    const { tools } = await client.listTools()
    return `mcp-connect ${server}: ${client.getServerVersion()?.name ?? '?'} with tools ${tools.map((t) => t.name).join(', ')}`
  } catch (error) {
    return `mcp-connect failed: ${errorMessage(error)}`
  } finally {
    await client.close().catch(() => undefined)
  }
}

/** Calls TOOL of the session's stdio MCP server SERVER (started for the call, stopped after), with `{ text: 'hi' }`. */
async function callMcpTool(mcpServers: unknown[], server: string, tool: string): Promise<{ ok: boolean; text: string }> {
  type Stdio = { name: string; command?: string; args?: string[]; env?: { name: string; value: string }[] }
  const given = (mcpServers as Stdio[]).find((s) => s.name === server && typeof s.command === 'string')
  if (!given?.command) return { ok: false, text: `No MCP server '${server}' in this session` }
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js')
  const ownEnv = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined))
  const transport = new StdioClientTransport({
    command: given.command,
    args: given.args ?? [],
    env: { ...ownEnv, ...Object.fromEntries((given.env ?? []).map((v) => [v.name, v.value])) },
    stderr: 'ignore'
  })
  const client = new Client({ name: 'scripted-agent', version: '1.0.0' })
  try {
    await client.connect(transport)
    const result = (await client.callTool({ name: tool, arguments: { text: 'hi' } })) as { content?: { type: string; text?: string }[] }
    return { ok: true, text: (result.content ?? []).map((c) => c.text ?? '').join('\n') }
  } catch (error) {
    return { ok: false, text: `MCP server '${server}': ${errorMessage(error)}` }
  } finally {
    await client.close().catch(() => undefined)
  }
}

function splitInto(text: string, parts: number): string[] {
  const chars = Array.from(text)
  const size = Math.max(1, Math.ceil(chars.length / parts))
  const pieces: string[] = []
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''))
  return pieces
}

class TurnRunner {
  /** messageId of the agent message being streamed, reset by any other kind of update. */
  private messageId: string | null = null
  private thoughtId: string | null = null

  constructor(
    private readonly session: Session,
    private readonly peer: Peer,
    private readonly signal: AbortSignal
  ) {}

  get cancelled(): boolean {
    return this.signal.aborted
  }

  private checkCancelled(): void {
    if (this.cancelled) throw new Cancelled()
  }

  /** Records the update in the session's history (persisted at once: appended to its tail on disk), then sends it. */
  async send(update: SessionUpdate): Promise<void> {
    if (update.sessionUpdate !== 'agent_message_chunk') this.messageId = null
    if (update.sessionUpdate !== 'agent_thought_chunk') this.thoughtId = null
    this.session.history.push(update)
    persistLast(this.session)
    await this.peer.update(this.session.id, update)
  }

  async message(text: string): Promise<void> {
    this.messageId ??= randomUUID()
    // SCRIPTED_AGENT_NO_MESSAGE_ID=1: chunks without messageId (as Gemini CLI sends them).
    const id = env.SCRIPTED_AGENT_NO_MESSAGE_ID === '1' ? {} : { messageId: this.messageId }
    await this.send({ sessionUpdate: 'agent_message_chunk', ...id, content: { type: 'text', text } })
  }

  async thought(text: string): Promise<void> {
    this.thoughtId ??= randomUUID()
    await this.send({ sessionUpdate: 'agent_thought_chunk', messageId: this.thoughtId, content: { type: 'text', text } })
  }

  /** Streams agent message chunks with the configured delay between them; stops when cancelled. */
  async stream(pieces: string[]): Promise<void> {
    for (let i = 0; i < pieces.length; i++) {
      this.checkCancelled()
      if (i > 0 && chunkDelayMs > 0 && i % chunksPerDelay === 0) {
        await wait(chunkDelayMs, this.signal)
        this.checkCancelled()
      }
      await this.message(pieces[i])
    }
  }

  /**
   * A subagent launched from a tool call (ACP's subagents, RFD form, as
   * claude-agent-acp sends it): the launch's `tool_call`, the child announced
   * (`subagent_update`), the parent's outgoing `session_message` with the
   * call's id; then on the child's own session id a message and a completed
   * read, with `ask` a permission request for a command, then its state idle,
   * its report to the parent and the launch completed. Only for a client that
   * announced `subagents`. The child's updates are not replayed by a load.
   */
  private async subagent(title: string, ask: boolean): Promise<void> {
    if (!clientCapabilities.subagents) {
      await this.message('subagent: the client does not take subagents')
      return
    }
    const launch = this.nextToolCallId()
    const child = `${this.session.id}-sub-${launch}`
    const loose = (update: Record<string, unknown>): SessionUpdate => update as unknown as SessionUpdate
    await this.send({ sessionUpdate: 'tool_call', toolCallId: launch, title: `Agent: ${title}`, kind: 'other', status: 'in_progress' })
    await this.send(
      loose({ sessionUpdate: 'subagent_update', sessionId: child, title, description: `Looks into ${title}`, state: { state: 'running' } })
    )
    await this.send(
      loose({
        sessionUpdate: 'session_message',
        messageId: launch,
        senderSessionId: this.session.id,
        recipientSessionId: child,
        recipientMessageId: launch,
        content: [{ type: 'text', text: `Find out about ${title}` }]
      })
    )
    await this.peer.update(child, {
      sessionUpdate: 'agent_message_chunk',
      messageId: `${child}-m1`,
      content: { type: 'text', text: `Looking into ${title}.` }
    })
    await this.peer.update(child, {
      sessionUpdate: 'tool_call',
      toolCallId: `${child}-read`,
      title: 'Read notes.md',
      kind: 'read',
      status: 'completed'
    })
    let asked = ''
    if (ask) {
      const toolCall = { toolCallId: `${child}-run`, title: `Check ${title}`, kind: 'execute' as const, status: 'pending' as const }
      await this.peer.update(child, { sessionUpdate: 'tool_call', ...toolCall })
      const response = await this.peer.requestPermission({
        sessionId: child,
        toolCall,
        options: [
          { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
          { optionId: 'reject', name: 'Reject', kind: 'reject_once' }
        ]
      })
      asked = response.outcome.outcome === 'selected' ? response.outcome.optionId : 'cancelled'
      await this.peer.update(child, {
        sessionUpdate: 'tool_call_update',
        toolCallId: toolCall.toolCallId,
        status: asked === 'allow' ? 'completed' : 'failed'
      })
    }
    await this.send(loose({ sessionUpdate: 'subagent_update', sessionId: child, state: { state: 'idle' } }))
    await this.send(
      loose({
        sessionUpdate: 'session_message',
        messageId: `${launch}:reply`,
        senderSessionId: child,
        recipientSessionId: this.session.id,
        content: [{ type: 'text', text: `${title}: found it${asked ? ` (permission: ${asked})` : ''}` }]
      })
    )
    await this.send({ sessionUpdate: 'tool_call_update', toolCallId: launch, status: 'completed' })
  }

  /** What was steered into this turn, said at its next step (as Claude Code takes a steer between steps). */
  private async takeSteered(): Promise<void> {
    for (let text = this.session.steered?.shift(); text !== undefined; text = this.session.steered?.shift()) {
      this.messageId = null
      await this.message(`steered: ${text}`)
      this.messageId = null
    }
  }

  private nextToolCallId(): string {
    this.session.toolCounter += 1
    return `tool-${this.session.toolCounter}`
  }

  private async toolDone(toolCallId: string, content: ToolCallContent[]): Promise<void> {
    await this.send({ sessionUpdate: 'tool_call_update', toolCallId, status: 'completed', content })
  }

  private async toolFailed(toolCallId: string, message: string): Promise<void> {
    await this.send({
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status: 'failed',
      content: [{ type: 'content', content: { type: 'text', text: message } }]
    })
  }

  async run(text: string): Promise<StopReason> {
    const lines = text.split(/\r?\n/)
    const commands = lines.map((l) => l.trimStart()).filter((l) => l.startsWith('/'))
    try {
      if (commands.length === 0) {
        await this.stream(splitInto(`You said: ${text}`, 3))
      } else {
        for (const command of commands) {
          this.checkCancelled()
          await this.takeSteered()
          await this.command(command)
        }
      }
      this.checkCancelled()
      return 'end_turn'
    } catch (error) {
      if (error instanceof Cancelled) return 'cancelled'
      throw error
    }
  }

  private async command(line: string): Promise<void> {
    const match = /^\/(\S+)(?:\s(.*))?$/s.exec(line)
    const name = match?.[1] ?? ''
    const rest = match?.[2] ?? ''
    const arg = rest.trim()
    switch (name) {
      case 'stream': {
        const n = Math.max(0, Math.floor(Number(arg) || 0))
        await this.stream(Array.from({ length: n }, (_, i) => `chunk ${i + 1} `))
        return
      }
      case 'say':
        await this.message(rest)
        return
      case 'think':
        await this.thought(rest)
        return
      case 'tool': {
        const toolCallId = this.nextToolCallId()
        await this.send({ sessionUpdate: 'tool_call', toolCallId, title: arg, kind: 'other', status: 'pending' })
        await this.send({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress' })
        await this.toolDone(toolCallId, [{ type: 'content', content: { type: 'text', text: `done: ${arg}` } }])
        return
      }
      case 'read':
        await this.read(arg)
        return
      case 'write': {
        const m = /^(\S+)(?:\s(.*))?$/s.exec(arg)
        await this.write(m?.[1] ?? '', m?.[2] ?? '')
        return
      }
      case 'permission':
        await this.permission()
        return
      case 'permissions': {
        // /permissions N [KIND]: N requests at once, each for its own tool call; one reply with every outcome, in order
        const [count, kind] = arg.split(/\s+/)
        await this.permissions(Math.max(1, Number(count) || 2), (kind || 'execute') as ToolKind)
        return
      }
      case 'elicit':
      case 'elicit-url':
        try {
          if (name === 'elicit') await this.elicit()
          else await this.elicitUrl(arg || 'https://example.com/connect')
        } catch (error) {
          if (this.cancelled) throw new Cancelled()
          await this.message(`elicit failed: ${errorMessage(error)}`)
        }
        return
      case 'permission-withdrawn': {
        // Asks permission, then withdraws the request ($/cancel_request) after MS milliseconds.
        const toolCallId = this.nextToolCallId()
        const toolCall = { toolCallId, title: 'Withdrawn request', kind: 'execute' as const, status: 'pending' as const }
        await this.send({ sessionUpdate: 'tool_call', ...toolCall })
        const request: RequestPermissionRequest = {
          sessionId: this.session.id,
          toolCall,
          options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }]
        }
        const response = await this.peer.requestPermission(request, {
          cancellationSignal: AbortSignal.timeout(Math.max(0, Number(arg) || 0))
        })
        await this.message(`withdrawn: ${response.outcome.outcome}`)
        return
      }
      case 'permission-always':
        // /permission-always [KIND]: the four standard options, for a tool call of KIND (default execute)
        await this.permission((arg || 'execute') as ToolKind, true)
        return
      case 'permission-call':
        // /permission-call JSON: a tool call as Claude Code describes one (its tool name in _meta, locations, rawInput)
        await this.permissionCall(JSON.parse(rest) as PermissionCall)
        return
      case 'plan': {
        const entries = arg
          .split(';')
          .map((s) => s.trim())
          .filter((s) => s.length > 0)
          .map((content, i) => ({ content, priority: 'medium' as const, status: i === 0 ? ('in_progress' as const) : ('pending' as const) }))
        await this.send({ sessionUpdate: 'plan', entries })
        return
      }
      case 'title':
        this.session.title = arg
        await this.send({ sessionUpdate: 'session_info_update', title: arg })
        return
      case 'sleep':
        await wait(Math.max(0, Number(arg) || 0), this.signal)
        this.checkCancelled()
        return
      case 'await': {
        // Waits until the file exists (a test opens the gate when it is ready; cut short by cancel).
        const gate = isAbsolute(arg) ? arg : join(this.session.cwd, arg)
        while (!existsSync(gate)) {
          await this.takeSteered()
          if (!(await wait(25, this.signal))) break
        }
        this.checkCancelled()
        return
      }
      case 'fail':
        throw new RequestError(-32603, arg || 'scripted failure')
      case 'exit': {
        const code = Math.floor(Number(arg) || 0)
        log(`scripted-agent: exiting with ${code} mid-turn`)
        process.exit(code)
      }
      case 'stderr':
        log(rest)
        return
      case 'env':
        // What the agent's environment holds (tests of variables and secrets given to agents).
        await this.message(process.env[arg] === undefined ? `${arg} is not set` : `${arg}=${process.env[arg]}`)
        return
      case 'environ':
        // The agent's whole environment (tests of what the Host gives it, and of what it does not).
        await this.message(`environ=${JSON.stringify(process.env)}`)
        return
      case 'state':
        // What this session is set to, as the agent sees it.
        await this.message(
          `mode=${this.session.modeId} model=${this.session.config.model} verbose=${this.session.config.verbose} legacyModel=${this.session.modelId}`
        )
        return
      case 'commands':
        await this.send({
          sessionUpdate: 'available_commands_update',
          availableCommands: [
            { name: 'review', description: 'Review the current changes' },
            { name: 'test', description: 'Run the tests', input: { hint: 'which tests' } }
          ]
        })
        return
      case 'usage':
        await this.send({ sessionUpdate: 'usage_update', used: 1200, size: 200000, cost: { amount: 0.42, currency: 'USD' } })
        return
      case 'cost': {
        // /cost AMOUNT CURRENCY: the session costs AMOUNT more; a usage_update says the new cumulative cost.
        const [amount, currency] = arg.split(/\s+/)
        const costs = this.session.costs
        costs[currency] = Math.round(((costs[currency] ?? 0) + Number(amount)) * 1e9) / 1e9
        await this.send({ sessionUpdate: 'usage_update', used: 5000, size: 200000, cost: { amount: costs[currency], currency } })
        return
      }
      case 'tokens': {
        // /tokens INPUT OUTPUT: the turn's prompt response counts these tokens (its `usage`).
        const [input, output] = arg.split(/\s+/).map(Number)
        const sum = this.session.turnTokens ?? { input: 0, output: 0 }
        this.session.turnTokens = { input: sum.input + input, output: sum.output + output }
        return
      }
      case 'terminal':
        await this.terminal(arg, null, null)
        return
      case 'run':
        // /run COMMAND: asks permission for the command, then runs it in a client terminal when allowed
        await this.runAsked(arg)
        return
      case 'run-racing':
        // /run-racing COMMAND: asks permission for the command and, without waiting for the answer, runs it
        await this.runAsked(arg, true)
        return
      case 'terminal-env': {
        // /terminal-env NAME=VALUE COMMAND: the request carries the variable (terminal/create's `env`)
        const m = /^([^=\s]+)=(\S*)\s+(.*)$/s.exec(arg)
        await this.terminal(m?.[3] ?? '', null, null, m ? [{ name: m[1], value: m[2] }] : [])
        return
      }
      case 'terminal-limit': {
        // /terminal-limit BYTES COMMAND
        const m = /^(\d+)\s+(.*)$/s.exec(arg)
        await this.terminal(m?.[2] ?? '', Number(m?.[1] ?? 0), null)
        return
      }
      case 'terminal-kill': {
        // /terminal-kill MS COMMAND: kill it after MS milliseconds
        const m = /^(\d+)\s+(.*)$/s.exec(arg)
        await this.terminal(m?.[2] ?? '', null, Number(m?.[1] ?? 0))
        return
      }
      case 'terminal-leave':
        // Starts a command and never releases it: the client must clean up at session end.
        if (!this.peer.v1) throw new RequestError(-32603, 'no client terminals in ACP protocol version 2')
        await this.peer.v1.request(methods.client.terminal.create, { sessionId: this.session.id, command: arg })
        await this.message('left a terminal running')
        return
      case 'blocks':
        // What the prompt was made of, as the agent received it.
        await this.message(`blocks: ${currentPrompt.map(describeBlock).join(', ')}`)
        return
      case 'system':
        // The system prompt the last session/new, load, resume or fork of this session carried, exactly as received.
        await this.message(
          this.session.systemPrompt === undefined ? 'systemPrompt: none' : `systemPrompt=${JSON.stringify(this.session.systemPrompt)}`
        )
        return
      case 'mcp':
        // The MCP servers this session was given, exactly as received.
        await this.message(`mcpServers=${JSON.stringify(this.session.mcpServers)}`)
        return
      case 'mcp-connect':
        // /mcp-connect SERVER: starts the session's stdio MCP server SERVER as agents do, lists its tools, stops it.
        await this.message(await connectMcpServer(this.session.mcpServers, arg))
        return
      case 'mcp-call': {
        // /mcp-call SERVER TOOL: a tool call of the session's stdio MCP server SERVER as Claude Code announces one
        // (tool name mcp__SERVER__TOOL), run by starting the server; failed with the MCP client's words when it cannot be reached.
        const [server = '', tool = ''] = arg.split(/\s+/)
        const toolCallId = this.nextToolCallId()
        const _meta = { claudeCode: { toolName: `mcp__${server}__${tool}` } }
        await this.send({ sessionUpdate: 'tool_call', toolCallId, title: `${tool} (MCP)`, kind: 'other', status: 'in_progress', _meta })
        const outcome = await callMcpTool(this.session.mcpServers, server, tool)
        await this.send({
          sessionUpdate: 'tool_call_update',
          toolCallId,
          status: outcome.ok ? 'completed' : 'failed',
          content: [{ type: 'content', content: { type: 'text', text: outcome.text } }]
        })
        return
      }
      case 'dirs':
        await this.message(`additionalDirectories=${JSON.stringify(this.session.additionalDirectories)}`)
        return
      case 'raw': {
        // A session/update exactly as written, bypassing the SDK's checks: tests malformed and unknown updates.
        const message = { jsonrpc: '2.0', method: 'session/update', params: { sessionId: this.session.id, update: JSON.parse(arg) as unknown } }
        process.stdout.write(JSON.stringify(message) + '\n')
        // Like any other update, it ends the message (and thought) being streamed: the next one gets a new messageId.
        this.messageId = null
        this.thoughtId = null
        return
      }
      case 'subagent':
        // /subagent [ask] TITLE: a subagent launched from a tool call, as claude-agent-acp's RFD form does it.
        await this.subagent(arg.replace(/^ask\s+/, ''), /^ask\s/.test(arg))
        return
      case 'client-caps':
        // /client-caps: the client's capabilities, as its initialize announced them.
        await this.message(`clientCapabilities=${JSON.stringify(clientCapabilities)}`)
        return
      case 'sayjson':
        // /sayjson "JSON string": one message with any text, line breaks included.
        await this.message(JSON.parse(arg) as string)
        return
      case 'many': {
        // /many N: N separate agent messages (a long thread), every fifth with a code block.
        const n = Math.max(0, Math.floor(Number(arg) || 0))
        for (let i = 1; i <= n; i++) {
          this.checkCancelled()
          this.messageId = null
          await this.message(
            i % 5 === 0
              ? `Message ${i} with code:\n\n\`\`\`ts\nconst answer${i}: number = ${i}\nconsole.log(answer${i})\n\`\`\``
              : `Message ${i}: ${'lorem ipsum dolor sit amet '.repeat(1 + (i % 4))}`
          )
        }
        return
      }
      case 'diff':
        await this.diff(arg || 'src/example.ts')
        return
      case 'disk': {
        // Written straight to disk, as real Claude Code does, not through fs/write_text_file.
        const space = arg.indexOf(' ')
        const path = space < 0 ? arg : arg.slice(0, space)
        const absolute = isAbsolute(path) ? path : join(this.session.cwd, path)
        mkdirSync(dirname(absolute), { recursive: true })
        writeFileSync(absolute, space < 0 ? '' : arg.slice(space + 1).replace(/\\n/g, '\n'))
        await this.message(`disk: wrote ${path}`)
        return
      }
      case 'rm':
        rmSync(isAbsolute(arg) ? arg : join(this.session.cwd, arg), { force: true })
        await this.message(`disk: removed ${arg}`)
        return
      case 'cwd':
        await this.message(`cwd=${this.session.cwd}`)
        return
      case 'process-cwd':
        // The folder the agent's process was started in (not the session's).
        await this.message(`process cwd=${process.cwd()}`)
        return
      case 'xss':
        await this.xss()
        return
      case 'payload': {
        // /payload KIND [SIZE] [in=message|thought|tool|plan|permission] [chunks=N]: costly text, made here (pathological.ts).
        const words = arg.split(/\s+/).filter(Boolean)
        const option = (key: string): string | undefined => words.find((w) => w.startsWith(`${key}=`))?.slice(key.length + 1)
        let text: string
        try {
          text = pathologicalText(words[0] ?? '', /^\d+$/.test(words[1] ?? '') ? Number(words[1]) : undefined)
        } catch (error) {
          await this.message(errorMessage(error))
          return
        }
        await this.payload(text, option('in') ?? 'message', Math.max(1, Math.floor(Number(option('chunks')) || 1)))
        this.messageId = null
        await this.message(`payload ${words[0]}: ${text.length} characters sent`)
        return
      }
      case 'garbage':
        // Not an ACP message, on purpose: the client must tolerate it.
        process.stdout.write('this is not json\n')
        return
      default:
        if (
          this.peer.v1 &&
          (await hostileCommand(name, arg, {
            client: this.peer.v1,
            sessionId: this.session.id,
            stateDir,
            signal: this.signal,
            message: (t) => this.message(t)
          }))
        )
          return
        await this.message(`unknown command: /${name}`)
    }
  }

  private async read(path: string): Promise<void> {
    const sessionId = this.session.id
    const toolCallId = this.nextToolCallId()
    await this.send({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: `Read ${path}`,
      kind: 'read',
      status: 'pending',
      locations: [{ path }]
    })
    let content: string
    try {
      if (!this.peer.v1)
        content = readFileSync(path, 'utf8') // version 2: the agent reads files itself
      else if (clientCapabilities.fs?.readTextFile !== true) throw new Error('the client does not offer fs/read_text_file')
      else content = (await this.peer.v1.request(methods.client.fs.readTextFile, { sessionId, path })).content
    } catch (error) {
      const message = errorMessage(error)
      await this.toolFailed(toolCallId, message)
      await this.message(`read failed: ${message}`)
      return
    }
    await this.toolDone(toolCallId, [{ type: 'content', content: { type: 'text', text: content } }])
    await this.message(`read ${content.length} chars`)
  }

  private async write(path: string, text: string): Promise<void> {
    const sessionId = this.session.id
    const toolCallId = this.nextToolCallId()
    await this.send({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: `Write ${path}`,
      kind: 'edit',
      status: 'pending',
      locations: [{ path }]
    })
    try {
      if (!this.peer.v1)
        writeFileSync(path, text) // version 2: the agent writes files itself
      else if (clientCapabilities.fs?.writeTextFile !== true) throw new Error('the client does not offer fs/write_text_file')
      else await this.peer.v1.request(methods.client.fs.writeTextFile, { sessionId, path, content: text })
    } catch (error) {
      const message = errorMessage(error)
      await this.toolFailed(toolCallId, message)
      await this.message(`write failed: ${message}`)
      return
    }
    await this.toolDone(toolCallId, [{ type: 'diff', path, oldText: null, newText: text }])
    await this.message(`wrote ${text.length} chars`)
  }

  /** Asks the user to fill in a form (elicitation/create, form mode) and says what came back. */
  private async elicit(): Promise<void> {
    if (!clientCapabilities.elicitation?.form) {
      await this.message('elicit failed: the client has no form elicitation capability')
      return
    }
    const response = await this.peer.elicit({
      sessionId: this.session.id,
      mode: 'form',
      message: 'Which deployment should I use?',
      requestedSchema: {
        type: 'object',
        title: 'Deployment',
        properties: {
          target: {
            type: 'string',
            title: 'Target',
            oneOf: [
              { const: 'staging', title: 'Staging' },
              { const: 'production', title: 'Production' }
            ]
          },
          replicas: { type: 'integer', title: 'Replicas', minimum: 1, maximum: 10, default: 2 },
          contact: { type: 'string', title: 'Contact email', format: 'email' },
          dryRun: { type: 'boolean', title: 'Dry run first', default: true },
          regions: { type: 'array', title: 'Regions', items: { type: 'string', enum: ['eu', 'us', 'asia'] }, minItems: 1 }
        },
        required: ['target', 'replicas', 'regions']
      }
    })
    await this.message(`elicitation: ${response.action}${'content' in response && response.content ? ' ' + JSON.stringify(response.content) : ''}`)
  }

  /** Asks the user to open a page (elicitation/create, URL mode), then tells the client that flow is complete. */
  private async elicitUrl(url: string): Promise<void> {
    if (!clientCapabilities.elicitation?.url) {
      await this.message('elicit failed: the client has no URL elicitation capability')
      return
    }
    const elicitationId = randomUUID()
    const response = await this.peer.elicit({
      sessionId: this.session.id,
      mode: 'url',
      elicitationId,
      url,
      message: 'Connect your account to continue'
    })
    if (response.action === 'accept') await this.peer.elicitationComplete(elicitationId)
    await this.message(`elicitation: ${response.action}`)
  }

  /**
   * A file edit shown as a diff (the file is not written): PATH (relative to
   * the session's cwd) changes from a 12-line text to one with a line changed,
   * one added and one removed; location PATH line 3; raw input and output.
   */
  private async diff(path: string): Promise<void> {
    const absolute = isAbsolute(path) ? path : join(this.session.cwd, path)
    const before = [
      "import { readFile } from 'node:fs/promises'",
      '',
      'export async function load(path: string): Promise<string> {',
      "  const text = await readFile(path, 'utf8')",
      '  return text.trim()',
      '}',
      '',
      'export function count(text: string): number {',
      "  return text.split('\\n').length",
      '}',
      '',
      'export const VERSION = 1'
    ]
    const after = [...before]
    after[3] = "  const text = await readFile(path, { encoding: 'utf8' })"
    after.splice(5, 0, '  // trimmed: callers compare lines')
    after.splice(after.indexOf('export const VERSION = 1'), 1, 'export const VERSION = 2')
    after.splice(7, 1)
    const toolCallId = this.nextToolCallId()
    const rawInput = { path: absolute, edits: [{ line: 4 }, { line: 6 }, { line: 12 }] }
    await this.send({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: `Edit ${path}`,
      kind: 'edit',
      status: 'pending',
      locations: [{ path: absolute, line: 3 }],
      rawInput
    })
    await this.send({ sessionUpdate: 'tool_call_update', toolCallId, status: 'in_progress' })
    await this.send({
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status: 'completed',
      content: [{ type: 'diff', path: absolute, oldText: before.join('\n') + '\n', newText: after.join('\n') + '\n' }],
      rawOutput: { applied: true, linesChanged: 4 }
    })
  }

  /** The XSS corpus through every way text reaches the thread: messages, a thought, a tool call, a plan, commands, a title, a notice. */
  private async xss(): Promise<void> {
    const all = XSS_CORPUS.map((p) => p.payload)
    for (const payload of all) {
      this.checkCancelled()
      this.messageId = null
      await this.message(payload)
    }
    await this.thought(all.join('\n\n'))
    const toolCallId = this.nextToolCallId()
    await this.send({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: all[1],
      kind: 'edit',
      status: 'pending',
      locations: [{ path: all[3] }, { path: all[0], line: 1 }],
      rawInput: { payloads: all }
    })
    await this.send({
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status: 'completed',
      content: [
        { type: 'content', content: { type: 'text', text: all.join('\n\n') } },
        { type: 'diff', path: all[2], oldText: all.join('\n'), newText: [...all].reverse().join('\n') }
      ],
      rawOutput: all.join('\n')
    })
    await this.send({
      sessionUpdate: 'plan',
      entries: all.slice(0, 8).map((content) => ({ content, priority: 'medium' as const, status: 'pending' as const }))
    })
    await this.send({
      sessionUpdate: 'available_commands_update',
      availableCommands: all.slice(0, 8).map((description, i) => ({ name: `xss${i}`, description }))
    })
    await this.send({ sessionUpdate: 'notice', severity: 'warning', title: all[0], description: all[1] })
    await this.send({ sessionUpdate: 'session_info_update', title: all[0] })
    this.messageId = null
    await this.message(`xss corpus: ${all.length} payloads`)
  }

  /**
   * TEXT (a payload of pathological.ts) where `where` says: an agent message
   * or a thought (in CHUNKS chunks), a tool call's title and content text, a
   * plan entry, or a permission request's title and first option's name
   * (its first megabyte; waiting for the answer).
   */
  private async payload(text: string, where: string, chunks: number): Promise<void> {
    const size = Math.ceil(text.length / chunks)
    const pieces: string[] = []
    for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size))
    switch (where) {
      case 'message':
        this.messageId = null
        for (const piece of pieces) {
          this.checkCancelled()
          await this.message(piece)
        }
        return
      case 'thought':
        this.thoughtId = null
        for (const piece of pieces) {
          this.checkCancelled()
          await this.thought(piece)
        }
        return
      case 'tool': {
        const toolCallId = this.nextToolCallId()
        await this.send({ sessionUpdate: 'tool_call', toolCallId, title: text, kind: 'read', status: 'pending' })
        await this.toolDone(toolCallId, [{ type: 'content', content: { type: 'text', text } }])
        return
      }
      case 'plan':
        await this.send({
          sessionUpdate: 'plan',
          entries: [
            { content: text, priority: 'high', status: 'in_progress' },
            { content: 'A short step after it', priority: 'low', status: 'pending' }
          ]
        })
        return
      case 'permission': {
        const toolCallId = this.nextToolCallId()
        const toolCall = { toolCallId, title: text, kind: 'execute' as const, status: 'pending' as const }
        await this.send({ sessionUpdate: 'tool_call', ...toolCall })
        const response = await this.peer.requestPermission({
          sessionId: this.session.id,
          toolCall,
          options: [
            // Both in one message, under the client's 8 MiB a line: the name is at most 1 MB.
            { optionId: 'allow', name: text.slice(0, 1_000_000), kind: 'allow_once' },
            { optionId: 'reject', name: 'Reject', kind: 'reject_once' }
          ]
        })
        const outcome = response.outcome.outcome === 'selected' ? response.outcome.optionId : 'cancelled'
        await this.send({ sessionUpdate: 'tool_call_update', toolCallId, status: outcome === 'allow' ? 'completed' : 'failed' })
        this.messageId = null
        await this.message(`permission: ${outcome}`)
        return
      }
      default:
        await this.message(`unknown place for a payload: ${where}`)
    }
  }

  /** Runs COMMAND in a client terminal, shown in a tool call; reports its exit and output. */
  private async terminal(
    command: string,
    outputByteLimit: number | null,
    killAfterMs: number | null,
    env: { name: string; value: string }[] = [],
    asked: string | null = null
  ): Promise<void> {
    const toolCallId = asked ?? this.nextToolCallId()
    if (!this.peer.v1) return this.ownTerminal(toolCallId, command)
    if (!clientCapabilities.terminal) {
      await this.message('terminal failed: the client has no terminal capability')
      return
    }
    const client = this.peer.v1
    const request: CreateTerminalRequest = { sessionId: this.session.id, command, outputByteLimit, env }
    let terminalId: string
    try {
      terminalId = (await client.request(methods.client.terminal.create, request)).terminalId
    } catch (error) {
      if (this.cancelled) throw new Cancelled()
      if (asked) await this.toolFailed(asked, errorMessage(error))
      await this.message(`terminal refused: ${errorMessage(error)}`)
      return
    }
    await this.send({
      sessionUpdate: asked ? 'tool_call_update' : 'tool_call',
      toolCallId,
      title: `Run ${command}`,
      kind: 'execute',
      status: 'in_progress',
      content: [{ type: 'terminal', terminalId }]
    })
    if (killAfterMs !== null) {
      await wait(killAfterMs, this.signal)
      await client.request(methods.client.terminal.kill, { sessionId: this.session.id, terminalId })
    }
    const exit = await client.request(methods.client.terminal.waitForExit, { sessionId: this.session.id, terminalId })
    const { output, truncated } = await client.request(methods.client.terminal.output, { sessionId: this.session.id, terminalId })
    await client.request(methods.client.terminal.release, { sessionId: this.session.id, terminalId })
    await this.send({ sessionUpdate: 'tool_call_update', toolCallId, status: exit.exitCode === 0 ? 'completed' : 'failed' })
    await this.message(`exit=${exit.exitCode ?? 'none'} signal=${exit.signal ?? 'none'} truncated=${truncated} output=${JSON.stringify(output)}`)
  }

  /**
   * Version 2 has no client terminals: the agent runs COMMAND itself (in the
   * session's cwd) and reports it as an agent-owned terminal, its output as
   * base64 chunks, then its exit.
   */
  private async ownTerminal(toolCallId: string, command: string): Promise<void> {
    const sessionId = this.session.id
    const terminalId = `term-${toolCallId}`
    const send = (update: v2.SessionUpdate): Promise<void> => this.peer.v2Update!(sessionId, update)
    await send({ sessionUpdate: 'terminal_update', terminalId, command, cwd: this.session.cwd })
    await this.send({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: `Run ${command}`,
      kind: 'execute',
      status: 'in_progress',
      content: [{ type: 'terminal', terminalId }]
    })
    let output = ''
    const sends: Promise<void>[] = []
    const exit = await new Promise<{ exitCode: number | null; signal: string | null }>((resolve) => {
      const child = spawn(command, { shell: true, cwd: this.session.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
      const onData = (chunk: Buffer): void => {
        output += chunk.toString('utf8')
        sends.push(send({ sessionUpdate: 'terminal_output_chunk', terminalId, data: chunk.toString('base64') }))
      }
      child.stdout.on('data', onData)
      child.stderr.on('data', onData)
      child.on('error', () => resolve({ exitCode: null, signal: null }))
      child.on('close', (exitCode, signal) => resolve({ exitCode, signal }))
    })
    await Promise.all(sends)
    await send({ sessionUpdate: 'terminal_update', terminalId, exitStatus: exit })
    await this.send({ sessionUpdate: 'tool_call_update', toolCallId, status: exit.exitCode === 0 ? 'completed' : 'failed' })
    await this.message(`exit=${exit.exitCode ?? 'none'} signal=${exit.signal ?? 'none'} truncated=false output=${JSON.stringify(output)}`)
  }

  /**
   * Asks permission for a tool call of `kind`. `withAlways` offers the four
   * standard options (allow/reject, once/always) instead of allow/reject once.
   */
  /** Several permission requests at once (ACP lets an agent ask several): each answered on its own. */
  private async permissions(count: number, kind: ToolKind): Promise<void> {
    const asks = Array.from({ length: count }, async (_, i) => {
      const toolCallId = this.nextToolCallId()
      const title = `Step ${i + 1} of ${count}`
      await this.send({ sessionUpdate: 'tool_call', toolCallId, title, kind, status: 'pending' })
      try {
        const response = await this.peer.requestPermission({
          sessionId: this.session.id,
          toolCall: { toolCallId, title, kind, status: 'pending' },
          options: [
            { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
            { optionId: 'reject', name: 'Reject', kind: 'reject_once' }
          ]
        })
        return response.outcome.outcome === 'selected' ? response.outcome.optionId : 'cancelled'
      } catch (error) {
        return `failed (${errorMessage(error)})`
      }
    })
    await this.message(`permissions: ${(await Promise.all(asks)).join(', ')}`)
  }

  /**
   * Asks permission for a tool call described as Claude Code describes one:
   * its tool name in `_meta.claudeCode.toolName` of the tool call (and of the
   * request with `onRequest`), its locations and rawInput; options as Claude
   * Code offers them (`claude`: "Always Allow …", Allow, Reject), the four
   * standard ones (`four`), or an "always" with no "once" (`always-only`).
   * Says `permission: <optionId>` (the option the client chose).
   */
  private async permissionCall(call: PermissionCall): Promise<void> {
    const toolCallId = this.nextToolCallId()
    const _meta = call.tool ? { claudeCode: { toolName: call.tool } } : undefined
    const toolCall = {
      toolCallId,
      title: call.title,
      kind: call.kind,
      status: 'pending' as const,
      ...(call.locations ? { locations: call.locations.map((path) => ({ path })) } : {}),
      ...(call.rawInput ? { rawInput: call.rawInput } : {})
    }
    const announce = async (): Promise<void> => {
      if (call.announced === false) return
      await this.send({ sessionUpdate: 'tool_call', ...toolCall, ...(call.announced ?? {}), ...(_meta ? { _meta } : {}) })
    }
    if (call.announceAfterMs === undefined) await announce()
    const options: RequestPermissionRequest['options'] = Array.isArray(call.options)
      ? call.options
      : call.options === 'four'
        ? [
            { optionId: 'allow-always', name: 'Always allow', kind: 'allow_always' },
            { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
            { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
            { optionId: 'reject-always', name: 'Always reject', kind: 'reject_always' }
          ]
        : call.options === 'always-only'
          ? [
              { optionId: 'allow_always', name: `Always Allow all ${call.tool ?? call.kind}`, kind: 'allow_always' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' }
            ]
          : [
              { optionId: 'allow_always', name: `Always Allow all ${call.tool ?? call.kind}`, kind: 'allow_always' },
              { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' }
            ]
    let outcome: string
    try {
      const asked = this.peer.requestPermission({
        sessionId: this.session.id,
        toolCall: { ...toolCall, ...(call.onRequest && _meta ? { _meta } : {}) },
        options
      })
      if (call.announceAfterMs !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, call.announceAfterMs))
        await announce()
      }
      const response = await asked
      outcome = response.outcome.outcome === 'selected' ? response.outcome.optionId : 'cancelled'
    } catch (error) {
      await this.toolFailed(toolCallId, errorMessage(error))
      await this.message(`permission failed: ${errorMessage(error)}`)
      return
    }
    const allowed = options.find((o) => o.optionId === outcome)?.kind.startsWith('allow') ?? false
    if (allowed) await this.toolDone(toolCallId, [{ type: 'content', content: { type: 'text', text: `ran ${call.title}` } }])
    else await this.toolFailed(toolCallId, `permission refused (${outcome})`)
    await this.message(`permission: ${outcome}`)
  }

  /**
   * Asks permission for running COMMAND (a tool call of kind `execute` whose
   * raw input is `{ command }`), then, when allowed, runs it in a client
   * terminal shown in that tool call: the order agents that ask first use.
   */
  private async runAsked(command: string, racing = false): Promise<void> {
    const toolCallId = this.nextToolCallId()
    const toolCall = { toolCallId, title: `Run ${command}`, kind: 'execute' as const, status: 'pending' as const, rawInput: { command } }
    await this.send({ sessionUpdate: 'tool_call', ...toolCall })
    const asking = this.peer.requestPermission({
      sessionId: this.session.id,
      toolCall,
      options: [
        { optionId: 'allow-always', name: 'Always allow', kind: 'allow_always' },
        { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
        { optionId: 'reject', name: 'Reject', kind: 'reject_once' }
      ]
    })
    if (racing) {
      // Sends terminal/create while its permission request is still unanswered.
      const [response] = await Promise.all([asking, this.terminal(command, null, null, [], toolCallId)])
      await this.message(` permission: ${response.outcome.outcome === 'selected' ? response.outcome.optionId : 'cancelled'}`)
      return
    }
    const response = await asking
    const outcome = response.outcome.outcome === 'selected' ? response.outcome.optionId : 'cancelled'
    await this.message(`permission: ${outcome}`)
    if (outcome === 'allow' || outcome === 'allow-always') await this.terminal(command, null, null, [], toolCallId)
    else if (env.SCRIPTED_AGENT_RUN_ANYWAY === '1') await this.terminal(command, null, null)
    else await this.toolFailed(toolCallId, `permission refused (${outcome})`)
  }

  private async permission(kind: ToolKind = 'execute', withAlways = false): Promise<void> {
    const toolCallId = this.nextToolCallId()
    const title = kind === 'execute' ? 'Run dangerous command' : `Permission for ${kind}`
    await this.send({ sessionUpdate: 'tool_call', toolCallId, title, kind, status: 'pending' })
    let outcome: string
    try {
      const response = await this.peer.requestPermission({
        sessionId: this.session.id,
        toolCall: { toolCallId, title, kind, status: 'pending' },
        options: withAlways
          ? [
              { optionId: 'allow-always', name: 'Always allow', kind: 'allow_always' },
              { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
              { optionId: 'reject-always', name: 'Always reject', kind: 'reject_always' }
            ]
          : [
              { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' }
            ]
      })
      outcome = response.outcome.outcome === 'selected' ? response.outcome.optionId : 'cancelled'
    } catch (error) {
      if (this.cancelled && env.SCRIPTED_AGENT_LEAVE_PENDING === '1') throw new Cancelled()
      const message = errorMessage(error)
      await this.toolFailed(toolCallId, message)
      await this.message(`permission failed: ${message}`)
      return
    }
    if (outcome === 'allow' || outcome === 'allow-always') {
      await this.toolDone(toolCallId, [{ type: 'content', content: { type: 'text', text: 'ran the dangerous command' } }])
    } else if (outcome === 'cancelled' && env.SCRIPTED_AGENT_LEAVE_PENDING === '1') {
      // SCRIPTED_AGENT_LEAVE_PENDING=1: a cancelled permission leaves its tool call as it was and ends the turn
      // `cancelled` (as Claude Code does), whether or not session/cancel has been read yet.
      throw new Cancelled()
    } else {
      await this.toolFailed(toolCallId, outcome === 'cancelled' ? 'permission request cancelled' : `permission refused (${outcome})`)
    }
    await this.message(`permission: ${outcome}`)
  }
}

/** What `/permission-call` asks about. */
interface PermissionCall {
  /** Claude Code's tool name (Bash, Edit, Write, …), sent in `_meta.claudeCode.toolName`. */
  tool?: string
  /** Also put the tool name on the permission request's tool call (Claude Code puts it on the announced call only). */
  onRequest?: boolean
  /** Ask first and announce the tool call this long after (Claude Code does so at times); by default it is announced first. */
  announceAfterMs?: number
  kind: ToolKind
  title: string
  locations?: string[]
  rawInput?: Record<string, unknown>
  options?: 'claude' | 'four' | 'always-only' | RequestPermissionRequest['options']
  /** The tool call as announced, where it differs from the request (a hostile agent shows one command and asks for another); `false`: never announced (as Codex asks for MCP tools). */
  announced?: { title?: string; rawInput?: Record<string, unknown> } | false
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return 'text'
    case 'image':
    case 'audio':
      return `${block.type}(${block.mimeType},${Buffer.from(block.data, 'base64').length} bytes)`
    case 'resource_link':
      return `resource_link(${block.uri})`
    case 'resource':
      return `resource(${block.resource.uri}: ${'text' in block.resource ? `${block.resource.text.length} chars` : 'blob'})`
    default:
      return 'unknown'
  }
}

function promptText(blocks: ContentBlock[]): string {
  return blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
}

// ---------------------------------------------------------------------------
// The ACP agent

let app = agent({ name: agentName })
  .onRequest(methods.agent.initialize, async ({ params }) => {
    if (initMode === 'exit') {
      log('scripted-agent: cannot start: missing credentials')
      process.exit(3)
    }
    if (initMode === 'hang') return new Promise<never>(() => undefined)
    // The stable schema drops `subagents` (SDK 2.4 has it in its unstable types): taken from the raw request.
    clientCapabilities = { ...(params.clientCapabilities ?? {}), ...(rawSubagents ? { subagents: rawSubagents } : {}) }
    return {
      protocolVersion,
      agentCapabilities: {
        loadSession,
        promptCapabilities: promptCapabilities(),
        mcpCapabilities: { http: mcpTransports.has('http'), sse: mcpTransports.has('sse') },
        // systemPrompt is in the SDK's unstable types only: the announcement is built untyped.
        sessionCapabilities: Object.fromEntries([...sessionMethods, ...(takesSystemPrompt ? ['systemPrompt'] : [])].map((m) => [m, {}])),
        ...(needsAuth ? { auth: { logout: {} } } : {}),
        ...(promptQueueing ? { _meta: { claudeCode: { promptQueueing: true } } } : {})
      },
      agentInfo: { name: agentName, version: '1.0.0' },
      authMethods: needsAuth
        ? [
            { id: 'browser', name: 'Log in with the browser', description: 'The agent opens a login page' },
            { id: 'api-key', name: 'Use SCRIPTED_KEY', type: 'env_var', vars: [{ name: 'SCRIPTED_KEY' }] },
            ...(keyInMeta ? [{ id: 'pasted-key', name: 'Paste an API key', _meta: { 'api-key': { provider: 'scripted' } } }] : []),
            // Offered only to clients that can run terminal sign-ins, as the spec requires.
            ...(clientCapabilities.auth?.terminal
              ? [
                  {
                    id: 'cli-login',
                    name: 'Log in from a terminal',
                    type: 'terminal' as const,
                    args: ['--login'],
                    env: { SCRIPTED_LOGIN_CODE: '4242' }
                  }
                ]
              : [])
          ]
        : [],
      ...(steering ? { _meta: { steering: { supported: true } } } : {})
    }
  })
  .onRequest(methods.agent.session.new, async ({ params }) => {
    const systemPrompt = receivedSystemPrompt('session/new')
    if (typeof params.cwd !== 'string' || !isAbsolute(params.cwd)) {
      throw new RequestError(-32602, `cwd must be an absolute path, got '${String(params.cwd)}'`)
    }
    requireAuth()
    if (env.SCRIPTED_AGENT_NEW === 'fail') {
      // As an agent whose own set-up fails: a line on stderr among others, then the SDK's generic error with details.
      process.stderr.write('scripted-agent: indexing the workspace\n')
      process.stderr.write(`scripted-agent: open ${params.cwd}/.index/lock: permission denied\n`)
      process.stderr.write('scripted-agent: giving up on this session\n')
      throw RequestError.internalError({ details: 'The workspace index could not be opened' })
    }
    const session = newSessionState(`sess-${randomUUID()}`, params.cwd)
    session.additionalDirectories = params.additionalDirectories ?? null
    session.mcpServers = params.mcpServers
    session.systemPrompt = systemPrompt
    recordMcpServers('session/new', session.id, params.mcpServers)
    sessions.set(session.id, session)
    persist(session)
    return { sessionId: session.id, ...sessionStateAnswer(session) }
  })
  .onRequest(methods.agent.session.setMode, async ({ params, client }) => {
    const session = sessions.get(params.sessionId)
    if (!session) throw unknownSession(params.sessionId)
    if (!offerSessionState || !availableModes.some((m) => m.id === params.modeId)) {
      throw new RequestError(-32602, `Unknown mode ${params.modeId}`)
    }
    session.modeId = params.modeId
    const update: SessionUpdate = { sessionUpdate: 'current_mode_update', currentModeId: params.modeId }
    session.history.push(update)
    persist(session)
    await client.notify(methods.client.session.update, { sessionId: session.id, update })
    return {}
  })
  .onRequest(methods.agent.session.setConfigOption, async ({ params }) => {
    const session = sessions.get(params.sessionId)
    if (!session) throw unknownSession(params.sessionId)
    if (params.configId === 'model' && (params.value === 'fast' || params.value === 'smart')) session.config.model = params.value
    else if (params.configId === 'verbose' && typeof params.value === 'boolean') session.config.verbose = params.value
    else throw new RequestError(-32602, `Invalid value for ${params.configId}`)
    return { configOptions: configOptions(session) }
  })
  .onRequest(
    'session/set_model',
    (raw) => raw as { sessionId: string; modelId: string },
    async ({ params }) => {
      const session = sessions.get(params.sessionId)
      if (!session) throw unknownSession(params.sessionId)
      if (!availableModels.some((m) => m.modelId === params.modelId)) throw new RequestError(-32602, `Unknown model ${params.modelId}`)
      session.modelId = params.modelId
      return {}
    }
  )
  .onRequest(methods.agent.session.prompt, async ({ params, client, signal }) => {
    const session = sessions.get(params.sessionId)
    if (!session) throw unknownSession(params.sessionId)
    const previous = session.turn
    if (previous && !promptQueueing) throw new RequestError(-32600, `Session ${session.id} already has a prompt turn running`)

    const text = promptText(params.prompt)
    const userMessageId = randomUUID()
    const userChunk: SessionUpdate = {
      sessionUpdate: 'user_message_chunk',
      messageId: userMessageId,
      content: { type: 'text', text }
    }
    session.history.push(userChunk)
    persist(session)
    if (previous) {
      // Taken mid-turn (as Claude Code does): the running turn hands over at its next step.
      previous.handedOff = true
      previous.controller.abort()
      await previous.done
      if (session.turn) throw new RequestError(-32600, `Session ${session.id} already has a prompt turn running`)
    }
    currentPrompt = params.prompt

    const controller = new AbortController()
    const onRequestAbort = (): void => controller.abort()
    signal.addEventListener('abort', onRequestAbort, { once: true })
    let settle = (): void => undefined
    const turn: Turn = { controller, done: new Promise<void>((resolve) => (settle = resolve)) }
    session.turn = turn
    try {
      const ran = await new TurnRunner(session, v1Peer(client), controller.signal).run(scriptFor(text))
      const stopReason = turn.handedOff ? 'end_turn' : ran
      const tokens = session.turnTokens
      session.turnTokens = null
      if (tokens) return { stopReason, usage: { totalTokens: tokens.input + tokens.output, inputTokens: tokens.input, outputTokens: tokens.output } }
      // SCRIPTED_AGENT_TURN_USAGE=1: the prompt response counts the turn's tokens (ACP's unstable `usage`), as Claude Code does.
      if (env.SCRIPTED_AGENT_TURN_USAGE === '1') {
        const input = 1000 + text.length
        return { stopReason, usage: { totalTokens: input + 250, inputTokens: input, outputTokens: 250, cachedReadTokens: 800 } }
      }
      return { stopReason }
    } finally {
      signal.removeEventListener('abort', onRequestAbort)
      session.turn = null
      persist(session)
      settle()
    }
  })
  .onRequest(methods.agent.authenticate, async ({ params }) => {
    if (params.methodId === 'browser') authenticated = true
    else if (params.methodId === 'api-key') {
      if (process.env.SCRIPTED_KEY !== 'sekret') throw new RequestError(-32000, 'SCRIPTED_KEY is missing or wrong')
      authenticated = true
    } else if (params.methodId === 'pasted-key' && keyInMeta) {
      const key = (params._meta as { 'api-key'?: unknown } | null | undefined)?.['api-key']
      if (key !== 'sekret') throw new RequestError(-32000, `API key ${key === undefined ? 'missing' : 'refused'}`)
      authenticated = true
    } else throw new RequestError(-32602, `Unknown auth method ${params.methodId}`)
    return {}
  })
  .onRequest(methods.agent.logout, async () => {
    authenticated = false
    if (credentialsFile) rmSync(credentialsFile, { force: true })
    return {}
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.turn?.controller.abort()
  })

if (loadSession) {
  app = app.onRequest(methods.agent.session.load, async ({ params, client, signal }) => {
    const systemPrompt = receivedSystemPrompt('session/load')
    const history = readHistory(params.sessionId)
    if (!history) throw unknownSession(params.sessionId)
    // SCRIPTED_AGENT_LOAD_DELAY_MS: a slow load, which the client may cancel ($/cancel_request).
    if (!(await wait(Number(env.SCRIPTED_AGENT_LOAD_DELAY_MS ?? 0), signal))) throw RequestError.requestCancelled()
    const session = restore(params.sessionId, history, params.cwd)
    session.mcpServers = params.mcpServers
    session.systemPrompt = systemPrompt
    recordMcpServers('session/load', session.id, params.mcpServers)
    // SCRIPTED_AGENT_LOAD_FAIL=<reason>: replays half the history, then fails the load (as Gemini CLI's
    // "No previous sessions found for this project").
    const failWith = env.SCRIPTED_AGENT_LOAD_FAIL
    const replayed = failWith ? history.slice(0, Math.floor(history.length / 2)) : history
    // SCRIPTED_AGENT_LATE_REPLAY=1: answers first and replays after (as Gemini CLI, which does not await its
    // streamHistory), starting 150 ms later (SCRIPTED_AGENT_LATE_REPLAY_AFTER_MS) with 40 ms between updates.
    if (env.SCRIPTED_AGENT_LATE_REPLAY === '1' && !failWith) {
      void (async () => {
        await new Promise((r) => setTimeout(r, Number(env.SCRIPTED_AGENT_LATE_REPLAY_AFTER_MS ?? 150)))
        for (const update of replayed) {
          await client.notify(methods.client.session.update, { sessionId: session.id, update })
          await new Promise((r) => setTimeout(r, 40))
        }
      })().catch((error: unknown) => process.stderr.write(`late replay failed: ${String(error)}\n`))
      return sessionStateAnswer(session)
    }
    for (const update of replayed) {
      await client.notify(methods.client.session.update, { sessionId: session.id, update })
    }
    if (failWith) {
      sessions.delete(session.id)
      throw new RequestError(-32603, 'Internal error', { details: failWith })
    }
    return sessionStateAnswer(session)
  })
}

/** A stored session made live in this process (load, resume, fork). */
function restore(sessionId: string, history: SessionUpdate[], cwd: string): Session {
  const live = sessions.get(sessionId)
  if (live?.turn) throw new RequestError(-32600, `Session ${sessionId} has a prompt turn running`)
  const session = newSessionState(sessionId, cwd, history)
  session.title = storedMeta(sessionId)?.title ?? null
  sessions.set(session.id, session)
  return session
}

const PAGE_SIZE = 2

if (sessionMethods.has('list')) {
  app = app.onRequest(methods.agent.session.list, async ({ params }) => {
    const all = storedSessions().filter((s) => !params.cwd || s.cwd === params.cwd)
    const start = params.cursor ? Number(params.cursor) : 0
    if (!Number.isInteger(start) || start < 0) throw new RequestError(-32602, `Invalid cursor ${params.cursor}`)
    const page = all.slice(start, start + PAGE_SIZE)
    return {
      sessions: page.map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, title: s.title, updatedAt: s.updatedAt })),
      nextCursor: start + PAGE_SIZE < all.length ? String(start + PAGE_SIZE) : null
    }
  })
}
if (sessionMethods.has('resume')) {
  app = app.onRequest(methods.agent.session.resume, async ({ params }) => {
    const systemPrompt = receivedSystemPrompt('session/resume')
    const history = readHistory(params.sessionId)
    if (!history) throw unknownSession(params.sessionId)
    const session = restore(params.sessionId, history, params.cwd)
    session.mcpServers = params.mcpServers ?? []
    session.systemPrompt = systemPrompt
    recordMcpServers('session/resume', session.id, params.mcpServers)
    return sessionStateAnswer(session)
  })
}
if (sessionMethods.has('close')) {
  app = app.onRequest(methods.agent.session.close, async ({ params }) => {
    const session = sessions.get(params.sessionId)
    if (!session) throw unknownSession(params.sessionId)
    session.turn?.controller.abort()
    sessions.delete(params.sessionId)
    return {}
  })
}
if (sessionMethods.has('delete')) {
  app = app.onRequest(methods.agent.session.delete, async ({ params }) => {
    sessions.delete(params.sessionId)
    const file = historyFile(params.sessionId)
    if (file && /^[A-Za-z0-9_.-]+$/.test(params.sessionId)) {
      rmSync(file, { force: true })
      rmSync(tailFile(file), { force: true })
      rmSync(metaFile(file), { force: true })
    }
    return {}
  })
}
if (steering) {
  app = app.onRequest(
    '_session/steering',
    (raw) => raw as { sessionId: string; prompt: ContentBlock[]; _meta?: { steering?: { idleBehavior?: string } } },
    async ({ params }) => {
      const session = sessions.get(params.sessionId)
      if (!session) throw unknownSession(params.sessionId)
      const text = promptText(params.prompt)
      if (stateDir)
        appendFileSync(join(stateDir, 'steering.jsonl'), `${JSON.stringify({ sessionId: session.id, text, running: Boolean(session.turn) })}\n`)
      // SCRIPTED_AGENT_STEERING=idle: as if every turn had just ended when the steer arrived.
      if (!session.turn || env.SCRIPTED_AGENT_STEERING === 'idle') {
        if (params._meta?.steering?.idleBehavior === 'promptRequired') return { outcome: 'promptRequired', reason: 'noRunningTurn' }
        throw new RequestError(-32600, 'No turn is running (and the client did not opt into promptRequired)')
      }
      // Taken at the turn's next step, after this answer: the client hears "injected" before what the steer brings.
      ;(session.steered ??= []).push(text)
      return { outcome: 'injected' }
    }
  )
}
if (sessionMethods.has('fork')) {
  app = app.onRequest(
    'session/fork',
    (raw) => raw as { sessionId: string; cwd: string; mcpServers?: unknown[] },
    async ({ params }) => {
      const systemPrompt = receivedSystemPrompt('session/fork')
      const history = readHistory(params.sessionId)
      if (!history) throw unknownSession(params.sessionId)
      const fork = restore(`sess-${randomUUID()}`, history.slice(), params.cwd)
      fork.mcpServers = params.mcpServers ?? []
      fork.systemPrompt = systemPrompt
      recordMcpServers('session/fork', fork.id, params.mcpServers)
      persist(fork)
      return { sessionId: fork.id, ...sessionStateAnswer(fork) }
    }
  )
}

// ---------------------------------------------------------------------------
// Protocol version 2 (SCRIPTED_AGENT_V2=1): the same sessions, history and
// turn scripts, spoken in the draft's terms. Turns write version 1 updates;
// toV2Update converts them. A prompt is answered as soon as it is inserted
// (with its messageId) and the turn ends with an idle state_update.

/** A version 1 update as version 2 sends it; null when version 2 has no such update (modes). */
function toV2Update(update: SessionUpdate): v2.SessionUpdate | null {
  switch (update.sessionUpdate) {
    case 'user_message_chunk':
    case 'agent_message_chunk':
    case 'agent_thought_chunk':
      return { sessionUpdate: update.sessionUpdate, messageId: update.messageId ?? randomUUID(), content: update.content } as v2.SessionUpdate
    case 'tool_call':
    case 'tool_call_update': {
      const { sessionUpdate: _, content, ...fields } = update
      return {
        sessionUpdate: 'tool_call_update',
        ...(fields as Omit<v2.ToolCallUpdate, 'content'>),
        ...(content ? { content: content.map(toV2ToolContent) } : {})
      }
    }
    case 'plan':
      return { sessionUpdate: 'plan_update', plan: { type: 'items', planId: 'plan', entries: update.entries } }
    case 'available_commands_update':
      return {
        sessionUpdate: 'available_commands_update',
        availableCommands: update.availableCommands.map((c) => ({
          type: 'command' as const,
          name: c.name,
          description: c.description,
          ...(c.input && 'hint' in c.input ? { input: { type: 'text' as const, hint: c.input.hint } } : {})
        }))
      }
    case 'config_option_update':
      return { sessionUpdate: 'config_option_update', configOptions: toV2ConfigOptions(update.configOptions) }
    case 'current_mode_update':
      return null
    default:
      // session_info_update, usage_update, notice, compaction: the same in both versions.
      return update as v2.SessionUpdate
  }
}

function toV2ToolContent(content: ToolCallContent): v2.ToolCallContent {
  if (content.type !== 'diff') return content as v2.ToolCallContent
  const patch = createTwoFilesPatch(`a${content.path}`, `b${content.path}`, content.oldText ?? '', content.newText)
  return {
    type: 'diff',
    changes: [{ operation: content.oldText == null ? 'add' : 'modify', path: content.path }],
    patch: { format: 'git_patch', text: patch }
  } as v2.ToolCallContent
}

function toV2ConfigOptions(options: SessionConfigOption[]): v2.SessionConfigOption[] {
  return options.map(({ id, ...option }) => ({ configId: id, ...option }) as v2.SessionConfigOption)
}

function v2Peer(sdk: V2Sdk, client: v2.AgentContext): Peer {
  const send = (sessionId: string, update: v2.SessionUpdate): Promise<void> => client.notify(sdk.methods.client.session.update, { sessionId, update })
  return {
    update: async (sessionId, update) => {
      const converted = toV2Update(update)
      if (converted) await send(sessionId, converted)
    },
    v2Update: send,
    elicit: (request) =>
      client.request(
        sdk.methods.client.elicitation.create,
        request as unknown as v2.CreateElicitationRequest
      ) as unknown as Promise<CreateElicitationResponse>,
    elicitationComplete: (elicitationId) => client.notify(sdk.methods.client.elicitation.complete, { elicitationId }),
    requestPermission: async (request, options) => {
      const { toolCall } = request
      const response = await client.request(
        sdk.methods.client.session.requestPermission,
        {
          sessionId: request.sessionId,
          title: toolCall.title ?? 'Permission',
          subject: {
            type: 'tool_call',
            toolCall: { toolCallId: toolCall.toolCallId, title: toolCall.title, kind: toolCall.kind, status: toolCall.status }
          },
          options: request.options
        },
        options
      )
      return response as RequestPermissionResponse
    },
    v1: null
  }
}

function v2SessionAnswer(session: Session): { configOptions?: v2.SessionConfigOption[] } {
  return offerSessionState ? { configOptions: toV2ConfigOptions(configOptions(session)) } : {}
}

async function sendState(sdk: V2Sdk, client: v2.AgentContext, sessionId: string, update: v2.StateUpdate): Promise<void> {
  await client.notify(sdk.methods.client.session.update, { sessionId, update: { sessionUpdate: 'state_update', ...update } as v2.SessionUpdate })
}

/** The version 2 side of this agent, built from the SDK once it is loaded. */
function v2AgentOf(sdk: V2Sdk) {
  const v2App = sdk
    .agent({ name: agentName })
    .onRequest(sdk.methods.agent.initialize, async ({ params }) => {
      // Version 2 names the client's capabilities `capabilities`; elicitation and auth have version 1's shapes.
      const announced =
        (params as { capabilities?: { elicitation?: ClientCapabilities['elicitation']; auth?: ClientCapabilities['auth'] } }).capabilities ?? {}
      clientCapabilities = {
        elicitation: announced.elicitation ?? undefined,
        auth: announced.auth ? { terminal: Boolean(announced.auth.terminal) } : undefined
      }
      if (initMode === 'exit') {
        log('scripted-agent: cannot start: missing credentials')
        process.exit(3)
      }
      if (initMode === 'hang') return new Promise<never>(() => undefined)
      const prompt = promptCapabilities()
      const optional = (name: string): Record<string, object> => (sessionMethods.has(name) ? { [name]: {} } : {})
      return {
        protocolVersion: sdk.PROTOCOL_VERSION,
        info: { name: agentName, title: 'Scripted Agent', version: '1.0.0' },
        capabilities: {
          session: {
            prompt: Object.fromEntries(
              Object.entries(prompt)
                .filter(([, on]) => on)
                .map(([kind]) => [kind, {}])
            ),
            mcp: { stdio: {} },
            ...optional('delete'),
            ...optional('additionalDirectories')
          }
        },
        authMethods: needsAuth
          ? [
              { type: 'agent' as const, methodId: 'browser', name: 'Log in with the browser', description: 'The agent opens a login page' },
              { type: 'terminal' as const, methodId: 'cli-login', name: 'Log in from a terminal', args: ['--login'] }
            ]
          : []
      }
    })
    .onRequest(sdk.methods.agent.auth.login, async ({ params }) => {
      if (params.methodId !== 'browser') throw new RequestError(-32602, `Unknown auth method ${params.methodId}`)
      authenticated = true
      return {}
    })
    .onRequest(sdk.methods.agent.auth.logout, async () => {
      authenticated = false
      return {}
    })
    .onRequest(sdk.methods.agent.session.new, async ({ params }) => {
      if (!isAbsolute(params.cwd)) throw new RequestError(-32602, `cwd must be an absolute path, got '${params.cwd}'`)
      requireAuth()
      if (env.SCRIPTED_AGENT_NEW === 'fail') {
        // As an agent whose own set-up fails: a line on stderr among others, then the SDK's generic error with details.
        process.stderr.write('scripted-agent: indexing the workspace\n')
        process.stderr.write(`scripted-agent: open ${params.cwd}/.index/lock: permission denied\n`)
        process.stderr.write('scripted-agent: giving up on this session\n')
        throw RequestError.internalError({ details: 'The workspace index could not be opened' })
      }
      const session = newSessionState(`sess-${randomUUID()}`, params.cwd)
      session.additionalDirectories = params.additionalDirectories ?? null
      sessions.set(session.id, session)
      persist(session)
      return { sessionId: session.id, ...v2SessionAnswer(session) }
    })
    .onRequest(sdk.methods.agent.session.setConfigOption, async ({ params }) => {
      const session = sessions.get(params.sessionId)
      if (!session) throw unknownSession(params.sessionId)
      if (params.configId === 'model' && params.type === 'id' && (params.value === 'fast' || params.value === 'smart'))
        session.config.model = params.value
      else if (params.configId === 'verbose' && params.type === 'boolean' && typeof params.value === 'boolean') session.config.verbose = params.value
      else throw new RequestError(-32602, `Invalid value for ${params.configId}`)
      return { configOptions: toV2ConfigOptions(configOptions(session)) }
    })
    .onRequest(sdk.methods.agent.session.prompt, async ({ params, client }) => {
      const session = sessions.get(params.sessionId)
      if (!session) throw unknownSession(params.sessionId)
      requireAuth()
      if (session.turn) throw new RequestError(-32600, `Session ${session.id} already has a prompt turn running`)
      const prompt = params.prompt as ContentBlock[]
      const text = promptText(prompt)
      currentPrompt = prompt
      const messageId = randomUUID()
      const userChunk: SessionUpdate = { sessionUpdate: 'user_message_chunk', messageId, content: { type: 'text', text } }
      session.history.push(userChunk)
      persist(session)
      const controller = new AbortController()
      const turn: Turn = { controller }
      session.turn = turn
      // The prompt is inserted: echoed as the user message, and work starts.
      await client.notify(sdk.methods.client.session.update, { sessionId: session.id, update: toV2Update(userChunk)! })
      await sendState(sdk, client, session.id, { state: 'running' })
      turn.finished = (async () => {
        let idle: v2.StateUpdate
        try {
          idle = {
            state: 'idle',
            stopReason: await new TurnRunner(session, v2Peer(sdk, client), controller.signal).run(scriptFor(text))
          } as v2.StateUpdate
        } catch (error) {
          const code = error instanceof RequestError ? error.code : -32603
          idle = { state: 'idle', stopReason: 'error', error: { code, message: errorMessage(error) } }
        } finally {
          session.turn = null
          persist(session)
        }
        await sendState(sdk, client, session.id, idle)
      })().catch((error: unknown) => log(`scripted-agent: turn ended badly: ${errorMessage(error)}`))
      return { messageId }
    })
    .onNotification(sdk.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.turn?.controller.abort()
    })
    .onRequest(sdk.methods.agent.session.list, async ({ params }) => {
      const all = storedSessions().filter((s) => !params.cwd || s.cwd === params.cwd)
      const start = params.cursor ? Number(params.cursor) : 0
      if (!Number.isInteger(start) || start < 0) throw new RequestError(-32602, `Invalid cursor ${params.cursor}`)
      const page = all.slice(start, start + PAGE_SIZE)
      return {
        sessions: page.map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, title: s.title, updatedAt: s.updatedAt })),
        nextCursor: start + PAGE_SIZE < all.length ? String(start + PAGE_SIZE) : null
      }
    })
    .onRequest(sdk.methods.agent.session.resume, async ({ params, client, signal }) => {
      if (params.replayFrom && (params.replayFrom.type !== 'start' || !loadSession)) {
        throw new RequestError(-32602, `Cannot replay from ${JSON.stringify(params.replayFrom)}`)
      }
      const history = readHistory(params.sessionId)
      if (!history) throw unknownSession(params.sessionId)
      if (!(await wait(Number(env.SCRIPTED_AGENT_LOAD_DELAY_MS ?? 0), signal))) throw RequestError.requestCancelled()
      const session = restore(params.sessionId, history, params.cwd)
      session.additionalDirectories = params.additionalDirectories ?? null
      if (params.replayFrom) {
        for (const update of history) {
          const converted = toV2Update(update)
          if (converted) await client.notify(sdk.methods.client.session.update, { sessionId: session.id, update: converted })
        }
      }
      // Every resume reports the current state before it answers.
      await sendState(sdk, client, session.id, { state: 'idle' })
      return v2SessionAnswer(session)
    })
    .onRequest(sdk.methods.agent.session.close, async ({ params }) => {
      const session = sessions.get(params.sessionId)
      if (session?.turn) {
        // Closing cancels the turn, whose final idle state goes out before this answer.
        session.turn.controller.abort()
        await session.turn.finished
      }
      sessions.delete(params.sessionId)
      return {}
    })

  const v2Agent = sessionMethods.has('delete')
    ? v2App.onRequest(sdk.methods.agent.session.delete, async ({ params }) => {
        sessions.delete(params.sessionId)
        const file = historyFile(params.sessionId)
        if (file && /^[A-Za-z0-9_.-]+$/.test(params.sessionId)) {
          rmSync(file, { force: true })
          rmSync(tailFile(file), { force: true })
          rmSync(metaFile(file), { force: true })
        }
        return {}
      })
    : v2App
  return v2Agent
}

/**
 * SCRIPTED_AGENT_PROTOCOL_VERSION with version 2: the version 2 answer to
 * initialize is rewritten on the wire to that version (the SDK refuses to send
 * another), to test how a client meets an agent newer than it.
 */
function rewriteInitializeAnswer(stream: v2.Stream): v2.Stream {
  if (!env.SCRIPTED_AGENT_PROTOCOL_VERSION) return stream
  const out = new TransformStream<v2.AnyMessage, v2.AnyMessage>({
    transform(message, controller) {
      const result = 'result' in message ? (message.result as Record<string, unknown> | null) : null
      if (result && typeof result === 'object' && 'info' in result && typeof result.protocolVersion === 'number') {
        controller.enqueue({ ...message, result: { ...result, protocolVersion } } as v2.AnyMessage)
      } else controller.enqueue(message)
    }
  })
  void out.readable.pipeTo(stream.writable).catch(() => undefined)
  return { readable: stream.readable, writable: out.writable }
}

process.stdout.on('error', () => process.exit(0)) // the client went away
process.on('unhandledRejection', (reason) => log(`scripted-agent: unhandled rejection: ${errorMessage(reason)}`))

/**
 * `--login`: the terminal sign-in this agent offers (its own program with that
 * argument, run by the client in a terminal). Like real login TUIs it insists
 * on a terminal, asks for a code, and exits 0 only when signed in.
 */
async function runLogin(): Promise<void> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    process.stderr.write('scripted-agent --login needs a terminal\n')
    process.exit(2)
  }
  const { createInterface } = await import('node:readline/promises')
  const rl = createInterface({ input: process.stdin, output: process.stdout })
  process.stdout.write('\x1b[1mScripted agent sign-in\x1b[0m\r\n')
  const code = (await rl.question(`Enter the code ${env.SCRIPTED_LOGIN_CODE ?? ''} to sign in: `)).trim()
  rl.close()
  if (!env.SCRIPTED_LOGIN_CODE || code !== env.SCRIPTED_LOGIN_CODE) {
    process.stdout.write('\x1b[31mWrong code.\x1b[0m\r\n')
    process.exit(1)
  }
  if (credentialsFile) {
    mkdirSync(stateDir!, { recursive: true })
    writeFileSync(credentialsFile, 'signed in\n')
  }
  process.stdout.write('\x1b[32mSigned in.\x1b[0m\r\n')
  process.exit(0)
}

if (process.argv.includes('--login')) {
  void runLogin()
} else {
  const wire = ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>)
  // The client's `subagents` capability and the sessions' `systemPrompt`, read off the raw requests before the SDK's schema drops them.
  const stdio = {
    writable: wire.writable,
    readable: wire.readable.pipeThrough(
      new TransformStream({
        transform(message, controller) {
          const m = message as { method?: string; params?: { clientCapabilities?: { subagents?: unknown }; systemPrompt?: unknown } }
          if (m.method === 'initialize') rawSubagents = m.params?.clientCapabilities?.subagents ?? undefined
          if (m.method && ['session/new', 'session/load', 'session/resume', 'session/fork'].includes(m.method)) {
            rawSystemPrompts.push({ method: m.method, systemPrompt: m.params?.systemPrompt })
          }
          controller.enqueue(message)
        }
      })
    )
  }
  // With version 2, a router answers each client in the version it asks for (version 1 stays exactly as above).
  const connection = v2sdk
    ? v2sdk.agentProtocolRouter().withV1(app).withV2(v2AgentOf(v2sdk)).connect(rewriteInitializeAnswer(stdio))
    : app.connect(stdio)
  void connection.closed.then(
    () => process.exit(0),
    (error: unknown) => {
      log(`scripted-agent: connection closed: ${errorMessage(error)}`)
      process.exit(0)
    }
  )
}
