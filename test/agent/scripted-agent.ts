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
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import {
  agent,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  type RequestPermissionRequest,
  type SessionConfigOption,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
  type ToolKind
} from '@agentclientprotocol/sdk'

// ---------------------------------------------------------------------------
// Configuration

const env = process.env
const stateDir = env.SCRIPTED_AGENT_STATE_DIR ? env.SCRIPTED_AGENT_STATE_DIR : null
const loadSession = env.SCRIPTED_AGENT_LOAD !== '0'
const initMode = env.SCRIPTED_AGENT_INIT ?? ''
const chunkDelayMs = Math.max(0, Number(env.SCRIPTED_AGENT_CHUNK_DELAY_MS ?? '0') || 0)
const agentName = env.SCRIPTED_AGENT_NAME || 'scripted-agent'
/** Answer initialize with this protocol version instead of the SDK's (tests version negotiation). */
const protocolVersion = env.SCRIPTED_AGENT_PROTOCOL_VERSION ? Number(env.SCRIPTED_AGENT_PROTOCOL_VERSION) : PROTOCOL_VERSION
/**
 * `1`: the agent needs signing in: session/new and prompts fail with
 * auth_required (-32000) until `authenticate` succeeds with `browser`, or with
 * `api-key` while SCRIPTED_KEY=sekret is in its environment. Announces logout.
 */
const needsAuth = env.SCRIPTED_AGENT_AUTH === '1'
let authenticated = false
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
const sessionMethods = new Set((env.SCRIPTED_AGENT_SESSIONS ?? '').split(',').map((m) => m.trim()).filter(Boolean))
/** `1`: sessions offer modes, configuration options (a model select, a boolean) and older-style models. */
const offerSessionState = env.SCRIPTED_AGENT_SESSION_STATE === '1'

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
}

interface Session {
  id: string
  history: SessionUpdate[]
  toolCounter: number
  turn: Turn | null
  cwd: string
  /** What the client sent as additionalDirectories when the session started (null: none sent). */
  additionalDirectories: string[] | null
  title: string | null
  /** Modes, configuration and model, when SCRIPTED_AGENT_SESSION_STATE=1. */
  modeId: string
  config: { model: string; verbose: boolean }
  modelId: string
}

