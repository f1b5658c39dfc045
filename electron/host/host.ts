import { randomUUID } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { basename, isAbsolute, join, resolve, win32 } from 'node:path'
import { z } from 'zod'
import {
  RequestError,
  type ContentBlock,
  type PermissionOption,
  type SessionConfigOption,
  type SessionInfo,
  type SessionModeState,
  type ReadTextFileRequest,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type WriteTextFileRequest
} from '@agentclientprotocol/sdk'
import type { ForkSessionRequest } from '@agentclientprotocol/sdk/unstable'
import {
  type Attachment,
  isRequestMethod,
  requestParams,
  type ParsedParams,
  type RequestMethod,
  type RequestResult,
  type SessionSnapshot,
  type WireResponse
} from '../../shared/contract'
import type {
  AgentDefinition,
  AgentLog,
  AgentPresetView,
  AgentRuntimeState,
  AppInfo,
  Project,
  SessionRecord,
  SessionState
} from '../../shared/domain'
import type { HostErrorCode } from '../../shared/errors'
import type { SessionModelState, SessionStateRecord, TranscriptHeader, TranscriptRecord } from '../../shared/transcript'
import { applyRecordAt, contentToText, createThread, type Thread } from '../../shared/thread'
import { AgentConnection, agentLogPath, type ClientHandlers } from './agent-connection'
import { agentIdFor, checkAgentInput, type AgentInput } from './agent-definitions'
import { readLogTail } from './agent-log'
import { EventBus } from './events'
import { confinePath, PathRefusedError, readTextFile, writeTextFile } from './fs-boundary'
import { defaultAgentPresets, presetCatalog } from './presets'
import { Store } from './store'
import { acquireDataLock, type DataLock } from './data-lock'
import { findExecutable } from './executables'
import { Terminals } from './terminals'
import { killLeftovers, markPrefixFor } from './processes'
import { Elicitations, ElicitationError, type ElicitationAction } from './elicitation'
import { LoginTerminals, commandLine } from './login-terminals'
import { agentEnvKey, MemorySecretStore, type SecretStore } from './secrets'
import { alwaysDecision, optionFor, permissionRecord } from './permissions'
import { checkNotification, type CheckedNotification } from './updates'
import { serversForAgent, type AgentServers } from './mcp/acp-servers'
import { lazyMcpHandlers, McpService } from './mcp/service'
import { existingPathInside, ProjectFiles } from './project-files'
import { readTranscript, readTranscriptPage, readTranscriptTail, TranscriptWriter, transcriptPath } from './transcripts'
import { SearchIndex } from './search'

/**
 * The Host: everything the app does, with no Electron in it. It owns the
 * store, the agent processes and the live sessions, implements the contract's
 * requests, and pushes events. The Electron shell and the WebSocket server are
 * two thin transports in front of it.
 */

export interface HostOptions {
  dataDir: string
  version: string
  /** Agent definitions seeded into a new database. */
  presets?: AgentDefinition[]
  /** Supplied by the Electron shell: a native folder picker. */
  pickFolder?: () => Promise<string | null>
  initializeTimeoutMs?: number
  /** Longest message an agent may send on one line (default 8 MiB); a longer one stops the agent with a message. */
  maxAgentMessageBytes?: number
  /** How long an agent may take to end a turn after session/cancel before it is stopped (default 15 s). */
  cancelGraceMs?: number
  /** Stop an agent after this long without a message either way (default 10 minutes; 0 never). */
  agentIdleMs?: number
  /** Where secrets live; defaults to memory (nothing survives a restart). */
  secrets?: SecretStore
  /** Supplied by the Electron shell: shows a file or folder in the system's file manager. */
  revealPath?: (path: string) => void
  /** Sees every ACP message to and from every agent (tests validate what goes out against the schema). */
  onAgentMessage?: (agentId: string, direction: 'in' | 'out', message: unknown) => void
}

interface LiveSession {
  record: SessionRecord
  writer: TranscriptWriter
  /** The session folded as the renderer folds it: what the agent announced is checked against it. */
  thread: Thread
  connection: AgentConnection | null
  /** Permission requests waiting for the user, by our requestId. */
  permissions: Map<string, { settle: (optionId: string | null) => void; optionIds: string[] }>
  /** Serialises continue requests for this session. */
  connecting: Promise<void> | null
  /** Cancels the load or resume under way ($/cancel_request). */
  abortConnecting?: AbortController | null
  /** Set by a cancel: stops an agent that does not end the turn in time. */
  cancelTimer?: NodeJS.Timeout | null
}

type Handlers = { [M in RequestMethod]: (params: ParsedParams<M>) => Promise<RequestResult<M>> }

/** Updates for a session id the Host has not registered yet (they can race session/new's answer). */
const MAX_EARLY_UPDATES = 1000
/** Session ids held that way at most: an agent sending updates for made-up sessions cannot grow memory. */
const MAX_EARLY_SESSIONS = 16
const DEFAULT_AGENT_IDLE_MS = 10 * 60_000
const DEFAULT_CANCEL_GRACE_MS = 15_000
/** session/list pages read at most (a guard against an agent whose cursor never ends). */
const MAX_LIST_PAGES = 100

export class Host {
  readonly events = new EventBus()
  private readonly agents = new Map<string, AgentConnection>()
  private readonly agentStarts = new Map<string, Promise<AgentConnection>>()
  private readonly live = new Map<string, LiveSession>()
  private readonly byAcpSession = new Map<string, LiveSession>()
  private readonly earlyUpdates = new Map<string, CheckedNotification[]>()
  private readonly states = new Map<string, SessionState>()
  private readonly agentStates = new Map<string, AgentRuntimeState>()
  private readonly terminals: Terminals
  private readonly logins = new LoginTerminals({
    output: (loginId, data) => this.events.emit('agent.login.output', { loginId, data }),
    exit: (loginId, spec, exitCode, signal) => void this.loginEnded(loginId, spec.agentId, spec.methodId, exitCode, signal)
  })
  private readonly elicitations = new Elicitations(
    (pending) => this.events.emit('elicitations.changed', pending),
    (view, action, content) => {
      const live = view.sessionId ? this.live.get(view.sessionId) : undefined
      if (!live) return
      this.appendRecord(live, { t: 'elicitation', at: new Date().toISOString(), message: view.message, mode: view.mode, action, url: view.url, content })
    }
  )
  private readonly projectFiles = new ProjectFiles()
  private readonly secrets: SecretStore
  private readonly mcp: McpService
  /** Full-text search over projects, titles and transcripts; follows the Host through its events. */
  private readonly search: SearchIndex
  private closing = false
  private idleTimer: NodeJS.Timeout | null = null
  private closed: Promise<void> | null = null

  private constructor(
    private readonly options: HostOptions,
    private readonly store: Store,
    private readonly warnings: string[],
    private readonly lock: DataLock
  ) {
    this.secrets = options.secrets ?? new MemorySecretStore()
    this.mcp = new McpService({
      store,
      secrets: this.secrets,
      clientVersion: options.version,
      onChange: (state) => this.events.emit('mcp.changed', state)
    })
    this.terminals = new Terminals(markPrefixFor(options.dataDir))
    this.search = new SearchIndex({
      transcriptDir: join(options.dataDir, 'transcripts'),
      projects: () => this.store.data.projects,
      sessions: () => this.store.data.sessions,
      threadOf: (id) => this.live.get(id)?.thread
    })
    this.events.tap((event) => this.search.noteEvent(event))
    void this.search.build()
    const idleMs = options.agentIdleMs ?? DEFAULT_AGENT_IDLE_MS
    if (idleMs > 0) {
      this.idleTimer = setInterval(() => void this.stopIdleAgents(idleMs), Math.min(idleMs / 2, 60_000))
      this.idleTimer.unref()
    }
  }

  /**
   * Agents are started lazily and stopped when idle, but only where nothing is
   * lost: no turn running or starting, no permission pending, and every session
   * on it can come back through session/load or session/resume.
   */
  private async stopIdleAgents(idleMs: number): Promise<void> {
    const now = Date.now()
    for (const connection of [...this.agents.values()]) {
      if (!connection.isAlive || now - connection.lastActivity < idleMs) continue
      if (this.canStopQuietly(connection)) await connection.stop()
    }
  }

