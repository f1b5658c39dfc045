'use strict'
/**
 * The Host's garbage collections, each with V8's reason (bench/idle.ts's trace): loaded with
 * `--require bench/gc-trace-preload.cjs` (BENCH_GC_TRACE set: bench/processes.ts's startServe adds it and keeps
 * serve's console in $BENCH_GC_TRACE/serve-<pid>.log, each line with the wall clock), the Host's process (serve.js
 * forked, SWITCHBOARD_SERVE_HOST=1) turns on V8's --trace-gc for its full collections (one line each on stdout: the
 * heap before and after, its main-thread time, why: "testing" for a gc() of ours, "Mark-Compact (reduce)" for the
 * memory reducer's, "finalize incremental marking via task" for a limit reached...). It marks where a SIGUSR2 fell
 * (the idle window's start and end, bench/wakeups-preload.cjs's signal) and each gc() QuietCollector asks for.
 */
if (process.env.BENCH_GC_TRACE && process.env.SWITCHBOARD_SERVE_HOST === '1' && /serve\.js$/.test(process.argv[1] || '')) {
  const v8 = require('node:v8')
  const { performance } = require('node:perf_hooks')
  v8.setFlagsFromString('--trace-gc')
  v8.setFlagsFromString('--trace-gc-ignore-scavenger')
  const mark = (what) => process.stdout.write(`[gc-trace] ${performance.now().toFixed(0)} ms: ${what}\n`)
  let signals = 0
  process.on('SIGUSR2', () => mark(++signals % 2 ? 'SIGUSR2: the count starts' : 'SIGUSR2: the count ends'))
  // --expose-gc defines gc() before this runs; QuietCollector reads globalThis.gc when the Host starts, after this.
  const own = globalThis.gc
  if (typeof own === 'function') {
    globalThis.gc = (...args) => {
      mark('gc() asked for (QuietCollector)')
      return own(...args)
    }
  }
}
