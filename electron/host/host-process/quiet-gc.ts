import { PerformanceObserver, performance } from 'node:perf_hooks'

/**
 * Hands the Host's garbage back once it goes quiet after work. V8 collects
 * its old generation only when that grows past a limit set at its last full
 * collection, and its memory reducer (a collection while idle) starts only
 * after a full collection that shrank the heap. The start's last full
 * collection runs while the search index is read, the heap growing: its limit
 * let the Host keep the start's garbage (~20 MB of buffers and large
 * objects with 10,000 sessions: ArrayBuffers 19.5 → 1 MB after a full
 * collection) until four panes' streams had run their whole length with no
 * full collection, their garbage piling on it (docs/BENCHMARKS.md, item 12).
 * The Host runs without the memory reducer (exec-argv.ts: its collections
 * came ~100 s apart in a Host doing nothing): this is what hands back.
 *
 * Work is seen by its garbage: after a garbage collection of any kind (a
 * scavenge of the young generation comes every few MB allocated), a second
 * later, if the event loop was busy less than a twentieth of that second and
 * the heap and buffers grew by `growthBytes` since the last full collection
 * here, `collect` runs once (at most once in `minIntervalMs`: it is a full
 * collection, the loop held for it, 0.1–0.7 s with the scene's 80 MB of live
 * heap on a loaded machine; sooner, it waits for more work, not for a timer,
 * so an idle Host is not woken for it); still busy: it looks again a second later; grown
 * less: nothing until the next collection. A Host that allocates nothing sets
 * no timer. `collect` is Node's `gc` (--expose-gc, which serve's fork and the
 * desktop's utilityProcess pass the Host); without it nothing is watched.
 */
export class QuietCollector {
  private timer: NodeJS.Timeout | null = null
  private since = performance.eventLoopUtilization()
  private afterLast = held()
  private lastAt = -Infinity
  private readonly observer = new PerformanceObserver(() => this.note())
  /** Full collections run here (for tests and the log). */
  collections = 0

  constructor(
    private readonly collect: (() => void) | undefined,
    private readonly timing = { quietMs: 1_000, busy: 0.05, growthBytes: 16 * 1024 * 1024, minIntervalMs: 30_000 }
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

  private arm(ms = this.timing.quietMs): void {
    this.since = performance.eventLoopUtilization()
    this.timer = setTimeout(() => this.check(), ms)
    this.timer.unref()
  }

  private check(): void {
    this.timer = null
    if (performance.eventLoopUtilization(this.since).utilization > this.timing.busy) return this.arm()
    if (held() - this.afterLast < this.timing.growthBytes) return
    // Too soon after the last: the next collection V8 runs (more work) looks again; no timer waits for it.
    if (performance.now() - this.lastAt < this.timing.minIntervalMs) return
    this.collect?.()
    this.collections++
    this.lastAt = performance.now()
    this.afterLast = held()
  }
}

/** What a collection can give back: V8's heap as committed, and the buffers outside it. */
function held(): number {
  const { heapTotal, arrayBuffers } = process.memoryUsage()
  return heapTotal + arrayBuffers
}
