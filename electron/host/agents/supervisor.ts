import { join } from 'node:path'
import type { AgentProblem, AgentRuntimeState, AuthMethodView } from '../../../shared/domain'
import type { AgentDefinition } from '../../../shared/agent-definition'
import { secretNamesOf, sshTargetOf, transportHost } from '../../../shared/transport'
import type { ClientHandlers } from '../connection/client-handlers'
import { connectAgent, type AgentConnection, type AgentConnectionOptions, type ConnectAgent } from '../connection/connection'
import { apiKeyMeta } from '../connection/quirks'
import type { UserEnvironment } from '../child-processes/environment'
import type { EventBus } from '../contract/events'
import { Listeners } from '../contract/listeners'
import { markPrefixFor } from '../child-processes/process-tree'
import { agentApiKeyKey, agentEnvKey, agentHeaderKey, apiKeyLabel, type SecretStore } from '../storage/secrets'
import { SshEndpoint } from '../ssh/endpoint'
import { DEFAULT_SSH_SETTINGS, SshHosts, type SshSettings } from '../ssh/options'
import { kindOf } from '../transports/kinds'

/**
 * The agents' processes: each started on demand (one at a time per agent),
 * stopped when idle where nothing is lost, restarted on request; its runtime
 * state kept and announced. When a process ends, whoever linked sessions to it
 * is told (`ended`), so they can be continued later.
 */

export interface SupervisorOptions {
  dataDir: string
  clientVersion: string
  secrets: SecretStore
  /** What agents' environments are made from (the user's, then their own variables and secrets), and where their commands are looked up. */
  environment: UserEnvironment
  events: EventBus
  handlers: ClientHandlers
  connect?: ConnectAgent
  initializeTimeoutMs?: number
  maxAgentMessageBytes?: number
  onAgentMessage?: (agentId: string, direction: 'in' | 'out', message: unknown) => void
  /** Stop an agent after this long without a message either way (0: never). */
  idleMs: number
  /** Keep-alive and connection timeouts of agents over SSH (tests shorten them). */
  ssh?: Partial<SshSettings>
  /** Whether stopping the agent now loses nothing: no turn, no question pending, its sessions can come back. */
  canStop(connection: AgentConnection): boolean
}

export class AgentSupervisor {
  /** An agent's process ended (stopped, exited or failed): the sessions on it lose their link (host.ts wires who follows). */
  readonly ended = new Listeners<[connection: AgentConnection, state: AgentRuntimeState]>()
  private readonly running = new Map<string, AgentConnection>()
  private readonly starting = new Map<string, Promise<AgentConnection>>()
  private readonly states = new Map<string, AgentRuntimeState>()
  /**
   * Whether each agent can start sessions, beyond its process running: the
   * problem of the last session it could not start (kept across its runs
   * until one starts), and whether its current run has started one.
   */
  private readonly contact = new Map<string, { problem?: AgentProblem; sessionStarted?: boolean }>()
  /** Runs apart from the sessions' (capability checks), stopped at close. */
  private readonly apart = new Set<AgentConnection>()
  /** Runs still starting (the sessions' and those apart), each as the way to stop it before it answered initialize. */
  private readonly stillStarting = new Set<() => Promise<unknown>>()
  /** The idle sweep (stopIdle), running only while an agent's process does: a Host with none wakes for nothing. */
  private idleTimer: NodeJS.Timeout | null = null
  private closing = false
  /** The SSH connections' sockets, and what lost ones left running. */
  private readonly sshHosts = new SshHosts()
  private readonly sshSettings: SshSettings

  constructor(private readonly options: SupervisorOptions) {
    this.sshSettings = { ...DEFAULT_SSH_SETTINGS, ...options.ssh }
  }

  /** The agent's connection, started if it is not running (concurrent callers share one start). */
  ensure(definition: AgentDefinition): Promise<AgentConnection> {
    const running = this.running.get(definition.id)
    if (running?.isAlive && !running.stopping) return Promise.resolve(running)
    const starting = this.starting.get(definition.id)
    if (starting) return starting
    if (this.closing) return Promise.reject(new Error('Switchboard is shutting down'))
    // One being stopped (its idle stop) ends first: its end, told to its sessions, must not come after the new start.
    const ended = running?.stopping ? running.closed : Promise.resolve()
    const start = ended.then(() => this.start(definition)).finally(() => this.starting.delete(definition.id))
    this.starting.set(definition.id, start)
    return start
  }

