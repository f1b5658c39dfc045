'use strict'
/**
 * Counts a Node process's wake-ups by where they were asked for (bench/idle.ts): loaded with
 * `node --require bench/wakeups-preload.cjs`, it notes every callback the event loop runs for a timer, an
 * immediate, a file-system request, a socket, a child's pipe..., by the kind of resource and the first frames of
 * the code that created it (promises left out: they run inside another wake-up). Only in a process whose
 * environment has BENCH_WAKEUPS_ROLE (the bench sets it for the serve process; serve's Host inherits it): an
 * agent started by the Host inherits it too and is told apart by its role's name.
 *
 * SIGUSR2 starts the count afresh; the next SIGUSR2 writes what was counted since to
 * `$BENCH_WAKEUPS_DIR/<role>-<pid>.json` ({ seconds, sites: { "<kind> <where>": firings }, gc }): `gc` is V8's
 * own work over the same seconds (its collections, major and minor, and their time on the main thread), which
 * no callback shows: a collection runs on V8's threads and in allocations, not as a wake-up of the loop.
 */
const role = process.env.BENCH_WAKEUPS_ROLE
const dir = process.env.BENCH_WAKEUPS_DIR
if (role && dir) {
  const { createHook } = require('node:async_hooks')
  const { writeFileSync } = require('node:fs')
  const { join } = require('node:path')
  const name = process.env.SWITCHBOARD_SERVE_HOST === '1' ? 'host' : process.argv.some((a) => a.endsWith('serve.js')) ? 'supervisor' : role
  const where = new Map()
  const counts = new Map()
  let counting = false
  let since = 0
  const gc = { major: 0, majorMs: 0, minor: 0, minorMs: 0 }
  const { PerformanceObserver, constants } = require('node:perf_hooks')
  new PerformanceObserver((list) => {
    if (!counting) return
    for (const entry of list.getEntries()) {
      // A major collection's incremental marking steps come before it as entries of their own: their time is its.
      const kind = entry.detail?.kind
      const major = kind === constants.NODE_PERFORMANCE_GC_MAJOR || kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major += 1
      else if (!major) gc.minor += 1
      gc[major ? 'majorMs' : 'minorMs'] += entry.duration
    }
  }).observe({ entryTypes: ['gc'] })
  const frames = () => {
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 40
    const stack = (new Error().stack || '').split('\n').slice(1)
    Error.stackTraceLimit = limit
    const ours = stack.filter((line) => !line.includes('node:') && !line.includes('wakeups-preload'))
    return ours
      .slice(0, 3)
      .map((line) =>
        line
          .trim()
          .replace(/^at /, '')
          .replace(/\(?file:\/\/\S*\/out\/main\//, '(')
          .replace(/\(\/\S*\/out\/main\//, '(')
      )
      .join(' < ')
  }
  createHook({
    init(id, type) {
      if (type === 'PROMISE' || type === 'SIGNALWRAP') return
      where.set(id, `${type} ${frames() || '(node itself)'}`)
    },
    before(id) {
      if (!counting) return
      const site = where.get(id) ?? 'made before this count was loaded (e.g. the IPC channel to the parent)'
      counts.set(site, (counts.get(site) || 0) + 1)
    },
    destroy(id) {
      where.delete(id)
    }
  }).enable()
  process.on('SIGUSR2', () => {
    if (!counting) {
      counts.clear()
      Object.assign(gc, { major: 0, majorMs: 0, minor: 0, minorMs: 0 })
      counting = true
      since = Date.now()
      return
    }
    counting = false
    writeFileSync(
      join(dir, `${name}-${process.pid}.json`),
      JSON.stringify({ seconds: (Date.now() - since) / 1000, sites: Object.fromEntries(counts), gc })
    )
  })
}
