import type { RequestMethod } from '../../../shared/contract'
import { FIRST_PAGE } from '../../../shared/session-listing'

/**
 * What the Host answers before it has read every session record (Store.whole):
 * the window's first load (renderer/src/first-load.ts), which reads only
 * records db.json's first part holds (each group's newest page, the unseen,
 * the queued) and each group's count. Any other request waits for the rest,
 * read at the first such request, or READ_REST_AFTER_MS after the open.
 */
const ANSWERED_FROM_FIRST_PART = new Set<RequestMethod>([
  'app.info',
  'app.firstScreen',
  'projects.list',
  'sessions.states',
  'agents.list',
  'agents.states',
  'permissions.list',
  'elicitations.list',
  'agents.checks',
  'mcp.list',
  'inbox.list',
  'settings.get'
])
export const READ_REST_AFTER_MS = 1_000

export function answeredFromFirstPart(method: RequestMethod, params: unknown): boolean {
  if (method === 'sessions.summary') return (params as { limit: number }).limit <= FIRST_PAGE
  return ANSWERED_FROM_FIRST_PART.has(method)
}
