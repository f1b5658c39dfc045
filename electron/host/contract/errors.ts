import { withoutFullStop } from '../../../shared/agent-problem'
import type { CommandChange } from '../../../shared/confirmation'
import type { AgentProblem } from '../../../shared/domain'
import type { WireError } from '../../../shared/contract'
import type { HostErrorCode } from '../../../shared/errors'

export { withoutFullStop }

/** An error the renderer can act on by its code (e.g. `auth_required` leads to signing in). */
export class HostError extends Error {
  constructor(
    readonly code: HostErrorCode,
    message: string,
    /** What went wrong with an agent, in parts, when the error is about one (auth_required, agent_failed). */
    readonly problem?: AgentProblem,
    /** confirmation_required: what the user is asked to confirm. */
    readonly confirmation?: CommandChange
  ) {
    super(message)
  }
}

/** A failed request as the transports carry it: the message, and for a HostError its code and what goes with it. */
export function wireError(error: unknown): WireError {
  const message = describeError(error)
  if (!(error instanceof HostError)) return { message }
  const { code, problem, confirmation } = error
  return { message, code, ...(problem ? { problem } : {}), ...(confirmation ? { confirmation } : {}) }
}

/**
 * The agent's message, with the explanation a JSON-RPC error carries in its
 * `data` (the SDK's "Internal error" alone says nothing): `data` itself when it
 * is a string, else its `message`, `details`, `error` and `reason`, then any
 * other string field that reads as a sentence (Codex sends `{message,
 * codex_error_info: "other"}`; claude-agent-acp `{details}`); a field holding
 * an HTTP error body as JSON text is read for its own message. Each said once.
 * A generic message with nothing to explain it says that the agent gave no reason.
 */
export function describeError(error: unknown): string {
  const [message, ...parts] = said(error)
  if (parts.length === 0) return GENERIC.test(message) ? `${withoutFullStop(message)} (the agent gave no details)` : message
  return `${message}: ${parts.join('; ')}`
}

/**
 * What an agent's error says, to put inside a sentence of our own: what its
 * `data` explains when its message is a generic one ("Claude Code process
 * exited with code 1", not "Internal error: …"), else describeError's words;
 * without the closing full stop, which the sentence around it supplies.
 */
export function agentReason(error: unknown): string {
  const [message, ...parts] = said(error)
  const reason = parts.length && GENERIC.test(message) ? parts.join('; ') : describeError(error)
  // "Internal error: <the cause>" (claude-agent-acp 0.101 puts the cause in the message): the cause is the reason.
  return withoutFullStop(reason.replace(GENERIC_PREFIX, '') || reason)
}

/**
 * A failure an agent streamed as text (Codex 2.x, see quirks.ts): an HTTP
 * error body (`{"error":{"message":…}}`) read for what it explains, else the
 * text itself; trimmed.
 */
export function failureText(text: string): string {
  const body = jsonObject(text)
  const parts = body ? [...new Set(explanations(body))] : []
  return parts.length ? parts.join('; ') : text.trim()
}

/** A generic message used as a prefix to the real one. */
const GENERIC_PREFIX = /^(internal error|unknown error|server error|error)\s*:\s*(?=\S)/i

/** The messages JSON-RPC and the SDKs use for a kind of error, which say nothing of this one. */
const GENERIC = /^(internal error|unknown error|server error|error)[.!]?$/i

/** The error's message, then each explanation its data adds, each once. */
function said(error: unknown): string[] {
  const all = [messageOf(error)]
  for (const part of explanations(dataOf(error))) {
    if (!all.some((s) => s.includes(part))) all.push(part)
  }
  return all
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : typeof error === 'object' && error && 'message' in error ? String(error.message) : String(error)
}

function dataOf(error: unknown): unknown {
  return (error as { data?: unknown } | null)?.data
}

function explanations(data: unknown): string[] {
  if (typeof data === 'string') {
    const parsed = jsonObject(data)
    if (parsed) return explanations(parsed)
    return data.trim() ? [data.trim()] : []
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return []
  const fields = data as Record<string, unknown>
  const named = ['message', 'details', 'error', 'reason'].map((k) => fields[k])
  const nested = named.flatMap((v) => (v && typeof v === 'object' ? [(v as { message?: unknown }).message] : []))
  const others = Object.values(fields).filter((v) => typeof v === 'string' && /\s/.test(v.trim()))
  return [...named, ...nested, ...others]
    .filter((v): v is string => typeof v === 'string' && v.trim() !== '')
    .flatMap((v) => (jsonObject(v) ? explanations(v) : [v.trim()]))
}

/** An HTTP error body an agent passes on as text (Codex: `{"error":{"message":…}}`), read as the object it is. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim()
  if (!trimmed.startsWith('{')) return undefined
  try {
    const value: unknown = JSON.parse(trimmed)
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
