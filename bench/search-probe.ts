import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { WebSocket } from 'ws'
import { Host } from '../electron/host/host'
import { SEARCH_INDEX_FILE } from '../electron/host/search/search-index'
import { launchBrowser, serve } from '../test/e2e/browser'
import { makeDataset } from './data'
import { stats, until } from './lib'
import { startProfiles } from './profile'
import { LIMIT, QUERY } from './search'

/**
 * Where the palette's time goes (`npx tsx bench/search-probe.ts 10000 9`): the search bench's query, typed into the
 * palette as it does, with each step's moment taken on one clock (epoch milliseconds, page and Host alike): the input
 * event, the request sent by the page, the Host's handling begun and answered, the answer's frames sent and received,
 * the first row in the page, the frame after. `PROBE_DIR` keeps the data folder between runs (made once). Each query's
 * span, typed to painted, is marked in a trace (`BENCH_TRACE=1`: `console.timeStamp` events 'probe-typed' and
 * 'probe-painted'), to sum the main thread's work (and, with `BENCH_PROFILE=1`, the profile's samples) over those spans only.
 */

const size = Number(process.argv[2] ?? 10_000)
const runs = Number(process.argv[3] ?? 9)
const root = process.env.PROBE_DIR ?? `/tmp/switchboard-search-probe-${size}`

const clock = (): number => performance.timeOrigin + performance.now()
const hostMarks: Record<string, number[]> = { handled: [], answered: [], sent: [] }

async function main(): Promise<void> {
  const dataDir = join(root, 'data')
  if (!existsSync(dataDir)) {
    const shape = size === 1 ? { projects: 1, sessions: 1, turnsPerSession: 1 } : { projects: 50, sessions: size, turnsPerSession: 1 }
    await makeDataset(root, shape)
  }
  const host = await Host.open({ dataDir, version: 'bench', presets: [], agentIdleMs: 0, search: { buildOnSearchOnly: true } })
  try {
    await host.request('sessions.list', {})
    while ((await host.request('search.query', { q: QUERY, limit: LIMIT })).indexing) await new Promise((r) => setTimeout(r, 50))
    await until(() => existsSync(join(dataDir, SEARCH_INDEX_FILE)), 'the index saved', 300_000)
    await new Promise((r) => setTimeout(r, 3000))
    const handle = host.handle.bind(host)
    host.handle = async (method, params, via) => {
      const search = method === 'search.query'
      if (search) hostMarks.handled.push(clock())
      const answer = await handle(method, params, via)
      if (search) hostMarks.answered.push(clock())
      return answer
    }
    const send = WebSocket.prototype.send
    WebSocket.prototype.send = function (this: WebSocket, data: unknown, ...rest: unknown[]) {
      const out = (send as (...a: unknown[]) => void).call(this, data, ...rest)
      if (typeof data === 'string' && data.includes('"entries"')) hostMarks.sent.push(clock())
      return out
    } as typeof send
    const server = await serve(host)
    const browser = await launchBrowser()
    try {
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage()
      await page.addInitScript(`(() => {
        const marks = (window.__probe = { send: [], recv: [], size: [] })
        const clock = () => performance.timeOrigin + performance.now()
        const send = WebSocket.prototype.send
        WebSocket.prototype.send = function (data) {
          if (typeof data === 'string' && data.includes('search.query')) marks.send.push(clock())
          return send.call(this, data)
        }
        const Socket = window.WebSocket
        window.WebSocket = class extends Socket {
          constructor(...args) {
            super(...args)
            this.addEventListener('message', (event) => {
              if (typeof event.data === 'string' && event.data.includes('"entries"')) { marks.recv.push(clock()); marks.size.push(event.data.length) }
            })
          }
        }
      })()`)
      await page.goto(server.url)
      await page.locator('[data-testid=session-item]').first().waitFor({ timeout: 120_000 })
      const rows: number[][] = []
      let stop = async (): Promise<void> => undefined
      for (let i = -1; i < runs; i++) {
        if (i === 0) stop = await startProfiles(browser, page, `search-probe-${size}`)
        await page.keyboard.press('Control+K')
        const input = page.getByTestId('search-input')
        await input.waitFor()
        await input.fill('')
        await page.getByTestId('search-result').first().waitFor({ state: 'detached', timeout: 60_000 })
        await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
        for (const list of Object.values(hostMarks)) list.length = 0
        await page.evaluate('window.__probe.send.length = 0; window.__probe.recv.length = 0')
        const seen = (await page.evaluate(`new Promise((resolve) => {
          const clock = () => performance.timeOrigin + performance.now()
          const input = document.querySelector('[data-testid=search-input]')
          const at = { typed: clock() }
          console.timeStamp('probe-typed')
          const observer = new MutationObserver(() => {
            if (!document.querySelector('[data-testid=search-result]')) return
            observer.disconnect()
            at.dom = clock()
            requestAnimationFrame(() => { at.frame = clock(); requestAnimationFrame(() => { at.painted = clock(); console.timeStamp('probe-painted'); resolve({ ...at, send: window.__probe.send[0], recv: window.__probe.recv[0], bytes: window.__probe.size.at(-1), rows: document.querySelectorAll('[data-testid=search-result]').length }) }) })
          })
          observer.observe(document, { childList: true, subtree: true })
          input.value = ${JSON.stringify(QUERY)}
          input.dispatchEvent(new Event('input', { bubbles: true }))
          at.dispatched = clock()
        })`)) as Record<string, number>
        const { typed } = seen
        const row = [
          seen.dispatched - typed,
          seen.send - typed,
          hostMarks.handled[0] - seen.send,
          hostMarks.answered[0] - hostMarks.handled[0],
          hostMarks.sent[0] - hostMarks.answered[0],
          seen.recv - hostMarks.sent[0],
          seen.dom - seen.recv,
          seen.frame - seen.dom,
          seen.painted - seen.frame,
          seen.painted - typed
        ]
        if (i >= 0) rows.push(row)
        console.log(i, row.map((v) => v.toFixed(1)).join('\t'), seen.bytes, seen.rows)
        await page.keyboard.press('Escape')
        await page.getByTestId('search-input').waitFor({ state: 'hidden' })
      }
      await stop()
      const names = ['input', 'to send', 'to Host', 'Host', 'to frames', 'to page', 'to DOM', 'to frame', 'to paint', 'total']
      console.log(names.join('\t'))
      console.log(names.map((_, k) => stats(rows.map((r) => r[k])).median.toFixed(1)).join('\t'))
    } finally {
      await browser.close()
      await server.close()
    }
  } finally {
    await host.close()
  }
}

void main()
