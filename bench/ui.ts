import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core'
import { Host } from '../electron/host/host'
import type { HostOptions } from '../electron/host/host-options'
import { readUserSettings, SETTINGS_FILE } from '../electron/host/settings/service'
import { startWsServer } from '../electron/host/web/ws-server'
import { firstScreenModule } from '../electron/host/host-process/first-screen-module'
import type { FirstScreenRenderer } from '../shared/contract'
import { CHROMIUM_ARGS, chromiumPath, rendererDir, serve } from '../test/e2e/browser'
import { FIRST_PAGE, FIRST_RECORDS } from '../shared/session-listing'
import { freePort } from '../test/helpers'
import { now, percentile } from './lib'
import { startProfiles } from './profile'

/** Measures in the real renderer (headless Chromium over `serve`) on prepared data folders. */

async function painted(page: Page): Promise<void> {
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
}

/**
 * When a start's first session row is painted, seen from the page itself: the frame after the rows came into
 * the page, on the page's clock (from its navigation's start; the machine's and the browser's clocks are not
 * compared, as a virtual machine's wall clock may be set meanwhile). The same for every page timed (the
 * window, the floor, the picture, another build's window). A page that paints its rows and then runs a long
 * task (the window's first screen drawn by the Host, then the window's code) is timed at that paint, not when
 * the task is over, as a wait for frames from outside the page would.
 */
const ROWS_PAINTED = `(() => {
  window.__rowsPainted = null
  const observer = new MutationObserver(() => {
    if (!document.querySelector('[data-testid=session-item]')) return
    observer.disconnect()
    // The frame that paints them, then a task after it.
    requestAnimationFrame(() => setTimeout(() => (window.__rowsPainted = performance.now())))
  })
  observer.observe(document, { childList: true, subtree: true })
})()`

let loadedFirstScreen: FirstScreenRenderer | undefined | null = null
/** The window's first screen from this build (out/main/first-screen.js), as `serve` and the desktop app give it to the Host. */
function firstScreen(): FirstScreenRenderer | undefined {
  if (loadedFirstScreen === null) loadedFirstScreen = firstScreenModule(join(rendererDir, '..', 'main', 'first-screen.js'))
  return loadedFirstScreen
}

/**
 * App start (Host opens the data folder, serves, the page loads) to the sidebar
 * painted with its sessions (its first row's paint, `ROWS_PAINTED`), in a new browser context (nothing kept from an
 * earlier start), or in a `warm` profile.
 */
export interface ListingOptions {
  /** Gets the share of the start that is the Host opening the data folder (db.json read, migrated, indexed). */
  parts?: { hostOpenMs: number[] }
  /** Another page than this build's window (the floor's, or another build's `out/renderer`), served the same way. */
  pageDir?: string
  /** A browser profile kept between starts (`warmProfile`). */
  warm?: WarmProfile
  /** Names the start's profiles (BENCH_PROFILE, BENCH_TRACE: the page's main thread and the Host over the whole start). */
  label?: string
}

export async function listing(browser: Browser, dataDir: string, options: ListingOptions = {}): Promise<number> {
  const context = options.warm?.context ?? (await browser.newContext({ viewport: { width: 1280, height: 800 } }))
  const page = await context.newPage()
  await page.addInitScript(ROWS_PAINTED)
  const stopProfiles = await startProfiles(browser, page, options.label ?? 'listing')
  const t0 = now()
  // As the desktop app starts (electron/main.ts): the window loads while the Host opens the data folder.
  const opening = Host.open({ dataDir, version: 'bench', presets: [], agentIdleMs: 0, firstScreen: firstScreen() })
  void opening.then(() => options.parts?.hostOpenMs.push(now() - t0)).catch(() => undefined)
  const themeChoice = async (): Promise<string | undefined> => (await readUserSettings(dataDir)).settings.theme
  const server = await startWsServer({ host: opening, themeChoice, rendererDir: options.pageDir ?? rendererDir, port: options.warm?.port })
  try {
    // The start: this side's time to the page's navigation, then the page's own time to its rows' paint.
    const toNavigation = now() - t0
    await page.goto(server.url)
    await page.locator('[data-testid=session-item]').first().waitFor({ timeout: 120_000 })
    await painted(page)
    const rowsPainted = (await (await page.waitForFunction('window.__rowsPainted')).jsonValue()) as number
    await stopProfiles()
    return toNavigation + rowsPainted
  } finally {
    await (options.warm ? page.close() : context.close())
    await server.close()
    await (await opening).close()
  }
}

