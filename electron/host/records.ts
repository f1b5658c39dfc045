import type { AgentDefinition, Project, SessionRecord } from '../../shared/domain'
import type { EventBus } from './events'
import type { Store } from './store'

/**
 * The metadata every room reads and changes, with the one way to persist a
 * change and tell the windows about it: a room calls `saved(...)` after it
 * changed `store.data`, instead of pairing `store.save()` with `events.emit`
 * by hand at each call site.
 */
export class Records {
  constructor(
    readonly store: Store,
    private readonly events: EventBus
  ) {}

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
  async saved(...changed: ('projects' | 'agents' | 'permissions' | SessionRecord)[]): Promise<void> {
    await this.store.save()
    this.announce(...changed)
  }

  /** Starts the save and tells the windows at once (for changes made while an agent streams). */
  saveSoon(...changed: ('projects' | 'agents' | 'permissions' | SessionRecord)[]): void {
    void this.store.save()
    this.announce(...changed)
  }

  /** Tells the windows a session is gone. */
  announceRemoved(id: string): void {
    this.events.emit('session.removed', { id })
  }

  /** Tells the windows what changed, without waiting for the disk (the save is under way or follows). */
  announce(...changed: ('projects' | 'agents' | 'permissions' | SessionRecord)[]): void {
    for (const what of changed) {
      if (what === 'projects') this.events.emit('projects.changed', this.store.data.projects)
      else if (what === 'agents') this.events.emit('agents.changed', this.store.data.agents)
      else if (what === 'permissions') this.events.emit('permissions.changed', this.store.data.permissionRules)
      else this.events.emit('session.record', what)
    }
  }
}
