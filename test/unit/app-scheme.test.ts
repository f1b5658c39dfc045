import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  APP_CSP,
  APP_INDEX_URL,
  APP_ORIGIN,
  APP_SCHEME_PRIVILEGES,
  isRendererPageUrl,
  opensInBrowser,
  resolveAppRequest,
  serveAppRequest
} from '../../electron/app-scheme'

/**
 * The window's page comes from app://switchboard/ (electron/app-scheme.ts):
 * only files inside out/renderer are served, with their MIME types; every
 * other request is refused. Electron cannot run here, so the handler that
 * main.ts gives `protocol.handle` is driven with web Requests in Node.
 */

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const builtRenderer = join(repo, 'out', 'renderer')

let base: string
let root: string
const SECRET = 'the contents of a file outside the app folder'

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'switchboard-scheme-'))
  root = join(base, 'renderer')
  await mkdir(join(root, 'assets'), { recursive: true })
  await writeFile(join(root, 'index.html'), '<!doctype html><title>Switchboard</title>')
  await writeFile(join(root, 'assets', 'index-abc.js'), 'console.log(1)')
  await writeFile(join(root, 'assets', 'index-abc.css'), 'body{}')
  await writeFile(join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
  await writeFile(join(base, 'secret.txt'), SECRET)
  await mkdir(join(base, 'outside'))
  await writeFile(join(base, 'outside', 'other.js'), SECRET)
  // Links: a file and a folder that lead out of the app folder, and one that stays inside.
  await symlink(join(base, 'secret.txt'), join(root, 'assets', 'leak.js'))
  await symlink(join(base, 'outside'), join(root, 'linked'))
  await symlink(join(root, 'assets', 'index-abc.js'), join(root, 'alias.js'))
})

afterAll(async () => {
  await rm(base, { recursive: true, force: true })
})

async function get(url: string, method = 'GET'): Promise<{ status: number; type: string | null; body: string; headers: Headers }> {
  const response = await serveAppRequest(root, new Request(url, { method, ...(method === 'POST' ? { body: 'x' } : {}) }))
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text(), headers: response.headers }
}

describe('the app scheme serves the app', () => {
  it('answers the index at / and /index.html as HTML, with the CSP and nosniff', async () => {
    for (const url of [`${APP_ORIGIN}/`, APP_INDEX_URL, `${APP_ORIGIN}`, `${APP_INDEX_URL}#token=x`, `${APP_INDEX_URL}?a=1`]) {
      const page = await get(url)
      expect(page.status, url).toBe(200)
      expect(page.type).toBe('text/html; charset=utf-8')
      expect(page.body).toContain('<title>Switchboard</title>')
      expect(page.headers.get('content-security-policy')).toBe(APP_CSP)
      expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    }
  })

  it('answers assets with their MIME types, and HEAD without a body', async () => {
    expect(await get(`${APP_ORIGIN}/assets/index-abc.js`)).toMatchObject({
      status: 200,
      type: 'text/javascript; charset=utf-8',
      body: 'console.log(1)'
    })
    expect(await get(`${APP_ORIGIN}/assets/index-abc.css`)).toMatchObject({ status: 200, type: 'text/css; charset=utf-8', body: 'body{}' })
    expect(await get(`${APP_ORIGIN}/favicon.svg`)).toMatchObject({ status: 200, type: 'image/svg+xml' })
    const head = await get(`${APP_ORIGIN}/assets/index-abc.js`, 'HEAD')
    expect(head).toMatchObject({ status: 200, body: '' })
    expect(head.headers.get('content-length')).toBe('14')
  })

  it('follows a link that stays inside the app folder', async () => {
    expect(await get(`${APP_ORIGIN}/alias.js`)).toMatchObject({ status: 200, body: 'console.log(1)' })
  })

  it("is a scheme whose scripts V8 may keep compiled between starts, and whose page's CSP applies", () => {
    // Electron refuses codeCache on a scheme that is not standard, and bypassCSP would let the page load anything.
    expect(APP_SCHEME_PRIVILEGES).toMatchObject({ standard: true, secure: true, codeCache: true })
    expect(APP_SCHEME_PRIVILEGES).not.toHaveProperty('bypassCSP')
  })
})

