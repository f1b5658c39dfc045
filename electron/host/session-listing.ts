import type { SessionRecord } from '../../shared/domain'
import { groupKey, newerFirst, type SessionCursor, type SessionGroupCount, type SessionGroupPage } from '../../shared/session-listing'

/**
 * The sessions in the order the sidebar lists them, kept in memory: per
 * project and agent, newest first (`newerFirst`), with each session's place.
 * It follows what the windows are told (`Records.announce` and
 * `announceRemoved`): a session announced for the first time is added, one
 * whose `updatedAt` changed moves, one removed goes. So a page or the counts
 * are a slice and a length, never a sort of every record, and what a window
 * reads agrees with the events it gets.
 */

/** A session in its group's order: `at` is what it was sorted by (a record is changed in place before it is announced). */
interface Entry {
  at: SessionCursor
  record: SessionRecord
}

interface Group {
  projectId: string
  agentId: string
  /** Newest first. */
  entries: Entry[]
}

export class SessionListing {
  private readonly groups = new Map<string, Group>()
  /** Each session's group and entry, by id. */
  private readonly placed = new Map<string, { key: string; entry: Entry }>()

  constructor(sessions: readonly SessionRecord[]) {
    for (const record of sessions) {
      const key = groupKey(record.projectId, record.agentId)
      const entry = { at: cursorOf(record), record }
      this.groupOf(key, record).entries.push(entry)
      this.placed.set(record.id, { key, entry })
    }
    for (const group of this.groups.values()) group.entries.sort((a, b) => newerFirst(a.at, b.at))
  }

  /**
   * A session announced: added when new (its group's count is returned: it
   * changed), moved when its `updatedAt` changed; null when the count stays.
   */
  changed(record: SessionRecord): SessionGroupCount | null {
    const place = this.placed.get(record.id)
    if (place && place.entry.at.updatedAt === record.updatedAt) {
      // Same place; a record replaced by another object (a copy) takes the old one's.
      place.entry.record = record
      return null
    }
    if (place) this.take(place)
    const key = groupKey(record.projectId, record.agentId)
    const group = this.groupOf(key, record)
    const entry = { at: cursorOf(record), record }
    group.entries.splice(insertionPoint(group.entries, entry.at), 0, entry)
    this.placed.set(record.id, { key, entry })
    return place ? null : countOf(group)
  }

  /** A session taken out: its group's new count, or null if it was not listed. */
  removed(id: string): SessionGroupCount | null {
    const place = this.placed.get(id)
    if (!place) return null
    this.placed.delete(id)
    const group = this.take(place)
    return group ? countOf(group) : null
  }

  /** The next page of a group after `before` (from its newest without one), and the group's count. */
  page(projectId: string, agentId: string, before: SessionCursor | undefined, limit: number): { sessions: SessionRecord[]; count: number } {
    const group = this.groups.get(groupKey(projectId, agentId))
    if (!group) return { sessions: [], count: 0 }
    const start = before ? insertionPoint(group.entries, before, true) : 0
    return { sessions: recordsOf(group.entries.slice(start, start + limit)), count: group.entries.length }
  }

  /** Every group that has sessions, with its count and its newest `limit`. */
  summary(limit: number): SessionGroupPage[] {
    return [...this.groups.values()].map((g) => ({
      projectId: g.projectId,
      agentId: g.agentId,
      count: g.entries.length,
      sessions: recordsOf(g.entries.slice(0, limit))
    }))
  }

  /** The records of these ids that are listed (a session removed is left out). */
  get(ids: readonly string[]): SessionRecord[] {
    return [...new Set(ids)].flatMap((id) => this.placed.get(id)?.entry.record ?? [])
  }

  /** How many sessions are listed in all. */
  get size(): number {
    return this.placed.size
  }

  private groupOf(key: string, record: SessionRecord): Group {
    let group = this.groups.get(key)
    if (!group) {
      group = { projectId: record.projectId, agentId: record.agentId, entries: [] }
      this.groups.set(key, group)
    }
    return group
  }

  /** Takes a session out of its group's order; the group, or null if it was not found there. An empty group goes. */
  private take(place: { key: string; entry: Entry }): Group | null {
    const group = this.groups.get(place.key)
    const index = group ? group.entries.indexOf(place.entry, insertionPoint(group.entries, place.entry.at)) : -1
    if (!group || index < 0) return null
    group.entries.splice(index, 1)
    if (group.entries.length === 0) this.groups.delete(place.key)
    return group
  }
}

function cursorOf(record: SessionRecord): SessionCursor {
  return { updatedAt: record.updatedAt, id: record.id }
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
    const order = newerFirst(entries[mid].at, at)
    if (order < 0 || (after && order === 0)) low = mid + 1
    else high = mid
  }
  return low
}
