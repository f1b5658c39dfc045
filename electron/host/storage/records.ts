import type { PermissionRule, Project, SessionRecord } from '../../../shared/domain'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { McpProfile } from '../../../shared/mcp'
import type { SessionPreset } from '../../../shared/presets'
import type { EventBus } from '../contract/events'
import { SessionListing } from './session-listing'
import type { DbData, HostSettings, Store } from './store'

/**
 * A record as every room but this one sees it: its fields read-only, so setting one elsewhere does not compile.
 * (Read-only one level down: a record still passes where the plain type is asked for, as the rooms below ask.)
 */
export type Saved<T> = Readonly<T>

/** db.json's data as every room but this one sees it: read-only lists of read-only records. */
export type SavedData = { readonly [K in keyof DbData]: DbData[K] extends (infer U)[] ? readonly Saved<U>[] : Readonly<DbData[K]> }

/** A change to a session's record: the fields it sets (undefined: the field goes). */
export type SessionPatch = { [K in Exclude<keyof SessionRecord, 'id'>]?: SessionRecord[K] | undefined }

/**
 * The metadata every room reads (db.json through the Store), and the only way
 * to change it: each update names what it does, changes the data, saves it
 * and tells the windows in one step, so no room saves without announcing or
 * announces what it forgot to save. `data` and every record handed out are
 * `Saved<…>`: read-only to the type checker, so a room that writes one fails
 * to compile. A session's record stays the same object across its updates
 * (a live session holds it), changed here only.
 */
export class Records {
  /** The sessions in the sidebar's order, kept in step by the updates below (`sessions.page|summary|get` read it). */
  listing: SessionListing

  constructor(
    private readonly store: Store,
    private readonly events: EventBus
  ) {
    this.listing = new SessionListing(store.data.sessions, store.firstCounts ?? undefined)
    // Before the request that asked for the rest is answered: this reaction is queued as the rest comes in, ahead of `whole()`'s.
    if (!store.isWhole) void store.wholeRead.then(() => this.relist())
  }

  get data(): SavedData {
    return this.store.data
  }

  project(id: string): Saved<Project> {
    const project = this.store.project(id)
    if (!project) throw new Error(`No project with id '${id}'`)
    return project
  }

  agent(id: string): Saved<AgentDefinition> {
    const definition = this.store.agent(id)
    if (!definition) throw new Error(`No agent with id '${id}'`)
    return definition
  }

  session(id: string): Saved<SessionRecord> {
    const record = this.store.session(id)
    if (!record) throw new Error(`No session with id '${id}'`)
    return record
  }

  findProject(id: string): Saved<Project> | undefined {
    return this.store.project(id)
  }

  findAgent(id: string): Saved<AgentDefinition> | undefined {
    return this.store.agent(id)
  }

  findSession(id: string): Saved<SessionRecord> | undefined {
    return this.store.session(id)
  }

  // Projects

  async addProject(project: Project): Promise<void> {
    this.store.data.projects.push(project)
    await this.saveAnd('projects')
  }

  async updateProject(id: string, patch: Partial<Omit<Project, 'id'>>): Promise<Saved<Project>> {
    const project = this.mutableProject(id)
    assign(project, patch)
    await this.saveAnd('projects')
    return project
  }

  /** The projects in this order (every one of them, each once). */
  async orderProjects(ids: readonly string[]): Promise<void> {
    const byId = new Map(this.store.data.projects.map((p) => [p.id, p]))
    this.store.data.projects = ids.map((id) => byId.get(id)).filter((p): p is Project => p !== undefined)
    await this.saveAnd('projects')
  }

  /** A project forgotten, with the permissions remembered for it (its sessions are removed before, one by one). */
  async removeProject(id: string): Promise<void> {
    const data = this.store.data
    data.projects = data.projects.filter((p) => p.id !== id)
    data.permissionRules = data.permissionRules.filter((r) => r.projectId !== id)
    await this.saveAnd('projects', 'permissions')
  }

  // Agents

  async addAgent(definition: AgentDefinition): Promise<void> {
    this.store.data.agents.push(definition)
    await this.saveAnd('agents')
  }

  /** An agent's definition replaced by a new one (the same id). */
  async replaceAgent(definition: AgentDefinition): Promise<void> {
    this.mutableAgent(definition.id)
    this.store.data.agents = this.store.data.agents.map((a) => (a.id === definition.id ? definition : a))
    await this.saveAnd('agents')
  }

  async updateAgent(id: string, patch: Partial<Omit<AgentDefinition, 'id'>>): Promise<Saved<AgentDefinition>> {
    const definition = this.mutableAgent(id)
    assign(definition, patch)
    await this.saveAnd('agents')
    return definition
  }

  /** An agent forgotten, with the permissions remembered for it. */
  async removeAgent(id: string): Promise<void> {
    const data = this.store.data
    data.agents = data.agents.filter((a) => a.id !== id)
    const rules = data.permissionRules.filter((r) => r.agentId !== id)
    const rulesChanged = rules.length !== data.permissionRules.length
    data.permissionRules = rules
    await this.saveAnd(...(rulesChanged ? (['agents', 'permissions'] as const) : (['agents'] as const)))
  }

  // Everything else the windows are told of as a whole list

  /** The remembered permission answers, all of them. */
  async setRules(rules: readonly PermissionRule[]): Promise<void> {
    this.store.data.permissionRules = [...rules]
    await this.saveAnd('permissions')
  }

  async setPresets(presets: readonly SessionPreset[]): Promise<void> {
    this.store.data.presets = [...presets]
    await this.saveAnd('presets')
  }

