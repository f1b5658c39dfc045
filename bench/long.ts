import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser } from '../test/e2e/browser'
import { makeDataset } from './data'
import { phases, stats, withTempDir, percentile, type Figure } from './lib'
import { barePage, LONG_ENTRIES_PER_TURN, longTurn } from './long-data'
import { openPastSession } from './ui'
import { startProfiles } from './profile'

/**
 * A conversation of any length (issue 40, goal 1), BENCH_ONLY=long: a long
 * day's agent log (long-data.ts: text, thoughts, tool calls with diffs and
 * terminal output) of 100 and of 100,000 entries, opened in the real window:
 * click to its tail painted, the renderer's JS heap once open and once
 * scrolled end to end, and the scroll itself (to the first message and back
 * to the last, a fling of ten screens a frame) against a bare page that
 * scrolls the same text the same way (static HTML, no script).
 */

type Add = (figure: Omit<Figure, 'median' | 'min' | 'max' | 'runs'>, samples: number[]) => Figure

/** Screens scrolled each frame: a hard fling, so that 100,000 entries go by in a bench's minute or two. */
const SCREENS_PER_FRAME = 10
/**
 * The bare page holds the text of this many turns at most (14,000 entries, 9 MB of HTML): a static page's frame
 * costs the same at any length, and the whole 100,000 entries (60 MB) take Chromium minutes to load.
 */
const BARE_TURNS = 2_000
/** A scroll that has not reached its end by then stops (and says so). */
const SCROLL_LIMIT_MS = 240_000

export interface Scrolled {
  frames: number[]
  reachedTop: boolean
  reachedBottom: boolean
  /** The first message of the conversation, as seen at the top. */
  firstMessage: string | null
  /** Frames (their indexes in `frames`) in which a page of records the window loaded came in. */
  loadFrames: number[]
  /** Rows the list put in the page on the way. */
  rowsMounted: number
  /** The main thread's CPU time over the scroll (Chromium's ThreadTime), in ms. */
  cpuMs?: number
}

interface Opened {
  firstPaintMs: number
  heapOpenMb: number
  scrolled?: Scrolled
  heapScrolledMb?: number
}

export async function longFigures(add: Add, quick: boolean, runs: number): Promise<void> {
  const big = Number(process.env.BENCH_LONG_ENTRIES) || (quick ? 10_000 : 100_000)
  const browser = await launchBrowser()
  const phase = phases('long')
  try {
    await withTempDir('long', async (root) => {
      const small = await openRuns(browser, root, 100, runs, false, phase)
      const large = await openRuns(browser, root, big, runs, true, phase)
      const base = add(
        { group: '4', name: 'long: click to the tail painted, 100 entries (baseline)', unit: 'ms', size: 100 },
        small.map((r) => r.firstPaintMs)
      )
      base.ratio = 1
      base.baseline = '100 entries'
      const open = add(
        { group: '4', name: 'long: click to the tail painted', unit: 'ms', size: big },
        large.map((r) => r.firstPaintMs)
      )
      open.ratio = open.median / base.median
      open.baseline = '100 entries'
      open.goal = '< 200 ms and ≤ 1.3 × 100 entries'
      open.met = open.median < 200 && open.ratio <= 1.3
      const heapOpen = add(
        { group: '5', name: 'long: renderer JS heap, the session open', unit: 'MB', size: big },
        large.map((r) => r.heapOpenMb)
      )
      heapOpen.ratio = heapOpen.median / stats(small.map((r) => r.heapOpenMb)).median
      heapOpen.baseline = '100 entries'
      heapOpen.goal = '< 60 MB'
      heapOpen.met = heapOpen.median < 60
      const scrolledRun = large.find((r) => r.scrolled)!
      const scrolled = scrolledRun.scrolled!
      const heapScrolled = add({ group: '5', name: 'long: renderer JS heap, scrolled end to end', unit: 'MB', size: big }, [
        scrolledRun.heapScrolledMb!
      ])
      heapScrolled.goal = '< 60 MB'
      heapScrolled.met = heapScrolled.median < 60
      console.error(
        `  long: scrolled ${scrolled.frames.length} frames, top ${scrolled.reachedTop}, back at the end ${scrolled.reachedBottom}; ${frameCounts(scrolled)}`
      )
      const bare = await bareScroll(browser, root, Math.min(BARE_TURNS, Math.ceil(big / LONG_ENTRIES_PER_TURN)))
      phase('the bare page scrolled')
      console.error(`  long: bare page ${bare.frames.length} frames, end ${bare.reachedBottom}, top ${bare.reachedTop}; ${frameCounts(bare)}`)
      const bareP99 = add({ group: '4', name: 'long: bare page scrolling the same text, p99 frame (baseline)', unit: 'ms', size: big }, [
        percentile(bare.frames, 99)
      ])
      bareP99.ratio = 1
      bareP99.baseline = 'bare page'
      bareP99.note = `${fps(bare.frames).toFixed(1)} fps`
      const p99 = add({ group: '4', name: 'long: scrolling end to end, p99 frame', unit: 'ms', size: big }, [percentile(scrolled.frames, 99)])
      p99.ratio = p99.median / bareP99.median
      p99.baseline = 'bare page'
      p99.goal = '≤ 1.5 × the bare page'
      p99.met = p99.ratio <= 1.5
      p99.note = frameCounts(scrolled)
      const rate = add({ group: '4', name: 'long: scrolling end to end', unit: 'fps', size: big }, [fps(scrolled.frames)])
      rate.goal = '≥ 58 fps, to the first message and back'
      const whole = scrolled.reachedTop && scrolled.reachedBottom
      rate.met = rate.median >= 58 && whole
      rate.note = whole
        ? `first message seen: "${scrolled.firstMessage ?? 'none'}"`
        : `did not reach ${scrolled.reachedTop ? 'the end again' : 'the first message'} in ${SCROLL_LIMIT_MS / 1000} s`
      if (!rate.met && fps(bare.frames) < 58) rate.reach = `the bare page scrolls at ${fps(bare.frames).toFixed(1)} fps here`
    })
    phase('its folder removed')
  } finally {
    await browser.close()
  }
}

