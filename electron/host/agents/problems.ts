import { RequestError } from '@agentclientprotocol/sdk'
import { problemSentence } from '../../../shared/agent-problem'
import type { AgentProblem } from '../../../shared/domain'
import type { AgentDefinition } from '../../../shared/agent-definition'
import { commandOf } from '../../../shared/transport'
import { AgentStartError, type AgentConnection } from '../connection/connection'
import { knownCause } from '../connection/quirks'
import { agentReason, HostError, withoutFullStop } from '../contract/errors'

/**
 * What went wrong when an agent was asked for a session, in the parts the
 * window shows once (shared/domain.ts AgentProblem): what happened, what the
 * agent said, the lines of its stderr that explain it, a cause Switchboard
 * knows of. `auth_required` is the agent asking for a sign-in (see
 * sign-in.ts authRequired); anything else that concerns the agent is
 * `agent_failed`. Errors that are not the agent's (a project folder gone, an
 * MCP server that cannot be found) pass through as they are.
 */

/** Where the agent's stderr was when the request went out, to find what it wrote about it afterwards. */
export interface Asked {
  connection?: AgentConnection
  mark?: number
}

/** The error to answer with: a HostError carrying the problem, or the error itself when it is not the agent's. */
export function agentFailure(definition: AgentDefinition, error: unknown, asked: Asked = {}): unknown {
  if (error instanceof HostError) return error
  const problem = problemOf(definition, error, asked)
  if (!problem) return error
  // A start failure's own message already says it all, in the words other errors about the agent use.
  const message = error instanceof AgentStartError ? error.message : messageOf(problem)
  return new HostError(problem.kind === 'sign_in' ? 'auth_required' : 'agent_failed', message, problem)
}

/** The problem an error shows, or null when the error is not about the agent. */
export function problemOf(definition: AgentDefinition, error: unknown, { connection, mark }: Asked = {}): AgentProblem | null {
  if (error instanceof HostError) return error.problem ?? null
  const at = new Date().toISOString()
  const name = definition.name
  if (error instanceof AgentStartError) {
    if (error.notFound) {
      return {
        agentId: definition.id,
        kind: 'not_installed',
        summary: `${name} could not be started: its command '${commandOf(definition.transport)?.command ?? ''}' was not found on this computer.`,
        lines: [],
        found: false,
        at
      }
    }
    return { agentId: definition.id, kind: 'start_failed', summary: `${withoutFullStop(error.summary)}.`, ...error.explained, at }
  }
  if (!connection) return null
  const explained = connection.explanation(mark)
  const detail = agentReason(error)
  const hint = knownCause(connection.state.agentInfo?.name, detail, commandOf(definition.transport)?.env ?? {})
  if (error instanceof RequestError && error.code === -32000) {
    // The explanation is the sign-in; what stderr says besides is shown only when it was found to say something.
    return {
      agentId: definition.id,
      kind: 'sign_in',
      summary: `${name} needs you to sign in first.`,
      detail,
      lines: explained.found ? explained.lines : [],
      found: explained.found,
      at
    }
  }
  const alive = connection.isAlive
  return {
    agentId: definition.id,
    kind: alive ? 'session_failed' : 'start_failed',
    summary: alive ? `${name} could not start a session.` : `${name} stopped while starting the session.`,
    ...(detail ? { detail } : {}),
    ...(hint ? { hint } : {}),
    ...explained,
    at
  }
}

/** The problem in one message, for whoever reads only messages (tests, the log, an older window). */
export function messageOf(problem: AgentProblem): string {
  const parts = [problemSentence(problem)]
  if (problem.hint) parts.push(problem.hint)
  if (problem.found && problem.lines.length) parts.push(`stderr: ${problem.lines.join('\n')}`)
  return parts.join(' ')
}
