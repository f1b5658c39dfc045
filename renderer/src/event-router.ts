import type { HostEvent } from '../../shared/contract'
import type { SessionState } from '../../shared/domain'
import { runAppCommand, runNavigation } from './commands'
import { host, messageOf } from './host/client'
import { useAgentsStore } from './stores/agents'
import { useElicitationsStore } from './stores/elicitations'
import { useInboxStore } from './stores/inbox'
import { useLoginStore } from './stores/login'
import { useMcpStore } from './stores/mcp'
import { useNoticesStore } from './stores/notices'
import { usePermissionsStore } from './stores/permissions'
import { usePresetsStore } from './stores/presets'
import { useProjectsStore } from './stores/projects'
import { useRegistryStore } from './stores/registry'
import { useSessionsStore } from './stores/sessions'
import { useSettingsStore } from './stores/settings'
import { useRacesStore } from './stores/races'
import { useSpendStore } from './stores/spend'
import { useThreadsStore } from './stores/threads'
import { useUpdatesStore } from './stores/updates'

/**
 * The Host's events to the stores (those kept meanwhile first, `holdEvents`), from now on: the window calls this
 * after its own listeners (desktop.ts) are in place, so they hear each batch before the stores apply it.
 */
export function listenToHost(): void {
  host().onBatch((events) => routeEvents(events))
  host().releaseEvents()
}

/** A new status, or a question asked or answered: the thread is brought up to the state first (threads.catchUp). */
function changesWhatIsShown(before: SessionState | undefined, after: SessionState): boolean {
  return before?.status !== after.status || (before?.permissions?.length ?? 0) !== (after.permissions?.length ?? 0)
}

/**
 * The one place Host events go to the stores, above them all: each event to
 * the store that owns what it changes. No store imports this module (the
 * window wires it, open-window.ts; ESLint holds the stores to it), so the
 * stores form no circle through it. A batch is applied in one synchronous
 * pass, so it costs one render.
 */
export function routeEvents(events: HostEvent[]): void {
  const projects = useProjectsStore()
  const agents = useAgentsStore()
  const sessions = useSessionsStore()
  const threads = useThreadsStore()
  for (const event of events) {
    try {
      switch (event.type) {
        case 'session.records':
          threads.receiveRecords(event.payload.id, event.payload.seq, event.payload.records)
          break
        case 'session.state':
          if (changesWhatIsShown(sessions.states[event.payload.id], event.payload)) threads.catchUp(event.payload.id)
          sessions.receiveState(event.payload)
          break
        case 'session.record':
          projects.upsertSession(event.payload)
          break
        case 'sessions.count':
          projects.receiveCount(event.payload)
          break
        case 'session.removed': {
          const record = projects.sessionById(event.payload.id)
          projects.removeSession(event.payload.id)
          sessions.forget(event.payload.id, record)
          break
        }
        case 'agent.state':
          agents.receiveState(event.payload)
          break
        case 'projects.changed':
          projects.projects = event.payload
          break
        case 'permissions.changed':
          usePermissionsStore().rules = event.payload
          break
        case 'elicitations.changed':
          useElicitationsStore().pending = event.payload
          break
        case 'agents.changed':
          agents.receiveDefinitions(event.payload)
          break
        case 'presets.changed':
          usePresetsStore().receive(event.payload)
          break
        case 'agents.checked':
          agents.receiveCheck(event.payload)
          break
        case 'mcp.changed':
          useMcpStore().receive(event.payload)
          break
        case 'registry.progress':
          useRegistryStore().receiveProgress(event.payload)
          break
        case 'settings.changed':
          useSettingsStore().receive(event.payload)
          break
        case 'inbox.changed':
          useInboxStore().receive(event.payload)
          break
        case 'agent.login.output':
        case 'agent.login.exit':
          useLoginStore().receive(event)
          break
        case 'spend.changed':
          useSpendStore().receiveChanged()
          break
        case 'race.changed':
          useRacesStore().receive(event.payload)
          break
        case 'updates.changed':
          useUpdatesStore().receive(event.payload)
          break
        case 'app.command':
          runAppCommand(event.payload.command)
          break
        case 'app.navigate':
          runNavigation(event.payload)
          break
        case 'app.warning':
          // A room of the Host had an internal error and was reset (the message says how): the Host goes on.
          useNoticesStore().report(event.payload.message)
          break
      }
    } catch (error) {
      console.error('Could not apply an event from the host', event, error)
      useNoticesStore().report(`Could not apply an update from the host (${event.type}): ${messageOf(error)}`)
    }
  }
}
