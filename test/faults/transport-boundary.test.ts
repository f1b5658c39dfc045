import { request as httpRequest } from 'node:http'
import { mkdir, writeFile } from 'node:fs/promises'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import type { Host } from '../../electron/host/host'
import { isLoopbackAddress, startWsServer, type RunningServer } from '../../electron/host/web/ws-server'
import { openHost, removeDir, tempDir } from '../helpers'

/**
 * Who may talk to the Host over the WebSocket, and what it does with what
 * they send: loopback only, the token, our own Origin and Host; a message
 * that breaks the contract is refused with an error and changes nothing.
 */

let root: string
let host: Host
let server: RunningServer

beforeEach(async () => {
  root = await tempDir('transport')
  const rendererDir = join(root, 'renderer')
  await mkdir(rendererDir)
  await mkdir(join(root, 'project'))
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><title>Switchboard</title>')
  host = await openHost(join(root, 'data'))
  server = await startWsServer({ host, rendererDir })
})

afterEach(async () => {
  await server.close()
  await host.close()
  await removeDir(root)
})

interface Attempt {
  path?: string
  origin?: string
  hostHeader?: string
}

/** Opens the socket; resolves with it, or rejects with the HTTP status it was refused with. */
function connect({ path = `/ws?token=${server.token}`, origin, hostHeader }: Attempt = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {}
    if (hostHeader) headers.Host = hostHeader
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}${path}`, { headers, ...(origin ? { origin } : {}) })
    ws.once('open', () => resolve(ws))
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)))
    ws.once('error', reject)
  })
}

/** Sends raw text; resolves with the response to `id`, or how the socket was closed. */
function exchange(ws: WebSocket, text: string | Buffer, id?: number): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData): void => {
      const parsed = JSON.parse(data.toString()) as Record<string, unknown>
      if (parsed.kind === 'response' && parsed.id === id) {
        ws.off('message', onMessage)
        resolve(parsed)
      }
    }
    ws.on('message', onMessage)
    ws.once('close', (code, reason) => resolve({ closed: code, reason: reason.toString() }))
    ws.send(text)
  })
}

function get(path: string, hostHeader: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, path, headers: { Host: hostHeader } }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end()
  })
}

describe('who may connect', () => {
  it('refuses no token, a wrong token, a token of the wrong length, and a token under another name', async () => {
    await expect(connect({ path: '/ws' })).rejects.toThrow('HTTP 401')
    await expect(connect({ path: `/ws?token=${'x'.repeat(server.token.length)}` })).rejects.toThrow('HTTP 401')
    await expect(connect({ path: `/ws?token=${server.token}x` })).rejects.toThrow('HTTP 401')
    await expect(connect({ path: `/ws?token=${server.token.slice(1)}` })).rejects.toThrow('HTTP 401')
    await expect(connect({ path: `/ws?tok=${server.token}` })).rejects.toThrow('HTTP 401')
    await expect(connect({ path: `/other?token=${server.token}` })).rejects.toThrow('HTTP 404')
  })

  it('refuses a foreign Origin, and a Host that is not ours (DNS rebinding), for the socket and the files', async () => {
    for (const origin of ['https://evil.example', 'http://127.0.0.1.evil.example', `http://127.0.0.1:${server.port + 1}`, 'null', 'file://']) {
      await expect(connect({ origin }), origin).rejects.toThrow('HTTP 403')
    }
    await expect(connect({ hostHeader: `evil.example:${server.port}` })).rejects.toThrow('HTTP 421')
    expect(await get('/', `evil.example:${server.port}`)).toBe(421)
    expect(await get('/', `127.0.0.1:${server.port}`)).toBe(200)
    const ours = await connect({ origin: `http://localhost:${server.port}` })
    ours.close()
  })

  it('refuses to listen anywhere but loopback', async () => {
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && !a.internal)?.address
    for (const address of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'example.com', '127.0.0.1.nip.io', ...(lan ? [lan] : [])]) {
      await expect(startWsServer({ host, rendererDir: root, bindAddress: address }), address).rejects.toThrow(
        `Refusing to listen on ${address}: the Switchboard host only listens on loopback`
      )
    }
    expect(await isLoopbackAddress('127.0.0.1')).toBe(true)
    expect(await isLoopbackAddress('127.8.9.10')).toBe(true)
    expect(await isLoopbackAddress('::1')).toBe(true)
    expect(await isLoopbackAddress('::ffff:127.0.0.1')).toBe(true)
    expect(await isLoopbackAddress('::ffff:10.0.0.1')).toBe(false)
  })
})

describe('what a connected client may send', () => {
  it('answers a message that breaks the contract with an error, and applies nothing of it', async () => {
    const ws = await connect()
    const projectDir = join(root, 'project')
    const cases: [string, unknown][] = [
      ['params of the wrong type', { kind: 'request', id: 1, method: 'projects.add', params: { cwd: 42 } }],
      ['params missing', { kind: 'request', id: 2, method: 'projects.add', params: {} }],
      ['a method that does not exist', { kind: 'request', id: 3, method: 'projects.__proto__', params: { cwd: projectDir } }],
      ['a prototype key as method', { kind: 'request', id: 4, method: 'constructor', params: {} }],
      ['an oversized field', { kind: 'request', id: 5, method: 'projects.add', params: { cwd: projectDir, name: 'n'.repeat(201) } }],
      ['a prompt for a session that is not there', { kind: 'request', id: 6, method: 'sessions.prompt', params: { id: 'nope', text: 'hi' } }],
      ['no kind', { id: 7, method: 'projects.add', params: { cwd: projectDir } }],
      ['a negative id', { kind: 'request', id: -8, method: 'projects.add', params: { cwd: projectDir } }]
    ]
    for (const [name, message] of cases) {
      const id = (message as { id: number }).id
      const answer = await exchange(ws, JSON.stringify(message), id)
      if (id >= 0) expect(answer, name).toMatchObject({ kind: 'response', id, ok: false, error: { message: expect.any(String) } })
    }
    // None of it was applied.
    expect(await host.request('projects.list', {})).toEqual([])
    // The connection still works for a good request.
    expect(await exchange(ws, JSON.stringify({ kind: 'request', id: 9, method: 'projects.add', params: { cwd: projectDir } }), 9)).toMatchObject({
      ok: true,
      result: { cwd: projectDir }
    })
    ws.close()
  })

  it('closes the connection on text that is not JSON, and on a message over 16 MB, without applying anything or falling over', async () => {
    const first = await connect()
    expect(await exchange(first, 'this is not json')).toMatchObject({ closed: 1007, reason: 'Refused a message that is not JSON' })
    const second = await connect()
    const huge = JSON.stringify({
      kind: 'request',
      id: 1,
      method: 'projects.add',
      params: { cwd: join(root, 'project'), name: 'x'.repeat(17 * 1024 * 1024) }
    })
    expect(await exchange(second, huge, 1)).toMatchObject({ closed: 1009 })
    expect(await host.request('projects.list', {})).toEqual([])
    // The server is still there for the next client.
    const third = await connect()
    expect(await exchange(third, JSON.stringify({ kind: 'request', id: 2, method: 'app.info', params: {} }), 2)).toMatchObject({ ok: true })
    third.close()
  })
})
