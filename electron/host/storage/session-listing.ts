import type { SessionRecord } from '../../../shared/domain'
import { newerFirst, newestGroupFirst, type SessionCursor, type SessionGroupCount, type SessionGroupPage } from '../../../shared/session-listing'

/**
 * The sessions in the order the sidebar lists them, kept in memory: per
 * project and agent, newest first (`newerFirst`). Records keeps it in step as
 * it changes them (the only place they change): a session added comes in, one
 * whose `updatedAt` changed moves, one removed goes. So a page or the counts
 * are a slice and a length, never a sort of every record, and what a window
 * reads agrees with the events it gets.
 *
 * Built as the Host opens, so it allocates next to nothing per session: one
 * array per group, of the records themselves. A session is found by a binary
 * search on them, else by its id within its group.
 */

interface Group {
  projectId: string
  agentId: string
  /** Newest first. */
  records: SessionRecord[]
  /** While only the first part of db.json is read: how many the group has in all (`records` are its newest). */
  total?: number
}

export class SessionListing {
  /** By project, then agent (two short keys hash faster than one joined string, 100,000 times over). */
  private readonly groups = new Map<string, Map<string, Group>>()

  /**
   * `counts`: while only db.json's first part is read (Store.firstCounts), each
   * group's count, in the order of its first record in the file; `sessions`
   * then holds each group's newest page.
   */
  constructor(sessions: readonly SessionRecord[], counts?: readonly [projectId: string, agentId: string, count: number][]) {
    for (const [projectId, agentId, count] of counts ?? []) this.groupOf({ projectId, agentId }).total = count
    for (const record of sessions) this.groupOf(record).records.push(record)
    for (const group of this.allGroups()) group.records.sort(newerFirst)
  }

  /**
   * A session added or changed: added when new (its group's count is returned:
   * it changed), moved when found out of its place; null when the count stays.
   */
  changed(record: SessionRecord): SessionGroupCount | null {
    const group = this.groupOf(record)
    const at = insertionPoint(group, record)
    if (group.records[at]?.id === record.id) {
      // In its place; a record replaced by another object (a copy) takes the old one's.
      group.records[at] = record
      return null
    }
    const index = group.records.findIndex((r) => r.id === record.id)
    if (index >= 0) group.records.splice(index, 1)
    group.records.splice(insertionPoint(group, record), 0, record)
    return index >= 0 ? null : countOf(group)
  }

  /**
   * A session's `updatedAt` changes: `change` is made while it is out of the
   * listing and it goes back where it now belongs (its group's count stays).
   */
  moving(record: SessionRecord, change: () => void): void {
    const group = this.groupOf(record)
    const index = indexOf(group, record)
    if (index >= 0) group.records.splice(index, 1)
    change()
    if (index >= 0) group.records.splice(insertionPoint(group, record), 0, record)
  }

  /** A session taken out (`record`: as it was, to find its group at once): its group's new count, or null if it was not listed. */
  removed(id: string, record?: SessionRecord): SessionGroupCount | null {
    const groups = record ? [this.groups.get(record.projectId)?.get(record.agentId)] : this.allGroups()
    for (const group of groups) {
      const index = group ? indexOf(group, record ?? { id, updatedAt: '' }) : -1
      if (!group || index < 0) continue
      group.records.splice(index, 1)
      if (group.records.length === 0) this.groups.get(group.projectId)?.delete(group.agentId)
      return countOf(group)
    }
    return null
  }

  /** The next page of a group after `before` (from its newest without one), and the group's count. */
  page(projectId: string, agentId: string, before: SessionCursor | undefined, limit: number): { sessions: SessionRecord[]; count: number } {
    const group = this.groups.get(projectId)?.get(agentId)
    if (!group) return { sessions: [], count: 0 }
    const start = before ? insertionPoint(group, before, true) : 0
    return { sessions: group.records.slice(start, start + limit), count: countOf(group).count }
  }

  /**
   * Every group that has sessions, with its count and its newest `limit`;
   * with `records`, pages until that many records are given (the last one
   * whole, so no group shows part of its first page), to the groups of the
   * projects in `projectOrder` (the sidebar's order) first: groups past it
   * get their count and no records.
   */
  summary(limit: number, records = Infinity, projectOrder: readonly string[] = []): SessionGroupPage[] {
    let left = records
    const page = (g: Group): SessionGroupPage => {
      const sessions = left > 0 ? g.records.slice(0, limit) : []
      left -= sessions.length
      return { projectId: g.projectId, agentId: g.agentId, count: countOf(g).count, sessions }
    }
    const pages: SessionGroupPage[] = []
    const listed = new Set<string>()
    for (const projectId of projectOrder) {
      const agents = this.groups.get(projectId)
      if (!agents || listed.has(projectId)) continue
      listed.add(projectId)
      // Within a project, its agents' groups in the sidebar's order: the one with the newest session first.
      for (const g of [...agents.values()].sort((a, b) => newestGroupFirst(a.records[0], b.records[0]))) pages.push(page(g))
    }
    for (const [projectId, agents] of this.groups) if (!listed.has(projectId)) for (const g of agents.values()) pages.push(page(g))
    return pages
  }

  /** The records of these ids that are listed (a session removed is left out): one pass over them all. */
  get(ids: readonly string[]): SessionRecord[] {
    const wanted = new Set(ids)
    const found: SessionRecord[] = []
    for (const group of this.allGroups()) {
      for (const record of group.records) {
        if (!wanted.has(record.id)) continue
        found.push(record)
        wanted.delete(record.id)
        if (wanted.size === 0) return found
      }
    }
    return found
  }

  /** Each group's count (`sessions.count`'s), to tell the windows what changed when the whole file is read. */
  counts(): SessionGroupCount[] {
    return [...this.allGroups()].map(countOf)
  }

  private groupOf(record: Pick<SessionRecord, 'projectId' | 'agentId'>): Group {
    let agents = this.groups.get(record.projectId)
    if (!agents) this.groups.set(record.projectId, (agents = new Map<string, Group>()))
    let group = agents.get(record.agentId)
    if (!group) agents.set(record.agentId, (group = { projectId: record.projectId, agentId: record.agentId, records: [] }))
    return group
  }

  private *allGroups(): Iterable<Group> {
    for (const agents of this.groups.values()) yield* agents.values()
  }
}

function countOf(group: Group): SessionGroupCount {
  return { projectId: group.projectId, agentId: group.agentId, count: group.total ?? group.records.length }
}

/** Where a session is in its group: at its place when it is in order, else found by id; -1 if not there. */
function indexOf(group: Group, record: SessionCursor): number {
  const at = insertionPoint(group, record)
  if (group.records[at]?.id === record.id) return at
  return group.records.findIndex((r) => r.id === record.id)
}

/**
 * Where `cursor` goes in a group, newest first (a binary search): before the first one not newer than it, or, with
 * `after`, past an equal one too.
 */
function insertionPoint(group: Group, cursor: SessionCursor, after = false): number {
  let low = 0
  let high = group.records.length
  while (low < high) {
    const mid = (low + high) >>> 1
    const order = newerFirst(group.records[mid], cursor)
    if (order < 0 || (after && order === 0)) low = mid + 1
    else high = mid
  }
  return low
}
