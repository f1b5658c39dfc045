import type { AgentProblem } from './domain'

/**
 * The words for an agent's problem (shared/domain.ts AgentProblem), the same
 * in the Host's messages and in the window.
 */

/** A sentence without its closing full stop (and the spaces after it), to be put inside another: "(… configured)." not "(… configured.).". */
export function withoutFullStop(text: string): string {
  return text.replace(/[.\s]+$/, '')
}

/** What the agent said adds nothing to "needs you to sign in" when it only says that. */
const SAYS_ONLY_SIGN_IN = /^(authentication required|auth(?:entication)? needed|unauthori[sz]ed|not (?:signed|logged) in)$/i

/** What happened, in one sentence: the summary and what the agent said, once. */
export function problemSentence(problem: AgentProblem): string {
  const detail = problem.detail ? withoutFullStop(problem.detail) : ''
  if (!detail || (problem.kind === 'sign_in' && SAYS_ONLY_SIGN_IN.test(detail))) return problem.summary
  return `${withoutFullStop(problem.summary)}: ${detail}.`
}

/** A heading for the problem. */
export function problemTitle(problem: AgentProblem, agentName: string): string {
  switch (problem.kind) {
    case 'sign_in':
      return `Sign in to ${agentName}`
    case 'not_installed':
      return `${agentName} is not installed`
    case 'start_failed':
      return `${agentName} could not start`
    case 'session_failed':
      return `${agentName} could not start a session`
  }
}

/** The status an agent's problem gives it, in a few words (the Agents page, the session header). */
export function problemLabel(problem: AgentProblem): string {
  switch (problem.kind) {
    case 'sign_in':
      return 'needs sign-in'
    case 'not_installed':
      return 'not installed'
    default:
      return `failing: ${shortReason(problem)}`
  }
}

/** The gist of why, short enough for a status: what the agent said, else the first explaining line, else the summary. */
export function shortReason(problem: AgentProblem, max = 60): string {
  const text = withoutFullStop(problem.detail ?? (problem.found ? problem.lines[0] : undefined) ?? problem.summary)
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text
}
