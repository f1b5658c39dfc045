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

/** The agent's message, with the details a JSON-RPC error carries (the SDK's "Internal error" alone says nothing). */
export function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const details = (error as { data?: { details?: unknown } } | null)?.data?.details
  return typeof details === 'string' && details && !message.includes(details) ? `${message}: ${details}` : message
}
