import { promises as fs } from 'node:fs'
import type { SessionRecord } from '../../../shared/domain'
import { FIRST_PAGE, newerFirst } from '../../../shared/session-listing'

/**
 * How db.json is laid out, so that the Host can answer the window's first load
 * before it has read every session record (at 10,000 sessions the whole parse
 * is most of the Host's open, and it competes with the window's own load).
 *
 * The file stays one JSON document that any JSON reader takes whole: its first
 * line holds everything but the sessions, with the layout (`LAYOUT_KEY`: each
 * group's count, and how many records come first), and ends by opening the
 * sessions list; the second line holds the records the first load reads
 * (`firstPartOf`), the third the rest; the last line closes the list.
 * `readDbFile` reads and parses the first line and the first part only (the
 * file's first 256 KB, or further when the first part is longer: its size
 * grows with projects, not with history), and hands back
 * a way to read the rest, parsed when the Host needs every session
 * (`parseRest`). A file in any other layout (written before, or by hand) is
 * read and parsed whole.
 */

/** The field of the first line that says how the sessions are laid out (never part of the data). */
export const LAYOUT_KEY = 'sessionsLayout'

/** Each group's (project, agent) count, in the order its first record comes, and how many records come first. */
export interface SessionsLayout {
  groups: [projectId: string, agentId: string, count: number][]
  first: number
}

/** What the first part of the file gave: the data with the first part's records as its sessions, and the rest to come. */
export interface DbRead {
  data: unknown
  /** Reads the records after the first part, as text (null when the data holds every record). */
  rest: (() => Promise<string>) | null
  layout: SessionsLayout | null
}

/** How much of db.json is read first: the first line and the first part (about 130 KB with 50 projects). */
const FIRST_READ_BYTES = 256 * 1024

/**
 * The records the window's first load reads: each group's newest `FIRST_PAGE`
 * (`sessions.summary`, which the sidebar asks for no more of per group), those
 * with a turn unseen (`inbox.list`), those whose turn was under way when the
 * last Host stopped (listed as cut short as the Host opens) and those with
 * prompts queued (the queue shown, held, as the Host opens). Every group has its newest among them.
 */
function firstPartOf(sessions: readonly SessionRecord[]): Set<SessionRecord> {
  const first = new Set<SessionRecord>()
  // By project, then agent: two short keys hash faster than one joined string, 100,000 times over.
  const groups = new Map<string, Map<string, SessionRecord[]>>()
  for (const record of sessions) {
    if (record.unseen || record.underWay !== undefined || record.queue?.length) first.add(record)
    let agents = groups.get(record.projectId)
    if (!agents) groups.set(record.projectId, (agents = new Map<string, SessionRecord[]>()))
    const group = agents.get(record.agentId)
    if (group) group.push(record)
    else agents.set(record.agentId, [record])
  }
  for (const agents of groups.values()) {
    for (const group of agents.values()) {
      if (group.length > FIRST_PAGE) group.sort(newerFirst)
      for (let i = 0; i < group.length && i < FIRST_PAGE; i++) first.add(group[i])
    }
  }
  return first
}

/**
 * db.json's text for `data` (`dbBytes` joined): the first line; the first part's records on the second (one
 * `JSON.stringify` of them, which writes no line break); the rest on the third, when there are any; the line that
 * closes the list.
 */
export function dbText<T extends { sessions: SessionRecord[] }>(data: T): string {
  return Buffer.concat(dbBytes(data)).toString('utf8')
}

/**
 * db.json's bytes for `data`, in pieces as they are written (Store's saves): each list's JSON is turned into bytes
 * once and its brackets left out by a view of them, where the text was sliced and joined (a 10,000-session db.json
 * is 3 MB: two copies of it more at each save, large objects kept until a full GC).
 */
export function dbBytes<T extends { sessions: SessionRecord[] }>(data: T): Buffer[] {
  const { sessions, ...others } = data
  if (sessions.length === 0) return [Buffer.from(JSON.stringify(data))]
  const isFirst = firstPartOf(sessions)
  const first = sessions.filter((s) => isFirst.has(s))
  const rest = sessions.filter((s) => !isFirst.has(s))
  const layout: SessionsLayout = { groups: groupCounts(first, sessions), first: first.length }
  const head = JSON.stringify({ ...others, [LAYOUT_KEY]: layout, sessions: [] })
  // `…,"sessions":[]}` opened: `…,"sessions":[`; each list without its brackets (one byte each: JSON's `[` and `]`).
  const inside = (list: SessionRecord[]): Buffer => {
    const bytes = Buffer.from(JSON.stringify(list))
    return bytes.subarray(1, bytes.length - 1)
  }
  const restPieces = rest.length > 0 ? [Buffer.from(',\n'), inside(rest)] : []
  return [Buffer.from(`${head.slice(0, -2)}\n`), inside(first), ...restPieces, Buffer.from('\n]}')]
}

/**
 * Each group's count, in the order of its first record in `first` (which
 * holds every group's newest, so that is the order of its first record in the
 * file).
 */
