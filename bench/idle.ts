import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { SEARCH_INDEX_FILE } from '../electron/host/search/search-index'
import { launchBrowser } from '../test/e2e/browser'
import { scriptedTransport } from '../test/agent/spawn'
import { agentEnv } from './agents'
import { makeDataset } from './data'
import { listingShape, seededDataDir } from './seeds'
import { copyDataFolder, phases, settleDisk, until, withTempDir, type Figure } from './lib'
import { chromiumProcesses, cpuSeconds, rssMb, childrenOf, searchComplete, startServe, type ChromiumProcess, type Served } from './processes'

/**
 * Issue 40's goals 3 and 4, on a data folder of 10,000 sessions (50 projects) and four long finished
 * conversations, served as `npm run serve` serves it (bench/processes.ts) to the window in headless Chromium:
 *
 * - `idle` (nothing when nothing happens): the CPU time the Host (serve's Host process and serve itself, which
 *   supervises it as the desktop app's main process does) and Chromium's renderers use over IDLE_SECONDS with the
 *   four conversations open in four panes and nothing happening; then the same with one agent connected and idle.
 *   The baseline, measured over the same seconds: the same app on an empty data folder, no pane open. Meanwhile
 *   every wake-up is counted where it was asked for: in the Host by bench/wakeups-preload.cjs, in the page by
 *   PAGE_WAKEUPS (timers, animation frames, messages from the Host, CSS animations running).
 * - `app-memory` (the whole app's memory): RSS of the Host, serve's supervisor and the page's renderer while four
 *   panes stream at once (four agents), sampled every 100 ms, its peak; the baseline, the same processes a moment
 *   before the streams start. Chromium's browser and GPU processes and the agents are given beside it.
 */

type Add = (figure: Omit<Figure, 'median' | 'min' | 'max' | 'runs'>, samples: number[]) => Figure

/** What a long finished conversation is here: 2,500 turns, 10,000 entries. */
const LONG_TURNS = 2_500

/** Where the page's focus is at the count's end, and whether a focused field's caret rests (caret-rest.ts) or blinks. */
const CARET = `(() => {
  const field = document.activeElement
  if (!field || !field.matches('textarea, input')) return 'no field focused'
  const name = field.dataset.testid || field.tagName.toLowerCase()
  return getComputedStyle(field).caretAnimation === 'manual' ? name + ' focused, its caret at rest' : name + ' focused, its caret blinking'
})()`

/** The Host's garbage collections over the count, for the note: V8's work shows in no wake-up. */
function gcNote(count: WakeupCount | undefined): string {
  const gc = count?.gc
  if (!gc) return ''
  return ` (V8 collected its heap ${gc.major} times, ${gc.majorMs.toFixed(0)} ms on its main thread, and its new space ${gc.minor} times)`
}

/**
 * Counts the page's wake-ups by where they were asked for (the first frames of the stack that scheduled them):
 * setTimeout, setInterval and requestAnimationFrame callbacks run, messages on a WebSocket, and at the end the
 * CSS animations running. `__wakeups.start()` starts afresh, `__wakeups.stop()` returns the count.
 */
const PAGE_WAKEUPS = `(() => {
  const counts = new Map()
  let counting = false
  let since = 0
  const site = () => (new Error().stack || '').split('\\n').slice(3, 6).map((l) => l.trim().replace(/^at /, '').replace(/https?:\\/\\/[^/]+\\//, '')).join(' < ')
  const note = (key) => { if (counting) counts.set(key, (counts.get(key) || 0) + 1) }
  for (const [name, kind] of [['setTimeout', 'timeout'], ['setInterval', 'interval'], ['requestAnimationFrame', 'frame']]) {
    const original = window[name]
    window[name] = function (callback, ...rest) {
      if (typeof callback !== 'function') return original.call(this, callback, ...rest)
      const key = kind + ' ' + site()
      return original.call(this, function (...args) { note(key); return callback.apply(this, args) }, ...rest)
    }
  }
  const Socket = window.WebSocket
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args)
      this.addEventListener('message', () => note('websocket message from the Host'))
    }
  }
  window.__wakeups = {
    start() { counts.clear(); counting = true; since = performance.now() },
    stop() {
      counting = false
      const animations = document.getAnimations().filter((a) => a.playState === 'running').map((a) => {
        const target = a.effect && a.effect.target
        const name = a.animationName || a.constructor.name
        const where = target ? (target.getAttribute('data-testid') || target.className || target.tagName) : '?'
        return name + ' on ' + where
      })
      return { seconds: (performance.now() - since) / 1000, sites: Object.fromEntries(counts), animations }
    }
  }
})()`

