import { writeFileSync } from 'node:fs'
import type { Browser, CDPSession, Page } from 'playwright-core'
import { rendererRssMb, serve } from '../test/e2e/browser'
import type { App } from './app'
import { openPage } from './app'
import { now } from './lib'
import { summarizeProfile, summarizeTrace, type CpuProfile } from './profile'

/**
 * Costly agent text (`/payload`, test/agent/pathological.ts) into the real
 * renderer in headless Chromium over `serve`: how long until it is shown, how
 * long the page's main thread was ever busy meanwhile, how long a key typed
 * into the composer took to be taken, and how much memory the page used.
 *
 * - *shown*: from the prompt to the payload on screen (in its place: a
 *   message, a thought, a tool call, a plan entry, a permission request) and
 *   the agent's next message after it.
 * - *longest task*: the longest task the page's main thread ran (the Long
 *   Tasks API, which reports those of 50 ms or more; 0 when there was none):
 *   nothing else, a key or a click, could be handled meanwhile.
 * - *longest gap*: the longest gap between the runs of a 5 ms timer in the
 *   page: the longest task, or several in a row, or the process waiting for a
 *   core (on a loaded machine this is most of it).
 * - *key response*: the longest a key pressed into the composer (one every
 *   ~100 ms, through DevTools' `Input.dispatchKeyEvent`) waited from the
 *   browser taking it (its event's time stamp) to the page handling it; every
 *   key typed must be in the composer at the end. (Timed in the page: the
 *   Host runs in the benchmark's process, so its own work on the payload
 *   would count in a round trip timed here.)
 * - *JS heap*: the page's peak used JS heap (`Runtime.getHeapUsage`), sampled
 *   with each key; *renderer RSS*: the peak resident memory of the page's
 *   renderer process (the largest of this process's Chromium renderers,
 *   from /proc; about 120 MB for an empty page, 90 MB of it Chromium's code).
 */

export interface CostlyTextResult {
  shownMs: number
  /** The longest task on the page's main thread (the Long Tasks API: 0 when none took 50 ms or more). */
  taskMs: number
  stallMs: number
  keyMs: number
  heapMb: number
  rendererMb: number
}

/**
 * The page-side watch: the longest gap between the runs of a 5 ms timer, and
 * the longest a key waited for the page to handle it (from the event's time
 * stamp, when the browser took it, to its first listener).
 */
const STALL_WATCH = `(() => {
  const w = (window.__stall = { max: 0, key: 0, task: 0, last: performance.now(), running: true })
  new PerformanceObserver((list) => { for (const e of list.getEntries()) w.task = Math.max(w.task, e.duration) }).observe({ type: 'longtask' })
  window.addEventListener('keydown', (e) => { w.key = Math.max(w.key, performance.now() - e.timeStamp) }, true)
  const tick = () => {
    const t = performance.now()
    if (t - w.last > w.max) w.max = t - w.last
    w.last = t
    if (w.running) setTimeout(tick, 5)
  }
  setTimeout(tick, 5)
})()`

/**
 * Whether the payload sent in `where` is on screen with the agent's next
 * message after it (`payload KIND: … characters sent`, or for a permission
 * request its options). Reads only the start of each entry's text.
 */
function shownCheck(kind: string, where: string): string {
  return `(() => {
    const start = (el) => (el ? (el.firstChild ? el.textContent.slice(0, 4000) : '') : '')
    const entries = [...document.querySelectorAll('[data-testid=thread] [data-testid^=entry-]')]
    const last = entries[entries.length - 1]
    if (${JSON.stringify(where)} === 'permission') return document.querySelectorAll('[data-testid=permission-option]').length > 0
    const done = last && last.dataset.testid === 'entry-assistant' && start(last).includes(${JSON.stringify(`payload ${kind}:`)})
    if (!done) {
      const stop = last && last.dataset.testid === 'entry-stop' ? entries[entries.length - 2] : null
      if (!(stop && stop.dataset.testid === 'entry-assistant' && start(stop).includes(${JSON.stringify(`payload ${kind}:`)}))) return false
    }
    const testid = ${JSON.stringify({ message: 'entry-assistant', thought: 'entry-thought', tool: 'entry-tool-call', plan: 'entry-plan' }[where] ?? 'entry-assistant')}
    const payload = entries.filter((e) => e.dataset.testid === testid).find((e) => !start(e).includes(${JSON.stringify(`payload ${kind}:`)}))
    return !!payload && start(payload).trim().length > 0
  })()`
}

