import { promises as fs } from 'node:fs'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import { isRequestMethod, type FirstScreenRenderer, type RequestMethod, type RequestResult, type WireResponse } from '../../shared/contract'
import { requestParams } from '../../shared/request-params'
import { AgentChecks } from './agents/check'
import { agentsHandlers } from './agents/service'
import { SignIn } from './agents/sign-in'
import { AgentSupervisor } from './agents/supervisor'
import { AskBroker } from './asks/broker'
import { asksHandlers } from './asks/service'
import { clientSide } from './client/client-side'
import { refuseCommands, withConfirmation, type ConfirmCommand } from './contract/confirmations'
import { acquireDataLock, type DataLock } from './storage/data-lock'
import { environmentWarning, hostEnvironment, type UserEnvironment } from './child-processes/environment'
import { wireError } from './contract/errors'
import { EventBus } from './contract/events'
import { filesHandlers } from './files/service'
import { Inbox } from './inbox/inbox'
import type { Handlers, RequestContext } from './contract/handlers'
import { DEFAULT_AGENT_IDLE_MS, DEFAULT_CANCEL_GRACE_MS, type HostOptions } from './host-options'
import { lazyMcpHandlers, McpService } from './mcp/service'
import { defaultAgentPresets } from './agents/presets'
import { killLeftovers, markPrefixFor } from './child-processes/process-tree'
import { projectsHandlers } from './projects/service'
import { CheckRuns } from './races/check-runs'
import { RaceService } from './races/service'
import { navigate } from './projects/navigation'
import { Records } from './storage/records'
import { RoomErrors } from './contract/room-errors'
import { RegistryService } from './acp-registry/service'
import { bundledRegistry } from './acp-registry/snapshot'
import { SEARCH_INDEX_FILE, SearchIndex } from './search/search-index'
import { MemorySecretStore } from './storage/secrets'
import { agentEnded, canStopQuietly } from './sessions/agent-ends'
import { SessionConnector } from './sessions/connector'
import { SessionLifecycle } from './sessions/lifecycle'
import { HandOff } from './sessions/hand-off'
import { HandOffSeeds } from './sessions/hand-off-seeds'
import { Reconnector } from './sessions/reconnect'
import { SessionRegistry } from './sessions/registry'
import { McpRunWatch } from './mcp/run-watch'
import { sessionsHandlers } from './sessions/service'
import { presetsHandlers } from './session-presets/service'
import { PromptQueue } from './sessions/queue'
import { readUserSettings, UserSettingsStore, type ReadSettings } from './settings/service'
import { readSpendBook, SpendService, type ReadSpend } from './spend/service'
import { Turns } from './sessions/turns'
import { Store } from './storage/store'
import { Terminals } from './client/terminals'
import { WorkspaceService } from './workspace/service'
import { turnsUnderWay, UpdateService } from './updates/service'
import { makeDataFolderPrivate, privateFolder } from './storage/private-files'
import { answeredFromFirstPart, READ_REST_AFTER_MS } from './contract/first-part'

export { HostError } from './contract/errors'
export type { HostOptions } from './host-options'

/** Answers the window draws as a conversation (its tail, a page): reading in the background holds while it does (QuietStart). */
const DRAWN_ANSWERS: ReadonlySet<RequestMethod> = new Set(['sessions.open', 'transcripts.read', 'transcripts.readLater'])

/**
 * The Host: everything the app does, with no Electron in it. It opens the data
 * folder, composes the rooms (each contract namespace is answered by its own
 * service; sessions, agents and what agents ask the user each have an owner),
 * dispatches the contract's requests, and closes everything in order. The
 * Electron shell and the WebSocket server are two thin transports in front of it.
 */

export class Host {
  readonly events = new EventBus()
  /** Where an error nothing else caught ends (room-errors.ts); the Host's process hands it what got past every room. */
  readonly rooms: RoomErrors
  /** The desktop shell's updater tells the Host what it is doing here (host-process/host-child.ts). */
  readonly updates: UpdateService
  private readonly registry: SessionRegistry
  private readonly supervisor: AgentSupervisor
  private readonly broker: AskBroker
  private readonly terminals: Terminals
  private readonly signIn: SignIn
  private readonly checks: AgentChecks
  private readonly search: SearchIndex
  private readonly settings: UserSettingsStore
  private readonly spend: SpendService
  private readonly races: RaceService
  private readonly handlers: Handlers
  private readonly confirmCommand: ConfirmCommand
  private readonly reconnector: Reconnector
  private readonly inbox: Inbox
  private readonly turns: Turns
  private readonly readRestSoon: NodeJS.Timeout
  private closed: Promise<void> | null = null

