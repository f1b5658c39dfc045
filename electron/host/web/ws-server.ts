import { randomBytes, timingSafeEqual } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { lookup } from 'node:dns/promises'
import { isIP, isIPv4, type AddressInfo } from 'node:net'
import { extname, join, normalize, resolve, sep } from 'node:path'
import { WebSocketServer, type WebSocket } from 'ws'
import { wireRequestSchema, type HostEvent, type RequestResults, type WireServerMessage } from '../../../shared/contract'
import { wireFrames } from '../../../shared/wire-pieces'
import type { ConfirmCommand } from '../contract/confirmations'
import type { Host } from '../host'
import { openingHost, type OpeningHost } from './opening-host'

/**
 * The second transport: the same contract over a WebSocket, plus a static
 * server for the built renderer, on loopback only. The browser gets the token
 * in the URL fragment (never sent to the server in plain requests); every
 * WebSocket upgrade must present it and come from our own origin.
 */

export interface WsServerOptions {
  /**
   * The Host, or the Host being opened: the page is served at once and the
   * socket's requests wait for it (a start that loads the window while the
   * data folder opens, as the desktop app does).
   */
  host: Host | Promise<Host>
  /** The theme the page is served with; by default the Host's settings (which waits for a Host being opened). */
  themeChoice?: () => Promise<string | undefined>
  /** Folder of the built renderer (out/renderer). */
  rendererDir: string
  port?: number
  /** Must be a loopback address. */
  bindAddress?: string
  token?: string
  /**
   * How a change the page asks for that would run a program is confirmed, in
   * place of the Host's own (end-to-end tests: the page types console codes
   * while the test's own set-up, in process, is not asked).
   */
  confirmCommand?: ConfirmCommand
}

export interface RunningServer {
  url: string
  port: number
  token: string
  close(): Promise<void>
}

const MAX_MESSAGE_BYTES = 16 * 1024 * 1024

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json'
}

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-src 'none'; frame-ancestors 'none'"

export async function startWsServer(options: WsServerOptions): Promise<RunningServer> {
  const bindAddress = options.bindAddress ?? '127.0.0.1'
  if (!(await isLoopbackAddress(bindAddress))) {
    throw new Error(`Refusing to listen on ${bindAddress}: the Switchboard host only listens on loopback (127.0.0.1 or ::1)`)
  }
  const token = options.token ?? randomBytes(24).toString('base64url')
  const host = openingHost(options.host)
  const rendererDir = resolve(options.rendererDir)
  let port = 0
  const hostForUrl = bindAddress.includes(':') ? `[${bindAddress}]` : bindAddress
  const http = createServer((req, res) => {
    // Nothing a request carries may end the process: a throw here is answered, never left to Node.
    try {
      handleRequest(req, res)
    } catch (error) {
      answerFailure(res, error)
    }
  })
  const handleRequest = (req: IncomingMessage, res: ServerResponse): void => {
    // A page on another site that rebinds its name to 127.0.0.1 still sends its own name as Host: refused.
    if (!isOwnHost(req.headers.host, port, hostForUrl)) {
      res.writeHead(421, { 'Content-Type': 'text/plain' }).end('Misdirected request')
      return
    }
    const target = requestTarget(req.url)
    if (!target) {
      res.writeHead(400, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' }).end('Bad request')
      return
    }
    if (target.path === '/auth') {
      const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
      // 200 either way: a page asking is not an error worth a line in its console.
      res
        .writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' })
        .end(JSON.stringify({ accepted: tokenMatches(given, token) }))
      return
    }
    serveStatic(rendererDir, target.path, req, res, options.themeChoice ?? (() => themeChoiceOf(host))).catch((error: unknown) =>
      answerFailure(res, error)
    )
  }
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES })

  http.on('upgrade', (req, socket, head) => {
    // A socket reset while it is refused or upgraded is that client's end, not the server's.
    socket.on('error', () => undefined)
    try {
      const refusal = checkUpgrade(req, token, port, hostForUrl)
      if (refusal) {
        socket.end(`HTTP/1.1 ${refusal}\r\nConnection: close\r\n\r\n`)
        return
      }
      wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, host, options.confirmCommand))
    } catch {
      socket.destroy()
    }
  })

  await new Promise<void>((resolveListen, reject) => {
    http.once('error', reject)
    http.listen(options.port ?? 0, bindAddress, () => resolveListen())
  })
  port = (http.address() as AddressInfo).port
  return {
    url: `http://${hostForUrl}:${port}/#token=${token}`,
    port,
    token,
    close: () => closeServer(http, wss)
  }
}