/**
 * A browser profile on disk kept from one start to the next, as a person's
 * browser (or the desktop app's session) keeps it: the HTTP cache holds the
 * window's scripts (`serve` lets it keep the hashed ones) and V8's code cache
 * what it compiled from them. The server answers on the same port each time,
 * so the origin, and with it the caches, stay the same.
 */
export interface WarmProfile {
  context: BrowserContext
  port: number
}

export async function warmProfile(profileDir: string): Promise<WarmProfile> {
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath(),
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 }
  })
  return { context, port: await freePort() }
}

/**
 * A page's own script talking to the Host that serves it (the floors' and the pictures'): its WebSocket, with the token
 * from the page's address, and `ask`, which sends a request and resolves with what `waiting` is given for its id (the
 * page's `socket.onmessage`, its own).
 */
export const PAGE_SOCKET = `
const token = /token=([^&]+)/.exec(location.hash)[1]
const socket = new WebSocket('ws://' + location.host + '/ws?token=' + token)
const waiting = new Map()
const ask = (id, method, params) => new Promise((resolve) => {
  waiting.set(id, resolve)
  socket.send(JSON.stringify({ kind: 'request', id, method, params }))
})
`

/**
 * The least script that draws a start's rows: it asks the same Host for the projects and the first sessions
 * over the same WebSocket, in one round trip, and hands them to `draw` (the floor's and the picture's).
 */
const ASK_FIRST_ROWS = `${PAGE_SOCKET}
socket.onmessage = (event) => {
  const message = JSON.parse(event.data)
  if (message.kind === 'response') waiting.get(message.id)(message.result)
}
socket.onopen = async () => {
  const [projects, summary] = await Promise.all([
    ask(1, 'projects.list', {}),
    ask(2, 'sessions.summary', { limit: ${FIRST_PAGE}, records: ${FIRST_RECORDS} })
  ])
  draw(projects, summary.flatMap((group) => group.sessions))
}
`

/**
 * The floor of a start: a bare page (no framework, no style, one small script)
 * that asks the same Host for the projects and the first sessions over the
 * same WebSocket and writes one plain row per session (`writeFloorPage`; its
 * start is `listing` with `pageDir`), from before the Host opens to the rows
 * painted: what is left is the Host's open and serve, the browser's
 * navigation and fetch, the socket and the first frame, which no window could
 * do without.
 */
const FLOOR_SCRIPT = `
function draw(projects, sessions) {
  const list = document.getElementById('list')
  for (const project of projects) list.append(Object.assign(document.createElement('h3'), { textContent: project.name }))
  for (const session of sessions) {
    const row = Object.assign(document.createElement('div'), { textContent: session.title || 'Untitled' })
    row.dataset.testid = 'session-item'
    list.append(row)
  }
}
${ASK_FIRST_ROWS}`

export async function writeFloorPage(dir: string): Promise<void> {
  await writeFile(
    join(dir, 'index.html'),
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><script type="module" src="./floor.js"></script></head><body><div id="list"></div></body></html>'
  )
  await writeFile(join(dir, 'floor.js'), FLOOR_SCRIPT)
}

/**
 * The window's picture, drawn by the least script (`writePicturePage`): the
 * window's first screen as it was painted (its elements, its stylesheets, the
 * styles it set on elements moved to a stylesheet, as the page's CSP allows no
 * inline style), with no script of the window's; its session rows are left
 * out, one kept as a template, and the floor's script draws them from the
 * same Host's first answers. What the floor leaves out (styles, fonts, the
 * layout and paint of the window's ~120 elements) is in; what is left of a
 * window's start is its own script: the framework, the stores, the
 * components' mount.
 */
const PICTURE_SCRIPT = `
function draw(projects, sessions) {
  const here = document.getElementById('rows-here')
  const template = document.getElementById('row').content.firstElementChild
  for (const session of sessions) {
    const row = template.cloneNode(true)
    row.querySelector('[data-testid=session-item-title] bdi').textContent = session.title || 'Untitled'
    here.before(row)
  }
}
${ASK_FIRST_ROWS}`

/**
 * Run in a page (in `root`, its document or a copy of some of its elements): the styles the window set on elements
 * (the rows' places, the list's height) moved to rules of a stylesheet, as the page's CSP allows no inline style; each
 * element marked `data-picture` with `prefix` and its number (a prefix keeps two copies' rules apart).
 */
export const MOVE_STYLES = `function moveStyles(root, prefix, rules) {
  const styled = [...(root.matches?.('[style]') ? [root] : []), ...root.querySelectorAll('[style]')]
  styled.forEach((element, index) => {
    element.dataset.picture = prefix + index
    rules.push('[data-picture="' + prefix + index + '"] { ' + element.style.cssText + ' }')
    element.removeAttribute('style')
  })
}`

