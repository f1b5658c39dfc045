import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { AgentProblem } from '../../../shared/domain'
import { HostRequestError } from '../host/client'
import { usePanesStore } from './panes'
import { useSessionsStore } from './sessions'

/**
 * First contact with an agent: a new session asked of it, shown in the pane
 * it will open in while the agent starts, and there, once, when the agent
 * cannot start it (what happened, the stderr lines that explain it, what to
 * do: sign in, install, its log, retry). The sidebar only starts it.
 */

export interface SessionAttempt {
  paneId: string
  projectId: string
  agentId: string
  /** `presetId`: started from that preset (of `agentId`). */
  where: { isolation?: 'folder' | 'worktree'; branch?: string; presetId?: string }
  status: 'starting' | 'failed'
  problem?: AgentProblem
}

export const useContactStore = defineStore('contact', () => {
  const panes = usePanesStore()
  /** By pane id: at most one attempt a pane. */
  const attempts = ref<Record<string, SessionAttempt>>({})

  /**
   * Starts a session with an agent, in the focused pane. Resolves true once it
   * is open, false when the agent could not start it (the pane then shows
   * why); throws a failure that is not the agent's (a worktree refused, a
   * project folder gone) for the form that asked.
   */
  async function start(projectId: string, agentId: string, where: SessionAttempt['where'] = {}): Promise<boolean> {
    const paneId = panes.focused.id
    return run({ paneId, projectId, agentId, where, status: 'starting' })
  }

  /** Asks again, in the same pane, with the same project, agent and folder choice. */
  async function retry(paneId: string): Promise<boolean> {
    const attempt = attempts.value[paneId]
    if (!attempt || attempt.status === 'starting') return false
    return run({ ...attempt, status: 'starting', problem: attempt.problem })
  }

  function dismiss(paneId: string): void {
    delete attempts.value[paneId]
  }

  function of(paneId: string): SessionAttempt | undefined {
    return attempts.value[paneId]
  }

  async function run(attempt: SessionAttempt): Promise<boolean> {
    attempts.value[attempt.paneId] = attempt
    try {
      panes.focus(attempt.paneId)
      await useSessionsStore().create(attempt.projectId, attempt.agentId, attempt.where)
      dismiss(attempt.paneId)
      return true
    } catch (error) {
      if (error instanceof HostRequestError && error.problem) {
        attempts.value[attempt.paneId] = { ...attempt, status: 'failed', problem: error.problem }
        return false
      }
      dismiss(attempt.paneId)
      throw error
    }
  }

  return { attempts, start, retry, dismiss, of }
})
