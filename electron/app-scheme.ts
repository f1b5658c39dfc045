import { promises as fs } from 'node:fs'
import { extname, isAbsolute, relative, resolve, sep } from 'node:path'

/**
 * The window's origin: the built renderer is served from a privileged custom
 * scheme, `app://switchboard/`, not from `file://`. Under `file://` the CSP's
 * `'self'` would cover every local file; here it means the app's own bundle
 * and nothing else.
 *
 * No Electron import: main.ts registers the scheme with these privileges and
 * passes each request to `serveAppRequest`, which decides with
 * `resolveAppRequest` (unit-tested in Node) and answers with a web `Response`.
 */

export const APP_SCHEME = 'app'
export const APP_HOST = 'switchboard'
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`
/** The URL the window loads. */
export const APP_INDEX_URL = `${APP_ORIGIN}/index.html`

/**
 * The privileges given to the scheme (`protocol.registerSchemesAsPrivileged`):
 * `standard` gives it a real origin (relative URLs resolve and `'self'` means
 * app://switchboard), `secure` makes it a secure context (notifications,
 * clipboard), `supportFetchAPI` and `corsEnabled` let the page's module
 * scripts and stylesheets (loaded in CORS mode, same origin) come from it.
 * `codeCache` lets V8 keep the code it compiled from the window's scripts (checked
 * against a hash of their source, so a new build is compiled anew): from the
 * second start on, the window does not compile them again (docs/BENCHMARKS.md,
 * the listing's warm starts, measures the same in Chromium). It needs `standard`.
 * No `bypassCSP`: the page's CSP applies in full.
 */
export const APP_SCHEME_PRIVILEGES = {
  standard: true,
  secure: true,
  supportFetchAPI: true,
  corsEnabled: true,
  codeCache: true
} as const

/**
 * Sent as a header with every answer; the same policy as the meta tag of
 * renderer/index.html, plus `frame-ancestors`, which only a header can carry.
 */
export const APP_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-src 'none'; frame-ancestors 'none'"

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm'
}

/** The MIME type a file is served with (unknown kinds as bytes, never sniffed). */
export function contentTypeOf(file: string): string {
  return CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream'
}

export type AppRequestDecision = { ok: true; file: string; contentType: string } | { ok: false; status: 400 | 403 | 404 | 405; reason: string }

const refuse = (status: 400 | 403 | 404 | 405, reason: string): AppRequestDecision => ({ ok: false, status, reason })

/**
 * Which file of `rootDir` (out/renderer) a request for `url` is answered with,
 * or why it is refused: only GET and HEAD, only app://switchboard (no other
 * host, port or user), only a path whose segments, decoded, are plain names
 * (no `..`, `.`, slash, backslash or NUL, so no encoded `..` and no absolute
 * path either), only a regular file whose real path (symbolic links followed)
 * is inside the real `rootDir`. `/` is index.html; there is no fallback page.
 */
export async function resolveAppRequest(rootDir: string, method: string, url: string): Promise<AppRequestDecision> {
  if (method !== 'GET' && method !== 'HEAD') return refuse(405, `Method ${method} is not allowed`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return refuse(400, 'Not a URL')
  }
  if (
    parsed.protocol !== `${APP_SCHEME}:` ||
    parsed.hostname.toLowerCase() !== APP_HOST ||
    parsed.port !== '' ||
    parsed.username !== '' ||
    parsed.password !== ''
  ) {
    return refuse(403, `Only ${APP_ORIGIN} is served`)
  }
  const segments: string[] = []
  for (const raw of parsed.pathname.split('/')) {
    if (raw === '') continue
    let segment: string
    try {
      segment = decodeURIComponent(raw)
    } catch {
      return refuse(400, 'A path segment is not valid percent-encoding')
    }
    if (segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) return refuse(403, 'The path leaves the app folder')
    segments.push(segment)
  }
  if (segments.length === 0) segments.push('index.html')

  const root = resolve(rootDir)
  const candidate = resolve(root, ...segments)
  if (!isInside(root, candidate)) return refuse(403, 'The path leaves the app folder')
  let realRoot: string
  let realFile: string
  try {
    realRoot = await fs.realpath(root)
    realFile = await fs.realpath(candidate)
  } catch {
    return refuse(404, 'Not found')
  }
  if (!isInside(realRoot, realFile)) return refuse(403, 'The path leads out of the app folder')
  try {
    if (!(await fs.stat(realFile)).isFile()) return refuse(404, 'Not found')
  } catch {
    return refuse(404, 'Not found')
  }
  return { ok: true, file: realFile, contentType: contentTypeOf(realFile) }
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel)
}

/** Answers a request to the app scheme (the handler given to `protocol.handle`). */
export async function serveAppRequest(rootDir: string, request: Request): Promise<Response> {
  const decision = await resolveAppRequest(rootDir, request.method, request.url)
  const common = { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': APP_CSP, 'Cache-Control': 'no-cache' }
  if (!decision.ok) {
    return new Response(decision.reason, { status: decision.status, headers: { ...common, 'Content-Type': 'text/plain; charset=utf-8' } })
  }
  let body: Buffer
  try {
    body = await fs.readFile(decision.file)
  } catch {
    return new Response('Not found', { status: 404, headers: { ...common, 'Content-Type': 'text/plain; charset=utf-8' } })
  }
  return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), {
    status: 200,
    headers: {
      ...common,
      'Content-Type': decision.contentType,
      'Content-Length': String(body.byteLength),
      'Cross-Origin-Resource-Policy': 'same-origin'
    }
  })
}

/**
 * Whether `url` is our renderer's page: the app scheme's index, or (for
 * `npm run dev`) the dev server's index, compared by origin and path, never
 * by prefix (http://localhost:5173.example.com is not http://localhost:5173).
 */
export function isRendererPageUrl(url: string, devServerUrl?: string): boolean {
  let page: URL
  try {
    page = new URL(url)
  } catch {
    return false
  }
  const isIndex = page.pathname === '/' || page.pathname === '/index.html'
  if (devServerUrl) {
    try {
      return isIndex && page.origin === new URL(devServerUrl).origin
    } catch {
      return false
    }
  }
  return isIndex && page.protocol === `${APP_SCHEME}:` && page.host === APP_HOST && page.username === '' && page.password === ''
}

/**
 * Whether a link the page opens goes to the system browser: http and https
 * only (no file:, javascript:, custom protocols that start programs), with a
 * host, and without credentials (https://bank.example@evil.example reads as
 * one site and is another). Everything else is dropped.
 */
export function opensInBrowser(url: string): boolean {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    return false
  }
  return (target.protocol === 'https:' || target.protocol === 'http:') && target.hostname !== '' && target.username === '' && target.password === ''
}
