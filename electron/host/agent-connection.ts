import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type ClientConnection,
  type ClientContext,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type RequestPermissionRequest,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type AnyMessage,
  type CreateTerminalRequest,
  type CreateTerminalResponse,
  type KillTerminalRequest,
  type ReleaseTerminalRequest,
  type TerminalOutputRequest,
  type TerminalOutputResponse,
  type WaitForTerminalExitRequest,
  type WaitForTerminalExitResponse,
  type RequestPermissionResponse,
  type Stream,
  type WriteTextFileRequest
} from '@agentclientprotocol/sdk'
import type { AgentCapabilities, AgentDefinition, AgentRuntimeState } from '../../shared/domain'
import { V1Protocol, type AgentProtocol } from './agent-protocol'
import { V2_PROTOCOL_VERSION, V2Protocol } from './agent-connection-v2'
import { normaliseInitialize } from './capabilities'
import type { CheckedNotification } from './updates'
import { LineGuard } from './line-guard'
import { killProcessTree, newProcessMark, PROCESS_MARK_ENV } from './processes'

/**
 * One agent process and its ACP connection. Sessions of the same agent share
 * it. Owns the child's lifetime: spawn, stderr log, exit, and killing the whole
 * process group on stop so an agent's own children do not outlive it.
 */

/** What the Host answers when the agent calls back into the client. */
export interface ClientHandlers {
  /**
   * Every `session/update` as it arrived, before the SDK parses it (the SDK
   * drops one it cannot parse; the Host must keep it). Called synchronously in
   * arrival order, before the SDK handles the messages that follow (so a
   * session/load replay is applied before its answer).
   */
  sessionUpdate(agentId: string, params: unknown): void
  /**
   * A notification the connection has already checked and put in protocol
   * version 1's terms (ACP v2 updates, see agent-connection-v2.ts); same
   * ordering guarantees as sessionUpdate.
   */
  sessionNotification(agentId: string, notification: CheckedNotification): void
  readTextFile(agentId: string, params: ReadTextFileRequest): Promise<ReadTextFileResponse>
  writeTextFile(agentId: string, params: WriteTextFileRequest): Promise<void>
  requestPermission(agentId: string, params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>
  /** `elicitation/create`: a form or a URL for the user, answered when they do (or cancelled with the request). */
  elicit(agentId: string, params: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse>
  createTerminal(agentId: string, params: CreateTerminalRequest): Promise<CreateTerminalResponse>
  terminalOutput(agentId: string, params: TerminalOutputRequest): Promise<TerminalOutputResponse>
  waitForTerminalExit(agentId: string, params: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse>
  killTerminal(agentId: string, params: KillTerminalRequest): Promise<void>
  releaseTerminal(agentId: string, params: ReleaseTerminalRequest): Promise<void>
}

export interface AgentConnectionOptions {
  logDir: string
  handlers: ClientHandlers
  onState: (state: AgentRuntimeState) => void
  clientVersion: string
  /** Environment variables from the secret store (never written to db.json). */
  secretEnv?: Record<string, string>
  initializeTimeoutMs?: number
  /** Start of the mark put in the agent's environment (see processes.ts); default: none in particular. */
  markPrefix?: string
  /** Longest message line accepted on the agent's stdout (default 8 MiB); a longer one stops the agent. */
  maxMessageBytes?: number
  /** Sees every JSON-RPC message in either direction (tests check what goes out against the schema). */
  onMessage?: (direction: 'in' | 'out', message: AnyMessage) => void
}

const STDERR_TAIL_BYTES = 8 * 1024
const STDIN_GRACE_MS = 500
const KILL_GRACE_MS = 2000
/** How long an agent whose stdout ended may take to exit before it is stopped. */
const STREAM_END_GRACE_MS = 2000
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
/** An agent's log grows by at most this much per run (a flood of stderr or garbage must not fill the disk). */
const LOG_LIMIT_BYTES = 20 * 1024 * 1024
/** Lines on stdout that are not messages: the first ones are logged, then only counted. */
const IGNORED_LINES_LOGGED = 100

export class AgentConnection {
  state: AgentRuntimeState
  private child: ChildProcess | null = null
  /** The SDK connection, whichever protocol version it speaks. */
  private connection: { close(error?: unknown): void; readonly signal: AbortSignal } | null = null
  /** The version 1 connection (null when the agent speaks version 2). */
  private v1: ClientConnection | null = null
  private protocol: AgentProtocol | null = null
  /** Sees every message from the agent in arrival order (raw session updates), per protocol version. */
  private receive: ((message: AnyMessage) => void) | null = null
  /** The agent's raw answer to initialize (the SDK's version 2 client refuses other versions without saying which). */
  private initializeAnswer: { id: unknown; answer: AnyMessage | null } | null = null
  /** Set while a version 2 attempt is put away to start again in version 1: its end is not news. */
  private relaunching = false
  private stderrTail = ''
  private log: WriteStream | null = null
  /** When a message last went either way (for shutting idle agents down). */
  lastActivity = Date.now()
  private spawnFailed = false
  private stopping = false
  /** Why Switchboard ended the agent, when it did so because of something the agent did. */
  private failure: string | null = null
  private readonly mark: string
  private logBytes = 0
  private ignoredLines = 0
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null
  private closed: Promise<void>
  private resolveClosed!: () => void

  constructor(
    readonly definition: AgentDefinition,
    private readonly options: AgentConnectionOptions
  ) {
    this.state = { agentId: definition.id, status: 'stopped', stderrTail: '' }
    this.mark = newProcessMark(options.markPrefix)
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve))
  }

  /**
   * Spawns the agent and completes `initialize`; rejects with a message the
   * user can act on. An agent set to protocol version 2 is asked for it (the
   * SDK's `/experimental/v2` client); when it answers version 1 it is started
   * again in version 1, and the runtime state says so.
   */
  async start(): Promise<void> {
    if (this.definition.protocol !== 2) return this.launch(1)
    try {
      await this.launch(2)
    } catch (error) {
      if (!(error instanceof SpeaksVersion1)) throw error
      await this.stop()
      this.relaunching = false
      await this.launch(1, `Asked for ACP protocol version 2; ${this.definition.name} speaks version 1, so version 1 is used.`)
    }
  }

  private async launch(protocol: 1 | 2, protocolNote?: string): Promise<void> {
    const def = this.definition
    this.resetProcessState()
    this.setState({ status: 'starting', message: undefined, protocolVersion: undefined, protocolNote: undefined })
    mkdirSync(this.options.logDir, { recursive: true })
    this.log = createWriteStream(agentLogPath(this.options.logDir, def.id), { flags: 'a' })
    this.log.on('error', () => undefined)
    this.writeLog(`\n--- ${new Date().toISOString()} starting ${def.command} ${def.args.join(' ')}\n`)

    const child = spawn(def.command, def.args, {
      cwd: homedir(),
      // The mark lets stop() find what the agent started even after it left the agent's process group.
      env: { ...process.env, ...def.env, ...this.options.secretEnv, [PROCESS_MARK_ENV]: this.mark },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so stop() can take the agent's children down with it.
      detached: process.platform !== 'win32',
      windowsHide: true
    })
    this.child = child
    const spawnFailure = new Promise<never>((_, reject) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        this.spawnFailed = true
        const message =
          error.code === 'ENOENT'
            ? `Agent '${def.name}' could not be started: command '${def.command}' was not found. ${
                def.installHint ? `Install it with \`${def.installHint}\`, or fix the agent's command.` : "Install it or fix the agent's command."
              }`
            : `Agent '${def.name}' could not be started (${def.command}): ${error.message}`
        this.setState({ status: 'error', message })
        this.resolveClosed()
        reject(new Error(message))
      })
    })
    spawnFailure.catch(() => undefined)
    child.stdin!.on('error', () => undefined) // EPIPE after the agent died is reported through 'close'
    child.stderr!.on('data', (chunk: Buffer) => this.onStderr(chunk))
    // 'close' waits for stdout to close, which a grandchild holding it open would delay forever:
    // once the agent itself has exited, whatever it left running goes.
    child.once('exit', () => killProcessTree({ pid: child.pid, mark: this.mark, reaped: true }))
    const exited = new Promise<never>((_, reject) => {
      child.once('close', (code, signal) => {
        if (this.spawnFailed) return
        this.exitInfo = { code, signal }
        const message = this.exitMessage()
        // Stopped by us is not a failure to report (unless it was stopped because of one); anything else is.
        if (this.relaunching) this.log?.write('--- asked for ACP protocol version 2, the agent answered 1: starting it again in version 1\n')
        else if (!this.stopping) this.setState({ status: 'exited', message, pid: undefined })
        else if (this.state.status === 'error') this.setState({ pid: undefined })
        else this.setState({ status: 'stopped', message: undefined, pid: undefined })
        this.log?.end(`--- exited (${code ?? signal})\n`)
        this.log = null
        this.connection?.close(new Error(message))
        this.resolveClosed()
        reject(new Error(message))
      })
    })
    exited.catch(() => undefined)

    const maxMessageBytes = this.options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    const guard = new LineGuard({
      maxLineBytes: maxMessageBytes,
      onIgnored: (preview, bytes) => {
        // Lines on stdout that are not JSON-RPC are the agent's bug, not fatal: they go to its log.
        this.ignoredLines++
        if (this.ignoredLines <= IGNORED_LINES_LOGGED) {
          this.writeLog(`--- ignored a line on stdout that is not JSON-RPC: ${preview}${bytes > preview.length + 2 ? ` … (${bytes} bytes in all)` : ''}\n`)
        } else if (this.ignoredLines % 10_000 === 0) {
          this.writeLog(`--- ${this.ignoredLines} lines on stdout that are not JSON-RPC ignored so far\n`)
        }
      },
      onOverflow: (bytes) => {
        const limit = `${Math.round(maxMessageBytes / (1024 * 1024))} MB`
        void this.abandon(
          `Agent '${def.name}' sent a message longer than ${limit} (${bytes} bytes and counting) on stdout, which Switchboard does not accept; it was stopped.`
        )
      }
    })
    child.stdout!.pipe(guard)
    const stream = this.tap(
      ndJsonStream(
        Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
        Readable.toWeb(guard) as ReadableStream<Uint8Array>,
        { maxMessageBytes: maxMessageBytes + 1024 }
      )
    )
    let initialize: Promise<{ protocolVersion: number }>
    if (protocol === V2_PROTOCOL_VERSION) {
      const v2 = new V2Protocol(stream, { agentId: def.id, handlers: this.options.handlers, clientVersion: this.options.clientVersion })
      this.connection = v2.connection
      this.protocol = v2
      this.receive = (message) => v2.receive(message)
      initialize = v2.initialize()
    } else {
      initialize = this.connectV1(stream)
    }
    // The stream can end while the process lives on (a broken message stream): such an agent is of no use, and must not linger.
    this.connection!.signal.addEventListener('abort', () => {
      if (this.stopping || this.exitInfo || this.spawnFailed) return
      const reason = this.connection?.signal.reason as Error | undefined
      // Usually the stream ends because the process is exiting: that is reported by its exit. Only one that stays is failed.
      const exitedSoon = Promise.race([this.closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), STREAM_END_GRACE_MS))])
      void exitedSoon.then((exited) => {
        if (exited || this.stopping || this.exitInfo) return
        void this.abandon(`Agent '${def.name}' closed its message stream${reason?.message ? ` (${reason.message})` : ''} but kept running; it was stopped.`)
      })
    })

    const timeoutMs = this.options.initializeTimeoutMs ?? 60_000
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Agent '${def.name}' did not answer initialize within ${timeoutMs / 1000} s${this.stderrSuffix()}`)),
        timeoutMs
      )
    })
    try {
      const response = await Promise.race([initialize, spawnFailure, exited, timeout]).catch((error: unknown) => {
        // The version 2 client refuses any other version's answer: find out which one the agent gave.
        throw protocol === V2_PROTOCOL_VERSION ? (this.versionAnswered(error) ?? error) : error
      })
      if (response.protocolVersion !== protocol) throw this.versionMismatch(protocol, response.protocolVersion)
      const announced = normaliseInitialize(response)
      this.setState({
        status: 'ready',
        pid: child.pid,
        protocolVersion: protocol,
        protocolNote,
        agentInfo: announced.agentInfo,
        capabilities: announced.capabilities,
        authMethods: announced.authMethods
      })
    } catch (error) {
      if (error instanceof SpeaksVersion1) {
        // Not a failure: start() puts this process away quietly and starts the agent in version 1.
        this.relaunching = true
        throw error
      }
      await this.settle()
      let message = (error as Error).message
      if (this.exitInfo) message = this.exitMessage().replace(' exited ', ' exited during initialize ')
      else if (error instanceof RequestError) message = `Agent '${def.name}' refused initialize: ${message}`
      if (this.state.status !== 'exited') this.setState({ status: 'error', message })
      await this.stop()
      throw new Error(message)
    } finally {
      clearTimeout(timer)
    }
  }

  /** The version 1 SDK context, for calls not in AgentProtocol; prefer `acp`. */
  get agent(): ClientContext {
    if (!this.v1 || !this.isAlive) {
      if (this.isAlive) throw new Error(`Agent '${this.definition.name}' speaks ACP protocol version ${this.protocol?.version}; this call needs version 1`)
      throw new Error(this.exitMessage())
    }
    return this.v1.agent
  }

  /** The agent's ACP methods in protocol version 1's terms, whichever version the connection speaks. */
  get acp(): AgentProtocol {
    if (!this.protocol || !this.isAlive) throw new Error(this.exitMessage())
    return this.protocol
  }

  /** What the agent announced; throws if it has not completed initialize. */
  get capabilities(): AgentCapabilities {
    if (!this.state.capabilities) throw new Error(`Agent '${this.definition.name}' has not been initialised`)
    return this.state.capabilities
  }

  get isAlive(): boolean {
    return this.child !== null && this.exitInfo === null && this.state.status === 'ready'
  }

  /** Describes how the agent ended, with its stderr tail. */
  exitMessage(): string {
    const name = this.definition.name
    if (this.failure) return this.failure
    if (!this.exitInfo) return `Agent '${name}' is not running`
    const how = this.exitInfo.code !== null ? `with code ${this.exitInfo.code}` : `on signal ${this.exitInfo.signal}`
    return `Agent '${name}' exited ${how}${this.stderrSuffix()}`
  }

  /**
   * When the ACP stream has closed, the process is on its way out: wait (briefly)
   * for its exit so errors can say how it ended, with its stderr.
   */
  async settle(): Promise<void> {
    if (!this.connection?.signal.aborted || this.exitInfo) return
    await Promise.race([this.closed, new Promise((r) => setTimeout(r, 1000))])
  }

  /** Resolves once everything written to the log so far is in the file (the Agents page reads it). */
  flushLog(): Promise<void> {
    const log = this.log
    if (!log || log.writableEnded || log.destroyed) return Promise.resolve()
    return new Promise((resolve) => log.write('', () => resolve()))
  }

  /** Resolves once the process is gone (or never started). */
  whenClosed(): Promise<void> {
    return this.closed
  }

  /**
   * Ends the agent and everything it started: stdin closed (an ACP agent ends
   * then), SIGTERM to the whole tree after a moment, SIGKILL after another.
   */
  async stop(): Promise<void> {
    const child = this.child
    if (!child || this.exitInfo || child.pid === undefined) {
      this.resolveClosed()
      return
    }
    this.stopping = true
    // Ask politely first: an ACP agent ends when its stdin closes.
    child.stdin?.end()
    const endedOnItsOwn = await Promise.race([
      this.closed.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), STDIN_GRACE_MS))
    ])
    let timer: NodeJS.Timeout | undefined
    let asked: number[] = []
    if (!endedOnItsOwn) {
      asked = killProcessTree({ pid: child.pid, mark: this.mark }, 'SIGTERM')
      timer = setTimeout(() => killProcessTree({ pid: child.pid, mark: this.mark, also: asked }, 'SIGKILL'), KILL_GRACE_MS)
    }
    await this.closed
    clearTimeout(timer)
    // The agent is gone; make sure nothing it started lingers.
    killProcessTree({ pid: child.pid, mark: this.mark, reaped: true, also: asked }, 'SIGKILL')
  }

  /** Stops the agent because of something it did (or failed to do); the message is what every later error says. */
  async abandon(message: string): Promise<void> {
    if (this.failure || this.stopping) return
    this.failure = message
    this.writeLog(`--- ${message}\n`)
    this.setState({ status: 'error', message })
    this.connection?.close(new Error(message))
    await this.stop()
  }

  /** Puts the Host between the SDK and the stream: raw session/update notifications, and the test hook. */
  private tap(stream: Stream): Stream {
    const { onMessage } = this.options
    const incoming = new TransformStream<AnyMessage, AnyMessage>({
      transform: (message, controller) => {
        this.lastActivity = Date.now()
        onMessage?.('in', message)
        if (this.initializeAnswer && 'id' in message && !('method' in message) && message.id === this.initializeAnswer.id) {
          this.initializeAnswer.answer = message
        }
        this.receive?.(message)
        controller.enqueue(message)
      }
    })
    const outgoing = new TransformStream<AnyMessage, AnyMessage>({
      transform: (message, controller) => {
        this.lastActivity = Date.now()
        onMessage?.('out', message)
        if ('method' in message && message.method === 'initialize' && 'id' in message) this.initializeAnswer = { id: message.id, answer: null }
        controller.enqueue(message)
      }
    })
    void outgoing.readable.pipeTo(stream.writable).catch(() => undefined)
    return { readable: stream.readable.pipeThrough(incoming), writable: outgoing.writable }
  }

  private writeLog(text: string | Buffer): void {
    if (!this.log || this.logBytes >= LOG_LIMIT_BYTES) return
    this.logBytes += text.length
    this.log.write(text)
    if (this.logBytes >= LOG_LIMIT_BYTES) this.log.write(`\n--- log limit reached (${LOG_LIMIT_BYTES} bytes): the rest of this run is not logged\n`)
  }

  /** Protocol version 1: the SDK's main entry, with the client methods only version 1 has (fs, terminals). */
  private connectV1(stream: Stream): Promise<{ protocolVersion: number }> {
    const def = this.definition
    const app = client({ name: 'switchboard' })
      // Updates are taken from the raw stream (see tap below); the parsed copy is not needed.
      .onNotification(methods.client.session.update, () => undefined)
      .onRequest(methods.client.fs.readTextFile, ({ params }) => this.options.handlers.readTextFile(def.id, params))
      .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
        await this.options.handlers.writeTextFile(def.id, params)
        return {}
      })
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) =>
        this.options.handlers.requestPermission(def.id, params, signal)
      )
      .onRequest(methods.client.elicitation.create, ({ params, signal }) => this.options.handlers.elicit(def.id, params, signal))
      // A URL elicitation's flow finished on the agent's side: nothing is waiting for it here any more.
      .onNotification(methods.client.elicitation.complete, () => undefined)
      .onRequest(methods.client.terminal.create, ({ params }) => this.options.handlers.createTerminal(def.id, params))
      .onRequest(methods.client.terminal.output, ({ params }) => this.options.handlers.terminalOutput(def.id, params))
      .onRequest(methods.client.terminal.waitForExit, ({ params }) => this.options.handlers.waitForTerminalExit(def.id, params))
      .onRequest(methods.client.terminal.kill, async ({ params }) => {
        await this.options.handlers.killTerminal(def.id, params)
        return {}
      })
      .onRequest(methods.client.terminal.release, async ({ params }) => {
        await this.options.handlers.releaseTerminal(def.id, params)
        return {}
      })
    const connection = app.connect(stream)
    this.v1 = connection
    this.connection = connection
    this.protocol = new V1Protocol(() => this.agent)
    this.receive = (message) => {
      if ('method' in message && message.method === methods.client.session.update && !('id' in message)) {
        this.options.handlers.sessionUpdate(def.id, message.params)
      }
    }
    return connection.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: true, writeTextFile: true },
        terminal: true,
        // Terminal sign-in methods run in a pseudo-terminal the user sees (login-terminals.ts).
        auth: { terminal: true },
        elicitation: { form: {}, url: {} }
      },
      clientInfo: { name: 'switchboard', title: 'Switchboard', version: this.options.clientVersion }
    })
  }

  /** After a version 2 initialize failed: the version the agent answered with, as the error to report (or to fall back on). */
  private versionAnswered(error: unknown): Error | null {
    const answer = this.initializeAnswer?.answer as { result?: { protocolVersion?: unknown }; error?: { code?: unknown; data?: unknown } } | null | undefined
    const version = answer?.result?.protocolVersion
    if (version === 1) return new SpeaksVersion1()
    if (typeof version === 'number' && version !== V2_PROTOCOL_VERSION) return this.versionMismatch(V2_PROTOCOL_VERSION, version)
    // -32022 (unsupported protocol version), naming the versions the agent speaks.
    const data = answer?.error?.data as { supported?: unknown } | undefined
    if (answer?.error?.code === -32022 && Array.isArray(data?.supported) && data.supported.includes(1)) return new SpeaksVersion1()
    if (answer?.result) {
      return new Error(`Agent '${this.definition.name}' answered initialize with something that is not ACP protocol version 2: ${(error as Error).message}`)
    }
    return null
  }

  private versionMismatch(asked: 1 | 2, answered: number): Error {
    const name = this.definition.name
    if (answered < 1) {
      return new Error(`Agent '${name}' answered with an older ACP protocol version (${answered}); Switchboard speaks versions 1 and 2. Update the agent to use it.`)
    }
    if (asked === 1 && answered === V2_PROTOCOL_VERSION) {
      return new Error(
        `Agent '${name}' answered with a newer ACP protocol version (2); Switchboard asked for version 1. Set the agent to ask for protocol version 2 to use it.`
      )
    }
    return new Error(
      `Agent '${name}' answered with a newer ACP protocol version (${answered}); Switchboard speaks versions 1 and 2 (it asked for ${asked}). Update Switchboard to use it.`
    )
  }

  /** A fresh process: what the previous one (a version 2 attempt put away) left is forgotten. */
  private resetProcessState(): void {
    if (this.child) this.closed = new Promise((resolve) => (this.resolveClosed = resolve))
    this.child = null
    this.connection = null
    this.v1 = null
    this.protocol = null
    this.receive = null
    this.initializeAnswer = null
    this.exitInfo = null
    this.spawnFailed = false
    this.stopping = false
  }

  private stderrSuffix(): string {
    const tail = this.stderrTail.trim()
    return tail ? `; stderr: ${tail.split('\n').slice(-10).join('\n')}` : ''
  }

  private onStderr(chunk: Buffer): void {
    this.writeLog(chunk)
    this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES)
    this.setState({ stderrTail: this.stderrTail })
  }

  private setState(patch: Partial<AgentRuntimeState>): void {
    this.state = { ...this.state, ...patch }
    this.options.onState(this.state)
  }
}

/** Where an agent's stderr goes, across its runs. */
export function agentLogPath(logDir: string, agentId: string): string {
  return join(logDir, `${safeFileName(agentId)}.log`)
}

/** The agent asked for version 2 answered version 1: start it again in version 1. */
class SpeaksVersion1 extends Error {
  constructor() {
    super('The agent speaks ACP protocol version 1')
  }
}

function safeFileName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_')
}
