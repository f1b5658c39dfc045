import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import type { Host } from '../../electron/host/host'
import { startWsServer, type RunningServer } from '../../electron/host/web/ws-server'
import { WIRE_PIECE_CHARS, WIRE_TEXT_CHARS, joinWire, wireFrameCount, wireFrames, wireHeader, wirePieces } from '../../shared/wire-pieces'
import { openHost, removeDir, tempDir, waitUntil } from '../helpers'

/** The loopback WebSocket transport: who may connect, and what it answers. */

let root: string
let host: Host
let server: RunningServer

beforeEach(async () => {
  root = await tempDir('ws')
  const rendererDir = join(root, 'renderer')
  await mkdir(rendererDir)
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><title>Switchboard</title>')
  host = await openHost(join(root, 'data'))
  server = await startWsServer({ host, rendererDir })
})

afterEach(async () => {
  await server.close()
  await host.close()
  await removeDir(root)
})

function connect(query: string, origin?: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws${query}`, origin ? { origin } : {})
    ws.once('open', () => resolve(ws))
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)))
    ws.once('error', reject)
  })
}

function call(ws: WebSocket, message: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    ws.on('message', (data) => {
      const parsed = JSON.parse(data.toString()) as Record<string, unknown>
      if (parsed.kind === 'response') resolve(parsed)
    })
    ws.send(JSON.stringify(message))
  })
}

describe('WebSocket transport', () => {
  it('prints a loopback URL carrying the token', () => {
    expect(server.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${server.port}/#token=${server.token}$`))
  })

  it('refuses a missing token, a wrong token and a foreign origin', async () => {
    await expect(connect('')).rejects.toThrow('HTTP 401')
    await expect(connect('?token=wrong')).rejects.toThrow('HTTP 401')
    await expect(connect(`?token=${server.token}`, 'https://evil.example')).rejects.toThrow('HTTP 403')
    await expect(connect(`?token=${server.token}`, `http://127.0.0.1:${server.port + 1}`)).rejects.toThrow('HTTP 403')
  })

  it('refuses to listen on a non-loopback address', async () => {
    await expect(startWsServer({ host, rendererDir: root, bindAddress: '0.0.0.0' })).rejects.toThrow(/only listens on loopback/)
  })

  it('answers requests from our own origin, and refuses malformed ones with an error', async () => {
    const ws = await connect(`?token=${server.token}`, `http://127.0.0.1:${server.port}`)
    const info = await call(ws, { kind: 'request', id: 1, method: 'app.info', params: {} })
    expect(info).toMatchObject({ kind: 'response', id: 1, ok: true, result: { version: 'test', nativeFolderPicker: false } })
    const bad = await call(ws, { kind: 'request', id: 2, method: 'projects.add', params: { cwd: ['x'] } })
    expect(bad).toMatchObject({ id: 2, ok: false, error: { code: 'invalid_params' } })
    const malformed = await call(ws, { kind: 'request', id: 3 })
    expect(malformed).toMatchObject({ id: 3, ok: false, error: { code: 'invalid_request' } })
    ws.close()
  })

  it('serves the renderer with a strict CSP and nothing outside its folder', async () => {
    const page = await fetch(`http://127.0.0.1:${server.port}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    const csp = page.headers.get('content-security-policy') ?? ''
    const directive = (name: string): string =>
      csp
        .split(';')
        .map((d) => d.trim())
        .find((d) => d.startsWith(`${name} `)) ?? ''
    // Scripts and styles only from the app itself: nothing inline, no eval.
    expect(directive('script-src')).toBe("script-src 'self'")
    expect(directive('style-src')).toBe("style-src 'self'")
    expect(directive('default-src')).toBe("default-src 'self'")
    expect(directive('object-src')).toBe("object-src 'none'")
    expect(csp).not.toContain('unsafe')
    const escape = await fetch(`http://127.0.0.1:${server.port}/..%2F..%2Fdata%2Fdb.json`)
    expect([403, 404]).toContain(escape.status)
  })

  it('lets the browser keep the built scripts, named by their content, but asks again for the page and the rest', async () => {
    const rendererDir = join(root, 'renderer')
    await mkdir(join(rendererDir, 'assets'))
    await writeFile(join(rendererDir, 'assets', 'index-BjDkBn_n.js'), 'export {}')
    await writeFile(join(rendererDir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
    const url = (path: string): string => `http://127.0.0.1:${server.port}${path}`
    const script = await fetch(url('/assets/index-BjDkBn_n.js'))
    expect(script.status).toBe(200)
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    for (const path of ['/', '/index.html', '/favicon.svg']) {
      const answer = await fetch(url(path))
      expect(answer.status).toBe(200)
      expect(answer.headers.get('cache-control')).toBe('no-cache')
    }
    // Not found is not kept at all: the next build may have it.
    const missing = await fetch(url('/assets/gone-AbCdEf12.js'))
    expect(missing.status).toBe(404)
    expect(missing.headers.get('cache-control')).toBe('no-store')
  })

  it('sends a message of megabytes in pieces the page joins (no surrogate pair split), and a short one whole', async () => {
    const ws = await connect(`?token=${server.token}`, `http://127.0.0.1:${server.port}`)
    let frames: string[] = []
    ws.on('message', (data) => frames.push(data.toString()))
    // Emoji are surrogate pairs: a piece that ended between the two halves would reach the page as U+FFFD.
    // Two prefixes one character apart: with one of them, a piece's end falls inside a pair.
    for (const prefix of ['a title of ', 'a title of x']) {
      frames = []
      const title = `${prefix}${'😀'.repeat(150_000)} and more`
      host.events.emit('agent.login.output', { loginId: 'big', data: title })
      host.events.flush()
      host.events.emit('agent.login.output', { loginId: 'small', data: 'short' })
      await expect.poll(() => frames.some((f) => f.includes('"small"'))).toBe(true)
      const header = wireHeader(frames[0])
      // The skeleton in one frame; the title outside it, in pieces.
      expect(header).toEqual({ kind: 'pieces', count: 1, texts: [{ path: ['events', 0, 'payload', 'data'], count: expect.any(Number) }] })
      const pieces = frames.slice(1, 1 + wireFrameCount(header!))
      expect(pieces.every((p) => p.length <= WIRE_PIECE_CHARS)).toBe(true)
      expect(pieces.length).toBeGreaterThan(4)
      expect(joinWire(header!, pieces)).toEqual({
        kind: 'events',
        events: [{ type: 'agent.login.output', payload: { loginId: 'big', data: title } }]
      })
      // The short one after it: one frame.
      expect(frames).toHaveLength(wireFrameCount(header!) + 2)
      expect(JSON.parse(frames[frames.length - 1])).toMatchObject({ kind: 'events' })
    }
    ws.close()
  })

  it('cuts text in pieces that join back to it, never between the halves of a surrogate pair', () => {
    const text = 'ab' + '😀'.repeat(10) + 'cd'
    for (const size of [1, 2, 3, 5, 7]) {
      const pieces = wirePieces(text, Math.max(size, 2))
      expect(pieces.join('')).toBe(text)
      for (const piece of pieces) expect(piece).toBe(Buffer.from(piece, 'utf8').toString('utf8'))
    }
    expect(wirePieces('', 4)).toEqual([])
  })

  it('takes every long string out of a long message and puts each back where it was', () => {
    const long = (c: string) => c.repeat(WIRE_TEXT_CHARS + 1)
    const message = {
      kind: 'events',
      events: [
        { type: 'a', payload: { list: ['short', long('x'), { deep: [long('y')] }], n: 1, none: null, empty: '' } },
        { type: 'b', payload: { text: 'w'.repeat(60_000), other: long('z') } }
      ]
    }
    const [first, ...rest] = wireFrames(message)
    const header = wireHeader(first)!
    expect(header.texts.map((t) => t.path)).toEqual([
      ['events', 0, 'payload', 'list', 1],
      ['events', 0, 'payload', 'list', 2, 'deep', 0],
      ['events', 1, 'payload', 'text'],
      ['events', 1, 'payload', 'other']
    ])
    expect(rest).toHaveLength(wireFrameCount(header))
    expect(joinWire(header, rest)).toEqual(message)
    // A short message is one frame, as it was.
    expect(wireFrames({ kind: 'events', events: [] })).toEqual(['{"kind":"events","events":[]}'])
    // Frames that do not fit the header are refused, not half applied.
    expect(() => joinWire({ ...header, texts: [{ path: ['events', 0, 'type'], count: 1 }] }, [rest[0], 'x'])).toThrow(/no place for a text/)
    expect(wireHeader('{"kind":"pieces","count":"x"}')).toBeNull()
  })

  it('sends a long message of short strings (a batch of streamed chunks) as its own JSON in pieces, whole and in order', () => {
    const records = Array.from({ length: 2_000 }, (_, i) => ({
      t: 'update',
      update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `chunk ${i + 1} 😀` } }
    }))
    const message = { kind: 'events', events: [{ type: 'session.records', payload: { id: 's', seq: 7, records } }] }
    const [first, ...rest] = wireFrames(message)
    const header = wireHeader(first)!
    expect(header.texts).toEqual([])
    expect(rest.length).toBeGreaterThan(2)
    expect(rest).toHaveLength(wireFrameCount(header))
    expect(rest.every((p) => p.length <= WIRE_PIECE_CHARS)).toBe(true)
    expect(joinWire(header, rest)).toEqual(message)
  })

  it('sends a long batch of short records (an agent streaming) as its JSON in pieces, every record back in its place', () => {
    const events = Array.from({ length: 2_000 }, (_, i) => ({
      type: 'session.records',
      payload: { id: 's-1', seq: i, gone: undefined, records: [{ t: 'update', text: `chunk ${i} `, none: null, list: [1, undefined] }] }
    }))
    const message = { kind: 'events', events }
    const [first, ...rest] = wireFrames(message)
    const header = wireHeader(first)!
    expect(header.texts).toEqual([])
    expect(rest.every((frame) => frame.length <= WIRE_PIECE_CHARS)).toBe(true)
    expect(rest.join('')).toBe(JSON.stringify(message))
    expect(joinWire(header, rest)).toEqual(JSON.parse(JSON.stringify(message)))
  })
})

