import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { connect } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chromium, type Browser } from 'playwright-core'
import { removeDir, tempDir } from '../helpers'
import { CHROMIUM_ARGS, chromiumPath } from './browser'

/**
 * `npm run serve` (the real command, its own process) cannot be stopped by a
 * request. Malformed targets (a lone `%`, escapes that are not UTF-8, `//`, an
 * absolute-form target), plain or as a WebSocket upgrade, sent on a raw TCP
 * socket or by a page on another loopback port, are answered 400 and the
 * server goes on serving; a Host header that does not name this server on
 * loopback is refused.
 */

/** `npm run serve` as built (npm test builds first), not its source through tsx: the same code, started in a third of the CPU. */
const serveScript = fileURLToPath(new URL('../../out/main/serve.js', import.meta.url))

let root: string
let child: ChildProcess
let output = ''
let port: number
let token: string
let browser: Browser | null = null
let other: Server | null = null

beforeAll(async () => {
  root = await tempDir('serve-malformed')
  const rendererDir = join(root, 'renderer')
  await mkdir(rendererDir)
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><html lang="en"><head><title>Switchboard</title></head><body></body></html>')
  child = spawn(process.execPath, [serveScript, '--data-dir', join(root, 'data'), '--renderer-dir', rendererDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SWITCHBOARD_DATA_DIR: '' }
  })
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer): void => {
      output += chunk.toString()
      const match = /^Open (http:\/\/\S+)$/m.exec(output)
      if (match) resolve(match[1])
    }
    child.stdout!.on('data', read)
    child.stderr!.on('data', read)
    child.once('exit', (code) => reject(new Error(`serve ended (code ${code}) before printing its address:\n${output}`)))
  })
  const parsed = new URL(url)
  port = Number(parsed.port)
  token = parsed.hash.replace('#token=', '')
})

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => (other ? other.close(resolve) : resolve(undefined)))
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  await removeDir(root)
})

/** Sends `request` as is on a new TCP connection; resolves with the head of the answer (or what came before the server closed it). */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1')
      if (!answer.includes('\r\n\r\n')) return
      resolve(answer)
      socket.destroy()
    })
    socket.on('end', () => resolve(answer))
    socket.on('close', () => resolve(answer))
    socket.on('error', (error) => (answer ? resolve(answer) : reject(error)))
    socket.write(request, 'latin1')
  })
}

const status = (answer: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)

function get(target: string, host = `127.0.0.1:${port}`): Promise<string> {
  return raw(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
}

function upgrade(target: string, host = `127.0.0.1:${port}`): Promise<string> {
  return raw(
    `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
      `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: http://127.0.0.1:${port}\r\n\r\n`
  )
}

/** The process is still there and serves the page. */
async function stillServing(): Promise<void> {
  expect(child.exitCode, output).toBeNull()
  expect(child.signalCode, output).toBeNull()
  expect(status(await get('/')), output).toBe(200)
}

const MALFORMED = ['/%', '/%C0%AF', '/%E0%A4%A', '//', '//evil.example/index.html', '/%00', 'http://evil.example/', `http://127.0.0.1/ws`]

describe('serve against malformed requests', () => {
  it('answers each malformed target 400, plain and as an upgrade, and keeps serving after each', async () => {
    await stillServing()
    for (const target of MALFORMED) {
      expect(status(await get(target)), `GET ${target}`).toBe(400)
      await stillServing()
      const asUpgrade = target.startsWith('http:') ? target : `${target}${target.includes('?') ? '&' : '?'}token=${token}`
      expect(status(await upgrade(asUpgrade)), `upgrade ${asUpgrade}`).toBe(400)
      await stillServing()
    }
    // The socket path itself, with its token, still upgrades.
    expect(status(await upgrade(`/ws?token=${token}`))).toBe(101)
    await stillServing()
  })

  it('serves only a Host header that names it on loopback', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      expect(status(await get('/', host)), host).toBe(200)
    }
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${port + 1}`, `10.0.0.1:${port}`, `127.0.0.1`, '']) {
      expect(status(await get('/', host)), `Host: ${host}`).toBe(421)
      expect(status(await upgrade(`/ws?token=${token}`, host)), `upgrade with Host: ${host}`).toBe(421)
      await stillServing()
    }
  })

  it('keeps serving after a page on another loopback port sends the same requests', async () => {
    other = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'))
    await new Promise<void>((resolve) => other!.listen(0, '127.0.0.1', resolve))
    const otherPort = (other.address() as { port: number }).port
    browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS })
    const page = await browser.newPage()
    await page.goto(`http://127.0.0.1:${otherPort}/`)
    const targets = MALFORMED.filter((target) => target.startsWith('/'))
    for (const target of targets) {
      // What the page can send: a no-cors fetch and a WebSocket, each settled (refused or failed) before the next.
      const sent = await page.evaluate(
        async ({ port, target }) => {
          const results: string[] = []
          try {
            const response = await fetch(`http://127.0.0.1:${port}${target}`, { mode: 'no-cors' })
            results.push(`fetch ${response.type}`)
          } catch (error) {
            results.push(`fetch failed: ${String(error)}`)
          }
          results.push(
            await new Promise<string>((resolve) => {
              const ws = new WebSocket(`ws://127.0.0.1:${port}${target}`)
              ws.onopen = () => resolve('ws open')
              ws.onclose = () => resolve('ws closed')
            })
          )
          return results
        },
        { port, target }
      )
      expect(sent.at(-1), target).toBe('ws closed')
      await stillServing()
    }
  })
})
