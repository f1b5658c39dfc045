import { appendFileSync, mkdirSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { withTempDir } from './lib'
import { procStatusMb, searchComplete, startServe, type Served } from './processes'
import { longForkParent } from './soak'

/**
 * A probe of the fork's figure (not part of `npm run bench`; `npx tsx bench/fork-probe.ts`): the soak's fork
 * (`forkMemory`: a Host started on a 100,000-entry conversation, its index read, then a fork) with marks. With
 * NODE_OPTIONS="--require ./bench/host-heap-preload.cjs" and P43_PROBE_DIR the Host logs its heap there too; this
 * writes its marks (start, index read, fork, forked) to $P43_PROBE_DIR/marks.jsonl. PROBE_RUNS (2), PROBE_ENTRIES
 * (100000), PROBE_AFTER_MS (3000: how long the Host runs on after the fork), PROBE_PROFILE=1: a sampling heap profile
 * over each fork (SIGUSR2), PROBE_SEARCH=1: which sessions a search finds the conversation's first message in after it.
 */
const dir = process.env.P43_PROBE_DIR ?? '/tmp/p43/run'
mkdirSync(dir, { recursive: true })
const mark = (o: Record<string, unknown>): void => appendFileSync(join(dir, 'marks.jsonl'), JSON.stringify({ t: Date.now(), ...o }) + '\n')
const runs = Number(process.env.PROBE_RUNS) || 2
const entries = Number(process.env.PROBE_ENTRIES) || 100_000
const profile = process.env.PROBE_PROFILE === '1'

await withTempDir('fork-probe', async (root) => {
  const dataDir = join(root, 'data')
  const { parentId, file } = await longForkParent(root, dataDir, entries)
  const parent = { id: parentId }
  mark({ mark: 'transcript', mb: (await stat(file)).size / 1048576 })
  for (let run = 0; run < runs; run++) {
    const host: Served = await startServe(dataDir)
    try {
      mark({ mark: 'started', run, pid: host.host })
      await searchComplete(host)
      mark({ mark: 'indexed', run })
      await new Promise((r) => setTimeout(r, 1_000))
      const idle = procStatusMb(host.host, 'VmRSS')
      let peak = idle
      const timer = setInterval(() => (peak = Math.max(peak, procStatusMb(host.host, 'VmRSS'))), 100)
      if (profile) process.kill(host.host, 'SIGUSR2')
      mark({ mark: 'fork', run, idle })
      await host.confirmed('sessions.fork', { id: parent.id })
      clearInterval(timer)
      mark({ mark: 'forked', run, idle, peak, rise: peak - idle })
      if (profile) process.kill(host.host, 'SIGUSR2')
      if (process.env.PROBE_SEARCH) {
        await new Promise((r) => setTimeout(r, 1_000))
        const found = await host.client.request<{ entries: { sessionId?: string; entryId?: string }[] }>('search.query', {
          q: 'first question',
          limit: 30
        })
        console.error(
          `search 'first question': ${JSON.stringify(found.entries.map((h) => [h.sessionId === parent.id ? 'parent' : h.sessionId, h.entryId]))}`
        )
      }
      console.error(`run ${run}: idle ${idle.toFixed(0)} MB, peak ${peak.toFixed(0)}, rise ${(peak - idle).toFixed(1)} MB`)
      await new Promise((r) => setTimeout(r, Number(process.env.PROBE_AFTER_MS) || 3_000))
    } finally {
      await host.close()
    }
  }
})