const availableModes = [
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
    title: null,
    history,
    toolCounter: countToolCalls(history),
    turn: null,
    modeId: 'ask',
    config: { model: 'fast', verbose: false },
    modelId: 'scripted-small'
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
let clientCapabilities: ClientCapabilities = {}

function historyFile(sessionId: string): string | null {
  return stateDir ? join(stateDir, `${sessionId}.json`) : null
}

function persist(session: Session): void {
  const file = historyFile(session.id)
  if (!file) return
  writeFileSync(file, JSON.stringify(session.history, null, 1))
  const meta: StoredMeta = { cwd: session.cwd, title: session.title, updatedAt: new Date().toISOString() }
  writeFileSync(metaFile(file), JSON.stringify(meta))
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
    return parsed as SessionUpdate[]
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
    private readonly client: AgentContext,
    private readonly signal: AbortSignal
  ) {}

  get cancelled(): boolean {
    return this.signal.aborted
  }

  private checkCancelled(): void {
    if (this.cancelled) throw new Cancelled()
  }

  /** Records the update in the session's history (persisted at once), then sends it. */
  async send(update: SessionUpdate): Promise<void> {
    if (update.sessionUpdate !== 'agent_message_chunk') this.messageId = null
    if (update.sessionUpdate !== 'agent_thought_chunk') this.thoughtId = null
    this.session.history.push(update)
    persist(this.session)
    await this.client.notify(methods.client.session.update, { sessionId: this.session.id, update })
  }

  async message(text: string): Promise<void> {
    this.messageId ??= randomUUID()
    await this.send({ sessionUpdate: 'agent_message_chunk', messageId: this.messageId, content: { type: 'text', text } })
  }

  async thought(text: string): Promise<void> {
    this.thoughtId ??= randomUUID()
    await this.send({ sessionUpdate: 'agent_thought_chunk', messageId: this.thoughtId, content: { type: 'text', text } })
  }

  /** Streams agent message chunks with the configured delay between them; stops when cancelled. */
  async stream(pieces: string[]): Promise<void> {
    for (let i = 0; i < pieces.length; i++) {
      this.checkCancelled()
      if (i > 0 && chunkDelayMs > 0) {
        await wait(chunkDelayMs, this.signal)
        this.checkCancelled()
      }
      await this.message(pieces[i])
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
        const response = await this.client.request(methods.client.session.requestPermission, request, {
          cancellationSignal: AbortSignal.timeout(Math.max(0, Number(arg) || 0))
        })
        await this.message(`withdrawn: ${response.outcome.outcome}`)
        return
      }
      case 'permission-always':
        // /permission-always [KIND]: the four standard options, for a tool call of KIND (default execute)
        await this.permission((arg || 'execute') as ToolKind, true)
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
      case 'terminal':
        await this.terminal(arg, null, null)
        return
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
        await this.client.request(methods.client.terminal.create, { sessionId: this.session.id, command: arg })
        await this.message('left a terminal running')
        return
      case 'blocks':
        // What the prompt was made of, as the agent received it.
        await this.message(`blocks: ${currentPrompt.map(describeBlock).join(', ')}`)
        return
      case 'dirs':
        await this.message(`additionalDirectories=${JSON.stringify(this.session.additionalDirectories)}`)
        return
      case 'raw': {
        // A session/update exactly as written, bypassing the SDK's checks: tests malformed and unknown updates.
        const message = { jsonrpc: '2.0', method: 'session/update', params: { sessionId: this.session.id, update: JSON.parse(arg) as unknown } }
        process.stdout.write(JSON.stringify(message) + '\n')
        return
      }
      case 'garbage':
        // Not an ACP message, on purpose: the client must tolerate it.
        process.stdout.write('this is not json\n')
        return
      default:
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
      if (clientCapabilities.fs?.readTextFile !== true) throw new Error('the client does not offer fs/read_text_file')
      content = (await this.client.request(methods.client.fs.readTextFile, { sessionId, path })).content
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
      if (clientCapabilities.fs?.writeTextFile !== true) throw new Error('the client does not offer fs/write_text_file')
      await this.client.request(methods.client.fs.writeTextFile, { sessionId, path, content: text })
    } catch (error) {
      const message = errorMessage(error)
      await this.toolFailed(toolCallId, message)
      await this.message(`write failed: ${message}`)
      return
    }
    await this.toolDone(toolCallId, [{ type: 'diff', path, oldText: null, newText: text }])
    await this.message(`wrote ${text.length} chars`)
  }

  /** Runs COMMAND in a client terminal, shown in a tool call; reports its exit and output. */
  private async terminal(command: string, outputByteLimit: number | null, killAfterMs: number | null): Promise<void> {
    const toolCallId = this.nextToolCallId()
    if (!clientCapabilities.terminal) {
      await this.message('terminal failed: the client has no terminal capability')
      return
    }
    const { terminalId } = await this.client.request(methods.client.terminal.create, {
      sessionId: this.session.id,
      command,
      outputByteLimit
    })
    await this.send({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: `Run ${command}`,
      kind: 'execute',
      status: 'in_progress',
      content: [{ type: 'terminal', terminalId }]
    })
    if (killAfterMs !== null) {
      await wait(killAfterMs, this.signal)
      await this.client.request(methods.client.terminal.kill, { sessionId: this.session.id, terminalId })
    }
    const exit = await this.client.request(methods.client.terminal.waitForExit, { sessionId: this.session.id, terminalId })
    const { output, truncated } = await this.client.request(methods.client.terminal.output, { sessionId: this.session.id, terminalId })
    await this.client.request(methods.client.terminal.release, { sessionId: this.session.id, terminalId })
    await this.send({ sessionUpdate: 'tool_call_update', toolCallId, status: exit.exitCode === 0 ? 'completed' : 'failed' })
    await this.message(`exit=${exit.exitCode ?? 'none'} signal=${exit.signal ?? 'none'} truncated=${truncated} output=${JSON.stringify(output)}`)
  }

  /**
   * Asks permission for a tool call of `kind`. `withAlways` offers the four
   * standard options (allow/reject, once/always) instead of allow/reject once.
   */
  private async permission(kind: ToolKind = 'execute', withAlways = false): Promise<void> {
    const toolCallId = this.nextToolCallId()
    const title = kind === 'execute' ? 'Run dangerous command' : `Permission for ${kind}`
    await this.send({ sessionUpdate: 'tool_call', toolCallId, title, kind, status: 'pending' })
    let outcome: string
    try {
      const response = await this.client.request(methods.client.session.requestPermission, {
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
      const message = errorMessage(error)
      await this.toolFailed(toolCallId, message)
      await this.message(`permission failed: ${message}`)
      return
    }
    if (outcome === 'allow' || outcome === 'allow-always') {
      await this.toolDone(toolCallId, [{ type: 'content', content: { type: 'text', text: 'ran the dangerous command' } }])
    } else {
      await this.toolFailed(toolCallId, outcome === 'cancelled' ? 'permission request cancelled' : `permission refused (${outcome})`)
    }
    await this.message(`permission: ${outcome}`)
  }
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
    clientCapabilities = params.clientCapabilities ?? {}
    return {
      protocolVersion,
      agentCapabilities: {
        loadSession,
        promptCapabilities: promptCapabilities(),
        sessionCapabilities: Object.fromEntries([...sessionMethods].map((m) => [m, {}])),
        ...(needsAuth ? { auth: { logout: {} } } : {})
      },
      agentInfo: { name: agentName, version: '1.0.0' },
      authMethods: needsAuth
        ? [
            { id: 'browser', name: 'Log in with the browser', description: 'The agent opens a login page' },
            { id: 'api-key', name: 'Use SCRIPTED_KEY', type: 'env_var', vars: [{ name: 'SCRIPTED_KEY' }] },
            { id: 'cli-login', name: 'Log in from a terminal', type: 'terminal', args: ['--login'] }
          ]
        : []
    }
  })
  .onRequest(methods.agent.session.new, async ({ params }) => {
    if (typeof params.cwd !== 'string' || !isAbsolute(params.cwd)) {
      throw new RequestError(-32602, `cwd must be an absolute path, got '${String(params.cwd)}'`)
    }
    requireAuth()
    const session = newSessionState(`sess-${randomUUID()}`, params.cwd)
    session.additionalDirectories = params.additionalDirectories ?? null
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
    if (session.turn) throw new RequestError(-32600, `Session ${session.id} already has a prompt turn running`)

    const text = promptText(params.prompt)
    currentPrompt = params.prompt
    const userMessageId = randomUUID()
    const userChunk: SessionUpdate = {
      sessionUpdate: 'user_message_chunk',
      messageId: userMessageId,
      content: { type: 'text', text }
    }
    session.history.push(userChunk)
    persist(session)

    const controller = new AbortController()
    const onRequestAbort = (): void => controller.abort()
    signal.addEventListener('abort', onRequestAbort, { once: true })
    session.turn = { controller }
    try {
      const stopReason = await new TurnRunner(session, client, controller.signal).run(scriptFor(text))
      return { stopReason }
    } finally {
      signal.removeEventListener('abort', onRequestAbort)
      session.turn = null
      persist(session)
    }
  })
  .onRequest(methods.agent.authenticate, async ({ params }) => {
    if (params.methodId === 'browser') authenticated = true
    else if (params.methodId === 'api-key') {
      if (process.env.SCRIPTED_KEY !== 'sekret') throw new RequestError(-32000, 'SCRIPTED_KEY is missing or wrong')
      authenticated = true
    } else throw new RequestError(-32602, `Unknown auth method ${params.methodId}`)
    return {}
  })
  .onRequest(methods.agent.logout, async () => {
    authenticated = false
    return {}
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.turn?.controller.abort()
  })

