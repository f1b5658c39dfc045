import type { SessionRecord } from '../../shared/domain'
import { FIRST_PAGE, newerFirst } from '../../shared/session-listing'

/**
 * How db.json is laid out, so that the Host can answer the window's first load
 * before it has read every session record (at 10,000 sessions the whole parse
 * is most of the Host's open, and it competes with the window's own load).
 *
 * The file stays one JSON document that any JSON reader takes whole: its first
 * line holds everything but the sessions, with the layout (`LAYOUT_KEY`: each
 * group's count, and how many records come first), and ends by opening the
 * sessions list; then one record per line, first the ones the first load can
 * read (`firstPartOf`), then the rest; the last line closes the list.
 * `readDbText` parses the first line and the first part only, and hands back
 * the rest as text, parsed when the Host needs every session (`parseRest`). A
 * file in any other layout (written before, or by hand) is parsed whole.
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
  /** The records after the first part, still as text (null when the data holds every record). */
  rest: string | null
  layout: SessionsLayout | null
}

/**
 * The records the window's first load reads: each group's newest `FIRST_PAGE`
 * (`sessions.summary`, which the sidebar asks for no more of per group), those
 * with a turn unseen (`inbox.list`) and those with prompts queued (the queue
 * shown, held, as the Host opens).
 */
export function firstPartOf(sessions: readonly SessionRecord[]): Set<SessionRecord> {
  const first = new Set<SessionRecord>()
  const groups = new Map<string, SessionRecord[]>()
  for (const record of sessions) {
    if (record.unseen || record.queue?.length) first.add(record)
    const key = `${record.projectId}\n${record.agentId}`
    const group = groups.get(key)
    if (group) group.push(record)
    else groups.set(key, [record])
  }
  for (const group of groups.values()) {
    if (group.length > FIRST_PAGE) group.sort(newerFirst)
    for (let i = 0; i < group.length && i < FIRST_PAGE; i++) first.add(group[i])
  }
  return first
}

/** db.json's text for `data`: the first line, then the first part's records, then the rest, one per line. */
export function dbText<T extends { sessions: SessionRecord[] }>(data: T): string {
  const { sessions, ...others } = data
  if (sessions.length === 0) return JSON.stringify(data)
  const first = firstPartOf(sessions)
  const ordered = [...sessions.filter((s) => first.has(s)), ...sessions.filter((s) => !first.has(s))]
  const layout: SessionsLayout = { groups: groupCounts(ordered), first: first.size }
  const head = JSON.stringify({ ...others, [LAYOUT_KEY]: layout, sessions: [] })
  // `…,"sessions":[]}` opened: `…,"sessions":[`.
  return `${head.slice(0, -2)}\n${ordered.map((s) => JSON.stringify(s)).join(',\n')}\n]}`
}

/** Each group's count, in the order of its first record in `sessions`. */
export function groupCounts(sessions: readonly SessionRecord[]): SessionsLayout['groups'] {
  const counts = new Map<string, SessionsLayout['groups'][number]>()
  for (const record of sessions) {
    const key = `${record.projectId}\n${record.agentId}`
    const group = counts.get(key)
    if (group) group[2]++
    else counts.set(key, [record.projectId, record.agentId, 1])
  }
  return [...counts.values()]
}

/**
 * Parses db.json's first line and first part when it is laid out so (the rest
 * is handed back as text), else the whole text. Throws as `JSON.parse` does
 * when the text is not JSON.
 */
export function readDbText(text: string): DbRead {
  const whole = (): DbRead => ({ data: JSON.parse(text) as unknown, rest: null, layout: null })
  const headEnd = text.indexOf('\n')
  if (headEnd < 0 || !text.endsWith('\n]}')) return whole()
  const headLine = text.slice(0, headEnd)
  if (!headLine.endsWith('"sessions":[')) return whole()
  let head: Record<string, unknown>
  try {
    head = JSON.parse(`${headLine}]}`) as Record<string, unknown>
  } catch {
    return whole()
  }
  const layout = head[LAYOUT_KEY]
  delete head[LAYOUT_KEY]
  if (!isLayout(layout)) return whole()
  let end = headEnd
  for (let line = 0; line < layout.first; line++) {
    end = text.indexOf('\n', end + 1)
    if (end < 0 || end > text.length - 3) return whole()
  }
  let first: unknown
  try {
    first = JSON.parse(`[${withoutTrailingComma(text.slice(headEnd + 1, end))}]`)
  } catch {
    return whole()
  }
  if (!Array.isArray(first) || first.length !== layout.first) return whole()
  head.sessions = first
  const rest = text.slice(end + 1, text.length - 3)
  return { data: head, rest: rest.length > 0 ? rest : null, layout }
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
