import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { launchBrowser } from '../test/e2e/browser'
import { makeDataset } from './data'
import { percentile } from './lib'
import { LONG_ENTRIES_PER_TURN, longTurn } from './long-data'
import { scrollEndToEnd } from './long'
import { lastTraceFile, startProfiles, type TraceEvent } from './profile'
import { openPastSession } from './ui'

/**
 * The long scroll alone (long.ts's open and fling, without its 100-entry opens and its bare page), for side-by-side
 * runs of two builds: `node --import tsx bench/long-probe.ts [entries] [runs] [data folder]`. The data folder is made
 * once and kept (a second build's checkout can run on the same one); BENCH_PROFILE / BENCH_TRACE as profile.ts.
 * Prints a line a run: frames, fps, p99, rows put in the page, the main thread's CPU time and its share a frame.
 * PROBE_FRAMES=<path>: a line a frame in <path>-<run>.tsv (its last column 1 where a page was taken in since the frame
 * before), and a mark a frame in BENCH_TRACE's trace; PROBE_HEAP=<path>:
 * what the scroll promoted, by function. Another build side by side: BENCH_RENDERER_DIR (its out/renderer);
 * another set of the renderer's V8 flags: BENCH_JS_FLAGS (test/e2e/browser.ts). With both BENCH_TRACE and PROBE_FRAMES,
 * each frame's main-thread CPU time is read from the trace (`frameCpu`): on a loaded machine, what a frame would cost
 * on a quiet one, where its length is mostly the wait for a core.
 */
async function main(): Promise<void> {
  const entries = Number(process.argv[2] ?? 10_000)
  const runs = Number(process.argv[3] ?? 1)
  const root = process.argv[4] ?? `/tmp/long-probe-${entries}`
  const made = join(root, 'dataset.json')
  if (!existsSync(made)) {
    const turns = Math.max(1, Math.round(entries / LONG_ENTRIES_PER_TURN))
    const dataset = await makeDataset(root, { projects: 1, sessions: 1, turnsPerSession: 1, longTurns: turns, longTurn })
    await writeFile(made, JSON.stringify(dataset))
  }
  const { dataDir, longSessionTitle, marker } = JSON.parse(await readFile(made, 'utf8')) as {
    dataDir: string
    longSessionTitle: string
    marker: string
  }
  const browser = await launchBrowser()
  try {
    for (let run = 0; run < runs; run++) {
      const line = await openPastSession(browser, dataDir, longSessionTitle, marker, async (page) => {
        // Rows put in the page at a frame's scroll event and let go of in the same frame, after its layout (the list's
        // measurements), before it was painted: drawn for nothing.
        await page.evaluate(`(() => {
          const w = (window.__waste = { added: 0, removed: 0, unpainted: 0, markdown: 0, passing: 0, elements: 0 })
          // A frame: its scroll event (the rows it draws), its animation frame callbacks, its layout and the list's
          // measurements (rows let go of then were never painted), its paint.
          let paints = 0
          let afterCallbacks = false
          const born = new WeakMap()
          // PROBE_FRAMES: a line a frame (its animation frame's time and what the page took in since the one before), and a
          // mark in a trace (console.timeStamp) at each, so that a trace's events fall to their frame.
          const log = (w.frames = ${process.env.PROBE_FRAMES ? '[]' : 'null'})
          let was = { added: 0, removed: 0, markdown: 0, passing: 0, elements: 0 }
          // A page taken in since the frame before: a row kept under another index (as long.ts counts them).
          const rows = () => new Map(Array.from(document.querySelectorAll('[data-testid=thread] > .row'), (row) => [row.dataset.entryId, row.dataset.index]))
          let held = rows()
          const tick = () => {
            paints++
            afterCallbacks = true
            if (log) {
              const now = { added: w.added, removed: w.removed, markdown: w.markdown, passing: w.passing, elements: w.elements }
              const holds = rows()
              const page = [...holds].some(([id, index]) => held.has(id) && held.get(id) !== index) ? 1 : 0
              held = holds
              log.push([performance.now(), ...Object.keys(now).map((k) => now[k] - was[k]), page])
              was = now
              console.timeStamp('probe-frame ' + (log.length - 1))
            }
            requestAnimationFrame(tick)
          }
          requestAnimationFrame(tick)
          document.querySelector('[data-testid=thread-scroll]').addEventListener('scroll', () => (afterCallbacks = false), { capture: true, passive: true })
          new MutationObserver((list) => {
            for (const m of list) {
              for (const n of m.addedNodes) if (n.nodeType === 1 && n.classList.contains('row')) {
                w.added++
                born.set(n, paints)
              }
              for (const n of m.removedNodes) {
                if (n.nodeType !== 1 || !n.classList.contains('row')) continue
                w.removed++
                if (afterCallbacks && born.get(n) === paints - 1) w.unpainted++
              }
            }
          }).observe(document.querySelector('[data-testid=thread]'), { childList: true })
          // Markdown blocks put in the page as markdown (parsed, sanitised, laid out) and as passing text, anywhere in the rows.
          new MutationObserver((list) => {
            for (const m of list)
              for (const n of m.addedNodes) {
                if (n.nodeType !== 1) continue
                w.elements += 1 + n.getElementsByTagName('*').length
                const blocks = n.matches('.markdown') ? [n] : n.querySelectorAll('.markdown')
                for (const b of blocks) b.classList.contains('passing') ? w.passing++ : w.markdown++
              }
          }).observe(document.querySelector('[data-testid=thread]'), { childList: true, subtree: true })
        })()`)
        // PROBE_CSS: a style sheet adopted by the page before the fling (a CSS change tried without a build).
        if (process.env.PROBE_CSS)
          await page.evaluate(
            `(() => { const sheet = new CSSStyleSheet(); sheet.replaceSync(${JSON.stringify(process.env.PROBE_CSS)}); document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet] })()`
          )
        // PROBE_HEAP=<file>: a sampling heap profile of what the scroll allocated and a scavenge did not collect (promoted,
        // whether a full collection collected it later or not): where the full collections' work comes from.
        const heapCdp = process.env.PROBE_HEAP ? await page.context().newCDPSession(page) : null
        if (heapCdp)
          await heapCdp.send('HeapProfiler.startSampling', {
            samplingInterval: 4096,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: false
          })
        const stop = await startProfiles(browser, page, 'long-probe')
        const s = await scrollEndToEnd(page, '[data-testid=thread-scroll]')
        await stop()
        if (heapCdp) {
          const { profile } = (await heapCdp.send('HeapProfiler.stopSampling')) as { profile: unknown }
          await writeFile(`${process.env.PROBE_HEAP}-${run}.heapprofile`, JSON.stringify(profile))
          await heapCdp.detach()
        }
        const waste = (await page.evaluate('window.__waste')) as {
          added: number
          removed: number
          unpainted: number
          markdown: number
          passing: number
          elements: number
        }
        if (process.env.PROBE_FRAMES) {
          const frames = (await page.evaluate('window.__waste.frames')) as number[][]
          const head = 'frame\tms\tadded\tremoved\tmarkdown\tpassing\telements\tpage'
          const lines = frames.slice(1).map((f, i) => [i + 1, (f[0] - frames[i][0]).toFixed(1), ...f.slice(1)].join('\t'))
          await writeFile(`${process.env.PROBE_FRAMES}-${run}.tsv`, [head, ...lines].join('\n') + '\n')
        }
        const cpuLine = process.env.PROBE_FRAMES && lastTraceFile ? [await frameCpu(lastTraceFile, `${process.env.PROBE_FRAMES}-${run}-cpu.tsv`)] : []
        const total = s.frames.reduce((a, b) => a + b, 0)
        const cpu = s.cpuMs ?? 0
        return [
          `frames ${s.frames.length}`,
          `fps ${((s.frames.length / total) * 1000).toFixed(1)}`,
          `p50/90/99 ${[50, 90, 99].map((p) => percentile(s.frames, p).toFixed(1)).join('/')} ms`,
          `rows ${s.rowsMounted}`,
          `cpu ${(cpu / 1000).toFixed(1)} s`,
          `cpu/frame ${(cpu / s.frames.length).toFixed(1)} ms`,
          `cpu/row ${(cpu / s.rowsMounted).toFixed(2)} ms`,
          `reached the top ${s.reachedTop}`,
          `rows let go of unpainted ${waste.unpainted} of ${waste.added}`,
          `markdown blocks drawn ${waste.markdown}, passing ${waste.passing}`,
          `elements put in the page ${waste.elements}`,
          ...cpuLine
        ].join(', ')
      })
      console.log(`run ${run}: ${line}; load ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`)
    }
  } finally {
    await browser.close()
  }
}