interface WakeupCount {
  seconds: number
  sites: Record<string, number>
  animations?: string[]
  /** A Node process's garbage collections over the same seconds (bench/wakeups-preload.cjs), and their time on its main thread. */
  gc?: { major: number; majorMs: number; minor: number; minorMs: number }
}

/** The busiest sites of a count, per second, for the report: `[site, per second]`, busiest first. */
function perSecond(count: WakeupCount): [string, number][] {
  return Object.entries(count.sites)
    .map(([site, n]): [string, number] => [site, n / count.seconds])
    .sort((a, b) => b[1] - a[1])
}

/** Timers only (not a socket's or a pipe's callbacks, which come from outside): the Host's Timeouts, the page's timers and frames. */
function isTimer(site: string): boolean {
  return /^(Timeout|Immediate|timeout|interval|frame) /.test(site)
}

/** The processes measured: what the goal counts, and what is given beside it. */
interface Measured {
  host: number
  supervisor: number
  renderers: number[]
  /** Of them, the window's: the one with the largest RSS (the others are Chromium's own: its spare renderer, its UI's). */
  window: number
  /** Chromium's browser process, GPU and utilities. */
  others: ChromiumProcess[]
  agents: number[]
}

async function measured(served: Served, browser: Browser): Promise<Measured> {
  const chromium = await chromiumProcesses(browser)
  const renderers = chromium.filter((p) => p.type === 'renderer').map((p) => p.pid)
  return {
    host: served.host,
    supervisor: served.supervisor,
    renderers,
    window: renderers.map((pid) => ({ pid, rss: rssMb(pid) })).sort((a, b) => b.rss - a.rss)[0].pid,
    others: chromium.filter((p) => p.type !== 'renderer'),
    agents: childrenOf(served.host)
  }
}

/**
 * CPU seconds so far: what the goal counts (the Host, serve's supervisor, the window's renderer) and what is given
 * beside it (Chromium's browser, GPU, utilities and other renderers; the agents).
 */
function cpuOf(m: Measured): Record<'host' | 'supervisor' | 'renderer' | 'chromium' | 'agents', number> {
  const sum = (pids: number[]): number => pids.reduce((s, pid) => s + cpuSeconds(pid), 0)
  return {
    host: cpuSeconds(m.host),
    supervisor: cpuSeconds(m.supervisor),
    renderer: cpuSeconds(m.window),
    chromium: sum([...m.others.map((p) => p.pid), ...m.renderers.filter((pid) => pid !== m.window)]),
    agents: sum(m.agents)
  }
}

/**
 * Opens the window on `served` in a new context, with PAGE_WAKEUPS unless `wakeups` is false (its wrappers take a
 * stack at every timer and frame asked for: the bench's own work); waits for `panes` panes with their conversations shown.
 */
async function openWindow(browser: Browser, served: Served, panes: number, wakeups = true): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1600, height: 900 } })
  const page = await context.newPage()
  if (wakeups) await page.addInitScript(PAGE_WAKEUPS)
  await page.goto(served.url)
  await page.getByTestId('session-item').first().waitFor({ timeout: 120_000 })
  for (let i = 0; i < panes; i++) {
    await page.getByTestId('pane').nth(i).getByTestId('entry-assistant').last().waitFor({ timeout: 120_000 })
  }
  return page
}

async function setPanes(served: Served, sessionIds: string[]): Promise<void> {
  await served.client.request('settings.set', {
    panes: { panes: sessionIds.map((sessionId, i) => ({ id: `pane-${i + 1}`, sessionId })), focused: 'pane-1', maximised: null }
  })
}

