/**
 * A diagnostic, not a figure (`npx tsx bench/app-memory-probe.ts`; not run by `npm run bench`): app-memory's scene
 * (bench/idle.ts) with the window's renderer looked into while four panes stream: its RSS (anonymous and file-backed),
 * JS heap used/total, DOM nodes, documents and layouts every second; PROBE_DUMPS=1 adds Chromium's memory-infra
 * dumps (blink_gc, malloc, partition_alloc, cc tiles, v8 spaces), PROBE_SAMPLING=1 V8's sampled allocations
 * (collected ones included) by function, PROBE_SNAPSHOT=path a heap snapshot of the page after the streams and a GC.
 * PROBE_SMAPS=1 the renderer's RSS by mapping (/proc/<pid>/smaps: each file, and anonymous memory by its name)
 * before the streams, at the peak and after a GC. PROBE_CHUNKS (20,000), PROBE_SESSIONS (10,000), PROBE_ARGS (Chromium's).
 * PROBE_HOST_SNAPSHOT=1 sends the Host SIGUSR2 before the streams and after them: run with
 * NODE_OPTIONS='--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<folder>' for its heap snapshots there.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import type { Browser, CDPSession, Page } from 'playwright-core'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { CHROMIUM_ARGS, chromiumPath } from '../test/e2e/browser'
import { withTempDir } from './lib'
import { chromiumProcesses, rssMb } from './processes'
import { fourAgentsScene, untilEveryPaneShows } from './idle'
import { makeDataset } from './data'
import { listingShape } from './seeds'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const SESSIONS = Number(process.env.PROBE_SESSIONS ?? 10_000)
const CHUNKS = Number(process.env.PROBE_CHUNKS ?? 20_000)
const DUMPS = process.env.PROBE_DUMPS === '1'
const SAMPLING = process.env.PROBE_SAMPLING === '1'
const CLICK = process.env.PROBE_CLICK !== '0'
/** Where to write a heap snapshot of the page after the streams and a GC (PROBE_SNAPSHOT=path). */
const SNAPSHOT = process.env.PROBE_SNAPSHOT
const HOST_SNAPSHOT = process.env.PROBE_HOST_SNAPSHOT === '1'

function smaps(pid: number): string {
  try {
    const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    const get = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(t)?.[1] ?? 0) / 1024
    return `anon ${get('Anonymous').toFixed(0)} file ${(get('Rss') - get('Anonymous')).toFixed(0)}`
  } catch {
    return '?'
  }
}

const SMAPS = process.env.PROBE_SMAPS === '1'

/** The process's RSS by mapping (a file's name, else `[anon]`, `[heap]`, ...), in MB, largest first. */
function smapsByMapping(pid: number): [string, number][] {
  const by = new Map<string, number>()
  let name = ''
  try {
    for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
      const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
      if (head) name = head[1] || '[anon]'
      else if (line.startsWith('Rss:')) by.set(name, (by.get(name) ?? 0) + Number(/(\d+)/.exec(line)![1]) / 1024)
    }
  } catch {
    // gone
  }
  return [...by].sort((a, b) => b[1] - a[1])
}

const smapsLine = (label: string, rows: [string, number][]): string =>
  `smaps ${label}: ` +
  rows
    .filter(([, mb]) => mb >= 1)
    .map(([n, mb]) => `${n.split('/').pop()} ${mb.toFixed(1)}`)
    .join(', ')

