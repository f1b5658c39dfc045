import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { Host } from '../electron/host/host'
import type { RunningServer } from '../electron/host/web/ws-server'
import { scriptedTransport } from '../test/agent/spawn'
import { serve } from '../test/e2e/browser'
import { confirmEverything } from '../test/helpers'
import { agentEnv, rate } from './agents'
import { now, percentile, until } from './lib'
import { startProfiles } from './profile'

/** Switchboard itself under measurement: the Host, and the renderer in Chromium over `serve`. */

export interface App {
  host: Host
  projectId: string
  agentIds: string[]
  close(): Promise<void>
}

export async function openApp(root: string, agents = 1, agentExtraEnv: Record<string, string> = {}): Promise<App> {
  const dataDir = join(root, 'data')
  const projectDir = join(root, 'project')
  await mkdir(projectDir, { recursive: true })
  const host = await Host.open({
    dataDir,
    version: 'bench',
    presets: [],
    initializeTimeoutMs: 60_000,
    agentIdleMs: 0,
    confirmCommand: confirmEverything
  })
  const projectId = (await host.request('projects.add', { cwd: projectDir })).id
  const agentIds: string[] = []
  for (let i = 0; i < agents; i++) {
    const agent = await host.request('agents.add', {
      name: `Scripted ${String.fromCharCode(65 + i)}`,
      transport: scriptedTransport(agentEnv(null, agentExtraEnv))
    })
    agentIds.push(agent.id)
  }
  return { host, projectId, agentIds, close: () => host.close() }
}

/** Counts the agent message chunks the Host has emitted for one session, with first/last times. */
export function chunkCounter(host: Host, sessionId: string): { seen: () => number; rate: (n: number) => number; stop: () => void } {
  let seen = 0
  let first = 0
  let last = 0
  const stop = host.events.subscribe((events) => {
    const t = now()
    for (const event of events) {
      if (event.type !== 'session.records' || event.payload.id !== sessionId) continue
      for (const record of event.payload.records) {
        if (record.t === 'update' && record.update.sessionUpdate === 'agent_message_chunk') {
          if (seen === 0) first = t
          last = t
          seen++
        }
      }
    }
  })
  return { seen: () => seen, rate: (n) => rate(n, first, last), stop }
}

/** The Host with store and transcript on: chunks/s from the first to the last chunk it emits. */
export async function hostStream(app: App, chunks: number): Promise<number> {
  const session = await app.host.request('sessions.new', { projectId: app.projectId, agentId: app.agentIds[0] })
  const counter = chunkCounter(app.host, session.id)
  try {
    await app.host.request('sessions.prompt', { id: session.id, text: `/stream ${chunks}` })
    app.host.events.flush()
    await until(() => counter.seen() >= chunks, 'the Host to emit every chunk')
    return counter.rate(chunks)
  } finally {
    counter.stop()
  }
}

/**
 * Installs a per-frame watcher in the page: when the last assistant entry of
 * the thread first shows `chunk 1 ` and when it shows `chunk N ` at its end,
 * in page time. It reads only the entry's first and last block (a markdown
 * block or a piece of plain text), so watching costs the page little however
 * long the message grows. A message too long for markdown is shown as plain
 * text, its start only (agent-text.ts): the watcher asks for all of it, as a
 * reader following the answer would ("Show all").
 * (A string, not a function: tsx would add helpers the page does not have.)
 */
export async function watchChunks(page: Page, chunks: number, scope = 'body', key = 'default'): Promise<void> {
  await page.evaluate(`(() => {
    const all = (window.__bench ??= {})
    const w = (all[${JSON.stringify(key)}] = { first: 0, last: 0 })
    const needle = ${JSON.stringify(`chunk ${chunks}`)}
    const tick = () => {
      const root = document.querySelector(${JSON.stringify(scope)}) ?? document.body
      const entries = root.querySelectorAll('[data-testid=entry-assistant]')
      const entry = entries.length ? entries[entries.length - 1] : null
      const t = performance.now()
      if (entry) {
        entry.querySelector('[data-testid=plain-show-all]')?.click()
        const blocks = entry.querySelectorAll('.md-block, .plain-piece')
        if (!w.first && blocks.length && (blocks[0].textContent ?? '').includes('chunk 1 ')) w.first = t
        if (blocks.length && (blocks[blocks.length - 1].textContent ?? '').trimEnd().endsWith(needle)) { w.last = t; return }
      }
      requestAnimationFrame(tick)
    }
    requestAnimationFrame(tick)
  })()`)
}