/** The frames in which a page of records came in against the others (p99 of each), and the rows put in the page. */
function frameCounts(scrolled: Scrolled): string {
  const atLoad = new Set(scrolled.loadFrames)
  const loads = scrolled.frames.filter((_, i) => atLoad.has(i))
  const rest = scrolled.frames.filter((_, i) => !atLoad.has(i))
  const p99 = (frames: number[]): string => (frames.length ? `${percentile(frames, 99).toFixed(1)} ms` : '-')
  const cpu = scrolled.cpuMs === undefined ? '' : `; main thread CPU ${(scrolled.cpuMs / 1000).toFixed(1)} s`
  return `${loads.length} frames taking in a page (p99 ${p99(loads)}), other frames p99 ${p99(rest)}; ${scrolled.rowsMounted} rows put in the page${cpu}`
}

function fps(frames: number[]): number {
  return (frames.length / frames.reduce((a, b) => a + b, 0)) * 1000
}

async function openRuns(
  browser: Browser,
  root: string,
  entries: number,
  runs: number,
  scroll: boolean,
  phase: (what: string) => void
): Promise<Opened[]> {
  const turns = Math.max(1, Math.round(entries / LONG_ENTRIES_PER_TURN))
  const { dataDir, longSessionTitle, marker } = await makeDataset(join(root, `d${entries}`), {
    projects: 1,
    sessions: 1,
    turnsPerSession: 1,
    longTurns: turns,
    longTurn
  })
  phase(`${entries} entries: seeded`)
  const results: Opened[] = []
  await openLong(browser, dataDir, longSessionTitle!, marker, false) // warm-up
  phase(`${entries} entries: the warm-up open`)
  for (let i = 0; i < runs; i++) {
    results.push(await openLong(browser, dataDir, longSessionTitle!, marker, scroll && i === 0))
    phase(`${entries} entries: open ${i + 1}${scroll && i === 0 ? ' and the scroll' : ''}`)
  }
  return results
}

async function painted(page: Page): Promise<void> {
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
}

async function heapMb(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('HeapProfiler.collectGarbage')
  const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }
  await cdp.detach()
  return heap.usedSize / 1024 / 1024
}

async function openLong(browser: Browser, dataDir: string, title: string, marker: string, scroll: boolean): Promise<Opened> {
  return openPastSession(browser, dataDir, title, marker, async (page, firstPaintMs) => {
    const heapOpenMb = await heapMb(page)
    if (!scroll) return { firstPaintMs, heapOpenMb }
    const stopProfiles = await startProfiles(browser, page, 'long-scroll')
    const scrolled = await scrollEndToEnd(page, '[data-testid=thread-scroll]')
    await stopProfiles()
    return { firstPaintMs, heapOpenMb, scrolled, heapScrolledMb: await heapMb(page) }
  })
}

/**
 * Scrolls `selector` up to its top and back down to its end, SCREENS_PER_FRAME screens a frame, as a reader's wheel
 * does (a wheel event, then the move between frames); at an end where more is being loaded (a long conversation's
 * earlier or later records) it waits, frames still counted.
 */