async function dump(browserSession: CDPSession, rendererPid: number): Promise<string> {
  const events: unknown[] = []
  const onData = (e: { value: unknown[] }): void => void events.push(...e.value)
  browserSession.on('Tracing.dataCollected' as never, onData as never)
  const send = (browserSession as unknown as { send(method: string, params?: object): Promise<unknown> }).send.bind(browserSession)
  await send('Tracing.start', {
    traceConfig: { includedCategories: ['disabled-by-default-memory-infra'], excludedCategories: ['*'], memoryDumpConfig: { triggers: [] } },
    transferMode: 'ReportEvents'
  })
  const r = (await send('Tracing.requestMemoryDump', { deterministic: false, levelOfDetail: 'detailed' })) as { success: boolean }
  const done = new Promise((resolve) => browserSession.once('Tracing.tracingComplete' as never, resolve as never))
  await send('Tracing.end')
  await done
  browserSession.off('Tracing.dataCollected' as never, onData as never)
  const sizes: Record<string, number> = {}
  for (const ev of events as {
    ph: string
    pid: number
    args?: { dumps?: { allocators?: Record<string, { attrs?: Record<string, { value: string }> }> } }
  }[]) {
    if (ev.ph !== 'v' || ev.pid !== rendererPid) continue
    const allocators = ev.args?.dumps?.allocators ?? {}
    for (const [name, a] of Object.entries(allocators)) {
      const depth = name.split('/').length
      const keep =
        depth === 1 ||
        /^(v8\/main\/heap\/[a-z_]+|partition_alloc\/partitions\/[a-z_]+|blink_gc\/main\/heap\/[A-Za-z]+|cc\/tile_memory|malloc\/[a-z_]+)$/.test(name)
      if (!keep) continue
      const v = a.attrs?.size?.value
      if (v) sizes[name] = Number.parseInt(v, 16) / 1024 / 1024
    }
  }
  return (
    `dump ${r.success ? '' : '(failed) '}` +
    Object.entries(sizes)
      .filter(([, mb]) => mb >= 0.5)
      .map(([n, mb]) => `${n} ${mb.toFixed(1)}`)
      .join(', ')
  )
}

