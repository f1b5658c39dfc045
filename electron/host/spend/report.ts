import type { SpendReport, SpendRow, SpendTotals, SpendUnit, TokenTotals } from '../../../shared/spend'
import type { SpendEntry } from './book'

/** What the sessions, projects and agents that still exist are called now (the entries keep what they were called). */
export interface CurrentNames {
  session(id: string): string | undefined
  project(id: string): string | undefined
  agent(id: string): string | undefined
}

export interface ReportQuery {
  from?: string
  to?: string
  unit: SpendUnit | 'auto'
  timeZone: string
}

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** More buckets than a chart can show apart: a finer unit asked for a long period gives way to a coarser one. */
const MAX_BUCKETS = 400

/** Totals per session, project and agent over the period, and the spend over time per agent, from the entries kept. */
export function spendReport(entries: SpendEntry[], query: ReportQuery, names: CurrentNames, now = Date.now()): SpendReport {
  const key = bucketKeys(query.timeZone)
  const from = query.from ? Date.parse(query.from) : -Infinity
  const to = query.to ? Date.parse(query.to) : Infinity
  const inPeriod = entries.filter((e) => {
    const at = Date.parse(e.at)
    return at >= from && at < to
  })
  const total = emptyTotals()
  const sessions = new Map<string, Group>()
  const projects = new Map<string, Group>()
  const agents = new Map<string, Group>()
  const usesOf = new Map<string, number>()
  for (const entry of inPeriod) {
    add(total, entry)
    if (entry.cost) usesOf.set(entry.cost.currency, (usesOf.get(entry.cost.currency) ?? 0) + 1)
    group(sessions, entry.sessionId, entry.sessionTitle, entry)
    group(projects, entry.projectId, entry.projectName, entry)
    group(agents, entry.agentId, entry.agentName, entry)
  }
  const currencies = [...usesOf.keys()].sort((a, b) => (usesOf.get(b) ?? 0) - (usesOf.get(a) ?? 0) || a.localeCompare(b))
  const rows = (groups: Map<string, Group>, current: (id: string) => string | undefined): SpendRow[] =>
    [...groups.entries()]
      .map(([id, g]) => {
        const name = current(id)
        return { id, name: name ?? g.name, ...(name === undefined ? { gone: true } : {}), cost: rounded(g.cost), tokens: g.tokens, last: g.last }
      })
      .sort((a, b) => byCost(currencies, a, b) || b.tokens.total - a.tokens.total || a.name.localeCompare(b.name))
  const projectRows = rows(projects, (id) => names.project(id))
  const agentRows = rows(agents, (id) => names.agent(id))
  const nameOf = (list: SpendRow[], id: string): string | undefined => list.find((r) => r.id === id)?.name
  const sessionRows = rows(sessions, (id) => names.session(id)).map((row) => {
    const g = sessions.get(row.id) as Group
    return { ...row, projectName: nameOf(projectRows, g.projectId), agentName: nameOf(agentRows, g.agentId) }
  })

  const times = inPeriod.map((e) => Date.parse(e.at))
  const start = query.from ? from : times.length ? Math.min(...times) : null
  const end = query.to ? Math.min(to, Math.max(now, start ?? now)) : now
  const unit = query.unit === 'auto' ? autoUnit(start, end) : query.unit
  const { buckets, unit: used } = start === null ? { buckets: [], unit } : bucketsBetween(start, end, unit, key)
  const index = new Map(buckets.map((b, i) => [b, i]))
  const series = new Map<string, SpendReport['series'][number]>()
  for (const entry of inPeriod) {
    const i = index.get(key(Date.parse(entry.at), used))
    if (i === undefined) continue
    let line = series.get(entry.agentId)
    if (!line) series.set(entry.agentId, (line = { agentId: entry.agentId, cost: {}, tokens: buckets.map(() => 0) }))
    if (entry.cost) (line.cost[entry.cost.currency] ??= buckets.map(() => 0))[i] += entry.cost.amount
    if (entry.tokens) line.tokens[i] += entry.tokens.totalTokens
  }
  for (const line of series.values()) for (const currency of Object.keys(line.cost)) line.cost[currency] = line.cost[currency].map(round)

  return {
    from: query.from ?? null,
    to: query.to ?? null,
    unit: used,
    currencies,
    total: { ...total, cost: rounded(total.cost) },
    sessions: sessionRows,
    projects: projectRows,
    agents: agentRows,
    buckets,
    series: agentRows.flatMap((row) => series.get(row.id) ?? [])
  }
}

interface Group extends SpendTotals {
  name: string
  last: string
  projectId: string
  agentId: string
}

