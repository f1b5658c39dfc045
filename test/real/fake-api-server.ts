import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * What the local fakes of model APIs (fake-anthropic, fake-openai, fake-gemini)
 * share: an HTTP server on 127.0.0.1 that reads each request whole and hands it
 * to the fake, answers 500 in the API's own error shape when the fake throws,
 * JSON answers, and server-sent event streams that stop writing once the client
 * has gone (a cancelled turn closes its request).
 */

export interface ReceivedRequest {
  method: string
  /** The path without the query. */
  path: string
  headers: IncomingHttpHeaders
  /** The body as text. */
  raw: string
}

export interface FakeApiServer {
  url: string
  close: () => Promise<void>
}

/** Starts the server; `errorBody` is the API's error for a message (sent with 500 when `handle` throws). */
export async function startFakeApiServer(
  name: string,
  handle: (request: ReceivedRequest, res: ServerResponse) => Promise<void> | void,
  errorBody: (message: string) => unknown
): Promise<FakeApiServer> {
  const server = createServer((req, res) => {
    void read(req)
      .then((request) => handle(request, res))
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify(errorBody(`${name} failed: ${String(error)}`)))
      })
  })
  // The agents' HTTP clients keep a connection open between requests. Node's server closes one idle for 5 s, and a
  // request sent on it in that moment is reset (ECONNRESET: Claude Code's "Connection dropped" failed a turn of
  // real-claude-edit in a loaded fresh-clone CI). An API's gateway keeps them far longer; so does this one.
  server.keepAliveTimeout = 10 * 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

async function read(req: IncomingMessage): Promise<ReceivedRequest> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return {
    method: req.method ?? '',
    path: (req.url ?? '').split('?')[0] ?? '',
    headers: req.headers,
    raw: Buffer.concat(chunks).toString('utf8')
  }
}

/** The body parsed as JSON; an empty body is `{}`, text that is not JSON is kept as `{ raw }`. */
export function parseBody<T extends object>(raw: string): T | { raw?: string } {
  if (!raw) return {}
  try {
    return JSON.parse(raw) as T
  } catch {
    return { raw }
  }
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

/** Starts an event stream; `write` sends one event's text, and nothing once the client has gone. */
export function eventStream(res: ServerResponse): { write: (text: string) => void; readonly closed: boolean } {
  let closed = false
  res.on('close', () => {
    closed = true
  })
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  return {
    write: (text) => {
      if (!closed) res.write(text)
    },
    get closed() {
      return closed
    }
  }
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