  /** No turn running or starting, no permission pending, and every session on it can come back. */
  private canStopQuietly(connection: AgentConnection): boolean {
    const sessions = [...this.live.values()].filter((l) => l.connection === connection)
    const busy = sessions.some((l) => l.permissions.size > 0 || ['running', 'starting'].includes(this.stateOf(l.record.id).status))
    const { loadSession, session } = connection.capabilities
    const asking = this.elicitations.list().some((e) => e.agentId === connection.definition.id)
    return !busy && !asking && (sessions.length === 0 || loadSession || session.resume)
  }

  static async open(options: HostOptions): Promise<Host> {
    const dataDir = resolve(options.dataDir)
    await fs.mkdir(join(dataDir, 'transcripts'), { recursive: true })
    const lock = await acquireDataLock(dataDir)
    try {
      const { store, warnings } = await Store.open(dataDir, options.presets ?? (await defaultAgentPresets()))
      // A host that was killed could not stop what its agents and their commands were running: this one does.
      const leftovers = killLeftovers(dataDir)
      if (leftovers > 0) {
        warnings.push(
          `Switchboard did not shut down properly last time: ${leftovers} process${leftovers === 1 ? '' : 'es'} its agents had started ${leftovers === 1 ? 'was' : 'were'} still running and ${leftovers === 1 ? 'has' : 'have'} been stopped.`
        )
      }
      return new Host({ ...options, dataDir }, store, warnings, lock)
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  /** Runs one contract request: validates params, never throws, always answers. */
  async handle(method: unknown, params: unknown): Promise<WireResponse> {
    if (!isRequestMethod(method)) {
      return { ok: false, error: { message: `Unknown request '${String(method)}'`, code: 'unknown_method' } }
    }
    const parsed = requestParams[method].safeParse(params ?? {})
    if (!parsed.success) {
      return {
        ok: false,
        error: { message: `Invalid parameters for ${method}: ${z.prettifyError(parsed.error)}`, code: 'invalid_params' }
      }
    }
    try {
      const handler = this.handlers[method] as (p: unknown) => Promise<unknown>
      return { ok: true, result: await handler(parsed.data) }
    } catch (error) {
      const code = error instanceof HostError ? error.code : undefined
      return { ok: false, error: code ? { message: describeError(error), code } : { message: describeError(error) } }
    }
  }

  /** Convenience for tests and in-process callers: a typed request that throws on error. */
  async request<M extends RequestMethod>(method: M, params: z.input<(typeof requestParams)[M]>): Promise<RequestResult<M>> {
    const response = await this.handle(method, params)
    if (!response.ok) throw new Error(response.error.message)
    return response.result as RequestResult<M>
  }

  /** Stops every agent (and its process group) and flushes what is pending to disk. Idempotent. */
  close(): Promise<void> {
    this.closed ??= this.shutDown()
    return this.closed
  }

  private async shutDown(): Promise<void> {
    this.closing = true
    if (this.idleTimer) clearInterval(this.idleTimer)
    await this.search.close()
    for (const pending of [...this.live.values()].flatMap((l) => [...l.permissions.values()])) pending.settle(null)
    this.elicitations.cancelWhere(() => true)
    this.terminals.releaseAll()
    this.logins.stopAll()
    await Promise.allSettled([...this.agentStarts.values()])
    await Promise.all([...this.agents.values()].map((a) => a.stop()))
    await Promise.all([...this.live.values()].map((l) => l.writer.flush()))
    await this.store.save()
    await this.lock.release()
    this.events.flush()
  }

  private readonly handlers: Handlers = {
    'app.info': async () => this.appInfo(),
    'projects.list': async () => this.store.data.projects,
    'projects.add': (p) => this.addProject(p.cwd, p.name),
    'projects.pickFolder': async () => ({ path: this.options.pickFolder ? await this.options.pickFolder() : null }),
    'projects.setAdditionalDirectories': (p) => this.setAdditionalDirectories(p.projectId, p.directories),
    'projects.rename': (p) => this.renameProject(p.projectId, p.name),
    'projects.remove': (p) => this.removeProject(p.projectId),
    'projects.reorder': (p) => this.reorderProjects(p.projectIds),
    'agents.list': async () => this.store.data.agents,
    'agents.add': (p) => this.addAgent(p),
    'agents.update': (p) => this.updateAgent(p.agentId, p),
    'agents.remove': (p) => this.removeAgent(p.agentId),
    'agents.restart': (p) => this.restartAgent(p.agentId),
    'agents.log': (p) => this.agentLog(p.agentId),
    'agents.presets': () => this.presets(),
    'agents.addPreset': (p) => this.addPreset(p.presetId),
    'agents.setProtocol': (p) => this.setProtocol(p.agentId, p.protocol),
    'agents.states': () => this.agentRuntimeStates(),
    'sessions.list': async (p) =>
      this.store.data.sessions
        .filter((s) => !p.projectId || s.projectId === p.projectId)
        .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt)),
    'sessions.states': async () => [...this.states.values()],
    'sessions.new': (p) => this.newSession(p.projectId, p.agentId),
    'sessions.open': (p) => this.openSession(p.id, p.tail),
    'sessions.continue': (p) => this.continueSession(p.id),
    'sessions.prompt': (p) => this.prompt(p.id, p.text, p.attachments),
    'sessions.cancel': (p) => this.cancel(p.id),
    'sessions.respondPermission': (p) => this.respondPermission(p.id, p.requestId, p.optionId),
    'sessions.setMode': (p) => this.setMode(p.id, p.modeId),
    'sessions.setConfigOption': (p) => this.setConfigOption(p.id, p.configId, p.value),
    'sessions.setModel': (p) => this.setModel(p.id, p.modelId),
    'sessions.import': (p) => this.importSessions(p.projectId, p.agentId),
    'sessions.close': (p) => this.closeSession(p.id),
    'sessions.delete': (p) => this.deleteSession(p.id, p.keepTranscript),
    'sessions.fork': (p) => this.forkSession(p.id),
    'sessions.rename': (p) => this.renameSession(p.id, p.title),
    'search.query': async (p) => this.search.query(p.q, p.limit),
    'permissions.list': async (p) => this.store.data.permissionRules.filter((r) => !p.projectId || r.projectId === p.projectId),
    'permissions.revoke': (p) => this.revokePermission(p.ruleId),
    'agents.authenticate': (p) => this.authenticate(p.agentId, p.methodId, p.values),
    'agents.logout': (p) => this.logout(p.agentId),
    'agents.login.start': (p) => this.startLogin(p.agentId, p.methodId, p.cols, p.rows),
    'agents.login.input': async (p) => (this.logins.write(p.loginId, p.data), {}),
    'agents.login.resize': async (p) => (this.logins.resize(p.loginId, p.cols, p.rows), {}),
    'agents.login.stop': async (p) => (this.logins.stop(p.loginId), {}),
    'elicitations.list': async () => this.elicitations.list(),
    'elicitations.answer': async (p) => (this.elicitations.answer(p.requestId, p.action as ElicitationAction, p.content), {}),
    ...lazyMcpHandlers(() => this.mcp),
    'files.list': (p) => this.projectFiles.list(this.requireProject(p.projectId).cwd, p.query, p.limit),
    'files.reveal': (p) => this.revealPath(p.sessionId, p.path),
    'transcripts.read': (p) => this.readEarlier(p.id, p.before, p.offset, p.limit)
  }

  private appInfo(): AppInfo {
    return {
      version: this.options.version,
      dataDir: this.options.dataDir,
      nativeFolderPicker: Boolean(this.options.pickFolder),
      warnings: this.warnings,
      secretsPersistent: this.secrets.persistent
    }
  }

  // ---- projects and agents -------------------------------------------------

  private async addProject(cwd: string, name?: string): Promise<Project> {
    const trimmed = cwd.trim()
    if (!isAbsolute(trimmed) && !win32.isAbsolute(trimmed)) {
      throw new Error(`The project folder must be an absolute path, like /home/you/code/app (got '${trimmed}')`)
    }
    const folder = resolve(trimmed)
    await assertDirectory(folder)
    const existing = this.store.data.projects.find((p) => p.cwd === folder)
    if (existing) return existing
    const project: Project = {
      id: randomUUID(),
      name: name?.trim() || basename(folder) || folder,
      cwd: folder,
      createdAt: new Date().toISOString()
    }
    this.store.data.projects.push(project)
    await this.store.save()
    this.events.emit('projects.changed', this.store.data.projects)
    return project
  }

