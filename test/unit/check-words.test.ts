import { describe, expect, it } from 'vitest'
import { checkReportMarkdown, checkSummary, shownOutcome, type AgentCheckReport, type CheckLine } from '../../shared/check-report'

const line = (id: string, outcome: CheckLine['outcome'], announced: boolean | null = true): CheckLine => ({
  id,
  label: id,
  announced,
  outcome,
  detail: ''
})
const report = (lines: CheckLine[]): AgentCheckReport => ({
  agentId: 'a',
  agentName: 'A',
  agentVersion: null,
  checkedAt: '2026-11-28T10:00:00.000Z',
  durationMs: 10,
  lines
})

describe('an agent check in words', () => {
  it('the summary says what the agent supports, not "checked: load"', () => {
    const started = line('session/new', 'worked', null)
    expect(
      checkSummary(report([started, line('session/load', 'worked'), line('session/resume', 'worked'), line('session/fork', 'not offered', false)]))
    ).toBe('supports: load, resume')
    expect(checkSummary(report([started, line('session/fork', 'not offered', false)]))).toBe('supports: new sessions only')
    expect(checkSummary(report([line('session/new', 'needs sign-in', null)]))).toBe('needs sign-in')
    expect(checkSummary(report([line('session/new', 'failed', null)]))).toBe('cannot start a session')
  })

  it('a method the agent does not announce is "not offered", never "failed", also in an older report', () => {
    expect(shownOutcome(line('session/fork', 'failed', false))).toBe('not offered')
    expect(shownOutcome(line('session/load', 'failed', true))).toBe('failed')
    expect(shownOutcome(line('session/new', 'failed', null))).toBe('failed')
    expect(checkReportMarkdown(report([line('session/fork', 'failed', false)]))).toContain('| session/fork | no | not offered |')
  })
})
