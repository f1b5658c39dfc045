import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser } from '../test/e2e/browser'
import { makeDataset } from './data'
import { phases, settleDisk, stats, withTempDir, percentile, type Figure } from './lib'
import { barePage, LONG_ENTRIES_PER_TURN, longTurn } from './long-data'
import { openPastSession } from './ui'
import { startProfiles } from './profile'

/**
 * A conversation of any length (issue 40, goal 1), BENCH_ONLY=long: a long
 * day's agent log (long-data.ts: text, thoughts, tool calls with diffs and
 * terminal output) of 100 and of 100,000 entries, opened in the real window:
 * click to its tail painted, the renderer's JS heap once open and once
 * scrolled end to end, and the scroll itself (from the tail up to the first
 * message, a fling of twenty screens a frame) against a bare page that scrolls
 * the same text the same way (static HTML, no script), the two in alternating
 * legs (scrollAlternated). BENCH_LONG_LEGS=<file>: each leg's frames written
 * there.
 */

type Add = (figure: Omit<Figure, 'median' | 'min' | 'max' | 'runs'>, samples: number[]) => Figure

/**
 * Screens scrolled each frame: a hard fling, so that 100,000 entries go by in about a bench's minute. Ten until issue
 * 40's twenty-third round: of the ~5,000 frames from the tail to the top, ~900 waited at the top for the earlier page
 * and ~4,000 moved, which twenty screens halve (docs/BENCHMARKS.md, item 10). BENCH_LONG_SCREENS: another number.
 */
const SCREENS_PER_FRAME = Number(process.env.BENCH_LONG_SCREENS) || 20
/**
 * The bare page holds the text of this many turns at most (14,000 entries, 9 MB of HTML): a static page's frame
 * costs the same at any length, and the whole 100,000 entries (60 MB) take Chromium minutes to load.
 */
const BARE_TURNS = 2_000
/** A scroll that has not reached its end by then stops (and says so). */
const SCROLL_LIMIT_MS = 240_000
/**
 * The window's scroll is taken in legs of this many frames, each followed by a leg of BARE_LEG_FRAMES of the bare page
 * (scrollAlternated): ~10 pairs over the 100,000 entries (~3,000 frames from the tail to the top at twenty screens a
 * frame; ~5,000 at ten, in legs of 500), ~1,000 frames of the bare page (its 14,000 entries, from tail to top and
 * again). BENCH_LONG_LEG_FRAMES: another length.
 */
const WINDOW_LEG_FRAMES = Number(process.env.BENCH_LONG_LEG_FRAMES) || 300
const BARE_LEG_FRAMES = 100

export interface Scrolled {
  frames: number[]
  /** The frames of each leg (scrollAlternated: each of the window's legs followed by one of the bare page's). */
  legs: number[][]
  reachedTop: boolean
  /** The first message of the conversation, as seen at the top. */
  firstMessage: string | null
  /** Times the scroll reached the top (the bare page starts again from its tail there). */
  laps: number
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
  bare?: Scrolled
  heapScrolledMb?: number
}

