import { createHash } from 'node:crypto'
import { mkdtemp, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { foldConversation } from '../electron/host/sessions/conversation-fold'
import { seedOf, SEED_BUDGET } from '../electron/host/sessions/conversation-seed'
import { currentViewOf } from '../electron/host/storage/transcript-stream'
import { appendLongTurns } from './long-data'

/**
 * The seed's fold in process, for profiling its memory (no Host, no agent):
 * `node --expose-gc --import tsx bench/seed-fold-profile.ts 100000 [file]`
 * (add --trace-gc, --max-semi-space-size=N...). Prints the RSS and heap before,
 * their peaks while it folds, the heap after a GC at the end and the seed's length.
 */
async function main(): Promise<void> {
  const entries = Number(process.argv[2] ?? 100_000)
  let file = process.argv[3]
  if (!file) {
    file = join(await mkdtemp(join(tmpdir(), 'seed-fold-')), 't.jsonl')
    await appendLongTurns(file, entries, '2026-01-01T00:00:00.000Z')
  }
  global.gc?.()
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1)
  const before = process.memoryUsage()
  let peakRss = before.rss
  let peakHeap = before.heapUsed
  const sample = () => {
    const m = process.memoryUsage()
    peakRss = Math.max(peakRss, m.rss)
    peakHeap = Math.max(peakHeap, m.heapUsed)
  }
  const timer = setInterval(sample, 20)
  const t0 = performance.now()
  const folded = await foldConversation(currentViewOf(file), 'Agent', SEED_BUDGET)
  const ms = performance.now() - t0
  sample()
  clearInterval(timer)
  const seed = seedOf(folded, { title: 't', agentName: 'Agent', cwd: '/', changes: { unavailable: 'x' }, reviewNotes: [] }, { images: false })
  global.gc?.()
  const after = process.memoryUsage()
  console.log(
    `transcript ${mb((await stat(file)).size)} MB; rss ${mb(before.rss)} -> peak ${mb(peakRss)} (+${mb(peakRss - before.rss)}); heap ${mb(before.heapUsed)} -> peak ${mb(peakHeap)}, after GC ${mb(after.heapUsed)}; ${ms.toFixed(0)} ms; seed ${seed.chars} chars (sha1 ${createHash('sha1').update(seed.text).digest('hex').slice(0, 12)}), ${folded.toolCalls.length} tool calls; file ${file}`
  )
}

void main()
