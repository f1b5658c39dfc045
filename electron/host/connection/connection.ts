import { RequestError, type AnyMessage } from '@agentclientprotocol/sdk'
import type { AgentCapabilities, AgentRuntimeState } from '../../../shared/domain'
import { localCommandOf } from '../../../shared/transport'
import type { AgentDefinition } from '../../../shared/agent-definition'
import { describeError } from '../contract/errors'
import { normaliseInitialize } from './capabilities'
import type { ClientHandlers } from './client-handlers'
import type { LinkPlan } from '../transports/kind'
import type { ProcessDiagnostics } from '../transports/link'
import type { SshEndpoint } from '../ssh/endpoint'
import { LinkRun } from './link-run'
import type { AgentProtocol } from './protocol'
import { V1Protocol } from './protocol-v1'
import type { V2Protocol } from './protocol-v2'
import type { WireProtocol } from './wire'

/**
 * An agent as the rest of the Host sees it: one link (its transport kind's,
 * transports/, held by a LinkRun, link-run.ts) speaking one ACP protocol
 * version, its runtime state, and its methods in version 1's terms (`acp`).
 * `connectAgent` negotiates the version: an agent set to version 2 is asked
 * for it, and when it answers version 1 that link is put away and a fresh one
 * is made in version 1 (nothing of the first is reused).
 */

export interface AgentConnection {
  readonly definition: AgentDefinition
  /** Live runtime state (status, pid, protocol version and note, what the agent announced, stderr tail, message). */
  readonly state: AgentRuntimeState
  /** The agent's methods in protocol version 1's terms whichever version is spoken; throws exitMessage() when not alive. */
  readonly acp: AgentProtocol
  /** What the agent announced (throws if initialize has not completed). */
  readonly capabilities: AgentCapabilities
  readonly isAlive: boolean
  /** Switchboard has begun to stop it (its idle stop, a restart): no new work goes to it; a new start waits for `closed`. */
  readonly stopping: boolean
  /** Resolves once it has ended and its end has been told (its sessions detached). */
  readonly closed: Promise<void>
  /** It ended because its connection was lost (a network or SSH agent's, not closed by Switchboard): its sessions reconnect. */
  readonly connectionLost?: boolean
  /** The host an agent over SSH runs on, on this connection: its sessions' files and terminals are there. */
  readonly sshHost?: SshEndpoint
  /** When a message last went either way (idle agents are stopped). */
  readonly lastActivity: number
  /** How the agent ended, with the stderr lines that explain it. */
  exitMessage(): string
  /** Where its stderr is now; what it writes after this explains what fails after it (see explanation). */
  stderrMark(): number
  /** What it wrote to stderr since `mark` (see stderrMark), as much as is kept: what it says of the MCP servers it starts. */
  stderrSince(mark: number): string
  /** The lines of its stderr since `mark` that explain a failure (found by what they say; else the last ones, `found` false). */
  explanation(mark?: number): { lines: string[]; found: boolean }
  /**
   * After a failure: waits briefly for the exit (when the stream closed) so errors can say how it ended, and for
   * stderr to go quiet, so the line the agent wrote about the failure is read before the error is described.
   */
  settle(): Promise<void>
  flushLog(): Promise<void>
  stop(): Promise<void>
  /** Stops the agent because of something it did; the message is what later errors say. */
  abandon(message: string): Promise<void>
}

export interface AgentConnectionOptions {
  logDir: string
  handlers: ClientHandlers
  /** Each state change of the connection; a run put away for the version 1 fallback reports nothing more. */
  onState: (connection: AgentConnection, state: AgentRuntimeState) => void
  clientVersion: string
  /** How to reach the agent: its transport kind's links (transports/kinds.ts `plan`). */
  link: LinkPlan
  /** Its secret variables and headers the secret store does not have: said in its state. */
  missingSecrets?: string[]
  initializeTimeoutMs?: number
  /** Start of the mark put in the agent's environment (see child-processes/process-tree.ts). */
  markPrefix?: string
  /** The folder the process starts in (default: the user's home folder). */
  cwd?: string
  /** The log file's name, when not the agent's id (a capability check logs apart). */
  logName?: string
  /** Longest message line accepted on the agent's stdout (default 8 MiB); a longer one stops the agent. */
  maxMessageBytes?: number
  /** Sees every JSON-RPC message in either direction (tests check what goes out against the schema). */
  onMessage?: (direction: 'in' | 'out', message: AnyMessage) => void
}

export type ConnectAgent = (definition: AgentDefinition, options: AgentConnectionOptions) => Promise<AgentConnection>

export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
/** How long an agent whose stdout ended may take to exit before it is stopped. */
const STREAM_END_GRACE_MS = 2000

