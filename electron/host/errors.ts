import type { HostErrorCode } from '../../shared/errors'

/** An error the renderer can act on by its code (e.g. `auth_required` leads to signing in). */
export class HostError extends Error {
  constructor(
    readonly code: HostErrorCode,
    message: string
  ) {
    super(message)
  }
}

/**
 * The agent's message, with the explanation a JSON-RPC error carries in its
 * `data` (the SDK's "Internal error" alone says nothing): `data` itself when it
 * is a string, else its `message`, `details`, `error` and `reason`, then any
 * other string field that reads as a sentence (Codex sends `{message,
 * codex_error_info: "other"}`; claude-agent-acp `{details}`); a field holding
 * an HTTP error body as JSON text is read for its own message. Each said once.
 */
export function describeError(error: unknown): string {
  const message =
    error instanceof Error ? error.message : typeof error === 'object' && error && 'message' in error ? String(error.message) : String(error)
  const said = [message]
  for (const part of explanations((error as { data?: unknown } | null)?.data)) {
    if (!said.some((s) => s.includes(part))) said.push(part)
  }
  return said.length === 1 ? message : `${message}: ${said.slice(1).join('; ')}`
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
