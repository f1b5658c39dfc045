import { QuietCollector } from '../../electron/host/host-process/quiet-gc'

/**
 * The scene quiet-gc.test.ts runs in a process of its own, started with the Host's V8 flags (HOST_EXEC_ARGV: `gc`
 * exposed, no memory reducer). In the test's shared worker, V8's memory reducer (on there) or an earlier file's heap
 * could free the garbage, or keep it, whatever the collector did.
 *
 * A burst of work leaves old garbage: buffers that outlive two scavenges, so in the old generation, where only a full
 * collection frees them. They are made and dropped in one task: the collector, which looks a second after the
 * collections this sets off, cannot look while they are held. (32 MB: half V8's soft limit for memory outside its heap,
 * past which V8 starts a full collection by itself.) Then nothing runs but a look twice a second until the buffers are
 * freed or 30 s pass, and the figures are printed as JSON. With `none` as argument, the collector's `collect` does nothing.
 */
const gc = (globalThis as { gc?: (options?: { type: 'minor' }) => void }).gc
if (!gc) throw new Error('run with --expose-gc')
const buffersMb = (): number => process.memoryUsage().arrayBuffers / 1024 / 1024

gc()
const before = buffersMb()
const collector = new QuietCollector(process.argv[2] === 'none' ? () => {} : () => gc())
let kept: Buffer[] | null = Array.from({ length: 32 }, () => Buffer.alloc(1024 * 1024, 1))
gc({ type: 'minor' })
gc({ type: 'minor' })
const held = buffersMb() - before
if (kept.length !== 32) throw new Error('the buffers were not made')
kept = null
const start = Date.now()
while (buffersMb() >= before + 8 && Date.now() - start < 30_000) await new Promise((resolve) => setTimeout(resolve, 500))
const after = buffersMb() - before
collector.stop()
process.stdout.write(JSON.stringify({ held, after, collections: collector.collections, ms: Date.now() - start }) + '\n')