/** The Host's and serve's wake-ups (bench/wakeups-preload.cjs): SIGUSR2 starts the count, the next writes it. */
async function hostWakeups(served: Served, dir: string, start: boolean): Promise<Record<'host' | 'supervisor', WakeupCount> | null> {
  for (const pid of [served.host, served.supervisor]) process.kill(pid, 'SIGUSR2')
  if (start) return null
  const file = async (name: string): Promise<WakeupCount | null> => {
    const found = (await readdir(dir)).find((f) => f.startsWith(`${name}-`))
    return found ? (JSON.parse(await readFile(join(dir, found), 'utf8')) as WakeupCount) : null
  }
  await until(async () => (await file('host')) !== null && (await file('supervisor')) !== null, 'the wake-up counts', 10_000)
  const [host, supervisor] = [(await file('host'))!, (await file('supervisor'))!]
  for (const f of await readdir(dir)) await rm(join(dir, f))
  return { host, supervisor }
}

function printWakeups(label: string, counts: Record<string, WakeupCount>): void {
  console.error(`  ${label}: wake-ups per second by site (timers marked *)`)
  for (const [who, count] of Object.entries(counts)) {
    const rows = perSecond(count)
    if (rows.length === 0) console.error(`    ${who}: none`)
    for (const [site, rate] of rows.slice(0, 12)) console.error(`    ${who} ${isTimer(site) ? '*' : ' '} ${rate.toFixed(3)}/s ${site}`)
    if (count.animations?.length) console.error(`    ${who}: CSS animations running: ${count.animations.join('; ')}`)
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Promise.all that waits for every one to settle before it fails (what started is then in `served` or `browsers`, to close). */
async function allOf<T extends readonly unknown[]>(all: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(all)
  const failed = settled.find((one) => one.status === 'rejected')
  if (failed) throw failed.reason
  return settled.map((one) => (one as PromiseFulfilledResult<unknown>).value) as unknown as T
}

/**
 * Waits for the Host's search index to be complete (its first build reads every transcript) and kept on disk
 * (search-index.json, written in slices after the build, atomically: there once it is whole).
 */
async function indexed(served: Served, dataDir: string): Promise<void> {
  await searchComplete(served)
  await until(
    async () => {
      if (existsSync(join(dataDir, SEARCH_INDEX_FILE))) return true
      await sleep(500)
      return false
    },
    'the search index to be saved',
    600_000
  )
}

/**
 * Waits until what a start or a load left to do is over: 2 s in which the processes measured use under 3 % of
 * a core together (at most 90 s). Returns the seconds waited.
 */
async function settled(m: Measured[]): Promise<number> {
  const t0 = Date.now()
  const total = (): number => m.reduce((s, one) => s + Object.values(cpuOf(one)).reduce((a, b) => a + b, 0), 0)
  while (Date.now() - t0 < 90_000) {
    const before = total()
    await sleep(2_000)
    if (((total() - before) / 2) * 100 < 3) break
  }
  return (Date.now() - t0) / 1000
}

/** One app measured in an idle window: serve on its data folder, its window, where its wake-ups are counted. */
interface IdleApp {
  label: string
  agentNote: string
  served: Served
  browser: Browser
  page: Page
  wakeupsDir: string
}

/**
 * `idle`: the four panes on long finished conversations, and the same with an agent connected and idle, each an app
 * of its own (serve on its own copy of the data folder, its window in a browser of its own), and the empty app,
 * all three measured over the same `seconds` (IDLE_SECONDS, default 60; 10 in a quick run). An idle app asks next
 * to nothing of the cores, so the three do not wait for one another; one window of `seconds` measures them all
 * (two windows in turn took twice the bench's time).
 */
export async function idleFigures(add: Add, quick: boolean): Promise<void> {
  const seconds = Number(process.env.BENCH_IDLE_SECONDS) || (quick ? 10 : 60)
  const sessions = quick ? 1_000 : 10_000
  const browsers: Browser[] = []
  const phase = phases('idle')
  try {
    await withTempDir('idle', async (root) => {
      const served: Served[] = []
      try {
        await measureIdle(root, served)
      } finally {
        for (const one of served) await one.close()
        phase('the apps closed')
      }
    })
    phase('its folder removed')
  } finally {
    for (const one of browsers) await one.close()
  }

  async function measureIdle(root: string, served: Served[]): Promise<void> {
    const dataset = await makeDataset(join(root, 'full'), { projects: 50, sessions, turnsPerSession: 1, longTurns: LONG_TURNS, longSessions: 4 })
    // The index built once and kept, as on every start after a data folder's first: the three apps load it.
    phase('its data folder made')
    const first = await startServe(dataset.dataDir)
    try {
      await indexed(first, dataset.dataDir)
    } finally {
      await first.close()
    }
    phase('its search index built and saved')
    const withAgentDir = join(root, 'full-agent')
    await copyDataFolder(dataset.dataDir, withAgentDir)
    const empty = await makeDataset(join(root, 'empty'), { projects: 0, sessions: 0, turnsPerSession: 1 })
    await settleDisk()
    phase('copied for the app with an agent, the empty folder made')
    const wakeups = async (name: string): Promise<string> => {
      const dir = join(root, `wakeups-${name}`)
      await mkdir(dir, { recursive: true })
      return dir
    }
    const startApp = async (dataDir: string, wakeupsDir: string): Promise<Served> => {
      const one = await startServe(dataDir, wakeupsDir)
      served.push(one)
      return one
    }
    const newBrowser = async (): Promise<Browser> => {
      const one = await launchBrowser()
      browsers.push(one)
      return one
    }
    const quietDir = await wakeups('quiet')
    const agentDir = await wakeups('agent')
    // The three apps start at once, and their windows open at once (one after another they took 47 s of the group's
    // ~100 at load 8): whatever a start or a window leaves to do is over before the count (indexed, settled).
    const [quiet, withAgent, base] = await allOf([
      startApp(dataset.dataDir, quietDir),
      startApp(withAgentDir, agentDir),
      startServe(empty.dataDir).then((one) => (served.push(one), one))
    ])
    // One agent connected and idle: a session of the scripted agent, a turn done, its session in the fourth pane.
    const agent = await withAgent.confirmed<{ id: string }>('agents.add', { name: 'Scripted', transport: scriptedTransport(agentEnv(null)) })
    const session = await withAgent.client.request<{ id: string }>('sessions.new', { projectId: 'project-0', agentId: agent.id })
    await withAgent.client.request('sessions.prompt', { id: session.id, text: 'hello' })
    await setPanes(quiet, dataset.longSessionIds)
    await setPanes(withAgent, [...dataset.longSessionIds.slice(0, 3), session.id])
    phase('three apps started, the agent connected')
    const window = async (label: string, agentNote: string, one: Served, wakeupsDir: string): Promise<IdleApp> => {
      const browser = await newBrowser()
      return { label, agentNote, served: one, browser, page: await openWindow(browser, one, 4), wakeupsDir }
    }
    const emptyWindow = async (): Promise<{ browser: Browser; page: Page }> => {
      const browser = await newBrowser()
      const page = await browser.newPage()
      await page.addInitScript(PAGE_WAKEUPS)
      await page.goto(base.url)
      await page.getByTestId('empty-state').first().waitFor({ timeout: 60_000 })
      return { browser, page }
    }
    const [quietApp, agentApp, { browser: baseBrowser, page: basePage }] = await allOf([
      window('nothing running', '', quiet, quietDir),
      window('one agent connected and idle', ', one of them an idle agent’s (connected)', withAgent, agentDir),
      emptyWindow()
    ] as const)
    const apps: IdleApp[] = [quietApp, agentApp]
    phase('their windows open, four panes shown')
    // Whatever the start left to do (the search index, the first screen's work) is done before the count starts.
    await indexed(quiet, dataset.dataDir)
    await indexed(withAgent, withAgentDir)
    phase('their search indexes loaded')
    const measuredApps = await Promise.all(apps.map((app) => measured(app.served, app.browser)))
    const baseline = await measured(base, baseBrowser)
    console.error(`  idle: settled after ${await settled([...measuredApps, baseline])} s`)
    phase('settled')

    for (const app of apps) await hostWakeups(app.served, app.wakeupsDir, true)
    // What the window's renderer did in the window (Chromium's own counters: tasks, layouts, style work, script).
    const pageWork = await Promise.all(apps.map((app) => rendererWork(app.page)))
    for (const app of apps) await app.page.evaluate('window.__wakeups.start()')
    await basePage.evaluate('window.__wakeups.start()')
    const before = { apps: measuredApps.map(cpuOf), base: cpuOf(baseline) }
    await sleep(seconds * 1000)
    const after = { apps: measuredApps.map(cpuOf), base: cpuOf(baseline) }
    phase(`the window counted (${seconds} s)`)
    const pageDid = await Promise.all(pageWork.map((work) => work()))
    // What the idle Host holds meanwhile (what a collection in the window would have given back stays here).
    const hostRss = measuredApps.map((m) => rssMb(m.host))
    const pageCounts: WakeupCount[] = []
    for (const app of apps) pageCounts.push((await app.page.evaluate('window.__wakeups.stop()')) as WakeupCount)
    const basePageCount = (await basePage.evaluate('window.__wakeups.stop()')) as WakeupCount
    // The window gives the focused pane's composer the focus; its caret rests (no blink) after 5 s with no key (caret-rest.ts).
    const carets: string[] = []
    for (const app of apps) carets.push((await app.page.evaluate(CARET)) as string)
    const hostCounts: Record<'host' | 'supervisor', WakeupCount>[] = []
    for (const app of apps) hostCounts.push((await hostWakeups(app.served, app.wakeupsDir, false))!)

    const pct = (from: number, to: number): number => ((to - from) / seconds) * 100
    const total = (c: ReturnType<typeof cpuOf>): number => c.host + c.supervisor + c.renderer
    apps.forEach((app, i) => {
      const [a0, a1] = [before.apps[i], after.apps[i]]
      const label = app.label
      const baseFigure = add(
        {
          group: '12',
          name: `idle CPU, ${label}: baseline, the app on an empty data folder over the same seconds (Host + serve + the window's renderer)`,
          unit: '% of a core',
          note: `${seconds} s`
        },
        [pct(total(before.base), total(after.base))]
      )
      baseFigure.ratio = 1
      baseFigure.baseline = 'empty app'
      const f = add(
        {
          group: '12',
          name: `idle CPU, ${label}: Host + serve + the window's renderer, ${sessions.toLocaleString('en-US')} sessions, 4 panes on conversations of ${(LONG_TURNS * 4).toLocaleString('en-US')} entries${app.agentNote}`,
          unit: '% of a core',
          note:
            `${seconds} s, ${carets[i]}; of it Host ${pct(a0.host, a1.host).toFixed(2)} %${gcNote(hostCounts[i].host)} (its RSS ${hostRss[i].toFixed(0)} MB at the end), ` +
            `serve ${pct(a0.supervisor, a1.supervisor).toFixed(2)} %, ` +
            `the window's renderer ${pct(a0.renderer, a1.renderer).toFixed(2)} % (${pageDid[i]}); ` +
            `beside it Chromium's browser, GPU, utilities and its ${measuredApps[i].renderers.length - 1} other renderers (its spare, its own UI's) ` +
            `${pct(a0.chromium, a1.chromium).toFixed(2)} %${measuredApps[i].agents.length ? `, the agent ${pct(a0.agents, a1.agents).toFixed(2)} %` : ''}`
        },
        [pct(total(a0), total(a1))]
      )
      f.ratio = baseFigure.median > 0 ? f.median / baseFigure.median : undefined
      f.baseline = 'empty app'
      const counts: Record<string, WakeupCount> = { page: pageCounts[i], host: hostCounts[i].host, serve: hostCounts[i].supervisor }
      printWakeups(label, { ...counts, 'empty app page': basePageCount })
      f.goal = '< 1 % of a core'
      f.met = f.median < 1
      if (!f.met) f.reach = `the empty app reads ${baseFigure.median.toFixed(2)} %`
      const timers = Object.entries(counts).flatMap(([who, c]) =>
        perSecond(c)
          .filter(([site]) => isTimer(site))
          .map(([site, rate]) => ({ who, site, rate }))
      )
      const busiest = timers.sort((x, y) => y.rate - x.rate)[0]
      const w = add(
        {
          group: '12',
          name: `idle: the most frequent timer, ${label}`,
          unit: 'firings/s',
          note: busiest ? `${busiest.who}: ${busiest.site.slice(0, 120)}` : 'no timer fired'
        },
        [busiest?.rate ?? 0]
      )
      w.goal = '≤ 1 a second'
      w.met = w.median <= 1
      const animations = pageCounts[i].animations ?? []
      if (animations.length) w.note += `; CSS animations running: ${animations.join(', ')}`
    })
  }
}

/**
 * Chromium's counters for the window's renderer (CDP's Performance domain) from now; the function returns what they
 * rose by, in words: its tasks' time, layouts, style recalculations, script time.
 */
async function rendererWork(page: Page): Promise<() => Promise<string>> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Performance.enable')
  const read = async (): Promise<Record<string, number>> => {
    const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] }
    return Object.fromEntries(metrics.map((m) => [m.name, m.value]))
  }
  const from = await read()
  return async () => {
    const to = await read()
    const rose = (name: string): number => (to[name] ?? 0) - (from[name] ?? 0)
    await cdp.detach()
    return (
      `tasks ${(rose('TaskDuration') * 1000).toFixed(0)} ms, script ${(rose('ScriptDuration') * 1000).toFixed(0)} ms, ` +
      `${rose('LayoutCount')} layouts, ${rose('RecalcStyleCount')} style recalculations`
    )
  }
}

