/**
 * An agent check's report: its shape, and its text. Apart from the registry's
 * schemas, so the window's first script (the sidebar shows `checkSummary`)
 * does not carry zod's classic API; shared/registry.ts re-exports it.
 */

/**
 * - `not offered`: the agent does not announce the method, and calling it did not work (not a failure of the agent)
 * - `needs history`: the method works on a conversation with a prompt in it, and the check sends none; what the agent answered is the detail
 */
export type CheckOutcome = 'worked' | 'failed' | 'needs sign-in' | 'not tried' | 'not offered' | 'needs history'

export interface CheckLine {
  /** The method or item probed, e.g. `session/list`. */
  id: string
  label: string
  /** Whether the agent announced it in `initialize` (null where nothing is announced, e.g. session/new). */
  announced: boolean | null
  outcome: CheckOutcome
  /** What came back: the error's message and data, or what was listed. */
  detail: string
}

export interface AgentCheckReport {
  agentId: string
  agentName: string
  /** agentInfo.version from initialize, else the registry version, else null. */
  agentVersion: string | null
  /** The registry version installed, for a registry agent. */
  registryVersion?: string
  protocolVersion?: number
  checkedAt: string
  durationMs: number
  lines: CheckLine[]
}

/** The report as markdown, for a bug report. */
export function checkReportMarkdown(report: AgentCheckReport): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')
  const head = [
    `# ${report.agentName}${report.agentVersion ? ` ${report.agentVersion}` : ''}: what it does`,
    '',
    `Checked by Switchboard on ${report.checkedAt} (${report.durationMs} ms)` +
      (report.protocolVersion !== undefined ? `, ACP protocol version ${report.protocolVersion}` : '') +
      (report.registryVersion ? `, registry version ${report.registryVersion}` : '') +
      '.',
    '',
    '| probe | announced | outcome | detail |',
    '| --- | --- | --- | --- |'
  ]
  const rows = report.lines.map(
    (l) => `| ${cell(l.label)} | ${l.announced === null ? '—' : l.announced ? 'yes' : 'no'} | ${shownOutcome(l)} | ${cell(l.detail)} |`
  )
  return [...head, ...rows, ''].join('\n')
}

/** What each optional session method lets the user do, in plain words. */
const METHOD_WORDS: Record<string, string> = {
  list: 'list its sessions',
  resume: 'resume sessions',
  load: 'load past sessions',
  fork: 'fork sessions',
  close: 'close sessions'
}

/** The check's outcome in plain words, after the agent's name: "can list its sessions and load past sessions (checked …)". */
export function checkWords(report: AgentCheckReport, when: string): string {
  const start = report.lines.find((l) => l.id === 'session/new')
  let words: string
  if (start && start.outcome === 'needs sign-in') words = 'needs you to sign in before it can start a session'
  else if (!start || start.outcome !== 'worked') words = 'could not start a session'
  else {
    const worked = checkSummary(report)
      .slice('supports: '.length)
      .split(', ')
      .flatMap((m) => METHOD_WORDS[m] ?? [])
    words = worked.length
      ? `can ${worked.length > 1 ? `${worked.slice(0, -1).join(', ')} and ${worked[worked.length - 1]}` : worked[0]}`
      : 'can start sessions, and nothing more was found'
  }
  return `${words} (checked ${when})`
}

/** A short line for the session picker, in words: what the check found the agent supports beyond new sessions. */
export function checkSummary(report: AgentCheckReport): string {
  const start = report.lines.find((l) => l.id === 'session/new')
  if (start && start.outcome === 'needs sign-in') return 'needs sign-in'
  if (!start || start.outcome !== 'worked') return 'cannot start a session'
  const optional = ['session/list', 'session/resume', 'session/load', 'session/fork', 'session/close']
  const worked = report.lines.filter((l) => optional.includes(l.id) && l.outcome === 'worked').map((l) => l.id.slice('session/'.length))
  return worked.length ? `supports: ${worked.join(', ')}` : 'supports: new sessions only'
}

/**
 * The outcome a line is shown with: a method the agent does not announce is
 * "not offered", whatever calling it did (a report made by an older
 * Switchboard may say "failed" for it).
 */
export function shownOutcome(line: CheckLine): CheckOutcome {
  return line.announced === false && line.outcome === 'failed' ? 'not offered' : line.outcome
}
