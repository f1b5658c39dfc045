import { appendFileSync, mkdirSync } from 'node:fs'
import { cp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { withTempDir } from './lib'
import { rssMb, searchComplete, startServe } from './processes'
import { longConversation } from './seed-memory'

/**
 * A probe of the edit and resend's figure (not part of `npm run bench`; `npx tsx bench/resend-probe.ts`):
 * seed-memory's edit and resend of a long conversation's last message, each run on a copy of the same data folder
 * (its index saved), with marks. With NODE_OPTIONS="--require ./bench/host-heap-preload.cjs" and P43_PROBE_DIR the
 * Host logs its heap there too; this writes its marks and RSS samples to $P43_PROBE_DIR/marks.jsonl. PROBE_RUNS (2),
 * PROBE_ENTRIES (100000), PROBE_AFTER_MS (4000: how long the Host is sampled on after the answer), PROBE_IDLE_MS (1000: how long after its index is complete the idle Host is read), PROBE_SERVE_JS: a
 * comma-separated list of builds (serve.js) taken in turn, run by run (BENCH_SERVE_JS for each).
 */
const dir = process.env.P43_PROBE_DIR ?? '/tmp/p57/run'
mkdirSync(dir, { recursive: true })
const mark = (o: Record<string, unknown>): void => appendFileSync(join(dir, 'marks.jsonl'), JSON.stringify({ t: Date.now(), ...o }) + '\n')
const runs = Number(process.env.PROBE_RUNS) || 2
const entries = Number(process.env.PROBE_ENTRIES) || 100_000
const builds = (process.env.PROBE_SERVE_JS ?? '').split(',').filter(Boolean)
const afterMs = Number(process.env.PROBE_AFTER_MS) || 4_000

await withTempDir('resend-probe', async (root) => {
  const conversation = await longConversation(root, entries)
  const pristine = join(root, 'pristine')
  await cp(conversation.dataDir, pristine, { recursive: true })
  for (let run = 0; run < runs; run++) {
    const build = builds.length ? builds[run % builds.length] : undefined
    if (build) process.env.BENCH_SERVE_JS = build
    await rm(conversation.dataDir, { recursive: true, force: true })
    await cp(pristine, conversation.dataDir, { recursive: true })
    const served = await startServe(conversation.dataDir)
    try {
      mark({ mark: 'started', run, build, pid: served.host })
      await searchComplete(served)
      mark({ mark: 'indexed', run })
      await new Promise((r) => setTimeout(r, Number(process.env.PROBE_IDLE_MS) || 1_000))
      const idle = rssMb(served.host)
      let peak = idle
      let after = idle
      let answered = false
      const timer = setInterval(() => {
        const mb = rssMb(served.host)
        if (answered) after = Math.max(after, mb)
        else peak = Math.max(peak, mb)
      }, 100)
      mark({ mark: 'resend', run, idle })
      const t0 = performance.now()
      await served.confirmed('sessions.editResend', {
        id: conversation.sessionId,
        seq: conversation.lastPrompt,
        text: 'the last question, again',
        conversationOnly: true
      })
      const ms = performance.now() - t0
      peak = Math.max(peak, rssMb(served.host))
      answered = true
      mark({ mark: 'answered', run, idle, peak, rise: peak - idle, ms })
      await new Promise((r) => setTimeout(r, afterMs))
      clearInterval(timer)
      mark({ mark: 'after', run, after, riseAfter: after - idle })
      console.error(
        `run ${run} ${build ?? 'out/'}: idle ${idle.toFixed(0)} MB, peak ${peak.toFixed(0)}, rise ${(peak - idle).toFixed(1)} MB in ${ms.toFixed(0)} ms; the ${afterMs} ms after: peak +${(after - idle).toFixed(1)} MB`
      )
    } finally {
      await served.close()
    }
  }
})
