import { mkdirSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import type { Browser, CDPSession, Page } from 'playwright-core'
import { repoRoot } from './agents'

/**
 * Where a measured run spent its time, for the benchmarks that look into the
 * renderer and the Host (stream, frames, costly text, the long scroll and its bare page):
 *
 * - `BENCH_PROFILE=1`: a CPU profile of the page's main thread (the DevTools
 *   protocol's `Profiler`, through playwright-core) and one of the Host (this
 *   process: the benchmarks run the Host in it; `node:inspector`'s `Profiler`,
 *   what `--cpu-prof` records, but only for the measured part), each summed up
 *   by function: self time, and the time inside each of the functions on the
 *   path from the WebSocket to the screen (`PATH`), as shares of the run.
 * - `BENCH_TRACE=1`: a Chromium trace of the page; its main thread's events
 *   by self time (style, layout, paint, script), which a CPU profile lumps
 *   together as "(program)".
 *
 * The files are kept in `bench/profiles/` (`.cpuprofile` opens in Chromium's
 * DevTools, the trace in Perfetto). The renderer's scripts are minified; build
 * with `SWITCHBOARD_READABLE_BUILD=1 npx electron-vite build` first to read
 * its functions by name.
 */

export const profiling = process.env.BENCH_PROFILE === '1'
export const tracing = process.env.BENCH_TRACE === '1'
export const profileDir = join(repoRoot, 'bench', 'profiles')
/** Runs profiled so far: each run's files are kept under its own number. */
let profiled = 0
/** The file of the last trace written (BENCH_TRACE), for a probe that reads it further. */
export let lastTraceFile: string | null = null

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

export interface TraceEvent {
  name: string
  ph: string
  ts: number
  dur?: number
  tid: number
  pid: number
  args?: { name?: string }
}

/**
 * Functions on the way from a WebSocket message to the screen, in the page
 * and in the Host, whose inclusive time the summaries give (those a profile
 * has; the rest are left out). The names are those of the readable build.
 */
const PATH = [
  // page: the WebSocket message to the stores
  'frame',
  'joinWire',
  'accept',
  'routeEvents',
  'receiveRecords',
  'flushRecords',
  'applyRecords',
  'applyRecordAt',
  // page: Vue, the list, markdown
  'flushJobs',
  'componentUpdateFn',
  'render',
  'renderAgentMarkdown',
  'markdownVerdict',
  'parseAndRender',
  'cachedSanitize',
  'sanitize',
  'highlightCode',
  'plainPieces',
  'measureElement',
  '_measureElement',
  'getVirtualItems',
  // Host
  'flush',
  'publish',
  'wireFrames',
  'send',
  'append',
  'applyUpdate'
]

/** Starts what BENCH_PROFILE and BENCH_TRACE ask for on `page` and in this process; the returned function stops it, keeps the files under `label` and prints the summaries. */
export async function startProfiles(browser: Browser, page: Page, label: string): Promise<() => Promise<void>> {
  if (!profiling && !tracing) return async () => undefined
  label = `${label}-${++profiled}`
  let cdp: CDPSession | null = null
  let host: Session | null = null
  if (tracing) {
    await browser.startTracing(page, {
      categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink', 'toplevel']
    })
  }
  if (profiling) {
    cdp = await page.context().newCDPSession(page)
    await cdp.send('Profiler.enable')
    await cdp.send('Profiler.setSamplingInterval', { interval: 500 })
    await cdp.send('Profiler.start')
    host = new Session()
    host.connect()
    await host.post('Profiler.enable')
    await host.post('Profiler.setSamplingInterval', { interval: 500 })
    await host.post('Profiler.start')
  }
  return async () => {
    // Both stopped before either is summed up: the summing is this process's work too.
    const page = cdp ? ((await cdp.send('Profiler.stop')) as { profile: CpuProfile }).profile : null
    const hostProfile = host ? ((await host.post('Profiler.stop')) as unknown as { profile: CpuProfile }).profile : null
    const buffer = tracing ? await browser.stopTracing() : null
    await cdp?.detach()
    host?.disconnect()
    mkdirSync(profileDir, { recursive: true })
    if (page) {
      writeFileSync(join(profileDir, `${label}-renderer.cpuprofile`), JSON.stringify(page))
      console.error(`\n── ${label}: the page's main thread (bench/profiles/${label}-renderer.cpuprofile)\n${summarizeProfile(page)}`)
    }
    if (hostProfile) {
      writeFileSync(join(profileDir, `${label}-host.cpuprofile`), JSON.stringify(hostProfile))
      console.error(`\n── ${label}: the Host (this process) (bench/profiles/${label}-host.cpuprofile)\n${summarizeProfile(hostProfile)}`)
    }
    if (buffer) {
      lastTraceFile = join(profileDir, `${label}-trace.json`)
      writeFileSync(lastTraceFile, buffer)
      console.error(
        `\n── ${label}: the page's main thread, trace events by self time (bench/profiles/${label}-trace.json)\n${summarizeTrace(JSON.parse(buffer.toString()) as { traceEvents: TraceEvent[] })}`
      )
    }
  }
}

function percent(part: number, whole: number): string {
  return `${((100 * part) / Math.max(whole, 1)).toFixed(1).padStart(5)} %`
}

/** Self time by function (the top `top`), then inclusive time of the functions in `PATH`, each in ms and as a share of the profile. */
export function summarizeProfile(profile: CpuProfile, top = 25, focus = process.env.BENCH_PROFILE_FN): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parentOf = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id)
  const name = (id: number): string => byId.get(id)?.callFrame.functionName || '(anonymous)'
  const key = (id: number): string => {
    const frame = byId.get(id)?.callFrame
    return frame ? `${frame.functionName || '(anonymous)'} ${frame.url.split('/').pop()}:${frame.lineNumber}` : '?'
  }
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let total = 0
  // The inspector's own start (node:inspector's post, under startProfiles) is not the Host's work.
  const ours = new Set(profile.nodes.filter((n) => n.callFrame.functionName === 'startProfiles').map((n) => n.id))
  const underOurs = (id: number): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) if (ours.has(at)) return true
    return false
  }
  profile.samples.forEach((id, i) => {
    if (ours.size && underOurs(id)) return
    const dt = profile.timeDeltas[i] ?? 0
    total += dt
    self.set(key(id), (self.get(key(id)) ?? 0) + dt)
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) seen.add(name(at))
    for (const n of seen) inclusive.set(n, (inclusive.get(n) ?? 0) + dt)
  })
  const lines = [`${(total / 1000).toFixed(0)} ms sampled. Self time:`]
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`${(us / 1000).toFixed(0).padStart(7)} ms ${percent(us, total)}  ${k}`)
  lines.push('Inclusive time on the path WebSocket → screen:')
  for (const n of PATH) {
    const us = inclusive.get(n)
    if (us) lines.push(`${(us / 1000).toFixed(0).padStart(7)} ms ${percent(us, total)}  ${n}`)
  }
  if (focus) {
    lines.push(`Callers of ${focus}:`)
    for (const n of profile.nodes.filter((n) => n.callFrame.functionName === focus)) {
      const chain: string[] = []
      for (let id: number | undefined = n.id; id !== undefined; id = parentOf.get(id)) chain.push(name(id))
      lines.push(`  ${chain.join(' < ')}`)
    }
  }
  return lines.join('\n')
}