export async function chunksShown(page: Page, key = 'default'): Promise<{ first: number; last: number }> {
  return page.evaluate(`window.__bench[${JSON.stringify(key)}]`) as Promise<{ first: number; last: number }>
}

/** Opens the renderer on a served Host, with the given session open in it. */
export async function openPage(browser: Browser, server: RunningServer, sessionTitle?: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  await page.goto(server.url)
  if (sessionTitle !== undefined) {
    await page.getByTestId('session-item').filter({ hasText: sessionTitle }).first().click()
    await page.getByTestId('composer-input').waitFor()
  }
  return page
}

/** End to end into the renderer: chunks/s between the first and the last chunk shown on screen. */
export async function rendererStream(app: App, browser: Browser, chunks: number): Promise<number> {
  const server = await serve(app.host)
  try {
    const session = await app.host.request('sessions.new', { projectId: app.projectId, agentId: app.agentIds[0] })
    const title = `bench ${session.id.slice(0, 8)}`
    await app.host.request('sessions.prompt', { id: session.id, text: `warm-up ${title}` })
    const page = await openPage(browser, server, title)
    await watchChunks(page, chunks)
    const stopProfiles = await startProfiles(browser, page, `stream-${chunks}`)
    await app.host.request('sessions.prompt', { id: session.id, text: `/stream ${chunks}` })
    // Asked every 100 ms (the times are taken in the page): each question is a task on the page's main thread.
    const shown = async (): Promise<boolean> => {
      if ((await chunksShown(page)).last > 0) return true
      await new Promise((r) => setTimeout(r, 100))
      return false
    }
    await until(shown, 'the renderer to show the last chunk', 600_000)
    await stopProfiles()
    const { first, last } = await chunksShown(page)
    await page.context().close()
    return rate(chunks, first, last)
  } finally {
    await server.close()
  }
}

export interface Frames {
  p50: number
  p99: number
  frames: number
  /** Chunks per second the two panes received together, as the Host emitted them. */
  rate: number
}

/**
 * Two panes, each with its own agent's session, streaming at once (about
 * 1,000 chunks/s each); the page's frame durations (requestAnimationFrame
 * deltas: 16.7 ms is a frame on time at 60 Hz) meanwhile.
 */
export async function framesWhileStreaming(app: App, browser: Browser, chunks: number): Promise<Frames> {
  const server = await serve(app.host)
  try {
    const sessions = []
    for (const [i, agentId] of app.agentIds.slice(0, 2).entries()) {
      const session = await app.host.request('sessions.new', { projectId: app.projectId, agentId })
      await app.host.request('sessions.prompt', { id: session.id, text: `pane ${i + 1} ${session.id.slice(0, 6)}` })
      sessions.push(session)
    }
    // The two panes as the Host keeps a layout: each run starts with them, whatever the last run left.
    await app.host.request('settings.set', {
      panes: { panes: sessions.map((s, i) => ({ id: `pane-${i + 1}`, sessionId: s.id })), focused: 'pane-1', maximised: null }
    })
    const page = await openPage(browser, server)
    for (const i of [0, 1]) await page.getByTestId('pane').nth(i).getByTestId('composer-input').waitFor()
    await page.evaluate(`(() => {
      const w = (window.__frames = { deltas: [], running: true })
      let last = performance.now()
      const tick = () => {
        const t = performance.now()
        w.deltas.push(t - last)
        last = t
        if (w.running) requestAnimationFrame(tick)
      }
      requestAnimationFrame(tick)
    })()`)
    const stopProfiles = await startProfiles(browser, page, `frames-${chunks}`)
    const seconds = await streamBoth(app, sessions, chunks)
    await page.waitForTimeout(300)
    await stopProfiles()
    const frames = await framesOf(page, chunks, seconds)
    await page.context().close()
    return frames
  } finally {
    await server.close()
  }
}