/**
 * Sends `/payload KIND [SIZE] in=WHERE` in a new session of `app` (served to a
 * new page) and measures until it is shown (a permission request is also
 * answered, from the page). Throws when it is not shown within `timeoutMs`.
 */
export async function costlyText(
  app: App,
  browser: Browser,
  kind: string,
  where: string,
  size?: number,
  timeoutMs = 240_000
): Promise<CostlyTextResult> {
  const server = await serve(app.host)
  let page: Page | null = null
  try {
    const session = await app.host.request('sessions.new', { projectId: app.projectId, agentId: app.agentIds[0] })
    const title = `costly ${session.id.slice(0, 8)}`
    await app.host.request('sessions.prompt', { id: session.id, text: title })
    page = await openPage(browser, server, title)
    const cdp: CDPSession = await page.context().newCDPSession(page)
    const composer = page.getByTestId('composer-input')
    await page.evaluate(STALL_WATCH)
    const baselineHeap = ((await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }).usedSize
    let heap = baselineHeap
    let renderer = rendererRssMb()
    let typed = ''
    const profile = process.env.BENCH_PROFILE === '1'
    const trace = process.env.BENCH_TRACE === '1'
    if (trace) await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink'] })
    if (profile) {
      await cdp.send('Profiler.enable')
      await cdp.send('Profiler.setSamplingInterval', { interval: 1000 })
      await cdp.send('Profiler.start')
    }
    const t0 = now()
    // Not awaited: the request answers when the turn ends, and a permission request waits for the page's answer.
    const turn = app.host.request('sessions.prompt', { id: session.id, text: `/payload ${kind}${size ? ` ${size}` : ''} in=${where}` }).then(
      () => null,
      (error: Error) => error
    )
    let shownMs = 0
    let answered = false
    const debug = process.env.BENCH_DEBUG === '1' ? (what: string) => console.error(`${Math.round(now() - t0)} ms ${what}`) : () => undefined
    while (now() - t0 < timeoutMs) {
      debug('key')
      const key = String.fromCharCode(97 + (typed.length % 26))
      // A permission card takes the focus for its options: the key goes to the composer, as a person would click it first.
      await composer.focus()
      await page.keyboard.press(key)
      typed += key
      heap = Math.max(heap, ((await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }).usedSize)
      renderer = Math.max(renderer, rendererRssMb())
      debug('shown?')
      if (!shownMs && (await page.evaluate(shownCheck(kind, where)))) shownMs = now() - t0
      if (shownMs && where === 'permission' && !answered) {
        answered = true
        debug('answer')
        await page.getByTestId('permission-option').first().click()
      }
      if (shownMs && (where !== 'permission' || (await page.getByText('permission: allow').count()) > 0)) break
      await new Promise((r) => setTimeout(r, 100))
    }
    if (trace) {
      const buffer = await browser.stopTracing()
      if (process.env.BENCH_TRACE_FILE) writeFileSync(process.env.BENCH_TRACE_FILE, buffer)
      console.error(summarizeTrace(JSON.parse(buffer.toString()) as Parameters<typeof summarizeTrace>[0]))
    }
    if (profile) {
      const cpu = ((await cdp.send('Profiler.stop')) as { profile: CpuProfile }).profile
      if (process.env.BENCH_PROFILE_FILE) writeFileSync(process.env.BENCH_PROFILE_FILE, JSON.stringify(cpu))
      console.error(summarizeProfile(cpu, 20))
    }
    const failed = await Promise.race([turn, new Promise<null>((r) => setTimeout(() => r(null), 30_000))])
    if (failed) throw new Error(`/payload ${kind} in=${where}: the turn failed: ${failed.message}`)
    if (!shownMs) throw new Error(`/payload ${kind} in=${where} was not shown within ${timeoutMs / 1000} s`)
    const value = await composer.inputValue()
    if (!value.includes(typed))
      throw new Error(`keys typed while /payload ${kind} in=${where} was shown were lost: ${typed.length} typed, composer has ${value.length}`)
    const stall = (await page.evaluate('(() => { window.__stall.running = false; return window.__stall })()')) as {
      max: number
      key: number
      task: number
    }
    return { shownMs, taskMs: stall.task, stallMs: stall.max, keyMs: stall.key, heapMb: heap / 1024 / 1024, rendererMb: renderer }
  } finally {
    await page?.context().close()
    await server.close()
  }
}
