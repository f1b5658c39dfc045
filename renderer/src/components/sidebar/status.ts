import { problemLabel } from '../../../../shared/agent-problem'
import { stopReasonWords } from '../../../../shared/stop-reasons'
import type { AgentRuntimeState, SessionRecord, SessionState, SessionStatus } from '../../../../shared/domain'

export type BadgeKind = 'idle' | 'starting' | 'ready' | 'running' | 'waiting' | 'error'

/**
 * What a session's header badge says. At rest a session is only "Idle" (no
 * fault, nothing to do: its agent starts when the user sends); while its agent
 * starts, that is said by name ("Starting Claude Code…"; "Reopening…" when the
 * agent runs and only the conversation is being opened); a turn that waits on
 * the user's answer says so before "Working…". `short`: the words a narrow
 * pane shows (none at rest: a grey dot), `label` staying in its tooltip.
 */
export function sessionBadge(state: SessionState, agentName: string, agentRunning = false): { kind: BadgeKind; label: string; short: string } {
  if (state.permissions?.length) return { kind: 'waiting', label: 'Waiting for you', short: 'Needs you' }
  switch (state.status) {
    case 'idle':
      // An agent that exited on its own left the session idle with what it said (Switchboard's own stops leave no error).
      return state.error ? { kind: 'error', label: 'Agent exited', short: 'Exited' } : { kind: 'idle', label: 'Idle', short: '' }
    case 'starting':
      return { kind: 'starting', label: agentRunning ? 'Reopening…' : `Starting ${agentName}…`, short: 'Starting…' }
    case 'ready':
      return { kind: 'ready', label: 'Ready', short: 'Ready' }
    case 'running':
      return { kind: 'running', label: 'Working…', short: 'Working…' }
    case 'error':
      return state.reopenFailed ? { kind: 'error', label: 'Not reopened', short: 'Not reopened' } : { kind: 'error', label: 'Error', short: 'Error' }
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
  if (state.status === 'ready') return { kind: 'ready', label: record.lastStopReason ? stopReasonWords(record.lastStopReason) : 'Ready' }
  return record.lastStopReason ? { kind: 'done', label: stopReasonWords(record.lastStopReason) } : { kind: 'idle', label: 'Not started here yet' }
}