/** The memory figures' sample: RSS in MB of each process measured. */
interface RssSample {
  host: number
  supervisor: number
  renderer: number
  /** Chromium's other processes by what they are: its browser process, GPU, other renderers (spare, empty), utilities. */
  chromium: Record<string, number>
  agents: number
}

function rssOf(m: Measured): RssSample {
  const sum = (pids: number[]): number => pids.reduce((s, pid) => s + rssMb(pid), 0)
  const of = (types: string[]): number => sum(m.others.filter((p) => types.includes(p.type)).map((p) => p.pid))
  return {
    host: rssMb(m.host),
    supervisor: rssMb(m.supervisor),
    renderer: rssMb(m.window),
    chromium: {
      browser: of(['browser']),
      GPU: of(['GPU']),
      'other renderers': sum(m.renderers.filter((pid) => pid !== m.window)),
      utilities: sum(m.others.filter((p) => p.type !== 'browser' && p.type !== 'GPU').map((p) => p.pid))
    },
    agents: sum(m.agents)
  }
}

/** What the goal counts: the Host, serve's supervisor (the main process's part here) and the window's renderer. */
const appRss = (s: RssSample): number => s.host + s.supervisor + s.renderer

/**
 * `app-memory`: four agents, each a session in a pane, streaming `/stream N` at once (about 1,000 chunks/s each)
 * on a data folder of 10,000 sessions; RSS sampled every 100 ms until every pane shows its last chunk. The
 * window's renderer is the one of Chromium's renderers with the largest RSS (the others are Chromium's spare and
 * empty ones, counted with its browser and GPU processes). Peers' published figures in the note (not measured here).
 */
