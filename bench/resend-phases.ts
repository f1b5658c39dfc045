import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PerformanceObserver, constants } from 'node:perf_hooks'
import { getHeapSpaceStatistics } from 'node:v8'
import { seedUpToOf } from '../electron/host/sessions/edit-resend'
import { transcriptLines, viewLinesAfter } from '../electron/host/storage/transcript-stream'
import { TranscriptWriter } from '../electron/host/storage/transcripts'
import type { TranscriptRecord } from '../shared/transcript'
import { appendLongTurns } from './long-data'

/**
 * What each read of an edit and resend leaves in V8's old generation (not part of `npm run bench`):
 * `node --expose-gc --max-semi-space-size=8 --no-memory-reducer --import tsx bench/resend-phases.ts <phase>`, phase
 * `lines` (the transcript read line by line), `parse` (every line parsed, as the view's reads do), `fold` (the seed's
 * fold) or `copy` (the lines written to a new transcript as the copy writes them, its tail kept). The long day's
 * 100,000 entries (bench/long-data.ts), after 140 MB of live ballast (about the Host's live heap with that
 * conversation indexed); the old spaces' growth at the phase's end, before and after a full collection, and what the
 * phase moved into them in all (its growth at each collection summed: what outlived the young generation, garbage too).
 */
const dir = join(tmpdir(), 'switchboard-resend-phases')
mkdirSync(dir, { recursive: true })
const file = join(dir, 'long.jsonl')
if (!existsSync(file)) await appendLongTurns(file, 100_000)
let majors = 0
/** The old and large-object spaces' growth, summed over the phase's collections (a full one's shrinking not taken off). */
let promoted = 0
let oldBefore = 0
const oldNow = (): number =>
  getHeapSpaceStatistics()
    .filter((s) => s.space_name === 'old_space' || s.space_name === 'large_object_space')
    .reduce((n, s) => n + s.space_used_size, 0)
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++
    const now = oldNow()
    promoted += Math.max(0, now - oldBefore)
    oldBefore = now
  }
}).observe({ entryTypes: ['gc'] })
const ballast: string[] = []
for (let i = 0; i < 140_000; i++) ballast.push('x'.repeat(1000) + i)
const spaces = (): Record<string, number> => Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size / 1048576]))
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')
gc()
const phase = process.argv[2]
const before = spaces()
oldBefore = oldNow()
promoted = 0
const t0 = performance.now()
let n = 0
if (phase === 'lines') for await (const { line } of transcriptLines(file)) n += line ? 1 : 0
else if (phase === 'parse') for await (const { record } of viewLinesAfter(file, -1)) n += record ? 1 : 0
else if (phase === 'fold') {
  const records = async function* (): AsyncGenerator<TranscriptRecord> {
    for await (const { record } of viewLinesAfter(file, -1)) if (record.t !== 'checkpoint') yield record
  }
  n = (await seedUpToOf(records(), { title: 'A long day', agentName: 'Agent', cwd: '/project' }))?.length ?? 0
} else if (phase === 'copy') {
  const out = join(dir, 'copy.jsonl')
  rmSync(out, { force: true })
  const writer = new TranscriptWriter(out, 0, true, (error) => {
    throw error
  })
  let tail: TranscriptRecord[] = []
  for await (const { record, line } of viewLinesAfter(file, -1)) {
    writer.appendLine(line)
    tail.push(record)
    if (tail.length >= 800) tail = tail.slice(-400)
    if (++n % 1000 === 0) await writer.flush()
  }
  await writer.flush()
} else throw new Error(`no phase ${phase}: lines, parse, fold or copy`)
const ms = performance.now() - t0
const after = spaces()
promoted += Math.max(0, oldNow() - oldBefore)
const promotedMb = promoted / 1048576
gc()
const collected = spaces()
const grew = (s: Record<string, number>, name: string): string => (s[name] - before[name]).toFixed(1)
console.log(
  `${phase}: ${n} in ${ms.toFixed(0)} ms, ${majors - 1} full collections; at its end old space +${grew(after, 'old_space')} MB, large objects +${grew(after, 'large_object_space')} MB; after a full collection +${grew(collected, 'old_space')} and +${grew(collected, 'large_object_space')} MB; promoted over the phase ${promotedMb.toFixed(1)} MB`
)