/** The page's main thread (CrRendererMain) in a trace: complete events by self time (their time less their children's), the top `top`. */
export function summarizeTrace(trace: { traceEvents: TraceEvent[] }, top = 20): string {
  const main = trace.traceEvents.find((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
  const events = trace.traceEvents
    .filter((e) => e.ph === 'X' && e.dur !== undefined && (!main || (e.pid === main.pid && e.tid === main.tid)))
    .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!)
  const self = new Map<string, { us: number; count: number }>()
  const stack: { end: number; name: string; childUs: number; dur: number }[] = []
  const close = (upTo: number): void => {
    while (stack.length && stack[stack.length - 1].end <= upTo) {
      const done = stack.pop()!
      const entry = self.get(done.name) ?? { us: 0, count: 0 }
      entry.us += Math.max(0, done.dur - done.childUs)
      entry.count++
      self.set(done.name, entry)
      if (stack.length) stack[stack.length - 1].childUs += done.dur
    }
  }
  let first = Infinity
  let last = 0
  for (const e of events) {
    close(e.ts)
    first = Math.min(first, e.ts)
    last = Math.max(last, e.ts + e.dur!)
    stack.push({ end: e.ts + e.dur!, name: e.name, childUs: 0, dur: e.dur! })
  }
  close(Infinity)
  const span = last - first
  const busy = [...self.values()].reduce((n, e) => n + e.us, 0)
  const lines = [`${(span / 1000).toFixed(0)} ms traced, main thread busy ${(busy / 1000).toFixed(0)} ms (${percent(busy, span).trim()}). Self time:`]
  for (const [name, e] of [...self].sort((a, b) => b[1].us - a[1].us).slice(0, top))
    lines.push(`${(e.us / 1000).toFixed(0).padStart(7)} ms ${percent(e.us, span)} ×${e.count}  ${name}`)
  return lines.join('\n')
}