/**
 * app-memory's scene: a data folder of sessions in 50 projects (`dataDir`, the listing's shape: makeDataset), their
 * search index built by a first Host and kept (the Host measured loads it, as every start after a folder's first
 * does: the first build's own peak is startup's, and a Host that built it still holds the build's and the save's
 * pages), and that Host with four scripted agents' sessions, a turn each, for its four panes. The caller closes `served`.
 */
export async function fourAgentsScene(dataDir: string): Promise<{ served: Served; ids: string[] }> {
  // An index an earlier group's Host saved for the seed (seeds.ts) is the same one; a first Host builds it otherwise.
  if (!existsSync(join(dataDir, SEARCH_INDEX_FILE))) {
    const first = await startServe(dataDir)
    try {
      await indexed(first, dataDir)
    } finally {
      await first.close()
    }
  }
  await settleDisk()
  const served = await startServe(dataDir)
  try {
    await indexed(served, dataDir)
    const env = agentEnv(null, { SCRIPTED_AGENT_CHUNK_DELAY_MS: '1', SCRIPTED_AGENT_CHUNKS_PER_DELAY: '2' })
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      const agent = await served.confirmed<{ id: string }>('agents.add', { name: `Scripted ${i + 1}`, transport: scriptedTransport(env) })
      const session = await served.client.request<{ id: string }>('sessions.new', { projectId: 'project-0', agentId: agent.id })
      await served.client.request('sessions.prompt', { id: session.id, text: `pane ${i + 1}` })
      ids.push(session.id)
    }
    return { served, ids }
  } catch (error) {
    await served.close()
    throw error
  }
}