  /** The Host's settings (nothing to announce: the rooms that use them read them when they need them). */
  async setSettings(settings: HostSettings): Promise<void> {
    this.store.data.settings = settings
    await this.store.save()
  }

  /** MCP profiles and which are switched off per project (the MCP room tells the windows itself: what it shows needs the secret store). */
  async setMcp(change: { profiles?: readonly McpProfile[]; disabled?: Readonly<Record<string, readonly string[]>> }): Promise<void> {
    const data = this.store.data
    if (change.profiles) data.mcpProfiles = [...change.profiles]
    if (change.disabled) data.mcpDisabled = Object.fromEntries(Object.entries(change.disabled).map(([id, off]) => [id, [...off]]))
    await this.store.save()
  }

  // Sessions

  /** New sessions (made here, imported from an agent's list); resolves once saved. */
  async addSessions(...records: SessionRecord[]): Promise<void> {
    this.store.data.sessions.push(...records)
    await this.store.save()
    for (const record of records) this.told(record)
  }

  /**
   * Changes a session's record (by id, or the record a live session holds), saves it and tells the windows;
   * resolves once it is on the disk. A record not among the saved ones is only changed: one being made is
   * saved as it is added (addSessions), one removed meanwhile is never brought back by a late change.
   */
  async updateSession(which: string | Saved<SessionRecord>, patch: SessionPatch): Promise<void> {
    const record = this.change(which, patch)
    if (!record) return
    await this.store.save()
    this.told(record)
  }

  /** Changes a session's record and tells the windows at once, the save under way (for changes made while an agent streams). */
  updateSessionSoon(which: string | Saved<SessionRecord>, patch: SessionPatch): void {
    const record = this.change(which, patch)
    if (!record) return
    void this.store.save()
    this.told(record)
  }

  /**
   * Changes a session's record without telling the windows, kept with the next save (`save()`, or any update's):
   * for what the Host keeps for itself (a turn under way), and at its start and close, where there is no window to
   * tell and a save of its own would come too early (it would read all of db.json before the first screen).
   * Returns whether there was such a session.
   */
  noteSession(id: string, patch: SessionPatch): boolean {
    if (this.change(id, patch) === null) return false
    this.store.noteChanged()
    return true
  }

  /** A session forgotten: saved, then the windows told it is gone and how many its group has left. */
  async removeSession(id: string): Promise<Saved<SessionRecord> | undefined> {
    const record = this.store.session(id)
    this.store.data.sessions = this.store.data.sessions.filter((s) => s.id !== id)
    await this.store.save()
    const count = this.listing.removed(id, record)
    this.events.emit('session.removed', { id })
    if (count) this.events.emit('sessions.count', count)
    return record
  }

  /** Tells the windows a session's record again, unchanged (a window that showed it stale). */
  announceSession(record: Saved<SessionRecord>): void {
    this.told(record)
  }

  /** Persists what is pending (the inbox's notes). */
  save(): Promise<void> {
    return this.store.save()
  }

  /**
   * The record changed in place, the listing kept in step (a record whose `updatedAt` changes moves); null when
   * it is not among the saved ones (a record object given is still changed: one being made keeps the change).
   */
  private change(which: string | Saved<SessionRecord>, patch: SessionPatch): SessionRecord | null {
    const id = typeof which === 'string' ? which : which.id
    const record = this.store.session(id)
    if (!record || (typeof which !== 'string' && which !== record)) {
      if (typeof which !== 'string') assign(which as SessionRecord, patch)
      return null
    }
    if (patch.updatedAt !== undefined && patch.updatedAt !== record.updatedAt) this.listing.moving(record, () => assign(record, patch))
    else assign(record, patch)
    return record
  }

  /** The windows told of a session's record (new, or changed), and of its group's count when it is new. */
  private told(record: SessionRecord): void {
    const count = this.listing.changed(record)
    this.events.emit('session.record', record)
    if (count) this.events.emit('sessions.count', count)
  }

  private async saveAnd(...lists: ('projects' | 'agents' | 'permissions' | 'presets')[]): Promise<void> {
    await this.store.save()
    const data = this.store.data
    for (const list of lists) {
      if (list === 'projects') this.events.emit('projects.changed', data.projects)
      else if (list === 'agents') this.events.emit('agents.changed', data.agents)
      else if (list === 'permissions') this.events.emit('permissions.changed', data.permissionRules)
      else this.events.emit('presets.changed', data.presets ?? [])
    }
  }

  private mutableProject(id: string): Project {
    const project = this.store.project(id)
    if (!project) throw new Error(`No project with id '${id}'`)
    return project
  }

  private mutableAgent(id: string): AgentDefinition {
    const definition = this.store.agent(id)
    if (!definition) throw new Error(`No agent with id '${id}'`)
    return definition
  }

  /**
   * Lists every record once the store has read them all; a group whose count
   * differs from what the first part said (a file changed by hand) is told to
   * the windows.
   */
  private relist(): void {
    const before = new Map(this.listing.counts().map((c) => [`${c.projectId}\n${c.agentId}`, c.count]))
    this.listing = new SessionListing(this.store.data.sessions)
    for (const count of this.listing.counts()) {
      if (before.get(`${count.projectId}\n${count.agentId}`) !== count.count) this.events.emit('sessions.count', count)
    }
  }
}

/** Sets each field of `patch` on `target`; a field set to undefined goes (db.json keeps no empty keys). */
function assign<T extends object>(target: T, patch: Partial<T>): void {
  for (const [key, value] of Object.entries(patch) as [keyof T, T[keyof T] | undefined][]) {
    if (value === undefined) delete target[key]
    else target[key] = value
  }
}