function group(groups: Map<string, Group>, id: string, name: string, entry: SpendEntry): void {
  let g = groups.get(id)
  if (!g) groups.set(id, (g = { ...emptyTotals(), name, last: entry.at, projectId: entry.projectId, agentId: entry.agentId }))
  add(g, entry)
  // The name it had when it last spent: what a session, project or agent that is gone is still called.
  if (entry.at >= g.last) {
    g.last = entry.at
    g.name = name
  }
}

/** What each of these sessions spent in all (a race's comparison); a session that reported nothing is left out. */
export function sessionTotals(entries: SpendEntry[], sessionIds: readonly string[]): Map<string, SpendTotals> {
  const wanted = new Set(sessionIds)
  const totals = new Map<string, SpendTotals>()
  for (const entry of entries) {
    if (!wanted.has(entry.sessionId)) continue
    const sum = totals.get(entry.sessionId) ?? emptyTotals()
    add(sum, entry)
    totals.set(entry.sessionId, sum)
  }
  for (const sum of totals.values()) sum.cost = rounded(sum.cost)
  return totals
}

function add(totals: SpendTotals, entry: SpendEntry): void {
  if (entry.cost) totals.cost[entry.cost.currency] = (totals.cost[entry.cost.currency] ?? 0) + entry.cost.amount
  const t = entry.tokens
  if (!t) return
  const sum: TokenTotals = totals.tokens
  sum.total += t.totalTokens
  sum.input += t.inputTokens
  sum.output += t.outputTokens
  sum.thought += t.thoughtTokens ?? 0
  sum.cachedRead += t.cachedReadTokens ?? 0
  sum.cachedWrite += t.cachedWriteTokens ?? 0
}

function emptyTotals(): SpendTotals {
  return { cost: {}, tokens: { total: 0, input: 0, output: 0, thought: 0, cachedRead: 0, cachedWrite: 0 } }
}

function byCost(currencies: string[], a: SpendRow, b: SpendRow): number {
  for (const c of currencies) {
    const d = (b.cost[c] ?? 0) - (a.cost[c] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

/** Sums of many small rises carry float noise (0.1 + 0.2): kept to a billionth. */
function round(amount: number): number {
  return Math.round(amount * 1e9) / 1e9
}

function rounded(cost: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(cost).map(([c, a]) => [c, round(a)]))
}

function autoUnit(start: number | null, end: number): SpendUnit {
  const span = start === null ? 0 : end - start
  return span <= 36 * HOUR ? 'hour' : span <= 92 * DAY ? 'day' : 'month'
}

/**
 * Every bucket key from `start` to just before `end` in the window's time zone, found by stepping less than the
 * shortest bucket (an hour for hours, half a day for days, a day for months), so days of 23 or 25 hours and
 * half-hour zones come out right.
 */
function bucketsBetween(start: number, end: number, unit: SpendUnit, key: KeyOf): { buckets: string[]; unit: SpendUnit } {
  if (unit !== 'month' && (end - start) / (unit === 'hour' ? HOUR : DAY) > MAX_BUCKETS) {
    return bucketsBetween(start, end, unit === 'hour' ? 'day' : 'month', key)
  }
  // Every day has at least 23 hours and every month at least 28 days: no bucket is stepped over.
  const step = unit === 'month' ? DAY : unit === 'day' ? 12 * HOUR : HOUR
  const last = Math.max(start, end - 1)
  const buckets: string[] = []
  for (let at = start; ; at += step) {
    const k = key(Math.min(at, last), unit)
    if (buckets[buckets.length - 1] !== k) buckets.push(k)
    if (at >= last) break
  }
  return { buckets, unit }
}

type KeyOf = (at: number, unit: SpendUnit) => string

const formatters = new Map<string, Intl.DateTimeFormat>()

/** Keys an instant by its local hour (2025-06-01T14), day (2025-06-01) or month (2025-06) in `timeZone`. */
function bucketKeys(timeZone: string): KeyOf {
  let format = formatters.get(timeZone)
  if (!format) {
    try {
      format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23' })
    } catch {
      throw new Error(`Unknown time zone '${timeZone}': give an IANA name such as Europe/Paris or UTC`)
    }
    formatters.set(timeZone, format)
  }
  const parts = format
  return (at, unit) => {
    const p = Object.fromEntries(parts.formatToParts(at).map((x) => [x.type, x.value]))
    const day = `${p.year}-${p.month}-${p.day}`
    return unit === 'month' ? `${p.year}-${p.month}` : unit === 'day' ? day : `${day}T${p.hour}`
  }
}
