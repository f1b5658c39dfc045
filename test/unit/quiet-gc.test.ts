import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterEach, describe, expect, it, vi } from 'vitest'
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
    await vi.waitFor(() => expect(buffersMb()).toBeLessThan(before + 8), { timeout: 10_000, interval: 100 })
    expect(collector.collections).toBe(1)
  })
})
