import type { PermissionOption, SessionInfo, SessionUpdate, StopReason } from '@agentclientprotocol/sdk'
import type { AgentCapabilities, AgentRuntimeState } from '../../shared/domain'
import type { AgentDefinition } from '../../shared/agent-definition'
import type { AgentConnection, AgentConnectionOptions } from '../../electron/host/connection/connection'
import type { AgentProtocol } from '../../electron/host/connection/protocol'
import { explainingLines, lastLines } from '../../shared/stderr-lines'

/**
 * An agent that lives in the test's own process (as Zed's StubAgentConnection):
 * the Host's rooms run for real, the agent is a few lines of script. A turn is
 * a function of the prompt's text that streams updates and asks the user
 * through the same client handlers a real agent's messages reach, so Host tests
 * run in milliseconds without spawning anything. The real-process integration
 * tests stay the proof that the wire works.
 */

/** What a turn can do while it runs. */
export interface StubTurn {
  readonly text: string
  readonly acpSessionId: string
  readonly signal: AbortSignal
  update(update: SessionUpdate): void
  /** session/request_permission; resolves with the chosen optionId, or null when cancelled. */
  askPermission(title: string, toolCallId?: string): Promise<string | null>
}

export interface StubBehaviour {
  /** One prompt turn; the default streams the prompt back and ends the turn. */
  turn?: (turn: StubTurn) => Promise<StopReason | void>
  /** Updates sent for a new session before session/new answers (they race the answer in real agents). */
  early?: (acpSessionId: string) => SessionUpdate[]
  capabilities?: Partial<AgentCapabilities>
  /** What session/list answers for a folder (made in other clients); none by default. */
  listed?: (cwd: string) => SessionInfo[]
}