  private async setAdditionalDirectories(projectId: string, directories: string[]): Promise<Project> {
    const project = this.store.project(projectId)
    if (!project) throw new Error(`No project with id '${projectId}'`)
    const folders: string[] = []
    for (const directory of directories) {
      const trimmed = directory.trim()
      if (!isAbsolute(trimmed) && !win32.isAbsolute(trimmed)) throw new Error(`Additional folders must be absolute paths (got '${trimmed}')`)
      const folder = resolve(trimmed)
      await assertDirectory(folder)
      if (folder !== project.cwd && !folders.includes(folder)) folders.push(folder)
    }
    project.additionalDirectories = folders
    await this.store.save()
    this.events.emit('projects.changed', this.store.data.projects)
    return project
  }

  private async renameProject(projectId: string, name: string): Promise<Project> {
    const project = this.store.project(projectId)
    if (!project) throw new Error(`No project with id '${projectId}'`)
    project.name = name
    await this.store.save()
    this.events.emit('projects.changed', this.store.data.projects)
    return project
  }

  /** The project leaves the sidebar with its sessions; transcripts are kept, the folder and the agents' copies are not touched. */
  private async removeProject(projectId: string): Promise<{ removedSessions: number }> {
    if (!this.store.project(projectId)) throw new Error(`No project with id '${projectId}'`)
    const sessions = this.store.data.sessions.filter((s) => s.projectId === projectId)
    for (const session of sessions) await this.dropSession(session.id, true)
    this.store.data.projects = this.store.data.projects.filter((p) => p.id !== projectId)
    this.store.data.permissionRules = this.store.data.permissionRules.filter((r) => r.projectId !== projectId)
    await this.store.save()
    this.events.emit('projects.changed', this.store.data.projects)
    this.events.emit('permissions.changed', this.store.data.permissionRules)
    return { removedSessions: sessions.length }
  }

  private async reorderProjects(projectIds: string[]): Promise<Project[]> {
    const projects = this.store.data.projects
    const byId = new Map(projects.map((p) => [p.id, p]))
    if (projectIds.length !== projects.length || new Set(projectIds).size !== projectIds.length || projectIds.some((id) => !byId.has(id))) {
      throw new Error('The new order must name every project exactly once (the list may have changed meanwhile; try again)')
    }
    this.store.data.projects = projectIds.map((id) => byId.get(id)!)
    await this.store.save()
    this.events.emit('projects.changed', this.store.data.projects)
    return this.store.data.projects
  }

  private async addAgent(input: AgentInput): Promise<AgentDefinition> {
    const checked = checkAgentInput(input)
    const id = agentIdFor(checked.fields.name, (taken) => Boolean(this.store.agent(taken)))
    for (const [name, value] of Object.entries(checked.secretValues)) await this.secrets.set(agentEnvKey(id, name), value)
    const { secretEnv, ...fields } = checked.fields
    const definition: AgentDefinition = { id, ...fields, ...(secretEnv?.length ? { secretEnv } : {}) }
    this.store.data.agents.push(definition)
    await this.saveAgents()
    return definition
  }

  /**
   * The protocol version to ask an agent for. It applies when the agent next
   * starts: a running agent is stopped for it where nothing is lost (as when it
   * is idle); else it keeps its version until it stops.
   */
  private async setProtocol(agentId: string, protocol: 1 | 2): Promise<AgentDefinition> {
    const definition = this.requireAgent(agentId)
    if (protocol !== (definition.protocol ?? 1)) {
      if (protocol === 2) definition.protocol = 2
      else delete definition.protocol
      const running = this.agents.get(agentId)
      if (running?.isAlive && this.canStopQuietly(running)) await running.stop()
    }
    await this.saveAgents()
    return definition
  }

  /** The new definition applies the next time the agent starts (the Agents page offers a restart). */
  private async updateAgent(agentId: string, input: AgentInput): Promise<AgentDefinition> {
    const previous = this.requireAgent(agentId)
    const checked = checkAgentInput(input, previous)
    for (const [name, value] of Object.entries(checked.secretValues)) await this.secrets.set(agentEnvKey(agentId, name), value)
    for (const name of checked.forgottenSecrets) await this.secrets.delete(agentEnvKey(agentId, name))
    const definition: AgentDefinition = { ...previous, ...checked.fields }
    this.store.data.agents = this.store.data.agents.map((a) => (a.id === agentId ? definition : a))
    await this.saveAgents()
    return definition
  }

  /** Refused while sessions use the agent: they would lose the way to continue. */
  private async removeAgent(agentId: string): Promise<Record<string, never>> {
    const definition = this.requireAgent(agentId)
    const used = this.store.data.sessions.filter((s) => s.agentId === agentId).length
    if (used > 0) {
      throw new Error(`${definition.name} has ${used} session${used === 1 ? '' : 's'}; delete ${used === 1 ? 'it' : 'them'} first to remove the agent`)
    }
    await this.agentStarts.get(agentId)?.catch(() => undefined)
    await this.agents.get(agentId)?.stop()
    for (const name of definition.secretEnv ?? []) await this.secrets.delete(agentEnvKey(agentId, name))
    this.store.data.agents = this.store.data.agents.filter((a) => a.id !== agentId)
    const rules = this.store.data.permissionRules.filter((r) => r.agentId !== agentId)
    const rulesChanged = rules.length !== this.store.data.permissionRules.length
    this.store.data.permissionRules = rules
    this.agentStates.delete(agentId)
    await this.saveAgents()
    if (rulesChanged) this.events.emit('permissions.changed', rules)
    return {}
  }

  /** Stops the agent if it runs (its sessions become idle, to be continued), then starts it with its current definition. */
  private async restartAgent(agentId: string): Promise<AgentRuntimeState> {
    const definition = this.requireAgent(agentId)
    await this.agentStarts.get(agentId)?.catch(() => undefined)
    await this.agents.get(agentId)?.stop()
    const connection = await this.ensureAgent(definition)
    return connection.state
  }

  private async agentLog(agentId: string): Promise<AgentLog> {
    this.requireAgent(agentId)
    await this.agents.get(agentId)?.flushLog()
    const path = agentLogPath(join(this.options.dataDir, 'logs'), agentId)
    return { agentId, path, ...(await readLogTail(path)) }
  }

  private async presets(): Promise<AgentPresetView[]> {
    return (await presetCatalog()).map(({ definition, installed }) => ({
      id: definition.id,
      name: definition.name,
      command: definition.command,
      args: definition.args,
      installed,
      installHint: definition.installHint ?? '',
      added: Boolean(this.store.agent(definition.id))
    }))
  }

  private async addPreset(presetId: string): Promise<AgentDefinition> {
    const preset = (await presetCatalog()).find((p) => p.definition.id === presetId)
    if (!preset) throw new Error(`No preset '${presetId}'`)
    const existing = this.store.agent(presetId)
    if (existing) return existing
    this.store.data.agents.push(preset.definition)
    await this.saveAgents()
    return preset.definition
  }

  private async saveAgents(): Promise<void> {
    await this.store.save()
    this.events.emit('agents.changed', this.store.data.agents)
  }

  /** Every agent's live state; for one not running, whether its command can be found at all. */
  private async agentRuntimeStates(): Promise<AgentRuntimeState[]> {
    return Promise.all(
      this.store.data.agents.map(async (agent) => {
        const known = this.agentStates.get(agent.id)
        if (known && known.status !== 'stopped' && known.status !== 'error') return known
        const base = known ?? { agentId: agent.id, status: 'stopped' as const, stderrTail: '' }
        if (await findExecutable(agent.command, { ...process.env, ...agent.env })) return { ...base, installed: true }
        return { ...base, installed: false, message: notInstalledMessage(agent) }
      })
    )
  }

  // ---- sessions --------------------------------------------------------------

