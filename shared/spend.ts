import { z } from 'zod'

/**
 * Spend: what agents reported they used, per session, project and agent over a
 * period. The Host keeps it in `spend.jsonl` (electron/host/spend/) and answers
 * `spend.report`; the Spend page shows it and exports the rows it shows as CSV.
 *
 * Costs are kept per currency (the agent's unit: an ISO 4217 code, or another
 * unit such as "credits") and never added across currencies. Tokens are the
 * turns' own counts from prompt responses. See electron/host/spend/README.md for
 * what is summed and why.
 */

const instant = z.iso.datetime({ offset: true })

export const spendRequestParams = {
  /**
   * Totals per session, project and agent for [from, to) (either end open), and the
   * spend over time in buckets of `unit` (auto: hours for a day or less, days up to
   * 92 days, else months), counted in the window's `timeZone` (an IANA name).
   */
  'spend.report': z
    .object({
      from: instant.optional(),
      to: instant.optional(),
      unit: z.enum(['auto', 'hour', 'day', 'month']).default('auto'),
      timeZone: z.string().min(1).max(100).default('UTC')
    })
    .refine((p) => !p.from || !p.to || Date.parse(p.from) < Date.parse(p.to), { message: 'The period must end after it starts' })
} as const

export type SpendUnit = 'hour' | 'day' | 'month'

export interface TokenTotals {
  total: number
  input: number
  output: number
  thought: number
  cachedRead: number
  cachedWrite: number
}

export interface SpendTotals {
  /** Amount per currency (never added across currencies). */
  cost: Record<string, number>
  tokens: TokenTotals
}

/** One session, project or agent over the period. */
export interface SpendRow extends SpendTotals {
  id: string
  name: string
  /** The session, project or agent is no longer in Switchboard: `name` is what it was called when it spent. */
  gone?: boolean
  /** A session's project and agent, by the names they have (or last had). */
  projectName?: string
  agentName?: string
  /** When it last spent within the period. */
  last: string
}

export interface SpendReport {
  /** The period asked for (null: open). */
  from: string | null
  to: string | null
  unit: SpendUnit
  /** Every currency spent in the period, most spent first. */
  currencies: string[]
  total: SpendTotals
  sessions: SpendRow[]
  projects: SpendRow[]
  agents: SpendRow[]
  /** The chart's buckets (keys like 2025-06-01, 2025-06-01T14 or 2025-06), every one from the period's start to its end. */
  buckets: string[]
  /** Per agent, its spend in each bucket (aligned with `buckets`). */
  series: { agentId: string; cost: Record<string, number[]>; tokens: number[] }[]
  /** Past conversations still being read for what they spent (the first start with a spend page). */
  backfill?: { done: number; total: number }
}

export interface SpendRequestResults {
  'spend.report': SpendReport
}

export type SpendGrouping = 'sessions' | 'projects' | 'agents'

/**
 * The rows of one grouping as CSV (RFC 4180: CRLF lines, a header, text quoted
 * with inner quotes doubled). A text that a spreadsheet would run as a formula
 * (it starts with =, +, -, @, their full-width forms ＝＋－＠ that some spreadsheets
 * read as them, `|` (DDE), or a space, tab, CR or LF that a spreadsheet may skip
 * before one) is given a leading apostrophe: titles come from prompts and from agents. Costs are plain decimals, one column per
 * currency; a UTF-8 byte order mark lets spreadsheets read names as written.
 */
export function spendCsv(report: { currencies: string[] } & Partial<Record<SpendGrouping, SpendRow[]>>, grouping: SpendGrouping): string {
  const first = grouping === 'sessions' ? ['Session', 'Project', 'Agent'] : [grouping === 'projects' ? 'Project' : 'Agent']
  const header = [
    ...first,
    ...report.currencies.map((c) => `Cost (${c})`),
    'Tokens',
    'Input tokens',
    'Output tokens',
    'Thought tokens',
    'Cached read tokens',
    'Cached write tokens',
    'Last spent',
    'Deleted'
  ]
  const lines = [header.map(csvText)]
  for (const row of report[grouping] ?? []) {
    const names = grouping === 'sessions' ? [row.name, row.projectName ?? '', row.agentName ?? ''] : [row.name]
    const t = row.tokens
    lines.push([
      ...names.map(csvText),
      ...report.currencies.map((c) => (row.cost[c] === undefined ? '' : decimal(row.cost[c]))),
      ...[t.total, t.input, t.output, t.thought, t.cachedRead, t.cachedWrite].map(String),
      csvText(row.last),
      row.gone ? csvText('yes') : ''
    ])
  }
  return '\uFEFF' + lines.map((cells) => cells.join(',')).join('\r\n') + '\r\n'
}

const FORMULA_START = /^[=+\-@|\t\r\n \uFF1D\uFF0B\uFF0D\uFF20]/

function csvText(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value
  return `"${safe.replace(/"/g, '""')}"`
}

/** A cost as a plain decimal: no exponent, no float noise (0.1 + 0.2 is 0.3), at most 6 places. */
export function decimal(amount: number): string {
  const fixed = amount.toFixed(6)
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed
}
