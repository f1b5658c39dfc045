import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'

/**
 * Measured figures of the fault-injection tests (kill runs, flood rates, path
 * counts): printed, and kept in test-results/figures/<name>.json for the
 * record. They describe a run; pass or fail is decided by the assertions.
 */
const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results', 'figures')

export function report(name: string, figures: Record<string, unknown>): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, `${name}.json`), JSON.stringify(figures, null, 2) + '\n')
  console.log(`[figures] ${name}: ${JSON.stringify(figures)}`)
}

let collect: (() => void) | null = null

/** Heap in use after a full garbage collection, in MB: what is really kept, not what awaits collection. */
export function retainedHeapMB(): number {
  if (!collect) {
    v8.setFlagsFromString('--expose-gc')
    collect = runInNewContext('gc') as () => void
  }
  collect()
  collect()
  return Math.round((process.memoryUsage().heapUsed / 1048576) * 10) / 10
}

/** Samples the heap while something runs; `stop()` gives the highest heap seen above the start, in MB (a figure). */
export function heapPeak(): { stop(): number } {
  const start = process.memoryUsage().heapUsed
  let peak = start
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 10)
  return {
    stop() {
      clearInterval(timer)
      peak = Math.max(peak, process.memoryUsage().heapUsed)
      return Math.round(((peak - start) / 1048576) * 10) / 10
    }
  }
}