/**
 * Resolves once every pane's last reply ends with `needle` (asked every half second: each question is a task in the
 * page); `showAll` (default) opens a reply shown as plain text whole, as a reader would to see its end.
 */
export async function untilEveryPaneShows(page: Page, needle: string, showAll = true): Promise<void> {
  await until(
    async () => {
      const shown = (await page.evaluate(`[...document.querySelectorAll('[data-testid=pane]')].filter((pane) => {
        const entries = pane.querySelectorAll('[data-testid=entry-assistant]')
        const last = entries[entries.length - 1]
        ${showAll ? "last?.querySelector('[data-testid=plain-show-all]')?.click()" : ''}
        const blocks = last ? last.querySelectorAll('.md-block, .plain-piece') : []
        return blocks.length > 0 && (blocks[blocks.length - 1].textContent || '').trimEnd().endsWith(${JSON.stringify(needle)})
      }).length`)) as number
      if (shown < 4) await sleep(500)
      return shown === 4
    },
    'every pane to show its last chunk',
    600_000
  )
}

export async function appMemoryFigures(add: Add, quick: boolean): Promise<void> {
  const sessions = quick ? 1_000 : 10_000
  const chunks = quick ? 2_000 : 20_000
  const browser = await launchBrowser()
  try {
    // The listing's folder of this size, seeded once a run (seeds.ts).
    const { served, ids } = await fourAgentsScene(await seededDataDir(listingShape(sessions), { searchIndex: true }))
    try {
      await setPanes(served, ids)
      // The page as a user's: no wake-up counting (its stacks would be garbage the app does not make).
      const page = await openWindow(browser, served, 4, false)
      await sleep(2_000)
      const m = await measured(served, browser)
      const before = rssOf(m)
      let peak = before
      let sampling = true
      const sampler = (async () => {
        while (sampling) {
          const s = rssOf(m)
          if (appRss(s) > appRss(peak)) peak = s
          await sleep(100)
        }
      })()
      await Promise.all(ids.map((id) => served.client.request('sessions.prompt', { id, text: `/stream ${chunks}` })))
      await untilEveryPaneShows(page, `chunk ${chunks}`)
      sampling = false
      await sampler
      const fmt = (s: RssSample): string =>
        `Host ${s.host.toFixed(0)} MB, serve ${s.supervisor.toFixed(0)} MB, renderer ${s.renderer.toFixed(0)} MB; beside it Chromium's ` +
        `${Object.entries(s.chromium)
          .map(([what, mb]) => `${what} ${mb.toFixed(0)} MB`)
          .join(', ')}, the 4 agents ${s.agents.toFixed(0)} MB`
      const base = add(
        {
          group: '12',
          name: `app RSS, 4 panes open, nothing streaming (baseline): Host + serve + the window's renderer`,
          unit: 'MB',
          size: sessions,
          note: fmt(before)
        },
        [appRss(before)]
      )
      base.ratio = 1
      base.baseline = 'before the streams'
      const f = add(
        {
          group: '12',
          name: `app RSS peak, 4 panes streaming ${chunks.toLocaleString('en-US')} chunks each at once: Host + serve + the window's renderer`,
          unit: 'MB',
          size: sessions,
          note:
            `${fmt(peak)}. The desktop app's main process is not here (serve's supervisor stands for its part); ` +
            `published, not measured here: Claude's Electron desktop app ~2.4 GB and 70 % CPU with one session, a static long Zed thread 5.31 cores at 240 Hz`
        },
        [appRss(peak)]
      )
      f.ratio = f.median / base.median
      f.baseline = 'before the streams'
      f.goal = '< 500 MB'
      f.met = f.median < 500
      await page.context().close()
    } finally {
      await served.close()
    }
  } finally {
    await browser.close()
  }
}
