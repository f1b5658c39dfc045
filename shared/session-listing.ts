import type { SessionRecord } from './domain'

/**
 * The sidebar's listing, in pages: sessions are grouped by project and agent,
 * newest first, and a window holds only the newest page of each group with the
 * group's count, loading more on demand (`sessions.summary`, `sessions.page`,
 * the `sessions.count` event). The Host and the window order sessions the same
 * way, with `newerFirst`, so a page picks up exactly where the one before ended.
 */

/** Where a page starts: after this session in the group's order (the last one the window has). */
export interface SessionCursor {
  updatedAt: string
  id: string
}

/** One project's sessions with one agent: how many there are, and the newest of them. */
export interface SessionGroupPage {
  projectId: string
  agentId: string
  count: number
  /**
   * Newest first; at most the `limit` asked for. Empty while `count` is not
   * when the summary's `records` were given before this group: its first
   * page is then asked for with `sessions.page`.
   */
  sessions: SessionRecord[]
}

/** A group's count after a session was added to it or taken out of it (the `sessions.count` event). */
export interface SessionGroupCount {
  projectId: string
  agentId: string
  count: number
}

/** How many sessions of each group the sidebar shows first, and how many more "Show more" loads. */
export const FIRST_PAGE = 8
export const NEXT_PAGE = 50
/**
 * How many records the window's first load asks for in all (`sessions.summary`'s
 * `records`): the first pages of the first projects, a few screens of the
 * sidebar; the other groups come with their count only, and their first page
 * is asked for as they scroll into view. So the first load weighs the same
 * with 50 projects as with one.
 */
export const FIRST_RECORDS = 120

/** Newest first by `updatedAt` (a turn's end), then by id, so that no two sessions tie. */
export function newerFirst(a: SessionCursor, b: SessionCursor): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt ? -1 : 1
  return a.id === b.id ? 0 : a.id > b.id ? -1 : 1
}

/** A project's groups in the sidebar's order, by each one's newest session: the newest first, a group with none last. */
export function newestGroupFirst(a: SessionCursor | undefined, b: SessionCursor | undefined): number {
  return a && b ? newerFirst(a, b) : a ? -1 : b ? 1 : 0
}

/** The key of a project's group of one agent's sessions. */
export function groupKey(projectId: string, agentId: string): string {
  return `${projectId}\u0000${agentId}`
}