  private async newSession(projectId: string, agentId: string): Promise<SessionRecord> {
    const project = this.store.project(projectId)
    if (!project) throw new Error(`No project with id '${projectId}'`)
    const definition = this.requireAgent(agentId)
    await assertDirectory(project.cwd)
    // MCP servers are prepared first: a command that cannot be found stops here, before the agent is asked.
    const prepared = await this.mcp.prepareForProject(projectId)
    const connection = await this.ensureAgent(definition)
    const servers = serversForAgent(prepared, connection.capabilities, definition.name)
    const additionalDirectories = project.additionalDirectories ?? []
    const response = await connection.acp
      .newSession({
        cwd: project.cwd,
        mcpServers: servers.mcpServers,
        ...this.directoriesFor(connection, additionalDirectories)
      })
      .catch((error: unknown) => {
        throw authRequired(error, connection) ?? error
      })
    const now = new Date().toISOString()
    const record: SessionRecord = {
      id: randomUUID(),
      acpSessionId: response.sessionId,
      agentId,
      projectId,
      cwd: project.cwd,
      additionalDirectories,
      title: 'New session',
      titleSource: 'default',
      createdAt: now,
      updatedAt: now,
      ...sessionMcp(servers)
    }
    const writer = this.createWriter(record)
    writer.append(headerOf(record))
    const live = this.register(record, writer, connection)
    this.appendSessionState(live, response)
    this.store.data.sessions.push(record)
    this.setState(record.id, { status: 'ready', error: undefined })
    await this.store.save()
    this.events.emit('session.record', record)
    return record
  }

  /** The transcript (or its tail: a long one is read from the end, never whole, for the first screen). */
  private async openSession(id: string, tail?: number): Promise<SessionSnapshot> {
    const record = this.requireSession(id)
    await this.live.get(id)?.writer.flush()
    const file = transcriptPath(this.transcriptDir, id)
    if (tail !== undefined) {
      const { records, nextSeq, skippedLines, firstSeq, firstOffset } = await readTranscriptTail(file, { limit: tail })
      return { record, state: this.stateOf(id), records, nextSeq, skippedLines, firstSeq, firstOffset }
    }
    const contents = await readTranscript(file)
    return {
      record,
      state: this.stateOf(id),
      records: contents.records,
      nextSeq: contents.nextSeq,
      skippedLines: contents.skippedLines,
      firstSeq: 0,
      firstOffset: 0
    }
  }

  private async readEarlier(id: string, before: number, offset: number, limit: number): Promise<RequestResult<'transcripts.read'>> {
    this.requireSession(id)
    return readTranscriptPage(transcriptPath(this.transcriptDir, id), before, offset, { limit })
  }

  private async continueSession(id: string): Promise<SessionState> {
    await this.ensureLive(id)
    return this.stateOf(id)
  }

  /** Makes the session live: its agent running and the session loaded into it. */
  private async ensureLive(id: string): Promise<LiveSession> {
    const record = this.requireSession(id)
    let live = this.live.get(id)
    if (live?.connection?.isAlive) return live
    if (live?.connecting) {
      await live.connecting
      return this.ensureLive(id)
    }
    const definition = this.requireAgent(record.agentId)
    if (!record.acpSessionId) throw new Error('This session was never created by its agent and cannot be continued')
    if (!live) {
      const contents = await readTranscript(transcriptPath(this.transcriptDir, id))
      live = this.register(
        record,
        new TranscriptWriter(transcriptPath(this.transcriptDir, id), contents.nextSeq, contents.endsClean, (e) =>
          this.onWriteError(id, e)
        ),
        null,
        contents.records
      )
    }
    const session = live
    const abort = new AbortController()
    session.abortConnecting = abort
    session.connecting = (async () => {
      this.setState(id, { status: 'starting', error: undefined })
      try {
        const prepared = await this.mcp.prepareForProject(record.projectId)
        const connection = await this.ensureAgent(definition)
        const servers = serversForAgent(prepared, connection.capabilities, definition.name)
        const { loadSession, session: can } = connection.capabilities
        // Resume keeps the local view and needs no replay; an imported session has no local view yet, so it loads.
        const useResume = can.resume && (session.thread.entries.length > 0 || !loadSession)
        if (!useResume && !loadSession) {
          const reason = `${definition.name} cannot reopen past sessions (it announces neither loadSession nor session/resume). Start a new session instead.`
          this.setState(id, { status: 'idle', continueBlockedReason: reason })
          throw new Error(reason)
        }
        session.connection = connection
        this.byAcpSession.set(acpKey(record.agentId, record.acpSessionId!), session)
        const params = {
          sessionId: record.acpSessionId!,
          cwd: record.cwd,
          mcpServers: servers.mcpServers,
          ...this.directoriesFor(connection, record.additionalDirectories ?? [])
        }
        // Cancelling while this runs sends $/cancel_request for it.
        const options = { cancellationSignal: abort.signal }
        if (useResume) {
          this.appendSessionState(session, await connection.acp.resumeSession(params, options))
        } else {
          this.appendRecord(session, { t: 'reset', at: new Date().toISOString(), reason: 'load' })
          this.appendSessionState(session, await connection.acp.loadSession(params, options))
        }
        this.setState(id, { status: 'ready', error: undefined, continueBlockedReason: undefined, mcp: { servers: servers.given, leftOut: servers.leftOut } })
      } catch (error) {
        session.connection = null
        if (record.acpSessionId) this.byAcpSession.delete(acpKey(record.agentId, record.acpSessionId))
        if (abort.signal.aborted) {
          this.setState(id, { status: 'idle', error: undefined })
          throw new Error('Reopening the session was cancelled')
        }
        const message = describeError(error)
        if (this.stateOf(id).status !== 'idle') this.setState(id, { status: 'error', error: message })
        throw error
      } finally {
        session.connecting = null
        session.abortConnecting = null
      }
    })()
    await session.connecting
    return session
  }

  private async prompt(id: string, text: string, attachments: Attachment[] = []): Promise<{ stopReason: string }> {
    const live = await this.ensureLive(id)
    const connection = live.connection!
    if (this.stateOf(id).status === 'running') {
      throw new Error('A turn is already running in this session; wait for it to end or cancel it')
    }
    const content: ContentBlock[] = [...(text.trim() ? [{ type: 'text' as const, text }] : []), ...attachments.map((a) => toContentBlock(a, connection))]
    this.appendRecord(live, { t: 'prompt', at: new Date().toISOString(), content })
    if (live.record.titleSource === 'default') {
      live.record.title = titleFrom(text.trim() ? text : contentToText(content))
      live.record.titleSource = 'prompt'
      this.events.emit('session.record', live.record)
    }
    this.setState(id, { status: 'running', error: undefined })
    try {
      const response = await connection.acp.prompt({ sessionId: live.record.acpSessionId!, prompt: content })
      this.appendRecord(live, { t: 'stop', at: new Date().toISOString(), stopReason: response.stopReason })
      live.record.lastStopReason = response.stopReason
      this.setState(id, { status: 'ready' })
      return { stopReason: response.stopReason }
    } catch (error) {
      await connection.settle()
      const alive = connection.isAlive
      const auth = authRequired(error, connection)
      const message =
        auth?.message ??
        (alive
          ? `${connection.definition.name} failed the turn: ${describeError(error)}`
          : `${connection.exitMessage()}. The conversation so far is kept; send again to restart the agent and continue.`)
      this.appendRecord(live, { t: 'error', at: new Date().toISOString(), message })
      this.setState(id, { status: alive ? 'ready' : 'idle', error: message })
      throw auth ?? new Error(message)
    } finally {
      if (live.cancelTimer) clearTimeout(live.cancelTimer)
      live.cancelTimer = null
      live.record.updatedAt = new Date().toISOString()
      await this.store.save()
      this.events.emit('session.record', live.record)
    }
  }

  private async cancel(id: string): Promise<Record<string, never>> {
    const live = this.live.get(id)
    live?.abortConnecting?.abort()
    for (const pending of [...(live?.permissions.values() ?? [])]) pending.settle(null)
    this.elicitations.cancelWhere((e) => e.sessionId === id)
    this.setState(id, { permissions: [] })
    if (live?.connection?.isAlive && live.record.acpSessionId) {
      const connection = live.connection
      await connection.acp.cancel({ sessionId: live.record.acpSessionId })
      // An agent that ignores the cancel must not keep the session busy for ever.
      if (this.stateOf(id).status === 'running' && !live.cancelTimer) {
        const graceMs = this.options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS
        live.cancelTimer = setTimeout(() => {
          live.cancelTimer = null
          if (this.stateOf(id).status !== 'running' || live.connection !== connection || !connection.isAlive) return
          void connection.abandon(
            `${connection.definition.name} did not end the turn within ${graceMs / 1000} s of being asked to cancel, so it was stopped`
          )
        }, graceMs)
        live.cancelTimer.unref?.()
      }
    }
    return {}
  }

