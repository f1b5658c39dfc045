import type { SessionRecord } from '../../shared/domain'
import { newerFirst, type SessionCursor, type SessionGroupCount, type SessionGroupPage } from '../../shared/session-listing'

/**
 * The sessions in the order the sidebar lists them, kept in memory: per
 * project and agent, newest first (`newerFirst`), with each session's place.
 * It follows what the windows are told (`Records.announce` and
 * `announceRemoved`): a session announced for the first time is added, one
 * whose `updatedAt` changed moves, one removed goes. So a page or the counts
 * are a slice and a length, never a sort of every record, and what a window
 * reads agrees with the events it gets.
 */

/**
 * A session in its group's order: `updatedAt` and `id` are what it was sorted
 * by (a record is changed in place before it is announced). One object per
 * session: at 100,000 sessions every allocation at start shows.
 */
interface Entry extends SessionCursor {
  group: Group
  record: SessionRecord
}

interface Group {
  projectId: string
  agentId: string
  /** Newest first. */
  entries: Entry[]
}

export class SessionListing {
  /** By project, then agent (two short keys hash faster than one joined string, 100,000 times over). */
  private readonly groups = new Map<string, Map<string, Group>>()
  /** Each session's entry, by id. */
  private readonly placed = new Map<string, Entry>()

  constructor(sessions: readonly SessionRecord[]) {
    for (const record of sessions) {
      const entry = { updatedAt: record.updatedAt, id: record.id, group: this.groupOf(record), record }
      entry.group.entries.push(entry)
      this.placed.set(record.id, entry)
    }
    for (const group of this.allGroups()) group.entries.sort(newerFirst)
  }

  /**
   * A session announced: added when new (its group's count is returned: it
   * changed), moved when its `updatedAt` changed; null when the count stays.
   */
  changed(record: SessionRecord): SessionGroupCount | null {
    const known = this.placed.get(record.id)
    if (known && known.updatedAt === record.updatedAt) {
      // Same place; a record replaced by another object (a copy) takes the old one's.
      known.record = record
      return null
    }
    if (known) this.take(known)
    const group = this.groupOf(record)
    const entry = { updatedAt: record.updatedAt, id: record.id, group, record }
    group.entries.splice(insertionPoint(group.entries, entry), 0, entry)
    this.placed.set(record.id, entry)
    return known ? null : countOf(group)
  }

  /** A session taken out: its group's new count, or null if it was not listed. */
  removed(id: string): SessionGroupCount | null {
    const entry = this.placed.get(id)
    if (!entry) return null
    this.placed.delete(id)
    return this.take(entry) ? countOf(entry.group) : null
  }

  /** The next page of a group after `before` (from its newest without one), and the group's count. */
  page(projectId: string, agentId: string, before: SessionCursor | undefined, limit: number): { sessions: SessionRecord[]; count: number } {
    const group = this.groups.get(projectId)?.get(agentId)
    if (!group) return { sessions: [], count: 0 }
    const start = before ? insertionPoint(group.entries, before, true) : 0
    return { sessions: recordsOf(group.entries.slice(start, start + limit)), count: group.entries.length }
  }

  /** Every group that has sessions, with its count and its newest `limit`. */
  summary(limit: number): SessionGroupPage[] {
    return [...this.allGroups()].map((g) => ({
      projectId: g.projectId,
      agentId: g.agentId,
      count: g.entries.length,
      sessions: recordsOf(g.entries.slice(0, limit))
    }))
  }

  /** The records of these ids that are listed (a session removed is left out). */
  get(ids: readonly string[]): SessionRecord[] {
    return [...new Set(ids)].flatMap((id) => this.placed.get(id)?.record ?? [])
  }

  /** How many sessions are listed in all. */
  get size(): number {
    return this.placed.size
  }

  private groupOf(record: SessionRecord): Group {
    let agents = this.groups.get(record.projectId)
    if (!agents) this.groups.set(record.projectId, (agents = new Map<string, Group>()))
    let group = agents.get(record.agentId)
    if (!group) agents.set(record.agentId, (group = { projectId: record.projectId, agentId: record.agentId, entries: [] }))
    return group
  }

  private *allGroups(): Iterable<Group> {
    for (const agents of this.groups.values()) yield* agents.values()
  }

  /** Takes a session out of its group's order; false if it was not found there. An empty group goes. */
  private take(entry: Entry): boolean {
    const entries = entry.group.entries
    const index = entries.indexOf(entry, insertionPoint(entries, entry))
    if (index < 0) return false
    entries.splice(index, 1)
    if (entries.length === 0) this.groups.get(entry.group.projectId)?.delete(entry.group.agentId)
    return true
  }
}

function recordsOf(entries: Entry[]): SessionRecord[] {
  return entries.map((e) => e.record)
}

function countOf(group: Group): SessionGroupCount {
  return { projectId: group.projectId, agentId: group.agentId, count: group.entries.length }
}

/**
 * Where `at` goes in a newest-first list (a binary search on what each entry
 * was sorted by): before the first entry not newer than it, or, with `after`,
 * past an equal one too.
 */
function insertionPoint(entries: Entry[], at: SessionCursor, after = false): number {
  let low = 0
  let high = entries.length
  while (low < high) {
    const mid = (low + high) >>> 1
    const order = newerFirst(entries[mid], at)
    if (order < 0 || (after && order === 0)) low = mid + 1
    else high = mid
  }
  return low
}