async function main(): Promise<void> {
  const browser: Browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: [...CHROMIUM_ARGS, ...(process.env.PROBE_ARGS ? process.env.PROBE_ARGS.split(' ') : [])]
  })
  try {
    await withTempDir('probe-appmem', async (root) => {
      const { dataDir } = await makeDataset(join(root, 'full'), listingShape(SESSIONS))
      const { served, ids } = await fourAgentsScene(dataDir)
      try {
        await served.client.request('settings.set', {
          panes: { panes: ids.map((sessionId, i) => ({ id: `pane-${i + 1}`, sessionId })), focused: 'pane-1', maximised: null }
        })
        const context = await browser.newContext({ viewport: { width: 1600, height: 900 } })
        const page: Page = await context.newPage()
        await page.goto(served.url)
        await page.getByTestId('session-item').first().waitFor({ timeout: 120_000 })
        for (let i = 0; i < 4; i++) await page.getByTestId('pane').nth(i).getByTestId('entry-assistant').last().waitFor({ timeout: 120_000 })
        await sleep(2_000)
        const renderers = (await chromiumProcesses(browser)).filter((p) => p.type === 'renderer').map((p) => p.pid)
        const renderer = renderers.map((pid) => ({ pid, rss: rssMb(pid) })).sort((a, b) => b.rss - a.rss)[0].pid
        const cdp = await context.newCDPSession(page)
        await cdp.send('Performance.enable')
        const bs = await browser.newBrowserCDPSession()
        const metrics = async (): Promise<Record<string, number>> => {
          const { metrics: m } = await cdp.send('Performance.getMetrics')
          return Object.fromEntries(m.map((x) => [x.name, x.value]))
        }
        const line = async (label: string): Promise<void> => {
          const m = await metrics()
          const mb = (b: number): string => (b / 1024 / 1024).toFixed(1)
          console.error(
            `${label} rss ${rssMb(renderer).toFixed(0)} (${smaps(renderer)}) host ${rssMb(served.host).toFixed(0)} js ${mb(m.JSHeapUsedSize)}/${mb(m.JSHeapTotalSize)} nodes ${m.Nodes} docs ${m.Documents} layouts ${m.LayoutCount} recalcs ${m.RecalcStyleCount} listeners ${m.JSEventListeners}`
          )
        }
        await line('before')
        if (HOST_SNAPSHOT) {
          process.kill(served.host, 'SIGUSR2')
          await sleep(15_000)
          await line('after the Host snapshot')
        }
        if (SMAPS) console.error(smapsLine('before', smapsByMapping(renderer)))
        let peakSmaps: [string, number][] = []
        if (DUMPS) console.error(await dump(bs, renderer))
        if (SAMPLING)
          // Collected objects too (Chromium 122+): what was allocated, not what is left.
          await (cdp as unknown as { send(method: string, params: object): Promise<unknown> }).send('HeapProfiler.startSampling', {
            samplingInterval: 16384,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true
          })
        let peak = 0
        let sampling = true
        const t0 = Date.now()
        const sampler = (async () => {
          let n = 0
          while (sampling) {
            const rss = rssMb(renderer)
            if (SMAPS && rss > peak + 2) peakSmaps = smapsByMapping(renderer)
            peak = Math.max(peak, rss)
            if (++n % 10 === 0) await line(`t+${((Date.now() - t0) / 1000).toFixed(1)}`)
            if (DUMPS && n % 30 === 0) console.error(await dump(bs, renderer))
            await sleep(100)
          }
        })()
        await Promise.all(ids.map((id) => served.client.request('sessions.prompt', { id, text: `/stream ${CHUNKS}` })))
        await untilEveryPaneShows(page, `chunk ${CHUNKS}`, CLICK)
        sampling = false
        await sampler
        console.error(`peak renderer rss ${peak.toFixed(0)} after ${((Date.now() - t0) / 1000).toFixed(1)} s`)
        await line('end')
        if (SMAPS) console.error(smapsLine('near the peak', peakSmaps))
        if (SAMPLING) {
          const { profile } = (await cdp.send('HeapProfiler.stopSampling')) as unknown as {
            profile: { head: Node; samples: { size: number; nodeId: number }[] }
          }
          type Node = { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; id: number; children: Node[] }
          // Sampling profile: sizes live at stop (not allocated); print top self by function.
          const by = new Map<string, number>()
          const walk = (n: Node, stack: string[]): void => {
            const f = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`
            const s = [f, ...stack].slice(0, Number(process.env.PROBE_DEPTH ?? 3)).join(' < ')
            if (n.selfSize) by.set(s, (by.get(s) ?? 0) + n.selfSize)
            for (const c of n.children) walk(c, [f, ...stack])
          }
          walk(profile.head, [])
          for (const [k, v] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.error(`  alloc ${(v / 1024 / 1024).toFixed(2)} MB ${k}`)
        }
        if (DUMPS) console.error(await dump(bs, renderer))
        await cdp.send('HeapProfiler.collectGarbage')
        await sleep(1000)
        await line('after gc')
        if (HOST_SNAPSHOT) {
          process.kill(served.host, 'SIGUSR2')
          await sleep(15_000)
        }
        if (SMAPS) console.error(smapsLine('after gc', smapsByMapping(renderer)))
        if (DUMPS) console.error(await dump(bs, renderer))
        if (SNAPSHOT) {
          const chunks: string[] = []
          const onChunk = (e: { chunk: string }): void => void chunks.push(e.chunk)
          cdp.on('HeapProfiler.addHeapSnapshotChunk', onChunk)
          await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false })
          cdp.off('HeapProfiler.addHeapSnapshotChunk', onChunk)
          writeFileSync(SNAPSHOT, chunks.join(''))
          console.error(`heap snapshot: ${SNAPSHOT}`)
        }
        const counts = await page.evaluate(`[...document.querySelectorAll('[data-testid=pane]')].map((pane) => [
          pane.querySelectorAll('[data-testid^=entry-]').length, pane.querySelectorAll('.md-block').length, pane.querySelectorAll('.plain-piece').length, pane.querySelectorAll('*').length])`)
        console.error(`per pane [entries, md blocks, plain pieces, elements]: ${JSON.stringify(counts)}`)
        await context.close()
      } finally {
        await served.close()
      }
    })
  } finally {
    await browser.close()
  }
}

void main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
