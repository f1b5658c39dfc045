import type { Project, SessionRecord } from '../../shared/domain'
import type { AgentDefinition } from '../../shared/agent-definition'
import type { EventBus } from './events'
import { SessionListing } from './session-listing'
import type { Store } from './store'

/** The lists a change is announced for as a whole. */
type Announced = 'projects' | 'agents' | 'permissions' | 'presets'

/**
 * The metadata every room reads and changes, with the one way to persist a
 * change and tell the windows about it: a room calls `saved(...)` after it
 * changed `store.data`, instead of pairing `store.save()` with `events.emit`
 * by hand at each call site.
 */
export class Records {
  /** The sessions in the sidebar's order, following what is announced (`sessions.page|summary|get` read it). */
  listing: SessionListing

  constructor(
    readonly store: Store,
    private readonly events: EventBus
  ) {
    this.listing = new SessionListing(store.data.sessions, store.firstCounts ?? undefined)
    store.onWhole = () => this.relist()
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

  get data(): Store['data'] {
    return this.store.data
  }

  project(id: string): Project {
    const project = this.store.project(id)
    if (!project) throw new Error(`No project with id '${id}'`)
    return project
  }

  agent(id: string): AgentDefinition {
    const definition = this.store.agent(id)
    if (!definition) throw new Error(`No agent with id '${id}'`)
    return definition
  }

  session(id: string): SessionRecord {
    const record = this.store.session(id)
    if (!record) throw new Error(`No session with id '${id}'`)
    return record
  }

  /** Persists, then tells the windows what changed. */
  async saved(...changed: (Announced | SessionRecord)[]): Promise<void> {
    await this.store.save()
    this.announce(...changed)
  }

  /** Starts the save and tells the windows at once (for changes made while an agent streams). */
  saveSoon(...changed: (Announced | SessionRecord)[]): void {
    void this.store.save()
    this.announce(...changed)
  }

  /** Tells the windows a session is gone (`record`: as it was), and how many its group has left. */
  announceRemoved(id: string, record?: SessionRecord): void {
    const count = this.listing.removed(id, record)
    this.events.emit('session.removed', { id })
    if (count) this.events.emit('sessions.count', count)
  }

  /** Tells the windows what changed, without waiting for the disk (the save is under way or follows). */
  announce(...changed: (Announced | SessionRecord)[]): void {
    for (const what of changed) {
      if (what === 'projects') this.events.emit('projects.changed', this.store.data.projects)
      else if (what === 'agents') this.events.emit('agents.changed', this.store.data.agents)
      else if (what === 'permissions') this.events.emit('permissions.changed', this.store.data.permissionRules)
      else if (what === 'presets') this.events.emit('presets.changed', this.store.data.presets ?? [])
      else {
        const count = this.listing.changed(what)
        this.events.emit('session.record', what)
        if (count) this.events.emit('sessions.count', count)
      }
    }
  }
}
