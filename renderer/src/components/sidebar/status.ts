import type { AgentRuntimeState, SessionRecord, SessionState, SessionStatus } from '../../../../shared/domain'

/** The words for a session's status, the same in the sidebar and the header. */
export function statusLabel(status: SessionStatus): string {
  switch (status) {
    case 'idle':
      return 'Not connected'
    case 'starting':
      return 'Starting…'
    case 'ready':
      return 'Ready'
    case 'running':
      return 'Working…'
    case 'error':
      return 'Error'
  }
}

/** The words for an agent's process state. */
export function agentStatusLabel(state: AgentRuntimeState | undefined): string {
  if (state?.installed === false && state.status !== 'ready' && state.status !== 'starting') return 'not installed'
  switch (state?.status ?? 'stopped') {
    case 'stopped':
      return 'not started'
    case 'starting':
      return 'starting…'
    case 'ready':
      return 'ready'
    case 'exited':
      return 'exited'
    case 'error':
      return 'failed'
  }
}

export type SidebarStateKind = 'running' | 'waiting' | 'error' | 'ready' | 'done' | 'idle'

/**
 * What the sidebar says about a session at a glance: working, waiting for a
 * permission answer, failed, connected and ready, or at rest (done, when a
 * turn has ended; idle when none has yet).
 */
export function sidebarState(state: SessionState, record: SessionRecord): { kind: SidebarStateKind; label: string; detail?: string } {
  const permission = state.permissions?.[0]
  if (permission) return { kind: 'waiting', label: 'Waiting for your permission', detail: permission.title }
  if (state.status === 'running') return { kind: 'running', label: 'Working…' }
  if (state.status === 'starting') return { kind: 'running', label: 'Starting…' }
  if (state.status === 'error' || state.error) return { kind: 'error', label: 'Error', detail: state.error }
  if (state.status === 'ready') return { kind: 'ready', label: record.lastStopReason ? stopLabel(record.lastStopReason) : 'Ready' }
  return record.lastStopReason ? { kind: 'done', label: stopLabel(record.lastStopReason) } : { kind: 'idle', label: 'Not started here yet' }
}

function stopLabel(reason: string): string {
  switch (reason) {
    case 'end_turn':
      return 'Done'
    case 'cancelled':
      return 'Cancelled'
    case 'max_tokens':
    case 'max_turn_requests':
      return 'Stopped at a limit'
    case 'refusal':
      return 'The agent refused'
    default:
      return `Ended (${reason})`
  }
}