  private constructor(
    options: HostOptions,
    private readonly store: Store,
    warnings: string[],
    private readonly lock: DataLock,
    environment: UserEnvironment,
    settingsRead: ReadSettings,
    spendRead: ReadSpend
  ) {
    const { dataDir, version, cancelGraceMs, agentIdleMs } = options
    this.confirmCommand = options.confirmCommand ?? refuseCommands
    const transcriptDir = join(dataDir, 'transcripts')
    const events = this.events
    // Where an error nothing else caught in a room ends: logged, a warning, told to the windows, the room reset.
    const rooms = (this.rooms = new RoomErrors({ events, warnings }))
    const records = new Records(store, events)
    // The records the window's first load does not read: a second after the open, by when the first load is answered (or at the first request that needs them).
    this.readRestSoon = setTimeout(() => void this.wholeRecords().catch(() => undefined), READ_REST_AFTER_MS)
    this.readRestSoon.unref?.()
    const secrets = options.secrets ?? new MemorySecretStore()
    // What every process the Host starts carries (see child-processes/process-tree.ts), and the environment it starts with.
    const markPrefix = markPrefixFor(dataDir)
    const mcp = new McpService({ records, secrets, environment, markPrefix, clientVersion: version, onChange: (s) => events.emit('mcp.changed', s) })
    const terminals = (this.terminals = new Terminals(environment, markPrefix))
    const registry = (this.registry = new SessionRegistry({
      transcriptDir,
      records,
      events,
      foldFailed: (room, error, reset) => rooms.report(room, error, reset),
      phaseRefused: (room, error) => rooms.report(room, error),
      onFold: options.faults?.onFold,
      onCopied: (id) => this.search.copied(id)
    }))
    const broker = (this.broker = new AskBroker({
      records,
      events,
      record: (id, record) => registry.appendTo(id, record),
      permissionsChanged: (id, permissions) => registry.setState(id, { permissions })
    }))
    const supervisor = (this.supervisor = new AgentSupervisor({
      dataDir,
      clientVersion: version,
      secrets,
      environment,
      events,
      handlers: clientSide({ registry, broker, terminals }),
      connect: options.connectAgent,
      initializeTimeoutMs: options.initializeTimeoutMs,
      maxAgentMessageBytes: options.maxAgentMessageBytes,
      onAgentMessage: options.onAgentMessage,
      idleMs: agentIdleMs ?? DEFAULT_AGENT_IDLE_MS,
      ssh: options.ssh,
      canStop: (connection) => canStopQuietly(connection, registry, broker, (id) => this.turns.hasPromptUnderWay(id))
    }))
    const signIn = (this.signIn = new SignIn({ records, secrets, events, supervisor, environment, markPrefix }))
    const checks = (this.checks = new AgentChecks({ dataDir, supervisor }))
    const registryService = new RegistryService({
      records,
      events,
      supervisor,
      checks,
      environment,
      dataDir,
      snapshot: options.registry?.snapshot ?? bundledRegistry(),
      defaultUrl: options.registry?.url,
      platform: options.registry?.platform,
      feedTimeoutMs: options.registry?.timeoutMs,
      limits: options.registry?.limits
    })
    const mcpRun = new McpRunWatch({
      records,
      environment,
      stateOf: (id) => registry.stateOf(id),
      setState: (id, patch) => registry.setState(id, patch)
    })
    // A session's tool calls say which of its MCP servers its agent started.
    events.tap((event) => {
      if (event.type === 'session.records')
        rooms.guarded('MCP servers of sessions', () => mcpRun.noteRecords(event.payload.id, event.payload.records))
    })
    // What else ends with a session's link to its agent: its terminals, the questions it asked, its MCP servers' run.
    registry.detached.add((id) => {
      terminals.releaseAll(id)
      broker.cancelFor(id)
      mcpRun.detached(id)
    })
    const connector = new SessionConnector({ records, registry, supervisor, mcp, mcpRun })
    const reconnector = (this.reconnector = new Reconnector({ records, registry, connector, delaysMs: options.reconnectDelaysMs }))
    supervisor.ended.add((connection, state) => agentEnded(connection, state, registry, reconnector))
    const workspace = new WorkspaceService({
      records,
      dataDir,
      append: (session, record) => registry.appendAlways(session, record),
      transcriptOf: (id) => registry.flushedTranscript(id),
      isRunning: (id) => registry.stateOf(id).status === 'running'
    })
    const seeds = new HandOffSeeds(dataDir, records)
    const turns = (this.turns = new Turns({
      records,
      seeds,
      registry,
      supervisor,
      mcp,
      broker,
      connector,
      workspace,
      cancelGraceMs: cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS
    }))
    const lifecycle = new SessionLifecycle({ records, registry, supervisor, mcp, mcpRun, turns, dataDir, workspace, seeds })
    const handOff = new HandOff({ records, registry, lifecycle, seeds, workspace })
    const queue: PromptQueue = new PromptQueue({
      records,
      registry,
      turns,
      onError: (error, record) =>
        rooms.report('The prompt queue', error, { says: 'its state is shown as the Host holds it', run: () => queue.publish(record) })
    })
    const inbox = (this.inbox = new Inbox({ records, events, registry, broker, supervisor }))
    // A turn over: the queue sends its next prompt (or holds), the inbox lists how it ended.
    turns.over.add((id, hold) => queue.turnOver(id, hold))
    turns.ended.add((id, end) => inbox.turnEnded(id, end))
    turns.ended.add((id, end) => void handOff.turnEnded(id, end).catch((error: unknown) => rooms.report('Hand-off', error)))
    const rebuildSearch = { says: 'it is rebuilding', run: () => this.search.rebuild() }
    this.search = new SearchIndex({
      transcriptDir,
      projects: () => records.data.projects,
      sessions: () => records.data.sessions,
      threadOf: (id) => registry.get(id)?.thread,
      file: join(dataDir, SEARCH_INDEX_FILE),
      onError: (error) => rooms.report('Search', error, rebuildSearch),
      ...options.search
    })
    events.tap((event) => {
      if (event.type !== 'app.warning') rooms.guarded('Search', () => this.search.noteEvent(event), rebuildSearch)
    })
    // The index covers every session: it waits for every record to be read.
    void store.wholeRead.then(() => {
      if (!this.closed) this.search.buildWhenQuiet()
    })
    const settings = (this.settings = new UserSettingsStore(
      { dataDir, events, projectIds: () => records.data.projects.map((p) => p.id) },
      settingsRead
    ))
    const spend = (this.spend = new SpendService({ dataDir, events, records, read: spendRead }))
    const checkRuns = new CheckRuns(environment, markPrefix, join(dataDir, 'race-checks'))
    const races = (this.races = new RaceService({ dataDir, events, records, lifecycle, turns, registry, workspace, spend, checks: checkRuns, rooms }))
    const updates = (this.updates = new UpdateService({
      events,
      install: options.installUpdate,
      turnsUnderWay: () => turnsUnderWay(records.data, registry.allStates())
    }))
    const appInfo = { version, dataDir, nativeFolderPicker: Boolean(options.pickFolder), warnings, secretsPersistent: secrets.persistent }
    this.handlers = {
      'app.info': async () => appInfo,
      'app.navigate': async ({ target }) => navigate(records, events, target),
      'app.firstScreen': ({ height, requests }) => this.firstScreen(options.firstScreen, height, requests),
      'search.query': async ({ q, limit }) => this.search.query(q, limit),
      ...projectsHandlers({ records, lifecycle, supervisor, pickFolder: options.pickFolder }),
      ...agentsHandlers({ records, secrets, supervisor, signIn, checks, environment, onRemoved: (d) => registryService.forget(d) }),
      ...registryService.handlers(),
      ...sessionsHandlers({ records, registry, connector, lifecycle, turns, queue, broker, mcpRun, handOff }),
      ...presetsHandlers({ records, lifecycle }),
      ...asksHandlers(records, broker),
      ...lazyMcpHandlers(() => mcp),
      ...filesHandlers({ records, supervisor, revealPath: options.revealPath }),
      ...workspace.handlers(),
      ...settings.handlers(),
      ...inbox.handlers(),
      ...spend.handlers(),
      ...races.handlers(),
      ...updates.handlers()
    }
  }

