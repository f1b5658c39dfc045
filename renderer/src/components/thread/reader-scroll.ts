import { elementScroll, observeElementOffset, type Virtualizer } from '@tanstack/vue-virtual'
import type { Ref } from 'vue'
import { measuredSize } from './row-measure'

type List = Virtualizer<HTMLElement, HTMLElement>

/**
 * The reader's scroll, heard by the virtual list before it takes new entries or sizes (ThreadView).
 *
 * The list reads where the view is from its scroll events, which come with the next frame; a reader's scroll made
 * since, it took as not made. New entries or a row measured in between (the rows drawn again as a fling stops, a
 * frame's records), it followed them to the end ("at the end" by its old place) or moved the view by the row's change
 * from its old place, writing over the reader's: they were taken back to the end, and "↓ Latest" never showed
 * (e2e/keyboard's scroll to the top once the turn's rows were in, once in a CI run; at 6× CPU throttling, that scroll
 * made 0–145 ms after the turn's end was undone in 5 runs of 30, now in none). So before the list takes new entries or
 * sizes, and before the view's own moves to the end, that scroll's event is given to it at once (`catchUp`).
 *
 * The library has no hook for this: `hearReaderFirst` wraps the list's `setOptions` and `resizeItem` (thread.test's
 * "keeps the reader where they scrolled…" fails when the wrap no longer takes effect, as after a change of the
 * library's).
 */
export function readerScroll(scroller: Ref<HTMLElement | null>) {
  /** Where the list last knew the view to be: at its last scroll event, or where it last put it. */
  let listKnows = 0
  /** Where catchUp gave the scroll's event early, until the event itself comes. */
  let heardEarly: number | null = null
  /** Where the list last moved the view itself (scrollView), until that move's event comes. */
  let listMoved: number | null = null

  /** A scroll the list has not heard of yet (the reader's): its event, given now, to the list and to the view's own handler alike. */
  function catchUp(): void {
    const el = scroller.value
    if (!el || Math.abs(el.scrollTop - listKnows) < 1) return
    el.dispatchEvent(new Event('scroll'))
    heardEarly = el.scrollTop
  }

  return {
    catchUp,
    /** The list's `scrollToFn`: its own scrolls are known to it, never taken for the reader's. */
    scrollView(offset: number, how: { adjustments?: number; behavior?: ScrollBehavior }, list: List): void {
      const from = scroller.value?.scrollTop
      elementScroll(offset, how, list)
      listKnows = scroller.value?.scrollTop ?? listKnows
      if (listKnows !== from) listMoved = listKnows
    },
    /**
     * The list's `observeElementOffset`: each scroll event of the view is the list's first, then the view's own handler's
     * (`onEvent`: the fling, following the end). The other way round, a leap that began or went on with a fling (the
     * rows to draw changed) made a render from the list's old place first: the rows of the view before the leap, 12–14
     * of them, all outside the view, kept in the page by a render for nothing before the one that drew those in view,
     * in the same task, at each fling's start (e2e/thread's fling).
     */
    observeOffset(onEvent: () => void) {
      return (list: List, give: (offset: number, isScrolling: boolean) => void) =>
        observeElementOffset(list, (offset, isScrolling) => {
          give(offset, isScrolling)
          // Its scroll events (and those catchUp gives), not its "scroll ended" ones.
          if (isScrolling) onEvent()
        })
    },
    /** Before the list takes new entries or a row's new size, it hears the scroll it has not heard of (catchUp). */
    hearReaderFirst(list: List): void {
      const { setOptions, resizeItem } = list
      list.setOptions = (next) => {
        if (next.count !== list.options.count) catchUp()
        setOptions(next)
      }
      list.resizeItem = (index, size) => {
        // Only a size that changes moves anything. The list is given each row's size as the row mounts, most often the
        // one it has (row-measure.ts): heard first each time, the scroll's read laid the page out again with one row
        // more, a layout for each row a render put in (52 at the open of 200 messages,
        // ~25 ms of forced layout: e2e/thread's "lays the page out once…", bench/open-probe.ts).
        const known = measuredSize(list, index) ?? list.measurementsCache[index]?.size
        if (size !== known) catchUp()
        resizeItem(index, size)
      }
    },
    /**
     * A scroll event of the view's, at `top`, and whose move it is: the reader's (through which a fling's leaps go on),
     * the list's own (scrollView: a row measured above the view moved it by its change, a page taken in, the end kept
     * in view), or the event of a scroll heard early (catchUp), already given.
     */
    heard(top: number): 'reader' | 'list' | 'early' {
      listKnows = top
      const early = heardEarly === top
      const list = listMoved === top
      heardEarly = null
      listMoved = null
      return early ? 'early' : list ? 'list' : 'reader'
    }
  }
}