/**
 * Run in the window once its first screen is painted: the page as `writePicturePage` writes it, and the
 * stylesheet of the styles the window set on elements; null when its first session row has no title to write in.
 */
const CAPTURE_PICTURE = `(() => {
  const row = document.querySelector('[data-testid=session-item]')?.closest('[data-row-key]')
  if (!row?.querySelector('[data-testid=session-item-title] bdi')) return null
  ${MOVE_STYLES}
  const rules = []
  moveStyles(document, '', rules)
  const template = Object.assign(document.createElement('template'), { id: 'row' })
  template.content.append(row.cloneNode(true))
  document.querySelectorAll('[data-row-key^="session:"]').forEach((other) => other !== row && other.remove())
  row.replaceWith(Object.assign(document.createElement('span'), { id: 'rows-here' }))
  document.querySelectorAll('script, link[rel=modulepreload]').forEach((element) => element.remove())
  document.head.append(
    template,
    Object.assign(document.createElement('link'), { rel: 'stylesheet', href: './picture.css' }),
    Object.assign(document.createElement('script'), { type: 'module', src: './picture.js' })
  )
  return { html: '<!doctype html>' + document.documentElement.outerHTML, css: rules.join('\\n') }
})()`

/** Copies into `dir` what this build's window styles itself with (its stylesheets, its icon), not its scripts. */
export async function copyWindowStyles(dir: string): Promise<void> {
  await mkdir(join(dir, 'assets'), { recursive: true })
  for (const file of await readdir(join(rendererDir, 'assets'))) {
    if (file.endsWith('.css')) await copyFile(join(rendererDir, 'assets', file), join(dir, 'assets', file))
  }
  await copyFile(join(rendererDir, 'favicon.svg'), join(dir, 'favicon.svg'))
}

/** Writes into `dir` the window's first screen on `dataDir` as `PICTURE_SCRIPT` draws it (from this build's window). */
export async function writePicturePage(browser: Browser, dataDir: string, dir: string): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const host = await Host.open({ dataDir, version: 'bench', presets: [], agentIdleMs: 0 })
  const server = await startWsServer({ host, rendererDir })
  try {
    const page = await context.newPage()
    await page.goto(server.url)
    await page.locator('[data-testid=session-item]').first().waitFor({ timeout: 120_000 })
    await painted(page)
    const picture = (await page.evaluate(CAPTURE_PICTURE)) as { html: string; css: string } | null
    if (!picture) throw new Error("writePicturePage: the window's first session row has no [data-testid=session-item-title] bdi to write a title in")
    await copyWindowStyles(dir)
    await writeFile(join(dir, 'index.html'), picture.html)
    await writeFile(join(dir, 'picture.css'), picture.css)
    await writeFile(join(dir, 'picture.js'), PICTURE_SCRIPT)
  } finally {
    await context.close()
    await server.close()
    await host.close()
  }
}

export interface Reopened {
  firstPaintMs: number
  scrollFps: number
  frameP99Ms: number
  heapMb: number
}

/**
 * Opens a past session (nothing live: its transcript only) and times the click
 * to the first paint of its tail; then scrolls to the top and back and reports
 * the frame rate, and the renderer's JS heap after a garbage collection.
 */
export async function reopen(browser: Browser, dataDir: string, title: string, marker: string, scroll: boolean): Promise<Reopened> {
  return openPastSession(browser, dataDir, title, marker, async (page, firstPaintMs) => {
    let scrollFps = NaN
    let frameP99Ms = NaN
    if (scroll) {
      const frames = (await page.evaluate(`new Promise((resolve) => {
        const thread = document.querySelector('[data-testid=thread]')
        const scroller = (() => { let el = thread; while (el && el !== document.body) { const s = getComputedStyle(el); if (/(auto|scroll)/.test(s.overflowY) && el.scrollHeight > el.clientHeight) return el; el = el.parentElement } return thread })()
        const deltas = []
        let last = performance.now()
        let direction = -1
        const step = Math.max(200, scroller.clientHeight * 0.6)
        const started = last
        const tick = () => {
          const t = performance.now()
          deltas.push(t - last)
          last = t
          scroller.scrollTop += direction * step
          if (direction < 0 && scroller.scrollTop <= 0) direction = 1
          if ((direction > 0 && scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2) || t - started > 8000) { resolve(deltas.slice(1)); return }
          requestAnimationFrame(tick)
        }
        requestAnimationFrame(tick)
      })`)) as number[]
      const total = frames.reduce((a, b) => a + b, 0)
      scrollFps = (frames.length / total) * 1000
      frameP99Ms = percentile(frames, 99)
    }
    const cdp = await page.context().newCDPSession(page)
    await cdp.send('HeapProfiler.collectGarbage')
    const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }
    return { firstPaintMs, scrollFps, frameP99Ms, heapMb: heap.usedSize / 1024 / 1024 }
  })
}

