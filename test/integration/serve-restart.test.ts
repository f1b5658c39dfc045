import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { startServing, type ServeOptions, type Serving } from '../../electron/host/web/serving'
import { removeDir, tempDir } from '../helpers'

/**
 * `npm run serve` restarted on the same data folder keeps its port (when it
 * is free) and its token, kept owner-only in serve.json, so a page left open
 * reconnects by itself; --new-token rotates the token and the old one is
 * refused; --port still chooses.
 */

let root: string
let dataDir: string
let rendererDir: string
let serving: Serving | null = null
let blocker: Server | null = null

beforeEach(async () => {
  root = await tempDir('serve-restart')
  dataDir = join(root, 'data')
  rendererDir = join(root, 'renderer')
  await mkdir(rendererDir)
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><html lang="en"><head><title>Switchboard</title></head><body></body></html>')
})

afterEach(async () => {
  await serving?.close()
  serving = null
  await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)))
  blocker = null
  await removeDir(root)
})

async function start(options: Partial<ServeOptions> = {}): Promise<Serving> {
  await serving?.close()
  serving = await startServing({ dataDir, rendererDir, version: 'test', host: { presets: [] }, ...options })
  return serving
}

async function kept(): Promise<{ port: number; token: string }> {
  return JSON.parse(await readFile(join(dataDir, 'serve.json'), 'utf8')) as { port: number; token: string }
}

/** Opens the WebSocket as a page of the server would; resolves with the HTTP status of a refusal. */
function connect(port: number, token: string): Promise<'open' | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(token)}`, { origin: `http://127.0.0.1:${port}` })
    ws.once('open', () => {
      ws.close()
      resolve('open')
    })
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0))
    ws.once('error', reject)
  })
}

/** What a page whose upgrade failed asks: is my token the one? */
async function auth(port: number, token: string): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}/auth`, { headers: { authorization: `Bearer ${token}` } })
  expect(response.status).toBe(200)
  return ((await response.json()) as { accepted: boolean }).accepted
}

describe('a restarted serve', () => {
  it('keeps its port and its token, in an owner-only file, so an open page gets back in', async () => {
    const first = await start()
    const { port, token } = first.server
    expect(first.notes).toEqual([])
    expect(await kept()).toEqual({ port, token })
    if (process.platform !== 'win32') expect((await stat(join(dataDir, 'serve.json'))).mode & 0o777).toBe(0o600)
    expect(await connect(port, token)).toBe('open')

    const second = await start()
    expect(second.server.port).toBe(port)
    expect(second.server.token).toBe(token)
    expect(second.server.url).toBe(first.server.url)
    expect(second.notes).toEqual([])
    expect(await connect(port, token)).toBe('open')
    expect(await auth(port, token)).toBe(true)
    expect(await auth(port, 'not-the-token')).toBe(false)
  })

  it('--new-token makes a new token and refuses the old one', async () => {
    const { token: old, port } = (await start()).server
    const rotated = await start({ newToken: true })
    expect(rotated.server.token).not.toBe(old)
    expect(rotated.server.port).toBe(port)
    expect(rotated.notes).toEqual([expect.stringMatching(/^A new token was made \(--new-token\): pages opened with the old address are refused/)])
    expect(await connect(port, old)).toBe(401)
    expect(await auth(port, old)).toBe(false)
    expect(await connect(port, rotated.server.token)).toBe('open')
    expect(await auth(port, rotated.server.token)).toBe(true)
    // The new one is the one kept.
    expect((await kept()).token).toBe(rotated.server.token)
    if (process.platform !== 'win32') expect((await stat(join(dataDir, 'serve.json'))).mode & 0o777).toBe(0o600)
    expect((await start()).server.token).toBe(rotated.server.token)
  })

  it('takes a free port when the kept one is taken, says so, and keeps the new one', async () => {
    const { port, token } = (await start()).server
    await serving?.close()
    serving = null
    blocker = createServer()
    await new Promise<void>((resolve) => blocker?.listen(port, '127.0.0.1', resolve))

    const moved = await start()
    expect(moved.server.port).not.toBe(port)
    expect(moved.server.token).toBe(token)
    expect(moved.notes).toEqual([
      `Port ${port}, used last time, is taken (EADDRINUSE); serving on port ${moved.server.port} instead. Pages opened with the old address cannot reconnect: open the new one.`
    ])
    expect((await kept()).port).toBe(moved.server.port)
  })

  it('--port chooses the port, and a taken one is an error that says what to do', async () => {
    const free = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number }
        probe.close(() => resolve(port))
      })
    })
    const chosen = await start({ port: free })
    expect(chosen.server.port).toBe(free)
    expect((await kept()).port).toBe(free)
    await serving?.close()
    serving = null

    blocker = createServer()
    await new Promise<void>((resolve) => blocker?.listen(free, '127.0.0.1', resolve))
    await expect(start({ port: free })).rejects.toThrow(`Port ${free} is taken by another program: choose another with --port`)
    // Nothing was left open: the data folder can be served again at once.
    expect((await start()).server.port).not.toBe(free)
  })

  it.runIf(process.platform !== 'win32')('does not trust a token other users could read: a new one, and the file owner-only again', async () => {
    const { token } = (await start()).server
    await serving?.close()
    serving = null
    await chmod(join(dataDir, 'serve.json'), 0o644)
    const next = await start()
    expect(next.server.token).not.toBe(token)
    expect(next.notes).toEqual([expect.stringMatching(/serve\.json could be read by other users of this machine; its token is no longer trusted/)])
    expect((await stat(join(dataDir, 'serve.json'))).mode & 0o777).toBe(0o600)
  })

  it('starts afresh from a serve.json that is not JSON, and says so', async () => {
    await mkdir(dataDir, { recursive: true })
    await writeFile(join(dataDir, 'serve.json'), '{"port": 12', { mode: 0o600 })
    const fresh = await start()
    expect(fresh.notes).toEqual([expect.stringMatching(/serve\.json could not be read \(.+\); a new token and port were chosen\.$/)])
    expect(await kept()).toEqual({ port: fresh.server.port, token: fresh.server.token })
  })

  it('serves the page with the theme the user chose, so its first paint is right', async () => {
    const { host, server } = await start()
    const page = async (): Promise<string> => (await fetch(`http://127.0.0.1:${server.port}/`)).text()
    expect(await page()).toContain('<html lang="en">')
    await host.request('settings.set', { theme: 'dark' })
    expect(await page()).toContain('<html lang="en" data-theme-choice="dark" data-theme="dark">')
    await host.request('settings.set', { theme: 'system' })
    expect(await page()).toContain('<html lang="en" data-theme-choice="system">')
  })
})
