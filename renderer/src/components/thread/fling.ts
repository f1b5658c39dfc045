import { onBeforeUnmount, ref } from 'vue'
import type { Range } from '@tanstack/vue-virtual'

/**
 * Whether the reader flings through the conversation (ThreadView): scroll events more than a screen apart. While they
 * do, each frame shows rows never drawn, and those beyond the view are gone from it by the next frame: then none is
 * drawn behind the view, and one ahead of it only while the leaps are under FLING_AHEAD_SCREENS (within its reach, the
 * row just past the view's edge is in the next frame's view). At six, and then one, on either side, the rows beyond
 * the view were half, and then a third, of the rows a fling's frames put in the page. Rows put in the page while it
 * lasts show their markdown as text until it stops (MarkdownBlock).
 */
const FLING_AHEAD_SCREENS = 2
/**
 * A fling is two leaps in a row (one is a jump: to an entry, to the end, a page taken in, where the reader goes on
 * reading); it is over this long after its last leap (in the first frame after it: fling()), through the small moves
 * the list makes meanwhile (which are not the reader's: followed()), and the rows beyond the view are drawn again once
 * it stops. A leap within FLING_RESUME_MS of its end goes on with it: a fling that waited at an edge for a page to be
 * read (its rows in view are drawn meanwhile) is not a jump when it goes on.
 */
const FLING_MS = 200
const FLING_RESUME_MS = 1000

/** A view's edges where the conversation goes on beyond what the list holds (a page is read there). */
export interface FlingEdges {
  /** The list holds the conversation's start no further up: the view at its top is pushed against an edge. */
  earlier: boolean
  /** Likewise below: the view within `slack` px of the list's end. */
  detached: boolean
  viewHeight: number
  totalSize: number
  slack: number
}

export function readerFling() {
  const flinging = ref(false)
  /** Where the view was at the last scroll event of its own, and how many events in a row leapt more than a screen. */
  let lastTop = 0
  let leaps = 0
  /** The last leap, in screens (negative: up), while the reader flings. */
  let leapScreens = 0
  let timer = 0
  let frame = 0
  let ended = -Infinity

  /**
   * The reader flings, for FLING_MS more and until a frame after that brings no leap or push. The wheel's events come
   * with the frames (before their animation callbacks), never between: when the page stalls for longer than FLING_MS
   * (a long render, a collection, another process on the cores), the timer is due before the frame that brings the
   * wheel's next event, and ending the fling there drew the rows in view in full while the wheel still pushed (a CI
   * run's thread.test saw it). So the timer only asks for a frame, and a leap or push before that frame's callback
   * (the wheel's events come first) cancels it.
   */
  function fling(): void {
    flinging.value = true
    window.clearTimeout(timer)
    window.cancelAnimationFrame(frame)
    timer = window.setTimeout(() => {
      frame = window.requestAnimationFrame(() => {
        flinging.value = false
        ended = performance.now()
      })
    }, FLING_MS)
  }
  onBeforeUnmount(() => {
    window.clearTimeout(timer)
    window.cancelAnimationFrame(frame)
  })

  return {
    flinging,
    /** A scroll event's own move of the view (not one heard early: reader-scroll.ts), to `top` in a view `height` tall. */
    moved(top: number, height: number): void {
      const leap = (top - lastTop) / height
      leaps = Math.abs(leap) > 1 ? leaps + 1 : 0
      if (leaps) leapScreens = leap
      lastTop = top
      if (leaps >= 2 || (leaps === 1 && performance.now() - ended < FLING_RESUME_MS)) fling()
    },
    /**
     * A move of the list's own (reader-scroll.ts), to `top`: where the next leap is counted from, and neither a leap nor
     * a step of the reader's. Taken for a step (a row measured above the view moves it by its change), it counted the
     * leaps from naught again: a fling began a leap late, its first frame drawing the rows around the view; and where
     * the page stalled past FLING_MS (a CI run's load), the fling ended between two leaps, its rows in view drawn in
     * full and six more on either side, mid-fling (e2e/thread's fling).
     */
    followed(top: number): void {
      lastTop = top
    },
    /** While the reader flings: the rows in view, and the one ahead of them while the leaps are short enough to reach it. */
    rows(range: Range): number[] {
      const ahead = Math.abs(leapScreens) < FLING_AHEAD_SCREENS ? 1 : 0
      const start = Math.max(0, range.startIndex - (leapScreens < 0 ? ahead : 0))
      const end = Math.min(range.count - 1, range.endIndex + (leapScreens > 0 ? ahead : 0))
      return Array.from({ length: end - start + 1 }, (_, i) => start + i)
    },
    /**
     * A fling that ran into an edge of what the list holds where the conversation goes on (`earlier` above, `detached`
     * below: a page is read there) goes on while the reader's wheel pushes against that edge. The view cannot move
     * there, so no scroll event says the reader still flings, and the fling ended FLING_MS after its last leap: the
     * rows in view were drawn as markdown and six more on either side (their markdown parsed and sanitised, their
     * diffs' tables), for the frames before the page came in and the fling took the view on past them; on the loaded
     * machine, at nearly every page (the long scroll through 10,000 entries drew ~530 markdown blocks so, against ~680
     * passing). Once the wheel stops, it ends as before. Read from the last scroll event and the list's size, not the
     * page's layout; the edges are asked for only while the reader flings (a wheel event comes with every frame).
     */
    wheel(deltaY: number, edgesNow: () => FlingEdges): void {
      if (!flinging.value || deltaY === 0) return
      const edges = edgesNow()
      const pushed = deltaY < 0 ? edges.earlier && lastTop <= 0 : edges.detached && lastTop + edges.viewHeight >= edges.totalSize - edges.slack
      if (pushed) fling()
    }
  }
}