export async function longFigures(add: Add, quick: boolean, runs: number): Promise<void> {
  const big = Number(process.env.BENCH_LONG_ENTRIES) || (quick ? 10_000 : 100_000)
  const browser = await launchBrowser()
  const phase = phases('long')
  try {
    await withTempDir('long', async (root) => {
      const small = await openRuns(browser, root, 100, runs, null, phase)
      const bareFile = join(root, 'bare.html')
      await writeFile(bareFile, barePage(Math.min(BARE_TURNS, Math.ceil(big / LONG_ENTRIES_PER_TURN))))
      const large = await openRuns(browser, root, big, runs, bareFile, phase)
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
      const bare = scrolledRun.bare!
      console.error(
        `  long: scrolled ${scrolled.frames.length} frames in ${scrolled.legs.length} legs, top ${scrolled.reachedTop}; ${frameCounts(scrolled)}`
      )
      console.error(`  long: bare page ${bare.frames.length} frames, ${bare.laps} times to its top; ${frameCounts(bare)}`)
      const pairs = pairRatios(scrolled, bare)
      console.error(`  long: p99 a leg, window / bare page: ${pairs.map((r) => r.toFixed(2)).join(' ')}`)
      if (process.env.BENCH_LONG_LEGS) await writeFile(process.env.BENCH_LONG_LEGS, JSON.stringify({ window: scrolled.legs, bare: bare.legs }))
      const bareP99 = add({ group: '4', name: 'long: bare page scrolling the same text, p99 frame (baseline)', unit: 'ms', size: big }, [
        percentile(bare.frames, 99)
      ])
      bareP99.ratio = 1
      bareP99.baseline = 'bare page'
      bareP99.note = `${fps(bare.frames).toFixed(1)} fps; ${bare.legs.length} legs alternated with the window's`
      const p99 = add({ group: '4', name: 'long: scrolling end to end, p99 frame', unit: 'ms', size: big }, [percentile(scrolled.frames, 99)])
      // The ratio is the pairs': a window leg's p99 over the bare page's leg after it, the median of those (each pair
      // taken at the same moment of the machine); the ratio of the two p99s over all frames is in the note.
      p99.ratio = stats(pairs).median
      p99.baseline = 'bare page, paired legs'
      p99.goal = '≤ 1.5 × the bare page'
      p99.met = p99.ratio <= 1.5
      p99.note = `${frameCounts(scrolled)}; over all frames ${(p99.median / bareP99.median).toFixed(2)} × the bare page's p99`
      const rate = add({ group: '4', name: 'long: scrolling end to end', unit: 'fps', size: big }, [fps(scrolled.frames)])
      rate.goal = '≥ 58 fps, from the tail to the first message'
      rate.met = rate.median >= 58 && scrolled.reachedTop
      rate.note = scrolled.reachedTop
        ? `first message seen: "${scrolled.firstMessage ?? 'none'}"`
        : `did not reach the first message in ${SCROLL_LIMIT_MS / 1000} s`
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

/** Each of the window's legs' p99 frame over the bare page's leg after it. */
function pairRatios(scrolled: Scrolled, bare: Scrolled): number[] {
  return scrolled.legs.map((frames, i) => percentile(frames, 99) / percentile(bare.legs[i], 99))
}

function fps(frames: number[]): number {
  return (frames.length / frames.reduce((a, b) => a + b, 0)) * 1000
}

async function openRuns(
  browser: Browser,
  root: string,
  entries: number,
  runs: number,
  /** The bare page to scroll beside the window, in the first run: none, no scroll. */
  bareFile: string | null,
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
  // Its 60 MB written out before the opens are timed, not by the system's writeback during them (as the other groups do).
  await settleDisk()
  phase(`${entries} entries: seeded`)
  const results: Opened[] = []
  await openLong(browser, dataDir, longSessionTitle!, marker, null) // warm-up
  phase(`${entries} entries: the warm-up open`)
  for (let i = 0; i < runs; i++) {
    const scroll = bareFile !== null && i === 0
    results.push(await openLong(browser, dataDir, longSessionTitle!, marker, scroll ? bareFile : null))
    // Each open's time in the log: which of them a slow median comes from (the one before the scroll, or those after it).
    phase(`${entries} entries: open ${i + 1}${scroll ? ' and the scroll' : ''} (the tail painted in ${results[i].firstPaintMs.toFixed(0)} ms)`)
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

async function openLong(browser: Browser, dataDir: string, title: string, marker: string, bareFile: string | null): Promise<Opened> {
  return openPastSession(browser, dataDir, title, marker, async (page, firstPaintMs) => {
    const heapOpenMb = await heapMb(page)
    if (!bareFile) return { firstPaintMs, heapOpenMb }
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    try {
      const bare = await context.newPage()
      await bare.goto(`file://${bareFile}`, { timeout: 300_000 })
      await painted(bare)
      const stopProfiles = await startProfiles(browser, page, 'long-scroll')
      const both = await scrollAlternated(page, bare)
      await stopProfiles()
      return { firstPaintMs, heapOpenMb, ...both, heapScrolledMb: await heapMb(page) }
    } finally {
      await context.close()
    }
  })
}

/** One leg of a scroll: its frames (ms), those of them in which a page of records came in, the rows put in the page. */
interface Leg {
  frames: number[]
  loadFrames: number[]
  rowsMounted: number
  reachedTop: boolean
  firstMessage: string | null
  laps: number
  cpuMs: number
}

/**
 * The window from its tail up to the conversation's first message, in legs of WINDOW_LEG_FRAMES frames, each followed by
 * a leg of BARE_LEG_FRAMES frames of the bare page scrolled up the same way (from its tail to its top, and from its tail
 * again once there): the two pages' frames are taken at the same moments of the machine, whose load swings over
 * seconds. The last leg of the bare page follows the window's last (and shorter) leg.
 */
async function scrollAlternated(windowPage: Page, barePage: Page): Promise<{ scrolled: Scrolled; bare: Scrolled }> {
  const windowLeg = await legScroller(windowPage, '[data-testid=thread-scroll]', false)
  const bareLeg = await legScroller(barePage, '[data-testid=bare]', true)
  const windowLegs: Leg[] = []
  const bareLegs: Leg[] = []
  const started = Date.now()
  for (;;) {
    const leg = await windowLeg(WINDOW_LEG_FRAMES)
    windowLegs.push(leg)
    bareLegs.push(await bareLeg(BARE_LEG_FRAMES))
    if (leg.reachedTop || Date.now() - started > SCROLL_LIMIT_MS) break
  }
  return { scrolled: joinLegs(windowLegs), bare: joinLegs(bareLegs) }
}

/** A scroll of `selector` from its tail to its top in one leg (bench/long-probe.ts: the window alone). */
export async function scrollEndToEnd(page: Page, selector: string): Promise<Scrolled> {
  const leg = await legScroller(page, selector, false)
  const legs: Leg[] = []
  const started = Date.now()
  do legs.push(await leg(Math.round(SCROLL_LIMIT_MS / 10)))
  while (!legs[legs.length - 1].reachedTop && Date.now() - started < SCROLL_LIMIT_MS)
  return joinLegs(legs)
}

function joinLegs(legs: Leg[]): Scrolled {
  const frames: number[] = []
  const loadFrames: number[] = []
  for (const leg of legs) {
    loadFrames.push(...leg.loadFrames.map((i) => i + frames.length))
    frames.push(...leg.frames)
  }
  const last = legs[legs.length - 1]
  return {
    frames,
    loadFrames,
    legs: legs.map((leg) => leg.frames),
    reachedTop: last.reachedTop,
    firstMessage: last.firstMessage,
    laps: last.laps,
    rowsMounted: legs.reduce((n, leg) => n + leg.rowsMounted, 0),
    cpuMs: legs.reduce((n, leg) => n + leg.cpuMs, 0)
  }
}

/**
 * Puts in the page a scroller of `selector` upwards, SCREENS_PER_FRAME screens a frame, as a reader's wheel does (a
 * wheel event, then the move in a task after the frame); at the top where more is being loaded (a long conversation's
 * earlier records) it waits, frames still counted. Returns a leg: `maxFrames` frames more (fewer where it reaches the
 * top, unless `wrap`: then it starts again from the tail, one lap more). Each leg's main-thread CPU time is read too
 * (Chromium's ThreadTime: on the loaded machine a frame's length is mostly the wait for a core, its CPU time is not).
 */
async function legScroller(page: Page, selector: string, wrap: boolean): Promise<(maxFrames: number) => Promise<Leg>> {
  await page.evaluate(
    `(() => {
      const scroller = document.querySelector(${JSON.stringify(selector)})
      const step = scroller.clientHeight * ${SCREENS_PER_FRAME}
      const more = (which) => document.querySelector('[data-testid=load-' + which + ']')
      const state = { reachedTop: false, firstMessage: null, laps: 0 }
      // Counted in a leg: rows put in the page, and the frames in which a page of records came in.
      let rowsMounted = 0
      let active = false
      new MutationObserver((list) => {
        if (!active) return
        for (const m of list) for (const n of m.addedNodes) if (n.nodeType === 1 && n.classList.contains('row')) rowsMounted++
      }).observe(scroller, { childList: true, subtree: true })
      // A page taken in (or let go of) above the rows shown moves their place in the list: a row kept from the frame
      // before under another index.
      const rows = () => new Map(Array.from(scroller.querySelectorAll('[data-testid=thread] > .row'), (row) => [row.dataset.entryId, row.dataset.index]))
      // The view's place is read in the task after the frame (below), once the frame is laid out and painted: there a read
      // lays nothing out, on either page. Read in the frame's callback, it laid out the rows the window had just put in the
      // page (the frame's own layout, made early and counted as the probe's script) and, on the bare page, nothing.
      const atTop = () => scroller.scrollTop <= 0 && !more('earlier')
      window.__scrollLeg = (maxFrames) => new Promise((resolve) => {
        const frames = []
        const loadFrames = []
        let held = rows()
        let last = performance.now()
        let done = false
        rowsMounted = 0
        active = true
        const wheel = new MessageChannel()
        wheel.port1.onmessage = () => {
          if (!atTop()) scroller.scrollTop -= step
          else {
            state.laps++
            if (!state.reachedTop) {
              state.reachedTop = true
              const first = scroller.querySelector('[data-testid=thread] .row')
              state.firstMessage = first ? first.textContent.trim().slice(0, 80) : null
            }
            if (${wrap}) scroller.scrollTop = scroller.scrollHeight
            else done = true
          }
        }
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
          if (done || frames.length > maxFrames) {
            active = false
            wheel.port1.close()
            resolve({ frames: frames.slice(1), loadFrames, rowsMounted, ...state })
            return
          }
          // As a reader's wheel: its event first (the window lets go of what it holds in place for a reader), then the
          // move in a task after this frame, so the next frame's scroll event comes before the list measures its rows.
          // Set here in the frame's callback, the move came after that scroll event, and the list's own correction of a
          // row measured above the view, made from the place it last read, undid it every other frame.
          scroller.dispatchEvent(new WheelEvent('wheel', { deltaY: -step, bubbles: true }))
          wheel.port2.postMessage(null)
          requestAnimationFrame(tick)
        }
        requestAnimationFrame(tick)
      })
    })()`
  )
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Performance.enable')
  const threadTime = async (): Promise<number> =>
    ((await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] }).metrics.find((m) => m.name === 'ThreadTime')
      ?.value ?? 0
  return async (maxFrames) => {
    const before = await threadTime()
    const leg = (await page.evaluate(`window.__scrollLeg(${maxFrames})`)) as Omit<Leg, 'cpuMs'>
    return { ...leg, cpuMs: ((await threadTime()) - before) * 1000 }
  }
}