export async function scrollEndToEnd(page: Page, selector: string, downFirst = false): Promise<Scrolled> {
  // The main thread's CPU time: on the loaded machine a frame's length is mostly the wait for a core, its CPU time is not
  // (the metrics' ScriptDuration and LayoutDuration are wall time too).
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Performance.enable')
  const metrics = async (): Promise<Record<string, number>> =>
    Object.fromEntries(
      ((await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] }).metrics.map((m) => [m.name, m.value])
    )
  const before = await metrics()
  const scrolled = await scrollInPage(page, selector, downFirst)
  const after = await metrics()
  await cdp.detach()
  return { ...scrolled, cpuMs: ((after.ThreadTime ?? 0) - (before.ThreadTime ?? 0)) * 1000 }
}

async function scrollInPage(page: Page, selector: string, downFirst: boolean): Promise<Scrolled> {
  return (await page.evaluate(
    `new Promise((resolve) => {
      const scroller = document.querySelector(${JSON.stringify(selector)})
      const frames = []
      const step = scroller.clientHeight * ${SCREENS_PER_FRAME}
      let direction = ${downFirst ? 1 : -1}
      let reachedTop = false
      let reachedBottom = false
      let firstMessage = null
      let last = performance.now()
      const started = last
      const more = (which) => document.querySelector('[data-testid=load-' + which + ']')
      // Counted on the way: rows put in the page, and the frames in which a page of records came in.
      let rowsMounted = 0
      const observer = new MutationObserver((list) => {
        for (const m of list) for (const n of m.addedNodes) if (n.nodeType === 1 && n.classList.contains('row')) rowsMounted++
      })
      observer.observe(scroller, { childList: true, subtree: true })
      // A page taken in (or let go of) above the rows shown moves their place in the list: a row kept from the frame
      // before under another index.
      const rows = () => new Map(Array.from(scroller.querySelectorAll('[data-testid=thread] > .row'), (row) => [row.dataset.entryId, row.dataset.index]))
      const loadFrames = []
      let held = rows()
      // The view's place is read in the task after the frame (below), once the frame is laid out and painted: there a read
      // lays nothing out, on either page. Read in the frame's callback, it laid out the rows the window had just put in the
      // page (the frame's own layout, made early and counted as the probe's script) and, on the bare page, nothing.
      const atTop = () => scroller.scrollTop <= 0 && !more('earlier')
      const atBottom = () => scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 2 && !more('later')
      let done = false
      const tick = () => {
        const t = performance.now()
        frames.push(t - last)
        last = t
        const holds = rows()
        for (const [id, index] of holds) {
          if (!held.has(id) || held.get(id) === index) continue
          loadFrames.push(frames.length - 2)
          break
        }
        held = holds
        if (done || t - started > ${SCROLL_LIMIT_MS}) {
          observer.disconnect()
          resolve({ frames: frames.slice(1), reachedTop, reachedBottom, firstMessage, loadFrames, rowsMounted })
          return
        }
        // As a reader's wheel: its event first (the window lets go of what it holds in place for a reader), then the
        // move in a task after this frame, so the next frame's scroll event comes before the list measures its rows.
        // Set here in the frame's callback, the move came after that scroll event, and the list's own correction of a
        // row measured above the view, made from the place it last read, undid it every other frame.
        scroller.dispatchEvent(new WheelEvent('wheel', { deltaY: direction * step, bubbles: true }))
        wheel.port2.postMessage(null)
        requestAnimationFrame(tick)
      }
      const wheel = new MessageChannel()
      wheel.port1.onmessage = () => {
        const moved = direction * step
        if (direction < 0 && atTop()) {
          reachedTop = true
          const first = scroller.querySelector('[data-testid=thread] .row')
          firstMessage = first ? first.textContent.trim().slice(0, 80) : null
          direction = 1
        } else if (direction > 0 && atBottom()) {
          reachedBottom = true
          if (${downFirst}) direction = -1
        }
        if (reachedTop && reachedBottom) done = true
        // At an end the move is the wheel's, which pushed against it; the next frame's wheel goes the other way.
        else scroller.scrollTop += moved
      }
      requestAnimationFrame(tick)
    })`
  )) as Scrolled
}

/** The bare page of `turns` turns, scrolled down to its end and back up the same way. */
async function bareScroll(browser: Browser, root: string, turns: number): Promise<Scrolled> {
  const file = join(root, 'bare.html')
  await writeFile(file, barePage(turns))
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  try {
    await page.goto(`file://${file}`, { timeout: 300_000 })
    await painted(page)
    const stopProfiles = await startProfiles(browser, page, 'long-scroll-bare')
    const scrolled = await scrollEndToEnd(page, '[data-testid=bare]', true)
    await stopProfiles()
    return scrolled
  } finally {
    await context.close()
  }
}
