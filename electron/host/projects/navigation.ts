import { resolve } from 'node:path'
import type { Navigation, NavigationTarget } from '../../../shared/navigation'
import type { EventBus } from '../contract/events'
import type { Records } from '../storage/records'

/**
 * `app.navigate`: the windows are told to show a session or a project, which
 * must exist (a link or `switchboard open` for one that does not is refused
 * with what to do). Navigation only: nothing is added, started or changed.
 */
export function navigate(records: Records, events: EventBus, target: NavigationTarget): Navigation {
  const navigation = navigationOf(records, target)
  events.emit('app.navigate', navigation)
  return navigation
}

function navigationOf(records: Records, target: NavigationTarget): Navigation {
  if (target.kind === 'session') {
    if (!records.data.sessions.some((session) => session.id === target.id)) {
      throw new Error(`No session '${target.id}' in Switchboard (switchboard ls lists them)`)
    }
    return { kind: 'session', id: target.id }
  }
  const path = resolve(target.path)
  const project = records.data.projects.find((p) => !p.sshHost && p.cwd === path)
  if (!project) throw new Error(`${path} is not a project in Switchboard: add it first (switchboard ${path}, or in the window)`)
  return { kind: 'project', id: project.id }
}
