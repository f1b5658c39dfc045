import { PerformanceObserver, constants, performance, type PerformanceEntry } from 'node:perf_hooks'
import { getHeapSpaceStatistics } from 'node:v8'

/**
 * Hands the Host's garbage back once it goes quiet after work, and while it
 * works without pause. V8 collects its old generation only when that grows
 * past a limit set at its last full collection, and its memory reducer (a
 * collection while idle) starts only after a full collection that shrank the
 * heap. The start's last full collection runs while the search index is read,
 * the heap growing: its limit let the Host keep the start's garbage (~20 MB
 * of buffers and large objects with 10,000 sessions: ArrayBuffers 19.5 → 1 MB
 * after a full collection) until four panes' streams had run their whole
 * length with no full collection, their garbage piling on it
 * (docs/BENCHMARKS.md, item 12). The Host runs without the memory reducer
 * (exec-argv.ts: its collections came ~100 s apart in a Host doing nothing):
 * this is what hands back.
 *
 * Work is seen by its garbage: after a garbage collection of any kind (a
 * scavenge of the young generation comes every few MB allocated), a second
 * later, if the event loop was busy less than a twentieth of that second and
 * the heap and buffers grew by `growthBytes` since the last full collection
 * here, `collect` runs once (at most once in `minIntervalMs`: it is a full
 * collection, the loop held for it, 0.1–0.7 s with the scene's 80 MB of live
 * heap on a loaded machine; sooner, it waits for more work, not for a timer,
 * so an idle Host is not woken for it); grown less: nothing until the next
 * collection. A Host that allocates nothing sets no timer.
 *
 * Still busy, it looks again a second later; and a Host that streams for
 * minutes is busy but not held (its loop busy at most `busyMax` of that
 * second; the soak's four streams: 5–40 %): once what its scavenges promoted
 * to the old generation (with the buffers) since the last full collection,
 * V8's or this one's, passes `promotedBytes` and `promotedShare` of what that
 * collection left, it is collected then too, at most once in `busyIntervalMs`
 * (the soak's ~30 MB of live heap: 30–65 ms, about every 35 s). Without it V8
 * took fresh pages for what was promoted (the search index's save, the
 * forks' copies) until its limit, set at ~21 MB live, with one full
 * collection in two minutes (docs/BENCHMARKS.md, item 11). A loop busier
 * than `busyMax` (a long copy, a fork of 100,000 entries) is left to V8.
 * `collect` is Node's `gc` (--expose-gc, which serve's fork and the desktop's
 * utilityProcess pass the Host); without it nothing is watched.
 */
export class QuietCollector {
  private timer: NodeJS.Timeout | null = null
  private since = performance.eventLoopUtilization()
  private afterLast = held()
  private lastAt = -Infinity
  /** What the last full collection (V8's or this one's) left in the old generation and buffers. */
  private promotedAfter = promoted()
  private readonly observer = new PerformanceObserver((list) => this.seen(list.getEntries()))
  /** Full collections run here (for tests and the log). */
  collections = 0
  /** Of those, the ones run while the Host was busy. */
  busyCollections = 0

  constructor(
    private readonly collect: (() => void) | undefined,
    private readonly timing = {
      quietMs: 1_000,
      busy: 0.05,
      growthBytes: 16 * 1024 * 1024,
      minIntervalMs: 30_000,
      busyMax: 0.5,
      promotedBytes: 4 * 1024 * 1024,
      promotedShare: 0.2,
      busyIntervalMs: 10_000
    }
  ) {
    if (collect) this.observer.observe({ entryTypes: ['gc'] })
  }

  /** Work was done (a garbage collection ran): looks a second later. */
  note(): void {
    if (!this.timer && this.collect) this.arm()
  }

  stop(): void {
    this.observer.disconnect()
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  private seen(entries: PerformanceEntry[]): void {
    const major = entries.some((e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
    if (major) this.promotedAfter = promoted()
    this.note()
  }

  private arm(ms = this.timing.quietMs): void {
    this.since = performance.eventLoopUtilization()
    this.timer = setTimeout(() => this.check(), ms)
    this.timer.unref()
  }

  private check(): void {
    this.timer = null
    const busy = performance.eventLoopUtilization(this.since).utilization
    if (busy > this.timing.busy) {
      if (busy <= this.timing.busyMax && performance.now() - this.lastAt >= this.timing.busyIntervalMs && this.promotedEnough()) {
        this.run()
        this.busyCollections++
      }
      return this.arm()
    }
    if (held() - this.afterLast < this.timing.growthBytes) return
    // Too soon after the last: the next collection V8 runs (more work) looks again; no timer waits for it.
    if (performance.now() - this.lastAt < this.timing.minIntervalMs) return
    this.run()
  }

  private promotedEnough(): boolean {
    const grown = promoted() - this.promotedAfter
    return grown >= this.timing.promotedBytes && grown >= this.timing.promotedShare * this.promotedAfter
  }

  private run(): void {
    this.collect?.()
    this.collections++
    this.lastAt = performance.now()
    this.afterLast = held()
    this.promotedAfter = promoted()
  }
}

/** What a collection can give back: V8's heap as committed, and the buffers outside it. */
function held(): number {
  const { heapTotal, arrayBuffers } = process.memoryUsage()
  return heapTotal + arrayBuffers
}

/** What only a full collection frees: V8's heap in use outside the young generation, and the buffers. */
function promoted(): number {
  let used = process.memoryUsage().arrayBuffers
  for (const space of getHeapSpaceStatistics()) if (!space.space_name.startsWith('new_')) used += space.space_used_size
  return used
}