  private async respondPermission(id: string, requestId: string, optionId: string | null): Promise<Record<string, never>> {
    const pending = this.live.get(id)?.permissions.get(requestId)
    if (!pending) throw new Error('That permission request is no longer pending')
    if (optionId !== null && !pending.optionIds.includes(optionId)) {
      throw new Error(`'${optionId}' is not one of the options the agent offered (${pending.optionIds.join(', ')})`)
    }
    pending.settle(optionId)
    return {}
  }

  /** Brings in the agent's sessions for the project's folder (made in other clients), through session/list. */
  private async importSessions(projectId: string, agentId: string): Promise<{ imported: SessionRecord[] }> {
    const project = this.store.project(projectId)
    if (!project) throw new Error(`No project with id '${projectId}'`)
    const definition = this.requireAgent(agentId)
    const connection = await this.ensureAgent(definition)
    if (!connection.capabilities.session.list) {
      throw new Error(`${definition.name} cannot list its sessions (it does not announce session/list)`)
    }
    const listed: SessionInfo[] = []
    let cursor: string | null | undefined
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const response = await connection.acp.listSessions({ cwd: project.cwd, cursor })
      listed.push(...response.sessions)
      cursor = response.nextCursor
      if (!cursor) break
    }
    const imported: SessionRecord[] = []
    for (const info of listed) {
      // The cwd filter is the agent's to apply; a session of another folder belongs to another project.
      if (info.cwd !== project.cwd) continue
      if (this.store.data.sessions.some((s) => s.agentId === agentId && s.acpSessionId === info.sessionId)) continue
      const at = info.updatedAt ?? new Date().toISOString()
      const record: SessionRecord = {
        id: randomUUID(),
        acpSessionId: info.sessionId,
        agentId,
        projectId,
        cwd: project.cwd,
        title: info.title?.trim() || 'Imported session',
        titleSource: info.title?.trim() ? 'agent' : 'default',
        createdAt: at,
        updatedAt: at
      }
      const writer = this.createWriter(record)
      writer.append(headerOf(record))
      await writer.flush()
      this.store.data.sessions.push(record)
      imported.push(record)
    }
    await this.store.save()
    for (const record of imported) this.events.emit('session.record', record)
    return { imported }
  }

  /** Ends the live session: `session/close` when the agent announces it; the conversation stays, ready to continue. */
  private async closeSession(id: string): Promise<Record<string, never>> {
    this.requireSession(id)
    const live = this.live.get(id)
    const connection = live?.connection
    if (live && connection?.isAlive) {
      if (this.stateOf(id).status === 'running') await this.cancel(id)
      if (connection.capabilities.session.close) {
        await connection.acp.closeSession({ sessionId: live.record.acpSessionId! })
      }
      this.detach(live)
    }
    this.setState(id, { status: 'idle', error: undefined, permissions: [] })
    return {}
  }

  private async deleteSession(id: string, keepTranscript: boolean): Promise<{ agentDeleted: boolean; note?: string }> {
    const record = this.requireSession(id)
    const definition = this.store.agent(record.agentId)
    let agentDeleted = false
    let note: string | undefined
    if (definition && record.acpSessionId) {
      try {
        const connection = await this.ensureAgent(definition)
        if (connection.capabilities.session.delete) {
          await connection.acp.deleteSession({ sessionId: record.acpSessionId })
          agentDeleted = true
        } else {
          note = `${definition.name} does not announce session/delete; its own copy of the session is untouched.`
        }
      } catch (error) {
        note = `The agent's copy was not deleted: ${(error as Error).message}`
      }
    }
    await this.dropSession(id, keepTranscript)
    return note ? { agentDeleted, note } : { agentDeleted }
  }

  /** Takes a session out of Switchboard (not out of its agent): the live link ends, the record goes, the transcript is removed or kept aside. */
  private async dropSession(id: string, keepTranscript: boolean): Promise<void> {
    const live = this.live.get(id)
    if (live) {
      if (this.stateOf(id).status === 'running') await this.cancel(id)
      this.detach(live)
      await live.writer.flush()
      this.live.delete(id)
    }
    this.store.data.sessions = this.store.data.sessions.filter((s) => s.id !== id)
    this.states.delete(id)
    await this.store.save()
    const file = transcriptPath(this.transcriptDir, id)
    if (keepTranscript) {
      // Kept out of transcripts/ so a rebuilt db.json does not bring the session back.
      await fs.mkdir(join(this.options.dataDir, 'deleted-transcripts'), { recursive: true })
      await fs.rename(file, join(this.options.dataDir, 'deleted-transcripts', `${id}.jsonl`)).catch(() => undefined)
    } else {
      await fs.rm(file, { force: true })
    }
    this.events.emit('session.removed', { id })
  }

  private async renameSession(id: string, title: string): Promise<SessionRecord> {
    const record = this.requireSession(id)
    record.title = title
    record.titleSource = 'user'
    await this.store.save()
    this.events.emit('session.record', record)
    return record
  }

  /** `session/fork`: a new session that starts with this one's history, in the agent and on screen. */
  private async forkSession(id: string): Promise<SessionRecord> {
    const parent = this.requireSession(id)
    const definition = this.requireAgent(parent.agentId)
    const prepared = await this.mcp.prepareForProject(parent.projectId)
    const connection = await this.ensureAgent(definition)
    if (!connection.capabilities.session.fork) {
      throw new Error(`${definition.name} cannot fork sessions (it does not announce session/fork)`)
    }
    if (!parent.acpSessionId) throw new Error('This session was never created by its agent and cannot be forked')
    await this.live.get(id)?.writer.flush()
    const history = (await readTranscript(transcriptPath(this.transcriptDir, id))).records
    const servers = serversForAgent(prepared, connection.capabilities, definition.name)
    const params: ForkSessionRequest = {
      sessionId: parent.acpSessionId,
      cwd: parent.cwd,
      mcpServers: servers.mcpServers,
      ...this.directoriesFor(connection, parent.additionalDirectories ?? [])
    }
    const response = await connection.acp.forkSession(params)
    const now = new Date().toISOString()
    const record: SessionRecord = {
      id: randomUUID(),
      acpSessionId: response.sessionId,
      agentId: parent.agentId,
      projectId: parent.projectId,
      cwd: parent.cwd,
      additionalDirectories: parent.additionalDirectories,
      title: `Fork of ${parent.title}`,
      titleSource: 'default',
      createdAt: now,
      updatedAt: now,
      ...sessionMcp(servers)
    }
    const writer = this.createWriter(record)
    writer.append(headerOf(record))
    const live = this.register(record, writer, connection)
    for (const past of history) if (past.t !== 'header') this.appendRecord(live, past)
    this.appendSessionState(live, response)
    this.store.data.sessions.push(record)
    this.setState(record.id, { status: 'ready' })
    await this.store.save()
    this.events.emit('session.record', record)
    return record
  }

  private async setMode(id: string, modeId: string): Promise<Record<string, never>> {
    const live = await this.ensureLive(id)
    const modes = live.thread.modes
    if (!modes?.availableModes.some((m) => m.id === modeId)) {
      throw new Error(
        modes?.availableModes.length
          ? `Mode '${modeId}' is not one this agent offers (${modes.availableModes.map((m) => m.id).join(', ')})`
          : `${live.connection!.definition.name} does not offer modes for this session`
      )
    }
    await live.connection!.acp.setMode({ sessionId: live.record.acpSessionId!, modeId })
    this.appendRecord(live, { t: 'session', at: new Date().toISOString(), modes: { ...modes, currentModeId: modeId } })
    return {}
  }

  private async setConfigOption(id: string, configId: string, value: string | boolean): Promise<Record<string, never>> {
    const live = await this.ensureLive(id)
    const option = live.thread.configOptions?.find((o) => o.id === configId)
    if (!option) throw new Error(`${live.connection!.definition.name} has no configuration option '${configId}' for this session`)
    if (option.type === 'boolean' ? typeof value !== 'boolean' : typeof value !== 'string') {
      throw new Error(`Option '${option.name}' takes a ${option.type === 'boolean' ? 'true/false value' : 'choice from its list'}`)
    }
    const sessionId = live.record.acpSessionId!
    const response = await live.connection!.acp.setConfigOption(
      typeof value === 'boolean' ? { sessionId, configId, type: 'boolean', value } : { sessionId, configId, value }
    )
    this.appendRecord(live, { t: 'session', at: new Date().toISOString(), configOptions: response.configOptions })
    return {}
  }

  /** `session/set_model`, for agents that announce models the older way (not as a config option). */
  private async setModel(id: string, modelId: string): Promise<Record<string, never>> {
    const live = await this.ensureLive(id)
    const models = live.thread.models
    if (!models?.availableModels.some((m) => m.modelId === modelId)) {
      throw new Error(`${live.connection!.definition.name} does not offer the model '${modelId}' for this session`)
    }
    await live.connection!.acp.setModel({ sessionId: live.record.acpSessionId!, modelId })
    this.appendRecord(live, { t: 'session', at: new Date().toISOString(), models: { ...models, currentModelId: modelId } })
    return {}
  }

  /**
   * `additionalDirectories` for a session request: only to an agent that announces
   * them (older agents may reject the unknown field), and only when there are some.
   */
  private directoriesFor(connection: AgentConnection, directories: string[]): { additionalDirectories?: string[] } {
    return connection.capabilities.session.additionalDirectories && directories.length > 0 ? { additionalDirectories: directories } : {}
  }

  /** Keeps the modes, configuration options and models a session/new or load answer carried. */
  private appendSessionState(live: LiveSession, response: unknown): void {
    const r = (typeof response === 'object' && response !== null ? response : {}) as Record<string, unknown>
    const state: SessionStateRecord = { t: 'session', at: new Date().toISOString() }
    if (isModeState(r.modes)) state.modes = r.modes
    if (Array.isArray(r.configOptions)) state.configOptions = r.configOptions as SessionConfigOption[]
    if (isModelState(r.models)) state.models = r.models
    if (state.modes || state.configOptions || state.models) this.appendRecord(live, state)
  }

  // ---- agents ------------------------------------------------------------------

  private ensureAgent(definition: AgentDefinition): Promise<AgentConnection> {
    const running = this.agents.get(definition.id)
    if (running?.isAlive) return Promise.resolve(running)
    const starting = this.agentStarts.get(definition.id)
    if (starting) return starting
    if (this.closing) return Promise.reject(new Error('Switchboard is shutting down'))
    const start = this.startAgent(definition).finally(() => this.agentStarts.delete(definition.id))
    this.agentStarts.set(definition.id, start)
    return start
  }

  private async startAgent(definition: AgentDefinition): Promise<AgentConnection> {
    const secretEnv = await this.secretEnvOf(definition)
    const connection = new AgentConnection(definition, {
      logDir: join(this.options.dataDir, 'logs'),
      handlers: this.clientHandlers,
      onState: (state) => this.onAgentState(connection, state),
      clientVersion: this.options.version,
      secretEnv,
      markPrefix: markPrefixFor(this.options.dataDir),
      initializeTimeoutMs: this.options.initializeTimeoutMs,
      maxMessageBytes: this.options.maxAgentMessageBytes,
      onMessage: this.options.onAgentMessage && ((direction, message) => this.options.onAgentMessage!(definition.id, direction, message))
    })
    await connection.start()
    this.agents.set(definition.id, connection)
    return connection
  }

  /**
   * Signs in with one of the methods the agent offers. env_var methods take the
   * variables' values, which go to the secret store and into a restarted agent's
   * environment; terminal methods name the command to run.
   */
  private async authenticate(agentId: string, methodId: string, values: Record<string, string>): Promise<Record<string, never>> {
    const definition = this.requireAgent(agentId)
    let connection = await this.ensureAgent(definition)
    const method = connection.state.authMethods?.find((m) => m.id === methodId)
    if (!method) throw new Error(`${definition.name} offers no sign-in method '${methodId}'`)
    if (method.type === 'terminal') {
      // The spec: a terminal method is never passed to authenticate; the client runs it (agents.login.start).
      throw new Error(`${method.name} signs in from a terminal: start it with agents.login.start`)
    }
    if (method.type === 'env_var' || method.type === 'env') {
      const names = method.vars ?? []
      const missing = names.filter((name) => !values[name]?.trim())
      if (missing.length) throw new Error(`${method.name} needs ${missing.join(', ')}`)
      for (const name of names) await this.secrets.set(agentEnvKey(agentId, name), values[name].trim())
      definition.secretEnv = [...new Set([...(definition.secretEnv ?? []), ...names])]
      await this.saveAgents()
      // The agent reads its environment at start: restart it with the new variables.
      await connection.stop()
      connection = await this.ensureAgent(definition)
    }
    await connection.acp.authenticate({ methodId })
    return {}
  }

  /** The secret environment of an agent, from the secret store. */
  private async secretEnvOf(definition: AgentDefinition): Promise<Record<string, string>> {
    const secretEnv: Record<string, string> = {}
    for (const name of definition.secretEnv ?? []) {
      const value = await this.secrets.get(agentEnvKey(definition.id, name))
      if (value !== undefined) secretEnv[name] = value
    }
    return secretEnv
  }

  /**
   * A terminal sign-in: the agent's own command, its arguments and the
   * method's, in a pseudo-terminal the user types into. Its exit code says
   * whether it worked (loginEnded).
   */
  private async startLogin(agentId: string, methodId: string, cols: number, rows: number): Promise<{ loginId: string; command: string }> {
    const definition = this.requireAgent(agentId)
    const known = this.agentStates.get(agentId)?.authMethods
    const methods = known ?? (await this.ensureAgent(definition)).state.authMethods ?? []
    const method = methods.find((m) => m.id === methodId)
    if (!method) throw new Error(`${definition.name} offers no sign-in method '${methodId}'`)
    if (method.type !== 'terminal') throw new Error(`${method.name} is not a terminal sign-in`)
    const spec = {
      agentId,
      methodId,
      command: definition.command,
      args: [...definition.args, ...(method.args ?? [])],
      env: { ...process.env, ...definition.env, ...(await this.secretEnvOf(definition)), ...(method.env ?? {}) },
      cols,
      rows
    }
    const loginId = await this.logins.start(spec)
    return { loginId, command: commandLine(spec) }
  }

  /** A terminal sign-in ended: on success the agent restarts, since agents read their credentials at start. */
  private async loginEnded(loginId: string, agentId: string, methodId: string, exitCode: number | null, signal: number | null): Promise<void> {
    const ok = exitCode === 0
    if (ok) {
      const running = this.agents.get(agentId)
      const busy = running && [...this.live.values()].some((l) => l.connection === running && this.stateOf(l.record.id).status === 'running')
      if (running && !busy) await running.stop().catch(() => undefined)
    }
    this.events.emit('agent.login.exit', { loginId, agentId, methodId, exitCode, signal, ok })
  }

  private async logout(agentId: string): Promise<Record<string, never>> {
    const definition = this.requireAgent(agentId)
    const connection = await this.ensureAgent(definition)
    if (!connection.capabilities.auth.logout) throw new Error(`${definition.name} does not support logging out (no logout capability)`)
    await connection.acp.logout()
    for (const name of definition.secretEnv ?? []) await this.secrets.delete(agentEnvKey(agentId, name))
    if (definition.secretEnv?.length) {
      definition.secretEnv = []
      await this.saveAgents()
      await connection.stop()
    }
    return {}
  }

  private onAgentState(connection: AgentConnection, state: AgentRuntimeState): void {
    this.agentStates.set(state.agentId, state)
    this.events.emit('agent.state', state)
    if (state.status !== 'exited' && state.status !== 'stopped') return
    if (this.agents.get(state.agentId) === connection) this.agents.delete(state.agentId)
    for (const live of this.live.values()) {
      if (live.connection !== connection) continue
      this.detach(live)
      if (this.stateOf(live.record.id).status !== 'running') {
        this.setState(live.record.id, { status: 'idle', permissions: [], error: state.message })
      }
    }
  }

  private readonly clientHandlers: ClientHandlers = {
    sessionUpdate: (agentId, params) => {
      const checked = checkNotification(params)
      if (!checked) return // no sessionId: nothing to attach it to (the SDK answers the agent)
      this.clientHandlers.sessionNotification(agentId, checked)
    },
    sessionNotification: (agentId, checked) => {
      const key = acpKey(agentId, checked.sessionId)
      const live = this.byAcpSession.get(key)
      if (live) {
        this.applyUpdate(live, checked)
        return
      }
      const early = this.earlyUpdates.get(key) ?? []
      if (early.length < MAX_EARLY_UPDATES) early.push(checked)
      this.earlyUpdates.set(key, early)
      if (this.earlyUpdates.size > MAX_EARLY_SESSIONS) this.earlyUpdates.delete(this.earlyUpdates.keys().next().value!)
    },
    readTextFile: async (agentId, params: ReadTextFileRequest) => {
      const live = this.liveForAgentRequest(agentId, params.sessionId)
      const path = await this.confine(live, params.path, 'read')
      try {
        return { content: await readTextFile(path, params.line, params.limit) }
      } catch (error) {
        throw fileError(error, params.path)
      }
    },
    writeTextFile: async (agentId, params: WriteTextFileRequest) => {
      const live = this.liveForAgentRequest(agentId, params.sessionId)
      const path = await this.confine(live, params.path, 'write')
      try {
        await writeTextFile(path, params.content)
      } catch (error) {
        throw fileError(error, params.path)
      }
    },
    createTerminal: async (agentId, params) => {
      const live = this.liveForAgentRequest(agentId, params.sessionId)
      const cwd = params.cwd ? await this.confine(live, params.cwd, 'run a command in') : live.record.cwd
      const command = [params.command, ...(params.args ?? [])].join(' ')
      const at = (): string => new Date().toISOString()
      const terminalId = this.terminals.create(live.record.id, params, cwd, {
        onOutput: (id, data) => this.appendRecord(live, { t: 'terminal', at: at(), terminalId: id, data }),
        onExit: (id, exitStatus) => this.appendRecord(live, { t: 'terminal', at: at(), terminalId: id, exitStatus })
      })
      this.appendRecord(live, { t: 'terminal', at: at(), terminalId, command })
      return { terminalId }
    },
    terminalOutput: async (agentId, params) => this.terminals.output(this.ownTerminal(agentId, params)),
    waitForTerminalExit: async (agentId, params) => this.terminals.waitForExit(this.ownTerminal(agentId, params)),
    killTerminal: async (agentId, params) => this.terminals.kill(this.ownTerminal(agentId, params)),
    releaseTerminal: async (agentId, params) => this.terminals.release(this.ownTerminal(agentId, params)),
    elicit: async (agentId, params, signal) => {
      const scope = params as { sessionId?: string | null }
      const live = scope.sessionId ? this.liveForAgentRequest(agentId, scope.sessionId) : null
      try {
        return await this.elicitations.ask(agentId, live?.record.id ?? null, params, signal)
      } catch (error) {
        if (error instanceof ElicitationError) throw new RequestError(-32602, error.message)
        throw error
      }
    },
    requestPermission: (agentId, params: RequestPermissionRequest, signal) => {
      const live = this.liveForAgentRequest(agentId, params.sessionId)
      const toolKind = params.toolCall.kind ?? 'other'
      const title = params.toolCall.title ?? 'The agent asks for permission'
      const rule = this.store.data.permissionRules.find(
        (r) => r.agentId === live.record.agentId && r.projectId === live.record.projectId && r.toolKind === toolKind
      )
      const remembered = rule && optionFor(params.options, rule.decision)
      if (remembered) {
        this.appendRecord(live, permissionRecord(title, remembered, true))
        return Promise.resolve({ outcome: { outcome: 'selected', optionId: remembered.optionId } })
      }
      const requestId = randomUUID()
      return new Promise<RequestPermissionResponse>((resolvePermission) => {
        const settle = (optionId: string | null): void => {
          if (!live.permissions.delete(requestId)) return
          const waiting = this.stateOf(live.record.id).permissions ?? []
          if (waiting.some((p) => p.requestId === requestId)) {
            this.setState(live.record.id, { permissions: waiting.filter((p) => p.requestId !== requestId) })
          }
          const option = params.options.find((o) => o.optionId === optionId)
          this.appendRecord(live, permissionRecord(title, option ?? null, false))
          if (option) void this.rememberIfAlways(live.record, toolKind, option)
          resolvePermission(option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } })
        }
        live.permissions.set(requestId, { settle, optionIds: params.options.map((o) => o.optionId) })
        signal.addEventListener('abort', () => settle(null), { once: true })
        const pending = {
          requestId,
          title,
          options: params.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
          toolCallId: params.toolCall.toolCallId
        }
        this.setState(live.record.id, { permissions: [...(this.stateOf(live.record.id).permissions ?? []), pending] })
      })
    }
  }

  /** An allow_always / reject_always answer becomes a rule for this agent, project and kind of tool. */
  private async rememberIfAlways(record: SessionRecord, toolKind: string, option: PermissionOption): Promise<void> {
    const decision = alwaysDecision(option.kind)
    if (!decision) return
    const rules = this.store.data.permissionRules.filter(
      (r) => !(r.agentId === record.agentId && r.projectId === record.projectId && r.toolKind === toolKind)
    )
    rules.push({ id: randomUUID(), agentId: record.agentId, projectId: record.projectId, toolKind, decision, createdAt: new Date().toISOString() })
    this.store.data.permissionRules = rules
    await this.store.save()
    this.events.emit('permissions.changed', this.store.data.permissionRules)
  }

  private async revokePermission(ruleId: string): Promise<Record<string, never>> {
    const before = this.store.data.permissionRules.length
    this.store.data.permissionRules = this.store.data.permissionRules.filter((r) => r.id !== ruleId)
    if (this.store.data.permissionRules.length === before) throw new Error('That remembered permission no longer exists')
    await this.store.save()
    this.events.emit('permissions.changed', this.store.data.permissionRules)
    return {}
  }

  private applyUpdate(live: LiveSession, checked: CheckedNotification): void {
    const at = new Date().toISOString()
    if ('terminal' in checked) {
      // An agent-owned terminal (ACP v2): shown like the ones the client runs.
      this.appendRecord(live, { t: 'terminal', at, ...checked.terminal })
      return
    }
    if (!('update' in checked)) {
      this.appendRecord(live, { t: 'unsupported', at, raw: checked.unsupported, reason: checked.reason })
      return
    }
    const update = checked.update
    this.appendRecord(live, { t: 'update', at, update })
    if (update.sessionUpdate === 'session_info_update' && typeof update.title === 'string' && update.title.trim() && live.record.titleSource !== 'user') {
      live.record.title = update.title.trim()
      live.record.titleSource = 'agent'
      void this.store.save()
      this.events.emit('session.record', live.record)
    }
  }

  private async confine(live: LiveSession, path: string, verb: 'read' | 'write' | 'run a command in'): Promise<string> {
    try {
      return await confinePath(path, this.rootsOf(live))
    } catch (error) {
      if (!(error instanceof PathRefusedError)) throw error
      this.appendRecord(live, { t: 'error', at: new Date().toISOString(), message: `The agent asked to ${verb} a path outside the project. ${error.message}` })
      throw new RequestError(-32602, error.message)
    }
  }

  /** The terminal, if it belongs to that session: an agent cannot touch another session's commands. */
  private ownTerminal(agentId: string, params: { sessionId: string; terminalId: string }): string {
    const live = this.liveForAgentRequest(agentId, params.sessionId)
    if (!this.terminals.isOwnedBy(params.terminalId, live.record.id)) {
      throw new RequestError(-32002, `Unknown terminal '${params.terminalId}' for this session`)
    }
    return params.terminalId
  }

  /**
   * Where the agent may read, write and run commands: the session's cwd, plus its
   * additional folders when the agent was told about them.
   */
  private rootsOf(live: LiveSession): string[] {
    const extra = live.connection?.capabilities.session.additionalDirectories ? (live.record.additionalDirectories ?? []) : []
    return [live.record.cwd, ...extra]
  }

  private liveForAgentRequest(agentId: string, sessionId: string): LiveSession {
    const live = this.byAcpSession.get(acpKey(agentId, sessionId))
    if (!live) throw new RequestError(-32002, `Unknown session '${sessionId}'`)
    return live
  }

  // ---- plumbing ----------------------------------------------------------------

  private get transcriptDir(): string {
    return join(this.options.dataDir, 'transcripts')
  }

  private createWriter(record: SessionRecord): TranscriptWriter {
    return new TranscriptWriter(transcriptPath(this.transcriptDir, record.id), 0, true, (e) =>
      this.onWriteError(record.id, e)
    )
  }

  /** Forgets the session's link to its agent process; the record and transcript stay. */
  private detach(live: LiveSession): void {
    if (live.record.acpSessionId) this.byAcpSession.delete(acpKey(live.record.agentId, live.record.acpSessionId))
    this.terminals.releaseAll(live.record.id)
    live.connection = null
    for (const pending of [...live.permissions.values()]) pending.settle(null)
    this.elicitations.cancelWhere((e) => e.sessionId === live.record.id)
  }

  private register(
    record: SessionRecord,
    writer: TranscriptWriter,
    connection: AgentConnection | null,
    history: TranscriptRecord[] = []
  ): LiveSession {
    // Entries are named after their records' seqs, as the renderer and search name them (applyRecordAt);
    // the history ends just before the writer's next seq.
    const thread = createThread()
    const first = writer.nextSeq - history.length
    for (let i = 0; i < history.length; i++) applyRecordAt(thread, history[i], first + i)
    const live: LiveSession = { record, writer, thread, connection, permissions: new Map(), connecting: null }
    this.live.set(record.id, live)
    if (connection && record.acpSessionId) {
      const key = acpKey(record.agentId, record.acpSessionId)
      this.byAcpSession.set(key, live)
      for (const params of this.earlyUpdates.get(key) ?? []) this.applyUpdate(live, params)
      this.earlyUpdates.delete(key)
    }
    return live
  }

  private appendRecord(live: LiveSession, record: TranscriptRecord): void {
    applyRecordAt(live.thread, record, live.writer.nextSeq)
    const seq = live.writer.append(record)
    this.events.emit('session.records', { id: live.record.id, seq, records: [record] })
  }

  private onWriteError(id: string, error: Error): void {
    this.setState(id, { error: `Could not write the transcript: ${error.message}` })
  }

  private stateOf(id: string): SessionState {
    return this.states.get(id) ?? { id, status: 'idle' }
  }

  private setState(id: string, patch: Partial<SessionState>): void {
    const state = { ...this.stateOf(id), ...patch, id }
    this.states.set(id, state)
    this.events.emit('session.state', state)
  }

  private requireSession(id: string): SessionRecord {
    const record = this.store.session(id)
    if (!record) throw new Error(`No session with id '${id}'`)
    return record
  }

  private requireProject(id: string): Project {
    const project = this.store.data.projects.find((p) => p.id === id)
    if (!project) throw new Error(`No project with id '${id}'`)
    return project
  }

  /** A path from a session's thread, checked to be inside its folders, shown in the file manager where the shell can. */
  private async revealPath(sessionId: string, path: string): Promise<RequestResult<'files.reveal'>> {
    const record = this.requireSession(sessionId)
    const roots = [record.cwd, ...(record.additionalDirectories ?? [])]
    const real = await existingPathInside(isAbsolute(path) ? path : resolve(record.cwd, path), roots)
    if (!this.options.revealPath) return { revealed: false, path: real }
    this.options.revealPath(real)
    return { revealed: true, path: real }
  }

  private requireAgent(id: string): AgentDefinition {
    const definition = this.store.agent(id)
    if (!definition) throw new Error(`No agent with id '${id}'`)
    return definition
  }
}

