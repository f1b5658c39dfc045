import { QuietCollector } from '../../electron/host/host-process/quiet-gc'

/**
 * The scenes quiet-gc.test.ts runs in a process of their own, started with the Host's V8 flags (HOST_EXEC_ARGV: `gc`
 * exposed, no memory reducer). In the test's shared worker, V8's memory reducer (on there) or an earlier file's heap
 * could free the garbage, or keep it, whatever the collector did.
 *
 * Work leaves old garbage: buffers that outlive two scavenges, so in the old generation, where only a full collection
 * frees them. They are made and dropped in one task: the collector, which looks a second after the collections this
 * sets off, cannot look while they are held. (32 MB: half V8's soft limit for memory outside its heap, past which V8
 * starts a full collection by itself.) The first argument says what the process does next:
 * - `quiet` (a burst of work): nothing but a look twice a second until the buffers are freed or 30 s pass;
 * - `streaming` (a Host streaming for minutes): for 8 s, busy 20 ms of every 100 ms, then as `quiet`;
 * - `copying` (a Host copying a long conversation): for 5 s, busy all but 5 ms of every 100 ms, then as `quiet`.
 * The figures are printed as JSON, `busyFreedMs` when the buffers were seen freed while the work went on (null: not).
 * With `none` as second argument, the collector's `collect` does nothing (and nothing is awaited once quiet).
 */
const gc = (globalThis as { gc?: (options?: { type: 'minor' }) => void }).gc
if (!gc) throw new Error('run with --expose-gc')
const buffersMb = (): number => process.memoryUsage().arrayBuffers / 1024 / 1024
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const work = { quiet: { ms: 0, busyMs: 0 }, streaming: { ms: 8_000, busyMs: 20 }, copying: { ms: 5_000, busyMs: 95 } }[
  (process.argv[2] ?? 'quiet') as 'quiet' | 'streaming' | 'copying'
]

gc()
const before = buffersMb()
const collector = new QuietCollector(process.argv[3] === 'none' ? () => {} : () => gc())
let kept: Buffer[] | null = Array.from({ length: 32 }, () => Buffer.alloc(1024 * 1024, 1))
gc({ type: 'minor' })
gc({ type: 'minor' })
const held = buffersMb() - before
if (kept.length !== 32) throw new Error('the buffers were not made')
kept = null
const freed = (): boolean => buffersMb() < before + 8
let busyFreedMs: number | null = null
const start = Date.now()
while (Date.now() - start < work.ms) {
  const tick = Date.now()
  while (Date.now() - tick < work.busyMs) {
    // The loop held, as a Host's work holds it.
  }
  if (busyFreedMs === null && freed()) busyFreedMs = Date.now() - start
  await sleep(100 - work.busyMs)
}
const quiet = Date.now()
while (!freed() && Date.now() - quiet < (process.argv[3] === 'none' ? 0 : 30_000)) await sleep(500)
const after = buffersMb() - before
collector.stop()
process.stdout.write(
  JSON.stringify({
    held,
    after,
    busyFreedMs,
    collections: collector.collections,
    busyCollections: collector.busyCollections,
    ms: Date.now() - start
  }) + '\n'
)