describe('a Host still opening its data folder (the desktop app loads its window meanwhile)', () => {
  /** A server given a Host that opens when `open` is called (or fails with `fail`), and a socket to it that keeps what comes. */
  async function whileOpening(): Promise<{
    early: RunningServer
    ws: WebSocket
    received: Record<string, unknown>[]
    open: (h: Host) => void
    fail: (e: Error) => void
  }> {
    const rendererDir = join(root, 'opening-renderer')
    await mkdir(rendererDir)
    await writeFile(join(rendererDir, 'index.html'), '<!doctype html><html lang="en"><title>Switchboard</title></html>')
    let open: (h: Host) => void = () => undefined
    let fail: (e: Error) => void = () => undefined
    const opening = new Promise<Host>((resolve, reject) => {
      open = resolve
      fail = reject
    })
    const early = await startWsServer({ host: opening, rendererDir, themeChoice: async () => 'dark' })
    const ws = new WebSocket(`ws://127.0.0.1:${early.port}/ws?token=${early.token}`, { origin: `http://127.0.0.1:${early.port}` })
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
    const received: Record<string, unknown>[] = []
    ws.on('message', (data) => received.push(JSON.parse(data.toString()) as Record<string, unknown>))
    return { early, ws, received, open, fail }
  }

  it('serves the page at once in the chosen theme; the requests sent meanwhile are answered once it is open, then its events come', async () => {
    const { early, ws, received, open } = await whileOpening()
    try {
      const page = await fetch(`http://127.0.0.1:${early.port}/`)
      expect(await page.text()).toContain('<html lang="en" data-theme-choice="dark" data-theme="dark">')
      ws.send(JSON.stringify({ kind: 'request', id: 1, method: 'app.info', params: {} }))
      ws.send(JSON.stringify({ kind: 'request', id: 2, method: 'projects.list', params: {} }))
      await new Promise((r) => setTimeout(r, 100))
      expect(received).toEqual([])

      open(host)
      const responses = await waitUntil('both answers', () => {
        const answered = received.filter((m) => m.kind === 'response')
        return answered.length === 2 ? answered : null
      })
      expect(responses.sort((a, b) => Number(a.id) - Number(b.id))).toMatchObject([
        { id: 1, ok: true, result: { version: 'test' } },
        { id: 2, ok: true, result: [] }
      ])
      host.events.emit('agent.login.output', { loginId: 'after', data: 'opened' })
      await waitUntil('the event', () => received.some((m) => m.kind === 'events' && JSON.stringify(m).includes('"after"')))
    } finally {
      ws.close()
      await early.close()
    }
  })

  it('answers each request with the reason when the Host could not open', async () => {
    const { early, ws, received, fail } = await whileOpening()
    try {
      ws.send(JSON.stringify({ kind: 'request', id: 7, method: 'projects.list', params: {} }))
      fail(new Error('Another Switchboard (pid 4242) is using this data folder'))
      const answer = await waitUntil('the answer', () => received.find((m) => m.kind === 'response'))
      expect(answer).toMatchObject({
        id: 7,
        ok: false,
        error: { message: 'Switchboard could not open its data folder: Another Switchboard (pid 4242) is using this data folder' }
      })
    } finally {
      ws.close()
      await early.close()
    }
  })
})