function groupCounts(first: readonly SessionRecord[], sessions: readonly SessionRecord[]): SessionsLayout['groups'] {
  const counts = new Map<string, Map<string, SessionsLayout['groups'][number]>>()
  const ordered: SessionsLayout['groups'] = []
  for (const record of first) {
    let agents = counts.get(record.projectId)
    if (!agents) counts.set(record.projectId, (agents = new Map<string, SessionsLayout['groups'][number]>()))
    if (agents.has(record.agentId)) continue
    const group: SessionsLayout['groups'][number] = [record.projectId, record.agentId, 0]
    agents.set(record.agentId, group)
    ordered.push(group)
  }
  for (const record of sessions) {
    const group = counts.get(record.projectId)?.get(record.agentId)
    if (group) group[2]++
  }
  return ordered
}

/**
 * db.json's first line and first part, read and parsed, when it is laid out
 * so (the rest is read when asked: nothing else writes the file before, as
 * Store saves only once it has read every record); else the whole file; null
 * when there is none. Throws as `JSON.parse` does when it is not JSON.
 */
export async function readDbFile(file: string): Promise<DbRead | null> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  let size: number
  let read: Buffer
  let firstEnd = -1
  let headEnd = -1
  let tail: string
  try {
    size = (await handle.stat()).size
    read = await readAt(handle, 0, Math.min(size, FIRST_READ_BYTES))
    // A first part longer than that (many projects, long replies unseen): read on until it ends.
    for (;;) {
      headEnd = read.indexOf(0x0a)
      firstEnd = headEnd < 0 ? -1 : read.indexOf(0x0a, headEnd + 1)
      if (firstEnd >= 0 || read.length >= size) break
      read = Buffer.concat([read, await readAt(handle, read.length, Math.min(size - read.length, read.length))])
    }
    tail = size >= 3 ? (await readAt(handle, size - 3, 3)).toString('utf8') : ''
  } finally {
    await handle.close()
  }
  const parts = firstEnd >= 0 && tail === '\n]}' ? readParts(read.toString('utf8', 0, headEnd), read.toString('utf8', headEnd + 1, firstEnd)) : null
  // Read whole already when it is small (as most are); else read the rest of it.
  if (!parts) return readDbText(read.length >= size ? read.toString('utf8') : await fs.readFile(file, 'utf8'))
  const restStart = firstEnd + 1
  const restEnd = size - 3
  return {
    data: parts.data,
    layout: parts.layout,
    rest: restStart < restEnd ? () => readTextAt(file, restStart, restEnd - restStart) : null
  }
}

/** readDbFile on a text in memory. */
export function readDbText(text: string): DbRead {
  const headEnd = text.indexOf('\n')
  const firstEnd = headEnd < 0 ? -1 : text.indexOf('\n', headEnd + 1)
  const parts = firstEnd >= 0 && text.endsWith('\n]}') ? readParts(text.slice(0, headEnd), text.slice(headEnd + 1, firstEnd)) : null
  if (!parts) {
    const data = JSON.parse(text) as unknown
    if (typeof data === 'object' && data !== null) delete (data as Record<string, unknown>)[LAYOUT_KEY]
    return { data, rest: null, layout: null }
  }
  const rest = firstEnd >= text.length - 3 ? '' : text.slice(firstEnd + 1, text.length - 3)
  return { data: parts.data, layout: parts.layout, rest: rest.length > 0 ? () => Promise.resolve(rest) : null }
}

/** The first line and the first part parsed, or null when they are not laid out as `dbText` writes them. */
function readParts(headLine: string, firstLine: string): { data: Record<string, unknown>; layout: SessionsLayout } | null {
  if (!headLine.endsWith('"sessions":[')) return null
  let head: Record<string, unknown>
  let first: unknown
  try {
    head = JSON.parse(`${headLine}]}`) as Record<string, unknown>
    first = JSON.parse(`[${withoutTrailingComma(firstLine)}]`)
  } catch {
    return null
  }
  const layout = head[LAYOUT_KEY]
  delete head[LAYOUT_KEY]
  if (!isLayout(layout) || !Array.isArray(first) || first.length !== layout.first) return null
  head.sessions = first
  return { data: head, layout }
}

async function readAt(handle: fs.FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length)
  let done = 0
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return buffer.subarray(0, done)
}

async function readTextAt(file: string, position: number, length: number): Promise<string> {
  const handle = await fs.open(file, 'r')
  try {
    const buffer = await readAt(handle, position, length)
    if (buffer.length < length) throw new Error('the file is shorter than when it was opened')
    return buffer.toString('utf8')
  } finally {
    await handle.close()
  }
}

/** The records after the first part (`DbRead.rest`). Throws when they are not JSON records. */
export function parseRest(rest: string): SessionRecord[] {
  const records = JSON.parse(`[${rest}]`) as unknown
  if (!Array.isArray(records) || !records.every((r) => typeof r === 'object' && r !== null && typeof (r as SessionRecord).id === 'string')) {
    throw new Error('its sessions are not a list of session records')
  }
  return records as SessionRecord[]
}

function withoutTrailingComma(lines: string): string {
  return lines.endsWith(',') ? lines.slice(0, -1) : lines
}

function isLayout(value: unknown): value is SessionsLayout {
  const layout = value as SessionsLayout | undefined
  return (
    typeof layout === 'object' &&
    layout !== null &&
    Number.isInteger(layout.first) &&
    layout.first >= 0 &&
    Array.isArray(layout.groups) &&
    layout.groups.every((g) => Array.isArray(g) && typeof g[0] === 'string' && typeof g[1] === 'string' && Number.isInteger(g[2]))
  )
}