  /** The running connection of an agent, if any. */
  get(agentId: string): AgentConnection | undefined {
    return this.running.get(agentId)
  }

  /** The last runtime state an agent reported (none before its first start), with whether it can start sessions. */
  stateOf(agentId: string): AgentRuntimeState | undefined {
    const state = this.states.get(agentId)
    return state && this.withContact(state)
  }

  /** The agent started (or reopened) a session: it can; whatever it failed before is past. */
  sessionStarted(agentId: string): void {
    const before = this.contact.get(agentId)
    if (before?.sessionStarted && !before.problem) return
    this.contact.set(agentId, { sessionStarted: true })
    this.publish(agentId)
  }

  /** The agent could not start a session (or run a turn): said in its state until one starts. */
  sessionFailed(problem: AgentProblem): void {
    this.contact.set(problem.agentId, { ...this.contact.get(problem.agentId), problem })
    this.publish(problem.agentId)
  }

  /** Something changed that may have fixed the agent (a sign-in, a new definition, a restart): its last problem is not known to hold. */
  forgetProblem(agentId: string): void {
    const before = this.contact.get(agentId)
    if (!before?.problem) return
    this.contact.set(agentId, { sessionStarted: before.sessionStarted })
    this.publish(agentId)
  }

  /** Stops the agent if it runs or is starting; its sessions become idle, to be continued. */
  async stop(agentId: string): Promise<void> {
    await this.starting.get(agentId)?.catch(() => undefined)
    await this.running.get(agentId)?.stop()
  }

  /** Stops the agent only where nothing is lost (a changed setting applies at its next start). */
  async stopIfQuiet(agentId: string): Promise<void> {
    const running = this.running.get(agentId)
    if (running?.isAlive && this.options.canStop(running)) await running.stop()
  }

  /** The agent is gone from the definitions: stopped and its state forgotten. */
  async forget(agentId: string): Promise<void> {
    await this.stop(agentId)
    this.states.delete(agentId)
    this.contact.delete(agentId)
  }

  /** Every agent's live state; for one not running, whether its command can be found at all. */
  runtimeStates(definitions: readonly AgentDefinition[]): Promise<AgentRuntimeState[]> {
    return Promise.all(
      definitions.map(async (agent) => {
        const known = this.stateOf(agent.id)
        if (known && known.status !== 'stopped' && known.status !== 'error') return known
        const missingSecrets = await this.missingSecretsOf(agent, known?.authMethods)
        const { missingSecrets: _before, ...rest } = known ?? this.withContact({ agentId: agent.id, status: 'stopped' as const, stderrTail: '' })
        const base: AgentRuntimeState = missingSecrets.length ? { ...rest, missingSecrets } : rest
        return { ...base, ...(await kindOf(agent.transport).installed(agent, agent.transport, this.options.environment)) }
      })
    )
  }

  /** The secret environment of an agent, from the secret store. */
  async secretEnvOf(definition: AgentDefinition): Promise<Record<string, string>> {
    const secretEnv: Record<string, string> = {}
    for (const name of secretNamesOf(definition.transport).env) {
      const value = await this.options.secrets.get(agentEnvKey(definition.id, name))
      if (value !== undefined) secretEnv[name] = value
    }
    return secretEnv
  }

  /** The headers a network agent is given (its token…), from the secret store. */
  async headersOf(definition: AgentDefinition): Promise<Record<string, string>> {
    const headers: Record<string, string> = {}
    for (const name of secretNamesOf(definition.transport).headers) {
      const value = await this.options.secrets.get(agentHeaderKey(definition.id, name))
      if (value !== undefined) headers[name] = value
    }
    return headers
  }

  /** The agent's secret variables and API keys the store does not have (forgotten by a restart of `serve`). */
  private async missingSecretsOf(definition: AgentDefinition, methods: AuthMethodView[] = []): Promise<string[]> {
    const { secrets } = this.options
    const missing: string[] = []
    const names = secretNamesOf(definition.transport)
    for (const name of names.env) if ((await secrets.get(agentEnvKey(definition.id, name))) === undefined) missing.push(name)
    for (const name of names.headers) {
      if ((await secrets.get(agentHeaderKey(definition.id, name))) === undefined) missing.push(name)
    }
    for (const methodId of definition.apiKeySignIn ?? []) {
      if ((await secrets.get(agentApiKeyKey(definition.id, methodId))) === undefined)
        missing.push(apiKeyLabel(methods.find((m) => m.id === methodId)?.name ?? methodId))
    }
    return missing
  }

