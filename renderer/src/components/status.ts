import type { AgentRuntimeState, SessionStatus } from '../../../shared/domain'

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