  static async open(options: HostOptions): Promise<Host> {
    const dataDir = resolve(options.dataDir)
    await privateFolder(join(dataDir, 'transcripts'))
    const lock = await acquireDataLock(dataDir)
    try {
      // What an older version (or another program) left readable by others becomes the user's alone (private-files.ts).
      await makeDataFolderPrivate(dataDir)
      // Before the presets: which agents are installed depends on the PATH the user's shell sets.
      const environment = await hostEnvironment(options.loginShell)
      const { store, warnings } = await Store.open(dataDir, options.presets ?? (await defaultAgentPresets(environment)))
      if (environment.problem) warnings.push(environmentWarning(environment.problem))
      // A host that was killed could not stop what its agents and their commands were running: this one does.
      const leftovers = killLeftovers(dataDir)
      if (leftovers > 0) {
        warnings.push(
          `Switchboard did not shut down properly last time: ${leftovers} process${leftovers === 1 ? '' : 'es'} its agents had started ${leftovers === 1 ? 'was' : 'were'} still running and ${leftovers === 1 ? 'has' : 'have'} been stopped.`
        )
      }
      const settingsRead = await readUserSettings(dataDir)
      const spendRead = await readSpendBook(dataDir)
      warnings.push(...settingsRead.warnings, ...spendRead.warnings)
      return new Host({ ...options, dataDir }, store, warnings, lock, environment, settingsRead, spendRead)
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  /** Runs one contract request: validates params, never throws, always answers; a transport may bring its own confirmations. */
  async handle(method: unknown, params: unknown, via: { confirmCommand?: ConfirmCommand } = {}): Promise<WireResponse> {
    if (!isRequestMethod(method)) {
      return { ok: false, error: { message: `Unknown request '${String(method)}'`, code: 'unknown_method' } }
    }
    const parsed = requestParams[method].safeParse(params ?? {})
    if (!parsed.success) {
      return { ok: false, error: { message: `Invalid parameters for ${method}: ${z.prettifyError(parsed.error)}`, code: 'invalid_params' } }
    }
    const { data, request } = withConfirmation(parsed.data, via.confirmCommand ?? this.confirmCommand)
    const answered = this.answer(method, data, request)
    // Reading every transcript (the search index, past spend) waits until the Host is quiet: no request running, and
    // once under way, not while the window draws a conversation it was answered.
    const drawn = DRAWN_ANSWERS.has(method)
    this.search.noteRequest(answered, drawn)
    this.spend.noteRequest(answered, drawn)
    return answered
  }

  private async answer(method: RequestMethod, data: unknown, request: RequestContext): Promise<WireResponse> {
    try {
      if (!this.store.isWhole && !answeredFromFirstPart(method, data)) await this.wholeRecords()
      const handler = this.handlers[method] as (p: unknown, r: RequestContext) => Promise<unknown>
      return { ok: true, result: await handler(data, request) }
    } catch (error) {
      return { ok: false, error: wireError(error) }
    }
  }

  /** Convenience for tests and in-process callers: a typed request that throws on error. */
  async request<M extends RequestMethod>(method: M, params: z.input<(typeof requestParams)[M]>): Promise<RequestResult<M>> {
    const response = await this.handle(method, params)
    if (!response.ok) throw new Error(response.error.message)
    return response.result as RequestResult<M>
  }

  /**
   * `app.firstScreen`: the window's first load answered (each request as if asked alone), and the window's first
   * screen drawn here from those same answers: the drawing asks for nothing twice. `html` is null without a
   * renderer, or when it failed (the window draws it then); the answers come all the same. Nothing asked for
   * here is confirmed: a change that would run a program is refused (asked alone, it is confirmed as always).
   */
  private async firstScreen(
    render: FirstScreenRenderer | undefined,
    height: number,
    requests: [string, unknown][]
  ): Promise<{ html: string | null; answers: WireResponse[] }> {
    const ask = async (method: string, params: unknown): Promise<WireResponse> =>
      method === 'app.firstScreen'
        ? { ok: false, error: { message: 'app.firstScreen cannot ask for itself', code: 'invalid_params' } }
        : this.handle(method, params, { confirmCommand: refuseCommands })
    const answers = await Promise.all(requests.map(([method, params]) => ask(method, params)))
    if (!render) return { html: null, answers }
    const asked = new Map(requests.map(([method, params], index) => [JSON.stringify([method, params]), answers[index]]))
    const request = async (method: string, params: unknown): Promise<WireResponse> =>
      asked.get(JSON.stringify([method, params])) ?? ask(method, params)
    try {
      return { html: await render({ request, height }), answers }
    } catch (error) {
      console.error(`Could not draw the window's first screen: ${(error as Error).message}`)
      return { html: null, answers }
    }
  }

  /** Every session record read (the window's first load is answered from the first part of db.json: Store.whole). */
  private async wholeRecords(): Promise<void> {
    clearTimeout(this.readRestSoon)
    await this.store.whole()
  }

  /** Stops every agent (and its process group) and flushes what is pending to disk. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.shutDown()
    return this.closed
  }

  private async shutDown(): Promise<void> {
    clearTimeout(this.readRestSoon)
    this.inbox.close()
    // No prompt starts from here (a queued one waits for the next start); those under way end as their agents stop.
    const turnsEnded = this.turns.close()
    this.reconnector.stop()
    await this.search.stop()
    this.broker.cancelAll()
    this.terminals.releaseAll()
    this.signIn.close()
    // A check cut short removes its scratch folder, on an agent's SSH host too: the connections close after it.
    await this.supervisor.close(this.checks.close())
    await turnsEnded
    await this.races.close()
    await this.registry.flushAll()
    await this.search.close() // once every transcript is written out: the sessions used in this run are read again
    await this.spend.close()
    await this.store.saveIfChanged()
    await this.settings.settled()
    await this.lock.release()
    this.events.flush()
  }
}