/** Spawns the agent and completes initialize; rejects with a message the user can act on. */
export const connectAgent: ConnectAgent = async (definition, options) => {
  if (definition.protocol !== 2) return LinkedConnection.start(definition, options, 1)
  try {
    return await LinkedConnection.start(definition, options, 2)
  } catch (error) {
    if (!(error instanceof SpeaksVersion1)) throw error
    return LinkedConnection.start(
      definition,
      options,
      1,
      `Asked for ACP protocol version 2; ${definition.name} speaks version 1, so version 1 is used.`
    )
  }
}

/** ACP's version 2 (the draft). Its protocol, and the SDK's `experimental/v2` under it, load when an agent is asked for it (about 8 MB). */
const V2_PROTOCOL_VERSION = 2

class LinkedConnection implements AgentConnection {
  state: AgentRuntimeState
  private readonly run: LinkRun
  private readonly protocol: WireProtocol
  /** The agent's answer to initialize (the first answer it sends): the version 2 client refuses other versions without saying which. */
  private initializeAnswer: AnyMessage | null = null

  private constructor(
    readonly definition: AgentDefinition,
    private readonly options: AgentConnectionOptions,
    v2: typeof V2Protocol | null
  ) {
    const missingSecrets = options.missingSecrets ?? []
    this.state = { agentId: definition.id, status: 'starting', stderrTail: '', ...(missingSecrets.length ? { missingSecrets } : {}) }
    const protocolOptions = {
      agentId: definition.id,
      handlers: options.handlers,
      clientVersion: options.clientVersion,
      // A terminal sign-in runs the agent's own command here: only an agent that is a process here has one.
      terminalAuth: localCommandOf(definition.transport) !== null
    }
    let protocol: WireProtocol | null = null
    this.run = new LinkRun(options.link.open, {
      name: definition.name,
      logDir: options.logDir,
      markPrefix: options.markPrefix,
      cwd: options.cwd,
      logName: options.logName ?? definition.id,
      maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      onMessage: options.onMessage,
      receive: (message) => {
        if (!this.initializeAnswer && !('method' in message) && 'id' in message) this.initializeAnswer = message
        return protocol?.receive(message) ?? false
      },
      setState: (patch) => this.setState(patch),
      status: () => this.state.status,
      closeStream: (error) => protocol?.connection.close(error)
    })
    protocol = v2 ? new v2(this.run.stream, protocolOptions) : new V1Protocol(this.run.stream, protocolOptions)
    this.protocol = protocol
    this.watchStreamEnd()
  }

  /**
   * One run in one protocol version, initialised. An agent that answers
   * version 1 to a request for 2 is put away quietly (SpeaksVersion1);
   * any other failure stops the run and rejects with what to do about it.
   */
  static async start(definition: AgentDefinition, options: AgentConnectionOptions, version: 1 | 2, protocolNote?: string): Promise<LinkedConnection> {
    const v2 = version === V2_PROTOCOL_VERSION ? (await import('./protocol-v2')).V2Protocol : null
    const connection = new LinkedConnection(definition, options, v2)
    connection.setState({ status: 'starting', message: undefined, protocolVersion: undefined, protocolNote: undefined })
    await connection.initialize(version, protocolNote)
    return connection
  }

  get acp(): AgentProtocol {
    if (!this.isAlive) throw new Error(this.exitMessage())
    return this.protocol
  }

  get capabilities(): AgentCapabilities {
    if (!this.state.capabilities) throw new Error(`Agent '${this.definition.name}' has not been initialised`)
    return this.state.capabilities
  }

  get isAlive(): boolean {
    return !this.run.ended && this.state.status === 'ready'
  }

  get stopping(): boolean {
    return this.run.stopping
  }

  get closed(): Promise<void> {
    return this.run.closed
  }

  get lastActivity(): number {
    return this.run.lastActivity
  }

  get connectionLost(): boolean {
    return this.run.connectionLost
  }

  get sshHost(): SshEndpoint | undefined {
    return this.options.link.sshHost
  }

  exitMessage(): string {
    return this.run.exitMessage()
  }

  stderrMark(): number {
    return this.run.diagnostics?.stderrMark() ?? 0
  }

  stderrSince(mark: number): string {
    return this.run.diagnostics?.stderrSince(mark) ?? ''
  }

  explanation(mark = 0): { lines: string[]; found: boolean } {
    return this.run.diagnostics?.explanation(mark) ?? { lines: [], found: false }
  }

  async settle(): Promise<void> {
    if (this.protocol.connection.signal.aborted && !this.run.ended) {
      await Promise.race([this.run.closed, new Promise((r) => setTimeout(r, 1000))])
    }
    await this.run.diagnostics?.stderrQuiet()
  }

  flushLog(): Promise<void> {
    return this.run.flushLog()
  }

  stop(): Promise<void> {
    return this.run.stop()
  }

  abandon(message: string): Promise<void> {
    return this.run.abandon(message)
  }

