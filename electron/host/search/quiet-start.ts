/**
 * Background work that reads many files at start (the search index, past
 * spend) waits until the Host is quiet, so the window's first requests are
 * answered first: it starts `quietMs` after the Host's last request, or
 * `unaskedMs` after the start when nothing asks at all (no window), and at
 * the latest `latestMs` after the start (a window that keeps asking). A
 * request still being answered is not quiet: work waits until it is answered
 * (a fork copying a long conversation, which the index's read of that
 * conversation would otherwise add its memory to). `now()` starts it at once
 * (a user asking for what it makes). `quietIn()` says how long until the Host
 * is quiet (the index's save after a build waits for it too).
 *
 * Once started, the work gives way to requests (`answering`): at each of its
 * slices it waits while the Host answers one asked in the last `giveWayMs`
 * (a window opening a 10,000-entry conversation as the build read it waited
 * up to 60-220 ms for its answer, 6-26 ms since: bench/open-during-build-probe.ts).
 * A longer one (a turn, a fork) holds it no longer than that. An answer the
 * window draws (a conversation's tail, a page of it: `drawn`) holds it
 * `drawMs` more, while the window draws it: on two cores the build's CPU was
 * the page's. The open of a 10,000-entry conversation, clicked as the bench
 * clicks (bench/open-probe.ts, PROBE_WAIT=bench, 40 opens each): the build
 * ran between the click and the paint in 26 opens of 40 before, 4 after;
 * painted in 279 ms at the median before, 249 after.
 */

const TIMING = { quietMs: 1_000, unaskedMs: 10_000, latestMs: 30_000, giveWayMs: 250, drawMs: 300 }

export class QuietStart {
  private timer: NodeJS.Timeout | null = null
  private readonly startedAt = Date.now()
  private done = false
  /** The requests being answered, each with when it was asked; and when the last was asked or answered. */
  private readonly asked = new Set<{ at: number }>()
  private lastRequestAt = 0
  /** Until when the window draws what it was last answered (`drawn`). */
  private drawnUntil = 0
  /** Work waiting for requests to be answered (`answering`): woken at each answer. */
  private readonly waiting = new Set<() => void>()

  constructor(private readonly work: () => void) {}

  /** Starts waiting for a quiet moment. */
  arm(): void {
    this.schedule(TIMING.unaskedMs)
  }

  /**
   * The Host answers a request (`answered`: once it is): work still waiting waits until none runs and it has been quiet
   * again. `drawn`: the window draws the answer (work under way holds `drawMs` after it).
   */
  noteRequest(answered?: Promise<unknown>, drawn = false): void {
    if (this.timer) this.schedule(TIMING.quietMs)
    this.lastRequestAt = Date.now()
    if (!answered) return
    const request = { at: this.lastRequestAt }
    this.asked.add(request)
    void answered.finally(() => {
      this.asked.delete(request)
      this.lastRequestAt = Date.now()
      if (drawn) this.drawnUntil = this.lastRequestAt + TIMING.drawMs
      if (this.timer) this.schedule(TIMING.quietMs)
      for (const wake of [...this.waiting]) wake()
    })
  }

  /**
   * While the Host answers a request asked less than `giveWayMs` ago, or the window draws an answer: resolves at the
   * next answer (or once that request is `giveWayMs` old, or the drawing's `drawMs` are over), for work in the
   * background to wait out and ask again; null when neither is.
   */
  answering(): Promise<void> | null {
    const now = Date.now()
    let until = this.drawnUntil > now ? this.drawnUntil : 0
    for (const { at } of this.asked) if (now - at < TIMING.giveWayMs) until = Math.max(until, at + TIMING.giveWayMs)
    if (!until) return null
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer)
        this.waiting.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, until - now)
      timer.unref?.()
      this.waiting.add(wake)
    })
  }

  /** How long until the Host is quiet (no request being answered, and a second after the last), in ms: 0 when it is. */
  quietIn(): number {
    return this.asked.size > 0 ? TIMING.quietMs : Math.max(0, this.lastRequestAt + TIMING.quietMs - Date.now())
  }

  /** Starts the work now if it has not started (it runs once). */
  now(): void {
    if (this.done) return
    this.cancel()
    this.done = true
    this.work()
  }

  /** Never starts it (the Host is closing), or no longer waits because it was started otherwise. */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  private schedule(ms: number): void {
    if (this.done) return
    this.cancel()
    const latest = this.startedAt + TIMING.latestMs - Date.now()
    this.timer = setTimeout(
      // A request still running: not quiet yet (its answer schedules again), but at the latest moment it starts.
      () => (this.asked.size > 0 && latest > ms ? this.schedule(latest) : this.now()),
      Math.max(0, Math.min(ms, latest))
    )
    this.timer.unref?.()
  }
}

/** Resolves once `quietIn` (a `QuietStart`'s) says the Host is quiet, or `latestMs` from now at the latest. */
export function whenQuiet(quietIn: () => number, latestMs = TIMING.latestMs): Promise<void> {
  const latest = Date.now() + latestMs
  return new Promise((resolve) => {
    const due = (): void => {
      const wait = Math.min(quietIn(), latest - Date.now())
      if (wait > 0) setTimeout(due, wait).unref?.()
      else resolve()
    }
    due()
  })
}