/** A prompt attachment as an ACP content block, refused when the agent's prompt capabilities exclude it. */
function toContentBlock(attachment: Attachment, connection: AgentConnection): ContentBlock {
  const accepts = connection.capabilities.prompt
  const refuse = (what: string, capability: string): never => {
    throw new Error(`${connection.definition.name} does not accept ${what} in prompts (it does not announce promptCapabilities.${capability})`)
  }
  switch (attachment.type) {
    case 'resource_link':
      return { type: 'resource_link', uri: attachment.uri, name: attachment.name, mimeType: attachment.mimeType }
    case 'image':
      if (!accepts.image) refuse('images', 'image')
      return { type: 'image', data: attachment.data, mimeType: attachment.mimeType }
    case 'audio':
      if (!accepts.audio) refuse('audio', 'audio')
      return { type: 'audio', data: attachment.data, mimeType: attachment.mimeType }
    case 'resource':
      if (!accepts.embeddedContext) refuse('embedded files', 'embeddedContext')
      return { type: 'resource', resource: { uri: attachment.uri, text: attachment.text, mimeType: attachment.mimeType } }
  }
}

/** An error the renderer can act on by its code (e.g. `auth_required` leads to signing in). */
export class HostError extends Error {
  constructor(
    readonly code: HostErrorCode,
    message: string
  ) {
    super(message)
  }
}