/** Returns an HTTP status line when the upgrade must be refused. */
function checkUpgrade(req: IncomingMessage, token: string, port: number, hostForUrl: string): string | null {
  if (!isOwnHost(req.headers.host, port, hostForUrl)) return '421 Misdirected Request'
  const target = requestTarget(req.url)
  if (!target) return '400 Bad Request'
  if (target.path !== '/ws') return '404 Not Found'
  if (!tokenMatches(target.query.get('token') ?? '', token)) return '401 Unauthorized'
  const origin = req.headers.origin
  if (origin !== undefined) {
    const allowed = [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`, `http://${hostForUrl}:${port}`]
    if (!allowed.includes(origin)) return '403 Forbidden'
  }
  return null
}

/**
 * A request's target as this server takes it: origin-form only (`/path?query`), its path decoded. Anything else is
 * null, answered 400: an absolute-form target (`GET http://elsewhere/`, which only a proxy takes), an authority that
 * `//` would make of the path, an escape that is not UTF-8 (`/%`, `/%C0%AF`, `/%E0%A4%A`), a NUL.
 */
export function requestTarget(raw: string | undefined): { path: string; query: URLSearchParams } | null {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//')) return null
  let url: URL
  try {
    url = new URL(raw, 'http://127.0.0.1')
  } catch {
    return null
  }
  if (url.host !== '127.0.0.1') return null
  let path: string
  try {
    path = decodeURIComponent(url.pathname)
  } catch {
    return null
  }
  if (path.includes('\0') || path.startsWith('//')) return null
  return { path, query: url.searchParams }
}

/** An answer for a request whose handling threw: 500 when nothing was sent yet, else the connection is cut. */
function answerFailure(res: ServerResponse, error: unknown): void {
  console.error(`switchboard serve: a request failed: ${error instanceof Error ? error.message : String(error)}`)
  if (res.headersSent) {
    res.destroy()
    return
  }
  res.writeHead(500, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' }).end('Internal error')
}

/** Compared in constant time: how long a guess took says nothing of the token. */
function tokenMatches(given: string, token: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The theme the user chose, kept by the Host: the page is served with it, so its first paint is already right. */
async function themeChoiceOf(host: OpeningHost): Promise<string | undefined> {
  const response = await host.handle('settings.get', {})
  return response.ok ? (response.result as RequestResults['settings.get']).settings.theme : undefined
}

/** 127.0.0.0/8 and ::1 (also IPv4-mapped); `localhost` only when every address it resolves to is one. */
export async function isLoopbackAddress(address: string): Promise<boolean> {
  if (isIP(address)) return isLoopbackIp(address)
  if (address.toLowerCase() !== 'localhost') return false
  try {
    const all = await lookup(address, { all: true })
    return all.length > 0 && all.every((a) => isLoopbackIp(a.address))
  } catch {
    return false
  }
}

function isLoopbackIp(address: string): boolean {
  if (isIPv4(address)) return address.startsWith('127.')
  const lower = address.toLowerCase()
  return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(lower)
}

/** The Host header names this server: a loopback name or address, with our port. */
function isOwnHost(header: string | undefined, port: number, hostForUrl: string): boolean {
  if (!header) return false
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${hostForUrl}:${port}`].includes(header.toLowerCase())
}

function serveSocket(ws: WebSocket, host: OpeningHost, confirmCommand: ConfirmCommand | undefined): void {
  const send = (message: WireServerMessage): void => {
    if (ws.readyState !== ws.OPEN) return
    // A long message goes in frames of 64 KB, its long strings outside its JSON (shared/wire-pieces.ts).
    for (const frame of wireFrames(message)) ws.send(frame)
  }
  ws.on(
    'close',
    host.subscribe((events: HostEvent[]) => send({ kind: 'events', events }))
  )
  // A protocol error (a message over the size limit, a bad frame): ws closes the connection with the
  // right code itself. Without a listener, the 'error' event would bring the whole host down.
  ws.on('error', () => undefined)
  ws.on('message', (data) => {
    let parsed: unknown
    try {
      parsed = JSON.parse(data.toString())
    } catch {
      ws.close(1007, 'Refused a message that is not JSON')
      return
    }
    const request = wireRequestSchema.safeParse(parsed)
    if (!request.success) {
      const id = (parsed as { id?: unknown })?.id
      if (typeof id === 'number') {
        send({ kind: 'response', id, ok: false, error: { message: 'Malformed request', code: 'invalid_request' } })
      }
      return
    }
    void host
      .handle(request.data.method, request.data.params, { confirmCommand })
      .then((response) => send({ kind: 'response', id: request.data.id, ...response }))
  })
}

async function serveStatic(
  root: string,
  pathname: string,
  req: IncomingMessage,
  res: ServerResponse,
  themeChoice: () => Promise<string | undefined>
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405).end()
    return
  }
  const relative = normalize(pathname === '/' ? '/index.html' : pathname).replace(/^([\\/])+/, '')
  const file = join(root, relative)
  if (file !== root && !file.startsWith(root + sep)) {
    res.writeHead(403).end()
    return
  }
  try {
    let body = await fs.readFile(file)
    if (relative === 'index.html') body = Buffer.from(withTheme(body.toString('utf8'), await themeChoice()))
    res.writeHead(200, {
      'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Security-Policy': CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': cacheControlOf(relative)
    })
    res.end(req.method === 'HEAD' ? undefined : body)
  } catch {
    // Not kept: the file may be there after the next build.
    res.writeHead(404, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' }).end('Not found')
  }
}

/**
 * Vite names each file it builds under `assets/` by a hash of its content: such a file never changes, so the
 * browser may keep it (and V8 the code it compiled from it) for good, and a page opened again starts without
 * fetching or compiling its scripts anew. The page itself and everything else are asked for again each time: a
 * new build names new files from a new index.html.
 */
function cacheControlOf(relativePath: string): string {
  return /^assets[\\/][^\\/]+-[\w-]{8,}\.\w+$/.test(relativePath) ? 'public, max-age=31536000, immutable' : 'no-cache'
}

/** `<html data-theme-choice=… data-theme=…>`: dark or light painted from the start (a system choice is left to the page's CSS). */
function withTheme(html: string, choice: string | undefined): string {
  if (choice !== 'system' && choice !== 'light' && choice !== 'dark') return html
  const attributes = choice === 'system' ? ` data-theme-choice="system"` : ` data-theme-choice="${choice}" data-theme="${choice}"`
  return html.replace(/<html\b([^>]*)>/i, (_tag, rest: string) => `<html${rest}${attributes}>`)
}

function closeServer(http: Server, wss: WebSocketServer): Promise<void> {
  for (const client of wss.clients) client.terminate()
  wss.close()
  http.closeAllConnections()
  return new Promise((resolveClose) => http.close(() => resolveClose()))
}
