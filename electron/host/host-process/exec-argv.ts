/**
 * V8's flags for the Host's process, one list for both of its starters: the
 * desktop's `utilityProcess` (electron/main.ts) and serve's fork (serve.ts).
 * `--expose-gc`: the Host hands its garbage back once quiet, and what a
 * stream promotes while it streams (quiet-gc.ts).
 * `--max-semi-space-size=8`: its young generation at most 2 × 8 MB instead
 * of Node's 2 × 16 MB, committed whenever the Host has worked
 * (docs/BENCHMARKS.md, item 12).
 * `--no-memory-reducer`: V8's memory reducer, armed by every full collection,
 * ran one more (and up to three) about 100 s after the last even in a Host
 * doing nothing (its watchdog), into the idle window; quiet-gc.ts hands the
 * garbage back after work instead (docs/BENCHMARKS.md, item 12).
 */
export const HOST_EXEC_ARGV: string[] = ['--expose-gc', '--max-semi-space-size=8', '--no-memory-reducer']

/**
 * V8's flags for the window's renderer: the shell hands them to Chromium as
 * `--js-flags` (electron/main.ts), and the tests' and the bench's Chromium
 * runs with them (test/e2e/browser.ts). Blink's GC heap (layout objects, DOM
 * nodes, the sanitiser's documents) is collected with V8's full collections,
 * which with Chromium's settings came late: four panes streaming grew it from
 * 7 to ~45 MB of mostly garbage, kept as free pages after. So the old
 * generation's first limit is 8 MB (`--initial-old-space-size=8`, not a
 * fraction of the heap's maximum) and each next one 10 % over what a full
 * collection left (`--heap-growing-percent=10`). Not `--optimize-for-size`
 * (2 × 1 MB young generation) as until issue 40's seventeenth round: a fling
 * through a long conversation then promoted its rows and pages, held a few
 * frames, and the full collections that followed (46 in 600 frames, ~15 ms
 * each) were most of the long scroll's missed frames (docs/BENCHMARKS.md,
 * items 10 and 12).
 */
export const RENDERER_JS_FLAGS = '--initial-old-space-size=8 --heap-growing-percent=10'
