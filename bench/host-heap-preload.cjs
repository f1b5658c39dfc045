'use strict'
/**
 * The Host's memory as it goes (bench/fork-probe.ts): loaded with NODE_OPTIONS="--require bench/host-heap-preload.cjs"
 * and P43_PROBE_DIR set, the Host's process (serve.js forked, SWITCHBOARD_SERVE_HOST=1; not serve's supervisor, not an
 * agent) writes to $P43_PROBE_DIR/host-<pid>.jsonl its RSS (anonymous and file-backed), heap, CPU (ms) and event loop's busy time (ms) every 100 ms and, at each major GC, the heap
 * used after it and each space's used and committed MB; SIGUSR2 starts a sampling heap profile that keeps what GCs
 * collected, the next SIGUSR2 writes it (host-<pid>-<time>.heapprofile, for Chrome's DevTools). P43_SNAPSHOT_AT="60,235":
 * a heap snapshot (host-<pid>-<s>s.heapsnapshot, after a full collection) that many seconds after the Host started.
 */
const dir = process.env.P43_PROBE_DIR
if (dir && process.env.SWITCHBOARD_SERVE_HOST === '1' && /serve\.js$/.test(process.argv[1] || '')) {
  const fs = require('node:fs')
  const v8 = require('node:v8')
  const { join } = require('node:path')
  const { PerformanceObserver, constants, performance } = require('node:perf_hooks')
  const out = fs.openSync(join(dir, `host-${process.pid}.jsonl`), 'a')
  const w = (o) => fs.writeSync(out, JSON.stringify(o) + '\n')
  const spaces = () => {
    const s = {}
    for (const sp of v8.getHeapSpaceStatistics())
      s[sp.space_name.replace('_space', '')] = [Math.round(sp.space_used_size / 1e5) / 10, Math.round(sp.physical_space_size / 1e5) / 10]
    return s
  }
  const mb = (n) => Math.round(n / 1e5) / 10
  setInterval(() => {
    const m = process.memoryUsage()
    const c = process.cpuUsage()
    const elu = performance.eventLoopUtilization()
    // Anonymous memory (V8's heap, malloc, buffers) and file-backed (the node binary's pages as they are touched).
    const status = fs.readFileSync('/proc/self/status', 'utf8')
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0)
    w({
      t: Date.now(),
      rss: mb(m.rss),
      used: mb(m.heapUsed),
      total: mb(m.heapTotal),
      ext: mb(m.external),
      ab: mb(m.arrayBuffers),
      cpu: Math.round((c.user + c.system) / 1000),
      busy: Math.round(elu.active),
      anon: Math.round(kb('RssAnon') / 102.4) / 10,
      file: Math.round(kb('RssFile') / 102.4) / 10
    })
  }, 100).unref()
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = e.detail?.kind
      const k =
        kind === constants.NODE_PERFORMANCE_GC_MAJOR
          ? 'major'
          : kind === constants.NODE_PERFORMANCE_GC_MINOR
            ? 'minor'
            : kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL
              ? 'incr'
              : 'other' + kind
      if (k === 'minor') continue
      w({
        t: Date.now(),
        gc: k,
        ms: Math.round(e.duration),
        used: mb(v8.getHeapStatistics().used_heap_size),
        rss: mb(process.memoryUsage.rss()),
        spaces: spaces()
      })
    }
  }).observe({ entryTypes: ['gc'] })
  let session = null
  process.on('SIGUSR2', () => {
    const inspector = require('node:inspector')
    if (!session) {
      session = new inspector.Session()
      session.connect()
      session.post('HeapProfiler.enable')
      session.post('HeapProfiler.startSampling', {
        samplingInterval: 32768,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
      w({ t: Date.now(), mark: 'profile-start' })
    } else {
      const s = session
      session = null
      s.post('HeapProfiler.stopSampling', (err, r) => {
        if (!err) fs.writeFileSync(join(dir, `host-${process.pid}-${Date.now()}.heapprofile`), JSON.stringify(r.profile))
        w({ t: Date.now(), mark: 'profile-stop', err: String(err) })
        s.disconnect()
      })
    }
  })
  for (const at of (process.env.P43_SNAPSHOT_AT || '').split(',').filter(Boolean))
    setTimeout(
      () => {
        const t0 = Date.now()
        v8.writeHeapSnapshot(join(dir, `host-${process.pid}-${at}s.heapsnapshot`))
        w({ t: Date.now(), mark: `snapshot-${at}s`, ms: Date.now() - t0 })
      },
      Number(at) * 1000
    ).unref()
  w({ t: Date.now(), mark: 'start', pid: process.pid })
}
