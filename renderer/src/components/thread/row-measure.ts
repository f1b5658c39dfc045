import type { Virtualizer } from '@tanstack/vue-virtual'

type List = Virtualizer<HTMLElement, HTMLElement>

/**
 * The rows' heights for the thread's list, read so that the rows put in the page by one render are laid out once for
 * all of them. TanStack's own measurement reads a row's `offsetHeight` as Vue sets its ref, right after the row goes
 * in, so each read lays the page out again with one row more: N rows put in the page, N layouts (the rows' measurement
 * 8–12 % of the main thread in profiles of the long scroll, most of it those layouts).
 *
 * Here a row the list has not measured yet counts at the size it has in the list (its guess) when it mounts, and is
 * held; once the render is done (`measureHeld`, from the list's updated hook, still before the frame is painted) the
 * held rows are read together: the first read lays the page out, the others read what it laid out. A row measured
 * before (scrolled back to: the list keeps sizes by entry key) counts at its size without a read, as TanStack's does;
 * the ResizeObserver's entries (after the frame's layout, as the rows change size) give their border box as before.
 */
export interface RowMeasurer {
  /** The list's `measureElement` option. */
  measureElement: (row: HTMLElement, entry: ResizeObserverEntry | undefined, list: List) => number
  /** Holds a row to be read with the others once the render is done (the list's own measurement of it, or the thread's). */
  hold: (row: HTMLElement) => void
  /** Reads the held rows still in the page, all of them after one layout, and gives the list their sizes. */
  measureHeld: (list: List) => void
}

/** The size the list has measured for the row at `index` (kept by its entry's key: scrolled back to, it is the same row). */
export function measuredSize(list: List, index: number): number | undefined {
  return list.itemSizeCache.get(list.options.getItemKey(index))
}

export function rowMeasurer(): RowMeasurer {
  const held = new Set<HTMLElement>()
  return {
    measureElement(row, entry, list) {
      const box = entry?.borderBoxSize?.[0]
      if (box) return Math.round(box.blockSize)
      if (entry) return row.offsetHeight
      const index = list.indexFromElement(row)
      const kept = measuredSize(list, index)
      if (kept !== undefined) return kept
      held.add(row)
      // The size it has in the list: no change, so no measurement is taken for it until it is read.
      return list.measurementsCache[index]?.size ?? list.options.estimateSize(index)
    },
    hold: (row) => void held.add(row),
    measureHeld(list) {
      if (!held.size) return
      const rows = [...held].filter((row) => row.isConnected)
      held.clear()
      // Every read first (one layout), then the sizes: a size given moves the view at most, which lays nothing out again.
      const heights = rows.map((row) => row.offsetHeight)
      rows.forEach((row, i) => {
        const index = list.indexFromElement(row)
        if (measuredSize(list, index) !== heights[i]) list.resizeItem(index, heights[i])
      })
    }
  }
}