  /**
   * The way to an SSH agent's host for a project's folders: the agent's own
   * connection while it runs, else a connection of its own for each call.
   */
  sshEndpoint(definition: AgentDefinition): SshEndpoint {
    const target = sshTargetOf(definition.transport)
    if (!target) throw new Error(`${definition.name} does not run over SSH`)
    const running = this.running.get(definition.id)
    if (running?.isAlive && running.sshHost) return running.sshHost
    return new SshEndpoint(target, {
      settings: this.sshSettings,
      env: this.options.environment.forChild(),
      markPrefix: markPrefixFor(this.options.dataDir)
    })
  }

  /** The way to a host projects name (`Project.sshHost`): through the first agent that reaches it. */
  sshEndpointForHost(host: string, definitions: readonly AgentDefinition[]): SshEndpoint {
    const agents = definitions.filter((d) => transportHost(d.transport) === host)
    const running = agents.find((d) => this.running.get(d.id)?.isAlive)
    const agent = running ?? agents[0]
    if (!agent) throw new Error(`No agent reaches ${host} over SSH any more: add one on the Agents page to work in this project`)
    return this.sshEndpoint(agent)
  }

  /** Flushes an agent's stderr log so a reader sees everything written so far. */
  async flushLog(agentId: string): Promise<void> {
    await this.running.get(agentId)?.flushLog()
  }

  get logDir(): string {
    return join(this.options.dataDir, 'logs')
  }

  /**
   * A run of the agent apart from the one its sessions use (the capability
   * check): its own client handlers, working folder and log file, unknown to
   * the rest of the Host. The caller stops it (stopApart); the Host's close does too.
   */
  async connectApart(definition: AgentDefinition, handlers: ClientHandlers, cwd: string, logName: string): Promise<AgentConnection> {
    if (this.closing) throw new Error('Switchboard is shutting down')
    const connection = await this.stoppableWhileStarting((onState) => this.connect(definition, { logName, cwd, handlers, onState }))
    this.apart.add(connection)
    if (this.closing) {
      await this.stopApart(connection)
      throw new Error('Switchboard is shutting down')
    }
    // Signed in as the sessions' run is: a key held in the app is given to this process too.
    await this.signInAgain(definition, connection)
    return connection
  }

  /** Stops a run started by connectApart. */
  async stopApart(connection: AgentConnection): Promise<void> {
    try {
      await connection.stop()
    } finally {
      this.apart.delete(connection)
    }
  }

  /**
   * Stops every agent; no new one starts after this. The runs apart (capability checks) stop once `tidied` has settled:
   * a check cut short removes its scratch folder on an SSH host through its run's connection, which stopping the run
   * closes (a removal under way on it would be cut, its folder left there), then stops its run itself.
   */
  async close(tidied: Promise<unknown> = Promise.resolve()): Promise<void> {
    this.closing = true
    this.sweepWhileRunning()
    await Promise.allSettled([...this.stillStarting].map((stop) => stop()))
    await Promise.allSettled([...this.starting.values()])
    await Promise.all([Promise.all([...this.running.values()].map((a) => a.stop())), Promise.allSettled([tidied])])
    await Promise.all([...this.apart].map((a) => a.stop()))
    this.sshHosts.close()
  }

  private async start(definition: AgentDefinition): Promise<AgentConnection> {
    const { onAgentMessage } = this.options
    const connection = await this.stoppableWhileStarting((seen) =>
      this.connect(definition, {
        handlers: this.options.handlers,
        onState: (conn, state) => {
          seen(conn)
          this.onState(conn, state)
        },
        onMessage: onAgentMessage && ((direction, message) => onAgentMessage(definition.id, direction, message))
      })
    )
    this.running.set(definition.id, connection)
    this.sweepWhileRunning()
    await this.signInAgain(definition, connection)
    return connection
  }

  /**
   * Starts a run that the Host's close can stop before it has answered initialize: it is known from its first state
   * (an agent that never answers would otherwise outlive the Host, or hold its close, until its start timed out).
   */
  private async stoppableWhileStarting(start: (seen: (connection: AgentConnection) => void) => Promise<AgentConnection>): Promise<AgentConnection> {
    const seen = new Set<AgentConnection>()
    const stop = (): Promise<unknown> => Promise.all([...seen].map((c) => c.stop()))
    this.stillStarting.add(stop)
    try {
      return await start((connection) => void seen.add(connection))
    } finally {
      this.stillStarting.delete(stop)
    }
  }