/** The agent's message, with the details a JSON-RPC error carries (the SDK's "Internal error" alone says nothing). */
function describeError(error: unknown): string {
  const message = (error as Error)?.message ?? String(error)
  const details = (error as { data?: { details?: unknown } })?.data?.details
  return typeof details === 'string' && details && !message.includes(details) ? `${message}: ${details}` : message
}

/** ACP's auth_required (-32000), turned into an error that lists how to sign in. */
function authRequired(error: unknown, connection: AgentConnection): HostError | null {
  if (!(error instanceof RequestError) || error.code !== -32000) return null
  const methods = connection.state.authMethods ?? []
  const ways = methods.length ? ` Sign in with: ${methods.map((m) => m.name).join(', ')}.` : ''
  return new HostError('auth_required', `${connection.definition.name} needs you to sign in first (${describeError(error)}).${ways}`)
}

function notInstalledMessage(agent: AgentDefinition): string {
  const how = agent.installHint ? ` Install it with \`${agent.installHint}\`, or fix the agent's command.` : ' Install it, or fix the agent\'s command.'
  return `${agent.name}: the command '${agent.command}' was not found.${how}`
}

/** What a session record keeps of the MCP servers it started with. */
function sessionMcp(servers: AgentServers): Pick<SessionRecord, 'mcpServers' | 'mcpLeftOut'> {
  return { mcpServers: servers.given, mcpLeftOut: servers.leftOut }
}