describe('the app scheme refuses everything else', () => {
  it('refuses a path that climbs out, plainly or encoded, and never serves the file outside', async () => {
    const attempts = [
      // The URL parser folds these into the app folder: they ask for /secret.txt there, which is not found.
      `${APP_ORIGIN}/../secret.txt`,
      `${APP_ORIGIN}/assets/../../secret.txt`,
      `${APP_ORIGIN}/%2e%2e/secret.txt`,
      `${APP_ORIGIN}/%2E%2E/%2e%2e/secret.txt`,
      // An encoded slash or backslash would make ".." a segment only after decoding: refused.
      `${APP_ORIGIN}/..%2fsecret.txt`,
      `${APP_ORIGIN}/assets/..%2f..%2fsecret.txt`,
      `${APP_ORIGIN}/assets/%2e%2e%2f%2e%2e%2fsecret.txt`,
      `${APP_ORIGIN}/..%5csecret.txt`,
      `${APP_ORIGIN}/assets/..%5c..%5csecret.txt`,
      // Absolute paths: as a second slash (stays under the app folder) and encoded (refused).
      `${APP_ORIGIN}/${base}/secret.txt`,
      `${APP_ORIGIN}/${encodeURIComponent(join(base, 'secret.txt'))}`,
      `${APP_ORIGIN}/index.html%00.js`
    ]
    for (const url of attempts) {
      const answer = await get(url)
      expect([403, 404], url).toContain(answer.status)
      expect(answer.body, url).not.toContain(SECRET)
    }
    expect((await get(`${APP_ORIGIN}/..%2fsecret.txt`)).status).toBe(403)
    expect((await get(`${APP_ORIGIN}/../secret.txt`)).status).toBe(404)
  })

  it('refuses a link that leads out of the app folder, to a file or through a folder', async () => {
    expect(await get(`${APP_ORIGIN}/assets/leak.js`)).toMatchObject({ status: 403 })
    expect(await get(`${APP_ORIGIN}/linked/other.js`)).toMatchObject({ status: 403 })
    expect((await get(`${APP_ORIGIN}/linked/other.js`)).body).not.toContain(SECRET)
  })

  it('refuses other hosts, ports, users and schemes', async () => {
    for (const url of [
      'app://evil/index.html',
      'app://switchboard.evil/index.html',
      'app://switchboard:8080/index.html',
      'app:///index.html',
      'http://switchboard/index.html',
      `file://${root}/index.html`
    ]) {
      expect((await get(url)).status, url).toBe(403)
    }
    // A web Request cannot carry credentials in its URL; the decision refuses them all the same.
    expect(await resolveAppRequest(root, 'GET', 'app://user:pw@switchboard/index.html')).toMatchObject({ ok: false, status: 403 })
  })

  it('answers a missing file or a folder with 404, bad encoding with 400, other methods with 405', async () => {
    expect((await get(`${APP_ORIGIN}/assets/missing.js`)).status).toBe(404)
    expect((await get(`${APP_ORIGIN}/assets`)).status).toBe(404)
    expect((await get(`${APP_ORIGIN}/assets/`)).status).toBe(404)
    expect((await get(`${APP_ORIGIN}/%E0%A4%A.js`)).status).toBe(400)
    expect((await get(APP_INDEX_URL, 'POST')).status).toBe(405)
    expect(await resolveAppRequest(root, 'PUT', APP_INDEX_URL)).toMatchObject({ ok: false, status: 405 })
    expect(await resolveAppRequest(join(base, 'no-such-folder'), 'GET', APP_INDEX_URL)).toMatchObject({ ok: false, status: 404 })
  })
})

describe("the renderer's page URL", () => {
  it('is the app scheme index, not a file:// page or another origin', () => {
    expect(isRendererPageUrl(APP_INDEX_URL)).toBe(true)
    expect(isRendererPageUrl(`${APP_ORIGIN}/`)).toBe(true)
    expect(isRendererPageUrl(`${APP_INDEX_URL}#/session`)).toBe(true)
    expect(isRendererPageUrl(`file://${join(builtRenderer, 'index.html')}`)).toBe(false)
    expect(isRendererPageUrl('app://evil/index.html')).toBe(false)
    expect(isRendererPageUrl(`${APP_ORIGIN}/assets/index.js`)).toBe(false)
    expect(isRendererPageUrl('app://x@switchboard/index.html')).toBe(false)
    expect(isRendererPageUrl('https://switchboard/index.html')).toBe(false)
    expect(isRendererPageUrl('not a url')).toBe(false)
  })

  it('is the dev server page under npm run dev, matched by origin and not by prefix', () => {
    const dev = 'http://localhost:5173'
    expect(isRendererPageUrl('http://localhost:5173/', dev)).toBe(true)
    expect(isRendererPageUrl('http://localhost:5173/index.html', `${dev}/`)).toBe(true)
    expect(isRendererPageUrl('http://localhost:51730/', dev)).toBe(false)
    expect(isRendererPageUrl('http://localhost:5173.evil.test/', dev)).toBe(false)
    expect(isRendererPageUrl('http://localhost:5173/@fs/etc/passwd', dev)).toBe(false)
    expect(isRendererPageUrl(APP_INDEX_URL, dev)).toBe(false)
  })
})