  /**
   * Sign-ins that took an API key (Gemini CLI keeps it in its process only):
   * given again, from the secret store, to each new process of the agent.
   */
  private async signInAgain(definition: AgentDefinition, connection: AgentConnection): Promise<void> {
    for (const methodId of definition.apiKeySignIn ?? []) {
      const method = connection.state.authMethods?.find((m) => m.id === methodId)
      if (!method) continue
      const key = await this.options.secrets.get(agentApiKeyKey(definition.id, methodId))
      if (key === undefined) {
        connection.state.missingSecrets = [...(connection.state.missingSecrets ?? []), apiKeyLabel(method.name)]
        continue
      }
      // A refused key shows at the next session (auth_required, with the agent's reason): nothing to stop here.
      await connection.acp.authenticate({ methodId, _meta: apiKeyMeta(connection.state.agentInfo?.name, key) }).catch(() => undefined)
    }
  }

  /** Starts a run of the agent with what every run shares (log folder, secrets, process mark, limits) and what this one adds. */
  private async connect(
    definition: AgentDefinition,
    own: Pick<AgentConnectionOptions, 'handlers' | 'onState'> & Partial<AgentConnectionOptions>
  ): Promise<AgentConnection> {
    const connect = this.options.connect ?? connectAgent
    const secretEnv = await this.secretEnvOf(definition)
    const headers = await this.headersOf(definition)
    const names = secretNamesOf(definition.transport)
    const markPrefix = markPrefixFor(this.options.dataDir)
    // What the agent's transport needs of the Host, taken by its kind (transports/): the environment, secrets, SSH connections.
    const host = { environment: this.options.environment, secretEnv, headers, ssh: { hosts: this.sshHosts, settings: this.sshSettings }, markPrefix }
    return connect(definition, {
      logDir: this.logDir,
      clientVersion: this.options.clientVersion,
      link: kindOf(definition.transport).plan(definition, definition.transport, host),
      missingSecrets: [...names.env.filter((name) => secretEnv[name] === undefined), ...names.headers.filter((name) => headers[name] === undefined)],
      markPrefix,
      initializeTimeoutMs: this.options.initializeTimeoutMs,
      maxMessageBytes: this.options.maxAgentMessageBytes,
      ...own
    })
  }

  private onState(connection: AgentConnection, state: AgentRuntimeState): void {
    // A new run has started no session yet.
    if (state.status === 'starting') this.contact.set(state.agentId, { problem: this.contact.get(state.agentId)?.problem })
    this.states.set(state.agentId, state)
    this.options.events.emit('agent.state', this.withContact(state))
    if (state.status !== 'exited' && state.status !== 'stopped') return
    if (this.running.get(state.agentId) === connection) this.running.delete(state.agentId)
    this.sweepWhileRunning()
    this.ended.tell(connection, state)
  }

  private withContact(state: AgentRuntimeState): AgentRuntimeState {
    const { problem: _problem, sessionStarted: _started, ...rest } = state
    const contact = this.contact.get(state.agentId)
    return {
      ...rest,
      ...(contact?.problem ? { problem: contact.problem } : {}),
      ...(contact?.sessionStarted && state.status === 'ready' ? { sessionStarted: true } : {})
    }
  }

  /** Tells the windows the agent's state again (what it can do changed, not its process). */
  private publish(agentId: string): void {
    const state = this.states.get(agentId)
    this.options.events.emit('agent.state', this.withContact(state ?? { agentId, status: 'stopped', stderrTail: '' }))
  }

  /** Starts the idle sweep when an agent runs and there is none, stops it when none runs (or the Host closes). */
  private sweepWhileRunning(): void {
    const { idleMs } = this.options
    const wanted = idleMs > 0 && this.running.size > 0 && !this.closing
    if (wanted && !this.idleTimer) {
      this.idleTimer = setInterval(() => void this.stopIdle(idleMs), Math.min(idleMs / 2, 60_000))
      this.idleTimer.unref()
    } else if (!wanted && this.idleTimer) {
      clearInterval(this.idleTimer)
      this.idleTimer = null
    }
  }

  /**
   * Agents are started lazily and stopped when idle, but only where nothing is
   * lost (see SupervisorOptions.canStop).
   */
  private async stopIdle(idleMs: number): Promise<void> {
    const now = Date.now()
    for (const connection of [...this.running.values()]) {
      if (!connection.isAlive || now - connection.lastActivity < idleMs) continue
      if (this.options.canStop(connection)) await connection.stop()
    }
  }
}
