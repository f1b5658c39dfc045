/**
 * V8's flags for the Host's process, one list for both of its starters: the
 * desktop's `utilityProcess` (electron/main.ts) and serve's fork (serve.ts).
 * `--expose-gc`: the Host hands its garbage back once quiet (quiet-gc.ts).
 * `--max-semi-space-size=8`: its young generation at most 2 × 8 MB instead
 * of Node's 2 × 16 MB, committed whenever the Host has worked
 * (docs/BENCHMARKS.md, item 12).
 */
export const HOST_EXEC_ARGV: string[] = ['--expose-gc', '--max-semi-space-size=8']
