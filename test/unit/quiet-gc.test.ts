import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterEach, describe, expect, it } from 'vitest'
import { QuietCollector } from '../../electron/host/host-process/quiet-gc'

// Node's own `gc`, as the Host's process has it with --expose-gc (a test's worker is started without the flag).
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Buffers that outlive two scavenges (so in the old generation, where only a full collection frees them), then dropped. */
async function oldGarbage(megabytes: number): Promise<void> {
  let kept: Buffer[] | null = Array.from({ length: megabytes }, () => Buffer.alloc(1024 * 1024, 1))
  for (let i = 0; i < 2; i++) {
    // Young garbage enough for a scavenge or two, a moment apart.
    for (let j = 0; j < 200_000; j++) void { j, s: `x${j}` }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  expect(kept.length).toBe(megabytes)
  kept = null
}

const buffersMb = (): number => process.memoryUsage().arrayBuffers / 1024 / 1024

/**
 * Waits until `done`, looking twice a second and doing nothing else: the collector waits for a second in which this
 * loop is busy under a twentieth of the time, and an assertion retried every 100 ms (its error built each time) took
 * more than that in a loaded CI (the collector never ran in 10 s there).
 */
async function quietlyUntil(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500))
}

describe('QuietCollector', () => {
  let collector: QuietCollector | null = null
  afterEach(() => collector?.stop())

  it('hands back the garbage a burst of work left in the old generation once the Host is quiet', async () => {
    gc()
    const before = buffersMb()
    collector = new QuietCollector(gc)
    await oldGarbage(64)
    // Nothing else runs: no allocation makes V8 collect the old generation by itself.
    expect(buffersMb()).toBeGreaterThan(before + 60)
    // Their memory is freed by V8's sweeper, after the collection.
    await quietlyUntil(() => buffersMb() < before + 8, 30_000)
    expect(buffersMb()).toBeLessThan(before + 8)
    expect(collector.collections).toBe(1)
  })
})