  private async initialize(version: 1 | 2, protocolNote?: string): Promise<void> {
    const { definition: def, run } = this
    const diagnostics: ProcessDiagnostics | undefined = run.diagnostics
    const timeoutMs = this.options.initializeTimeoutMs ?? 60_000
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new AgentStartError(`Agent '${def.name}' did not answer initialize within ${timeoutMs / 1000} s`, this.explanation())),
        timeoutMs
      )
    })
    try {
      const response = await Promise.race([this.protocol.initialize(), run.exited, timeout]).catch((error: unknown) => {
        // The version 2 client refuses any other version's answer: find out which one the agent gave.
        throw version === V2_PROTOCOL_VERSION ? (this.versionAnswered(error) ?? error) : error
      })
      if (response.protocolVersion !== version) throw versionMismatch(def.name, version, response.protocolVersion)
      const announced = normaliseInitialize(response)
      this.setState({
        status: 'ready',
        pid: diagnostics?.pid,
        protocolVersion: version,
        protocolNote,
        agentInfo: announced.agentInfo,
        capabilities: announced.capabilities,
        authMethods: announced.authMethods
      })
    } catch (error) {
      if (error instanceof SpeaksVersion1) {
        // Not a failure: this run is put away quietly and the agent started again in version 1.
        run.putAway = true
        await run.stop()
        throw error
      }
      await this.settle()
      let failure: Error = error as Error
      if (run.ended && !run.failure) {
        failure = new AgentStartError(
          run.exitSummary().replace(' exited ', ' exited during initialize '),
          this.explanation(),
          diagnostics?.commandNotFound
        )
      } else if (error instanceof RequestError) {
        failure = new AgentStartError(`Agent '${def.name}' refused initialize: ${describeError(error)}`, this.explanation())
      } else if (!(error instanceof AgentStartError)) {
        failure = new AgentStartError((error as Error).message, { lines: [], found: false }, diagnostics?.commandNotFound)
      }
      if (this.state.status !== 'exited') this.setState({ status: 'error', message: failure.message })
      await run.stop()
      throw failure
    } finally {
      clearTimeout(timer)
    }
  }

  /** The stream can end while the process lives on (a broken message stream): such an agent is of no use, and must not linger. */
  private watchStreamEnd(): void {
    const { run, protocol } = this
    protocol.connection.signal.addEventListener('abort', () => {
      if (run.stopping || run.ended) return
      const reason = protocol.connection.signal.reason as Error | undefined
      // Usually the stream ends because the process is exiting: that is reported by its exit. Only one that stays is failed.
      const exitedSoon = Promise.race([run.closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), STREAM_END_GRACE_MS))])
      void exitedSoon.then((exited) => {
        if (exited || run.stopping || run.ended) return
        void run.abandon(
          `Agent '${this.definition.name}' closed its message stream${reason?.message ? ` (${reason.message})` : ''} but kept running; it was stopped.`
        )
      })
    })
  }

  /** After a version 2 initialize failed: the version the agent answered with, as the error to report (or to fall back on). */
  private versionAnswered(error: unknown): Error | null {
    const answer = this.initializeAnswer as { result?: { protocolVersion?: unknown }; error?: { code?: unknown; data?: unknown } } | null
    const version = answer?.result?.protocolVersion
    if (version === 1) return new SpeaksVersion1()
    if (typeof version === 'number' && version !== V2_PROTOCOL_VERSION) return versionMismatch(this.definition.name, V2_PROTOCOL_VERSION, version)
    // -32022 (unsupported protocol version), naming the versions the agent speaks.
    const data = answer?.error?.data as { supported?: unknown } | undefined
    if (answer?.error?.code === -32022 && Array.isArray(data?.supported) && data.supported.includes(1)) return new SpeaksVersion1()
    if (answer?.result) {
      return new Error(
        `Agent '${this.definition.name}' answered initialize with something that is not ACP protocol version 2: ${(error as Error).message}`
      )
    }
    return null
  }

  private setState(patch: Partial<AgentRuntimeState>): void {
    if (this.run?.putAway) return
    this.state = { ...this.state, ...patch }
    this.options.onState(this, this.state)
  }
}

function versionMismatch(name: string, asked: 1 | 2, answered: number): Error {
  if (answered < 1) {
    return new Error(
      `Agent '${name}' answered with an older ACP protocol version (${answered}); Switchboard speaks versions 1 and 2. Update the agent to use it.`
    )
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

/**
 * The agent could not be started: what happened (`summary`, one sentence)
 * and the lines of its stderr that explain it; `notFound` when its command
 * does not exist. The message says both, for whoever only reads messages.
 */
export class AgentStartError extends Error {
  constructor(
    readonly summary: string,
    readonly explained: { lines: string[]; found: boolean },
    readonly notFound = false
  ) {
    super(explained.lines.length ? `${summary}; stderr: ${explained.lines.join('\n')}` : summary)
  }
}

/** The agent asked for version 2 answered version 1: start it again in version 1. */
class SpeaksVersion1 extends Error {
  constructor() {
    super('The agent speaks ACP protocol version 1')
  }
}
