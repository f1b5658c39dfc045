import { problemLabel } from '../../../../shared/agent-problem'
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

/**
 * The words for an agent's state: whether its process runs, and whether it
 * can start a session, which a running process does not prove. "ready" only
 * once this run has started one (and nothing failed since); a running agent
 * that has not is "running"; one that could not says why ("needs sign-in",
 * "failing: …"). Beside a session that is not connected (`forSession` idle),
 * a ready agent is only "running": that session is not ready.
 */
export function agentStatusLabel(state: AgentRuntimeState | undefined, forSession?: SessionStatus): string {
  if (state?.installed === false && state.status !== 'ready' && state.status !== 'starting') return 'not installed'
  const problem = state?.problem
  switch (state?.status ?? 'stopped') {
    case 'stopped':
      return problem ? problemLabel(problem) : 'not started'
    case 'starting':
      return 'starting…'
    case 'ready':
      if (problem) return problemLabel(problem)
      return state?.sessionStarted && forSession !== 'idle' ? 'ready' : 'running'
    case 'exited':
      return problem ? problemLabel(problem) : 'exited'
    case 'error':
      return problem ? problemLabel(problem) : 'failed'
  }
}

/** The look an agent's state takes (a dot, a chip): ok only when it can start sessions. */
export function agentStatusKind(state: AgentRuntimeState | undefined): 'ready' | 'running' | 'starting' | 'problem' | 'stopped' {
  if (state?.status === 'starting') return 'starting'
  if (state?.problem || state?.status === 'error' || state?.status === 'exited' || state?.installed === false) return 'problem'
  if (state?.status === 'ready') return state.sessionStarted ? 'ready' : 'running'
  return 'stopped'
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
