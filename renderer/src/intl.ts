/**
 * The page's Intl formatters are made on first use, never as a module loads:
 * the first one a page makes costs Chromium 20–40 ms (its locale data), which
 * the window's first screen does without (relative times and dates are shown
 * on hover, counts under 1,000 need no grouping).
 */
export function lazily<T>(make: () => T): () => T {
  let made: T | undefined
  return () => (made ??= make())
}

const grouped = lazily(() => new Intl.NumberFormat())

/** A whole count as the page writes it ("1,234"): under 1,000 its digits alone, with no formatter made. */
export function countText(count: number): string {
  return Number.isInteger(count) && Math.abs(count) < 1000 ? String(count) : grouped().format(count)
}