if (loadSession) {
  app = app.onRequest(methods.agent.session.load, async ({ params, client, signal }) => {
    const history = readHistory(params.sessionId)
    if (!history) throw unknownSession(params.sessionId)
    // SCRIPTED_AGENT_LOAD_DELAY_MS: a slow load, which the client may cancel ($/cancel_request).
    if (!(await wait(Number(env.SCRIPTED_AGENT_LOAD_DELAY_MS ?? 0), signal))) throw RequestError.requestCancelled()
    const session = restore(params.sessionId, history, params.cwd)
    for (const update of history) {
      await client.notify(methods.client.session.update, { sessionId: session.id, update })
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
    const history = readHistory(params.sessionId)
    if (!history) throw unknownSession(params.sessionId)
    return sessionStateAnswer(restore(params.sessionId, history, params.cwd))
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
      rmSync(metaFile(file), { force: true })
    }
    return {}
  })
}
if (sessionMethods.has('fork')) {
  app = app.onRequest(
    'session/fork',
    (raw) => raw as { sessionId: string; cwd: string },
    async ({ params }) => {
      const history = readHistory(params.sessionId)
      if (!history) throw unknownSession(params.sessionId)
      const fork = restore(`sess-${randomUUID()}`, history.slice(), params.cwd)
      persist(fork)
      return { sessionId: fork.id, ...sessionStateAnswer(fork) }
    }
  )
}

process.stdout.on('error', () => process.exit(0)) // the client went away
process.on('unhandledRejection', (reason) => log(`scripted-agent: unhandled rejection: ${errorMessage(reason)}`))

const connection = app.connect(
  ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>)
)
void connection.closed.then(
  () => process.exit(0),
  (error: unknown) => {
    log(`scripted-agent: connection closed: ${errorMessage(error)}`)
    process.exit(0)
  }
)