/**
 * When a past session's tail is painted after the click on it, seen from the page itself (as `ROWS_PAINTED`):
 * from the click's pointerdown to the frame after the tail's entry (its text `window.__tailText`) came into the
 * page, on the page's clock; the harness's own round trips (the click's checks, the wait for the text, the
 * frames waited for after) are not in it.
 */
const TAIL_PAINTED = `(() => {
  window.__tailPainted = null
  document.addEventListener('pointerdown', (event) => {
    if (!window.__tailText || window.__clickedAt) return
    window.__clickedAt = event.timeStamp
    const observer = new MutationObserver(() => {
      if (!document.body.textContent.includes(window.__tailText)) return
      observer.disconnect()
      requestAnimationFrame(() => setTimeout(() => (window.__tailPainted = performance.now() - window.__clickedAt)))
    })
    observer.observe(document.body, { childList: true, subtree: true, characterData: true })
  }, true)
})()`

/**
 * A Host on `dataDir` served to a new page (this build's window, or `pageDir`'s: the open's picture); the click on the
 * session titled `title` timed to the first paint of its tail (the entry saying "the final answer <marker>"), then
 * `then` with the page; everything closed after.
 *
 * Each run opens the session anew, as a reader does a past one: the pane layout an earlier run kept (the session
 * left open, which the window puts back at its start) is cleared first, and the click comes once the page has
 * settled after its start (no fetch for half a second, then an idle moment), as a reader's after reading the list.
 */
export async function openPastSession<T>(
  browser: Browser,
  dataDir: string,
  title: string,
  marker: string,
  then: (page: Page, firstPaintMs: number) => Promise<T>,
  pageDir?: string
): Promise<T> {
  return withPastSessionListed(
    browser,
    dataDir,
    title,
    TAIL_PAINTED,
    async (page, item) => {
      await painted(page)
      await page.waitForLoadState('networkidle')
      await page.evaluate('new Promise((r) => requestIdleCallback(() => r(), { timeout: 2000 }))')
      const tail = `the final answer ${marker}`
      if ((await page.evaluate(`document.body.textContent.includes(${JSON.stringify(tail)})`)) as boolean) {
        throw new Error('openPastSession: the tail is in the page before the click')
      }
      await page.evaluate(`window.__tailText = ${JSON.stringify(tail)}`)
      await item.click()
      await page.getByText(tail).waitFor({ timeout: 300_000 })
      await painted(page)
      const firstPaintMs = (await (await page.waitForFunction('window.__tailPainted')).jsonValue()) as number
      return await then(page, firstPaintMs)
    },
    {},
    pageDir
  )
}

/**
 * A Host on `dataDir` with no pane kept open (forgetPaneLayout), served to a new page running `initScript`, with the
 * session titled `title` listed; then `then` with the page and that session's row; everything closed after. `hostOptions`
 * are given to the Host (a probe's hooks); `pageDir`: another page than this build's window (the open's picture).
 */
export async function withPastSessionListed<T>(
  browser: Browser,
  dataDir: string,
  title: string,
  initScript: string,
  then: (page: Page, item: Locator) => Promise<T>,
  hostOptions: Partial<HostOptions> = {},
  pageDir?: string
): Promise<T> {
  await forgetPaneLayout(dataDir)
  const host = await Host.open({ dataDir, version: 'bench', presets: [], agentIdleMs: 0, ...hostOptions })
  const server = pageDir ? await startWsServer({ host, rendererDir: pageDir }) : await serve(host)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  await page.addInitScript(initScript)
  try {
    await page.goto(server.url)
    const item = page.locator('[data-testid=session-item]', { hasText: title }).first()
    await item.waitFor({ timeout: 120_000 })
    return await then(page, item)
  } finally {
    await context.close()
    await server.close()
    await host.close()
  }
}

/** Clears the pane layout kept in `dataDir`'s settings (the sessions left open), as a window closed on none. */
async function forgetPaneLayout(dataDir: string): Promise<void> {
  const file = join(dataDir, SETTINGS_FILE)
  const settings = (JSON.parse(await readFile(file, 'utf8').catch(() => '{}')) as Record<string, unknown>) ?? {}
  delete settings.panes
  await writeFile(file, JSON.stringify(settings, null, 2))
}
