import { describe, expect, it } from 'vitest'
import type { SessionRecord } from '../../shared/domain'
import { agentHue, agentMonogram } from '../../renderer/src/agent-look'
import { sidebarState } from '../../renderer/src/components/sidebar/status'
import { compactTime } from '../../renderer/src/time'

/** What a sidebar row shows: the agent's mark, the session's state, its time. */

const record: SessionRecord = {
  id: 's1',
  acpSessionId: 'acp-1',
  agentId: 'a',
  projectId: 'p',
  cwd: '/code',
  title: 'T',
  titleSource: 'prompt',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z'
}

describe('agent marks', () => {
  it('tell agents apart by monogram and keep a stable colour', () => {
    expect(agentMonogram('Claude Code')).toBe('CC')
    expect(agentMonogram('Gemini CLI')).toBe('GC')
    expect(agentMonogram('Codex')).toBe('Co')
    expect(agentMonogram('Scripted agent A')).toBe('SA')
    expect(agentMonogram('Scripted agent B')).toBe('SB')
    expect(agentMonogram('  ')).toBe('?')
    // The known agents keep their brand's hue whatever their id; any other id gets the same hue every time.
    expect([agentHue('claude-code', 'Claude Code'), agentHue('my-claude'), agentHue('gemini'), agentHue('x', 'Codex')]).toEqual([24, 24, 215, 160])
    expect(agentHue('scripted-agent-a', 'Scripted agent A')).toBe(agentHue('scripted-agent-a', 'Another name'))
    expect(agentHue('scripted-agent-a')).not.toBe(agentHue('scripted-agent-b'))
    expect(agentHue('anything')).toBeGreaterThanOrEqual(0)
    expect(agentHue('anything')).toBeLessThan(360)
  })
})

describe('a session’s state in the sidebar', () => {
  it('puts a pending permission first, then work, errors, readiness and the last turn’s end', () => {
    const permission = { requestId: 'r', title: 'Run tests', options: [] }
    expect(sidebarState({ id: 's1', status: 'running', permissions: [permission] }, record)).toMatchObject({ kind: 'waiting', detail: 'Run tests' })
    expect(sidebarState({ id: 's1', status: 'running' }, record).kind).toBe('running')
    expect(sidebarState({ id: 's1', status: 'starting' }, record).kind).toBe('running')
    expect(sidebarState({ id: 's1', status: 'idle', error: 'The agent exited' }, record)).toMatchObject({ kind: 'error', detail: 'The agent exited' })
    expect(sidebarState({ id: 's1', status: 'ready' }, { ...record, lastStopReason: 'end_turn' })).toMatchObject({ kind: 'ready', label: 'Finished' })
    expect(sidebarState({ id: 's1', status: 'idle' }, { ...record, lastStopReason: 'cancelled' })).toMatchObject({ kind: 'done', label: 'Cancelled' })
    expect(sidebarState({ id: 's1', status: 'idle' }, record).kind).toBe('idle')
  })
})

describe('compact times', () => {
  it('count minutes, hours and days, then show the date', () => {
    const now = Date.parse('2026-06-15T12:00:00.000Z')
    expect(compactTime('2026-06-15T11:59:30.000Z', now)).toBe('now')
    expect(compactTime('2026-06-15T11:55:00.000Z', now)).toBe('5m')
    expect(compactTime('2026-06-15T09:00:00.000Z', now)).toBe('3h')
    expect(compactTime('2026-06-13T12:00:00.000Z', now)).toBe('2d')
    // Local dates: noon UTC is the same day in every time zone but the farthest east and west.
    expect(compactTime('2026-03-01T12:00:00.000Z', now)).toBe('Mar 1')
    expect(compactTime('2026-12-02T12:00:00.000Z', Date.parse('2026-12-31T12:00:00.000Z'))).toBe('Dec 2')
    expect(compactTime('2025-03-01T12:00:00.000Z', now)).toBe('Mar 1, 2025')
    expect(compactTime('not a date', now)).toBe('')
  })
})
