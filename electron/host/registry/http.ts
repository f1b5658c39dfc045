/**
 * GET for the registry's files (the feed, icons, archives). A kept-alive
 * connection the server closed since the last request fails at once with a
 * socket error; such a request is asked again, once, on a fresh connection,
 * as browsers do, so the reason the user reads is the real one.
 */
export function get(url: string, signal: AbortSignal): Promise<Response> {
  const once = () => fetch(url, { signal, redirect: 'follow' })
  return once().catch((error: unknown) => (causeOf(error)?.code === 'UND_ERR_SOCKET' ? once() : Promise.reject(error)))
}

/** What undici says went wrong underneath a failed fetch. */
export function causeOf(error: unknown): { code?: string; message?: string } | undefined {
  return (error as { cause?: { code?: string; message?: string } }).cause
}