/**
 * Each frame's main-thread CPU time, from a trace with the probe's marks (a frame: from its mark to the next): the thread
 * time of the tasks that began in it (the outermost ones), and the full collections' pauses in it. Written a line a
 * frame to `out`; the summary: frames over 14 and 20 ms of CPU (on a quiet machine a frame has ~16.7 ms, ~7 of them its
 * own work), the p99, the full collections.
 */
async function frameCpu(traceFile: string, out: string): Promise<string> {
  const events = (
    JSON.parse(await readFile(traceFile, 'utf8')) as { traceEvents: (TraceEvent & { tdur?: number; args?: { data?: { message?: string } } })[] }
  ).traceEvents
  const marks = events.filter((e) => e.name === 'TimeStamp' && e.args?.data?.message?.startsWith('probe-frame')).sort((a, b) => a.ts - b.ts)
  if (marks.length < 2) return 'no frame marks in the trace'
  const { pid, tid } = marks[0]
  const starts = marks.map((m) => m.ts)
  const frameOf = (ts: number): number => {
    let lo = 0
    let hi = starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (starts[mid] <= ts) lo = mid
      else hi = mid - 1
    }
    return ts < starts[0] || lo >= starts.length - 1 ? -1 : lo
  }
  const cpu = new Array<number>(starts.length - 1).fill(0)
  const gc = new Array<number>(starts.length - 1).fill(0)
  const mine = events.filter((e) => e.pid === pid && e.tid === tid && e.ph === 'X').sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0))
  let end = -Infinity
  for (const e of mine) {
    const frame = frameOf(e.ts)
    if (e.name === 'MajorGC' && frame >= 0) gc[frame] += (e.dur ?? 0) / 1000
    if ((e.name !== 'RunTask' && e.name !== 'ThreadControllerImpl::RunTask') || e.ts < end) continue
    end = e.ts + (e.dur ?? 0)
    if (frame >= 0) cpu[frame] += (e.tdur ?? e.dur ?? 0) / 1000
  }
  await writeFile(out, ['frame\tcpu_ms\tfull_gc_ms', ...cpu.map((c, i) => `${i}\t${c.toFixed(2)}\t${gc[i].toFixed(2)}`)].join('\n') + '\n')
  const over = (ms: number): number => cpu.filter((c) => c > ms).length
  return (
    `main-thread CPU a frame (trace) p50/99 ${[50, 99].map((p) => percentile(cpu, p).toFixed(1)).join('/')} ms, ` +
    `over 14 ms ${over(14)}, over 20 ms ${over(20)} of ${cpu.length}, full collections in ${gc.filter((g) => g > 0).length} frames`
  )
}

await main()