function headerOf(record: SessionRecord): TranscriptHeader {
  return {
    t: 'header',
    v: 2,
    id: record.id,
    acpSessionId: record.acpSessionId ?? '',
    agentId: record.agentId,
    projectId: record.projectId,
    cwd: record.cwd,
    createdAt: record.createdAt
  }
}

function isModeState(value: unknown): value is SessionModeState {
  const v = value as SessionModeState
  return typeof v === 'object' && v !== null && typeof v.currentModeId === 'string' && Array.isArray(v.availableModes)
}

function isModelState(value: unknown): value is SessionModelState {
  const v = value as SessionModelState
  return typeof v === 'object' && v !== null && typeof v.currentModelId === 'string' && Array.isArray(v.availableModels)
}

function acpKey(agentId: string, sessionId: string): string {
  return `${agentId}\n${sessionId}`
}

async function assertDirectory(folder: string): Promise<void> {
  let stat
  try {
    stat = await fs.stat(folder)
  } catch {
    throw new Error(`Folder not found: ${folder}`)
  }
  if (!stat.isDirectory()) throw new Error(`Not a folder: ${folder}`)
}

function titleFrom(text: string): string {
  const firstLine = text.trim().split('\n')[0] ?? ''
  return firstLine.length > 80 ? firstLine.slice(0, 77) + '…' : firstLine || 'Untitled session'
}

function fileError(error: unknown, path: string): RequestError {
  if (error instanceof PathRefusedError) return new RequestError(-32602, error.message)
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT') return new RequestError(-32002, `File not found: ${path}`)
  if (code === 'EISDIR') return new RequestError(-32602, `Is a folder, not a file: ${path}`)
  if (code === 'EACCES' || code === 'EPERM') return new RequestError(-32603, `Permission denied: ${path}`)
  return new RequestError(-32603, `${(error as Error).message}`)
}
