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

/** A body larger than the limit: thrown as soon as the limit is passed (or announced), the rest never read. */
export class TooLarge extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`)
  }
}

/**
 * The response's body, read up to `maxBytes`: one announced larger, or that
 * grows past it while it arrives, throws `TooLarge` and the connection is
 * cancelled there, so a server that sends without end costs no more than the
 * limit.
 */
export async function readCapped(response: Response, maxBytes: number): Promise<Buffer> {
  const announced = Number(response.headers.get('content-length'))
  if (Number.isFinite(announced) && announced > maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw new TooLarge(maxBytes)
  }
  if (!response.body) return Buffer.alloc(0)
  const reader = response.body.getReader() as ReadableStreamDefaultReader<Uint8Array>
  const chunks: Buffer[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined)
      throw new TooLarge(maxBytes)
    }
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength))
  }
  return Buffer.concat(chunks, size)
}