export const STUB_OPTIONS: PermissionOption[] = [
  { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
  { optionId: 'reject', name: 'Reject', kind: 'reject_once' }
]

const FULL: AgentCapabilities = {
  protocolVersion: 1,
  loadSession: true,
  prompt: { image: true, audio: true, embeddedContext: true },
  mcp: { stdio: true, http: true, sse: true },
  session: { list: true, resume: true, close: true, delete: true, fork: false, additionalDirectories: true, systemPrompt: false },
  auth: { logout: false }
}

/** Every connection the stub made, newest last (a crash or stop starts a new one on the next use). */
export class StubAgents {
  readonly connections: StubConnection[] = []

  constructor(private readonly behaviour: StubBehaviour = {}) {}

  /** The Host's `connectAgent` option. */
  readonly connect = async (definition: AgentDefinition, options: AgentConnectionOptions): Promise<AgentConnection> => {
    const connection = new StubConnection(definition, options, this.behaviour)
    this.connections.push(connection)
    connection.report({ status: 'ready', pid: 4242, protocolVersion: 1, capabilities: { ...FULL, ...this.behaviour.capabilities }, authMethods: [] })
    return connection
  }

  get latest(): StubConnection {
    const last = this.connections.at(-1)
    if (!last) throw new Error('The stub agent was never started')
    return last
  }
}

export class StubConnection implements AgentConnection {
  state: AgentRuntimeState
  lastActivity = Date.now()
  /** It stops at once (stop() reports it stopped before returning): never seen half-stopped. */
  readonly stopping = false
  private ended!: () => void
  readonly closed = new Promise<void>((resolve) => (this.ended = resolve))
  /** Each session's history, replayed by session/load. */
  readonly histories = new Map<string, SessionUpdate[]>()
  readonly calls: { method: string; params: unknown }[] = []
  /** Turns under way: aborting with 'cancelled' ends one as session/cancel does, any other reason fails it. */
  private readonly running = new Map<string, AbortController>()
  private nextSession = 1

  constructor(
    readonly definition: AgentDefinition,
    private readonly options: AgentConnectionOptions,
    private readonly behaviour: StubBehaviour
  ) {
    this.state = { agentId: definition.id, status: 'starting', stderrTail: '' }
  }

  get isAlive(): boolean {
    return this.state.status === 'ready'
  }

  get capabilities(): AgentCapabilities {
    if (!this.state.capabilities) throw new Error('not initialised')
    return this.state.capabilities
  }

  get acp(): AgentProtocol {
    if (!this.isAlive) throw new Error(this.exitMessage())
    return this.protocol
  }

  exitMessage(): string {
    return this.state.message ?? `Agent '${this.definition.name}' is not running`
  }

  /** What the stub "wrote to stderr" (tests append to it); found lines come from it as from a real run's. */
  stderr = ''

  stderrMark(): number {
    return this.stderr.length
  }

  stderrSince(mark: number): string {
    return this.stderr.slice(mark)
  }

  explanation(mark = 0): { lines: string[]; found: boolean } {
    const text = this.stderr.slice(mark)
    const found = explainingLines(text)
    return found.length ? { lines: found, found: true } : { lines: lastLines(text), found: false }
  }

  async settle(): Promise<void> {}
  async flushLog(): Promise<void> {}

  async stop(): Promise<void> {
    if (this.state.status === 'stopped' || this.state.status === 'exited') return
    this.endTurns()
    this.report({ status: 'stopped', pid: undefined })
  }

  async abandon(message: string): Promise<void> {
    this.endTurns()
    this.report({ status: 'error', message })
    this.report({ status: 'exited', message, pid: undefined })
  }

  /** The agent's process dies mid-turn, as a crash would end it. */
  crash(message = `Agent '${this.definition.name}' exited with code 1`): void {
    this.endTurns()
    this.report({ status: 'exited', message, pid: undefined })
  }

  report(patch: Partial<AgentRuntimeState>): void {
    this.state = { ...this.state, ...patch }
    this.options.onState(this, this.state)
    if (this.state.status === 'stopped' || this.state.status === 'exited') this.ended()
  }

  private send(acpSessionId: string, update: SessionUpdate): void {
    this.histories.get(acpSessionId)?.push(update)
    this.options.handlers.sessionUpdate(this.definition.id, { sessionId: acpSessionId, update })
  }

  private endTurns(): void {
    for (const turn of this.running.values()) turn.abort(new Error(`Agent '${this.definition.name}' exited`))
  }

  private readonly protocol: AgentProtocol = {
    version: 1,
    newSession: async (params) => {
      this.calls.push({ method: 'session/new', params })
      const sessionId = `stub-${this.nextSession++}`
      this.histories.set(sessionId, [])
      for (const update of this.behaviour.early?.(sessionId) ?? []) this.send(sessionId, update)
      return {
        sessionId,
        modes: {
          currentModeId: 'ask',
          availableModes: [
            { id: 'ask', name: 'Ask' },
            { id: 'code', name: 'Code' }
          ]
        }
      }
    },
    loadSession: async (params) => {
      this.calls.push({ method: 'session/load', params })
      const history = this.histories.get(params.sessionId)
      if (!history) throw new Error(`No session '${params.sessionId}'`)
      this.histories.set(params.sessionId, [])
      for (const update of history) this.send(params.sessionId, update)
      return {}
    },
    resumeSession: async (params) => {
      this.calls.push({ method: 'session/resume', params })
      if (!this.histories.has(params.sessionId)) this.histories.set(params.sessionId, [])
      return {}
    },
    listSessions: async (params) => ({ sessions: (params.cwd && this.behaviour.listed?.(params.cwd)) || [] }),
    closeSession: async (params) => void this.calls.push({ method: 'session/close', params }),
    deleteSession: async (params) => void this.calls.push({ method: 'session/delete', params }),
    forkSession: () => Promise.reject(new Error('The stub agent does not fork')),
    steer: () => Promise.reject(new Error('The stub agent does not steer')),
    prompt: async (params) => {
      this.calls.push({ method: 'session/prompt', params })
      const abort = new AbortController()
      this.running.set(params.sessionId, abort)
      const text = params.prompt.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')
      const turn: StubTurn = {
        text,
        acpSessionId: params.sessionId,
        signal: abort.signal,
        update: (update) => this.send(params.sessionId, update),
        askPermission: async (title, toolCallId = `call-${title}`) => {
          const answer = await this.options.handlers.requestPermission(
            this.definition.id,
            { sessionId: params.sessionId, toolCall: { toolCallId, title, kind: 'execute' }, options: STUB_OPTIONS },
            abort.signal
          )
          return answer.outcome.outcome === 'selected' ? answer.outcome.optionId : null
        }
      }
      const run = this.behaviour.turn ?? echo
      const ended = new Promise<StopReason>((resolve, reject) =>
        abort.signal.addEventListener('abort', () => (abort.signal.reason === CANCELLED ? resolve('cancelled') : reject(abort.signal.reason)), {
          once: true
        })
      )
      try {
        const stopReason = await Promise.race([run(turn), ended])
        return { stopReason: stopReason ?? 'end_turn' }
      } finally {
        this.running.delete(params.sessionId)
      }
    },
    cancel: async ({ sessionId }) => {
      this.calls.push({ method: 'session/cancel', params: { sessionId } })
      this.running.get(sessionId)?.abort(CANCELLED)
    },
    setMode: async (params) => void this.calls.push({ method: 'session/set_mode', params }),
    setConfigOption: async () => ({ configOptions: [] }),
    setModel: async () => undefined,
    authenticate: async () => undefined,
    logout: async () => undefined
  }
}

const CANCELLED = 'cancelled'

async function echo(turn: StubTurn): Promise<StopReason> {
  turn.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `echo: ${turn.text}` } })
  return 'end_turn'
}