describe('links that leave the app', () => {
  it('open in the browser only for plain http(s) addresses', () => {
    expect(opensInBrowser('https://agentclientprotocol.com')).toBe(true)
    expect(opensInBrowser('http://example.com/a?b#c')).toBe(true)
    for (const url of [
      'file:///etc/passwd',
      'javascript:alert(1)',
      'app://switchboard/index.html',
      'vscode://file/x',
      'smb://server/share',
      'https://bank.example@evil.example/',
      'https://user:pw@example.com/',
      'https:',
      'not a url'
    ]) {
      expect(opensInBrowser(url), url).toBe(false)
    }
  })
})

/** Every file of the build, as a path relative to out/renderer. */
function builtFiles(dir = builtRenderer): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? builtFiles(path) : [relative(builtRenderer, path)]
  })
}

function metaCsp(html: string): string {
  const match = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]+)"/i.exec(html)
  if (!match) throw new Error('The built index.html has no CSP meta tag')
  return match[1]
}

describe('the built renderer under the app scheme', () => {
  beforeAll(() => {
    if (!existsSync(join(builtRenderer, 'index.html'))) {
      throw new Error(`No renderer build in ${builtRenderer}: run 'npx electron-vite build' first (npm test does)`)
    }
  })

  it("has a CSP with no file: and no wildcard, the same as the scheme's header less frame-ancestors", () => {
    const csp = metaCsp(readFileSync(join(builtRenderer, 'index.html'), 'utf8'))
    expect(csp).not.toMatch(/file:/i)
    expect(csp).not.toMatch(/\*|unsafe-inline|unsafe-eval|https?:/)
    expect(csp).toMatch(/script-src 'self'(;|$)/)
    expect(`${csp}; frame-ancestors 'none'`).toBe(APP_CSP)
  })

  it("loads every script, style sheet, icon and CSS url() of the page from the app's own origin", async () => {
    const html = readFileSync(join(builtRenderer, 'index.html'), 'utf8')
    const references = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1])
    const css = builtFiles().filter((f) => f.endsWith('.css'))
    for (const sheet of css) {
      const text = readFileSync(join(builtRenderer, sheet), 'utf8')
      for (const m of text.matchAll(/url\(\s*['"]?([^'")]+)['"]?\s*\)/g)) {
        if (!m[1].startsWith('data:')) references.push(new URL(m[1], `${APP_ORIGIN}/${sheet}`).href)
      }
    }
    expect(references.length).toBeGreaterThanOrEqual(3)
    for (const reference of references) {
      // 'self' is the page's origin: the reference must resolve to app://switchboard, not to a file: URL or elsewhere.
      const url = new URL(reference, APP_INDEX_URL)
      expect(`${url.protocol}//${url.host}`, reference).toBe(APP_ORIGIN)
      const answer = await serveAppRequest(builtRenderer, new Request(url.href))
      expect(answer.status, reference).toBe(200)
    }
  })

  it('serves every file of the build with a known MIME type, and module scripts as JavaScript', async () => {
    for (const file of builtFiles()) {
      const answer = await serveAppRequest(builtRenderer, new Request(`${APP_ORIGIN}/${file.split(/[\\/]/).map(encodeURIComponent).join('/')}`))
      expect(answer.status, file).toBe(200)
      expect(answer.headers.get('content-type'), file).not.toBe('application/octet-stream')
      if (file.endsWith('.js')) expect(answer.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    }
  })

  it('has no absolute file:// or other-origin loads in its scripts (workers, wasm, fonts, images)', () => {
    for (const file of builtFiles().filter((f) => /\.(js|css|html)$/.test(f))) {
      const text = readFileSync(join(builtRenderer, file), 'utf8')
      expect(text, file).not.toMatch(/new\s+(?:Shared)?Worker\s*\(/)
      expect(text, file).not.toMatch(/\.wasm\b/)
      expect(text, file).not.toMatch(/(?:src|href)\s*=\s*["']file:/i)
      expect(text, file).not.toMatch(/["']\/\/[a-z0-9.-]+\//i)
    }
  })
})