/** The floor's page: a sidebar's width of nothing, then two panes of text in the window's font. */
const FLOOR_PAGE = `<!doctype html><html><body style="margin:0;font:14px/1.5 system-ui,sans-serif;display:flex">
<aside style="width:260px;flex:none"></aside>
<div style="flex:1;padding:20px;overflow:auto;height:100vh;box-sizing:border-box"><p id="pane-1"></p></div>
<div style="flex:1;padding:20px;overflow:auto;height:100vh;box-sizing:border-box"><p id="pane-2"></p></div></body></html>`

/**
 * The frames figure's baseline: the least a page can do for the same picture
 * under the same load. The Host streams the same two sessions (`/stream`,
 * the same agents, store, transcripts and search index) with no window
 * listening, while a bare page (no framework, no markdown) appends the same
 * chunk text to two paragraphs each frame at `perPaneRate` chunks/s, the rate
 * the window's run got. What it reads over 33 ms is the machine's, not
 * Switchboard's.
 */
export async function framesFloor(app: App, browser: Browser, chunks: number, perPaneRate: number): Promise<Frames> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  try {
    const page = await context.newPage()
    await page.setContent(FLOOR_PAGE)
    const sessions = []
    for (const agentId of app.agentIds.slice(0, 2)) sessions.push(await app.host.request('sessions.new', { projectId: app.projectId, agentId }))
    await page.evaluate(`(() => {
      const w = (window.__frames = { deltas: [], running: true, shown: 0 })
      const nodes = ['pane-1', 'pane-2'].map((id) => document.getElementById(id).appendChild(document.createTextNode('')))
      const perMs = ${perPaneRate} / 1000
      const start = performance.now()
      let last = start
      const tick = () => {
        const t = performance.now()
        w.deltas.push(t - last)
        last = t
        const due = Math.min(${chunks}, Math.floor((t - start) * perMs))
        if (due > w.shown) {
          let text = ''
          for (let i = w.shown; i < due; i++) text += 'chunk ' + (i + 1) + ' '
          for (const node of nodes) node.appendData(text)
          w.shown = due
        }
        if (w.running) requestAnimationFrame(tick)
      }
      requestAnimationFrame(tick)
    })()`)
    const seconds = await streamBoth(app, sessions, chunks, async () => ((await page.evaluate('window.__frames.shown')) as number) >= chunks)
    await page.waitForTimeout(300)
    return await framesOf(page, chunks, seconds)
  } finally {
    await context.close()
  }
}

/**
 * Prompts `/stream chunks` in both sessions at once; resolves with the seconds until the Host has emitted every
 * chunk of both and, when given, `shown` says the page has them all.
 */
async function streamBoth(app: App, sessions: { id: string }[], chunks: number, shown?: () => Promise<boolean>): Promise<number> {
  const counters = sessions.map((s) => chunkCounter(app.host, s.id))
  const t0 = now()
  await Promise.all(sessions.map((s) => app.host.request('sessions.prompt', { id: s.id, text: `/stream ${chunks}` })))
  app.host.events.flush()
  await until(() => counters.every((c) => c.seen() >= chunks), 'both sessions to emit every chunk')
  if (shown) await until(shown, 'the page to show every chunk')
  const seconds = (now() - t0) / 1000
  for (const c of counters) c.stop()
  return seconds
}

/** Stops the page's frame recorder (`window.__frames`, its first two frames left out) and sums it up. */
async function framesOf(page: Page, chunks: number, seconds: number): Promise<Frames> {
  const deltas = (await page.evaluate('(() => { window.__frames.running = false; return window.__frames.deltas.slice(2) })()')) as number[]
  return { p50: percentile(deltas, 50), p99: percentile(deltas, 99), frames: deltas.length, rate: (2 * chunks) / seconds }
}
