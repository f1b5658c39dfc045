import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, it } from 'vitest'
import { HOST_EXEC_ARGV } from '../../electron/host/host-process/exec-argv'

const tsxLoader = createRequire(import.meta.url).resolve('tsx')
const scene = fileURLToPath(new URL('./quiet-gc-scene.ts', import.meta.url))

interface Scene {
  held: number
  after: number
  busyFreedMs: number | null
  collections: number
  busyCollections: number
  ms: number
}

/** Runs quiet-gc-scene.ts in a process with the Host's V8 flags: `quiet`, `streaming` or `copying` (see there). */
async function runScene(...args: string[]): Promise<Scene> {
  const { stdout } = await promisify(execFile)(process.execPath, [...HOST_EXEC_ARGV, '--import', tsxLoader, scene, ...args])
  return JSON.parse(stdout) as Scene
}

/**
 * The four scenes run side by side (describe.concurrent), each in its own process: what each checks is its own
 * process's heap and its own loop's busy share, which eventLoopUtilization reads in wall time (a scene's busy loop
 * holds it for 20 or 95 ms of every 100 by the clock), so another scene beside it takes nothing from what it measures.
 * One after the other they took the file 26 s, the last file of the unit project in a run (the run's tail waited
 * for it); side by side, about the longest scene's 8-9 s.
 */
describe.concurrent('QuietCollector', () => {
  // In the test's own worker (shared with other files, V8's memory reducer on), the memory reducer freed the buffers
  // by itself in ~8 s; and a loaded CI once had the collector collect inside the burst, while the buffers were held.
  it('hands back the garbage a burst of work left in the old generation once the Host is quiet', async ({ expect }) => {
    const scene = await runScene('quiet')
    expect(scene.held).toBeGreaterThan(30)
    // Their memory is freed by V8's sweeper, after the collection.
    expect(scene.after, JSON.stringify(scene)).toBeLessThan(8)
    expect(scene.collections).toBe(1)
  })

  it('hands back what a Host streaming for minutes promoted while it goes on streaming', async ({ expect }) => {
    const scene = await runScene('streaming')
    expect(scene.held).toBeGreaterThan(30)
    // Freed while the work went on (8 s of it), not once it stopped: a stream of minutes never leaves the Host quiet.
    expect(scene.busyFreedMs, JSON.stringify(scene)).not.toBeNull()
    expect(scene.busyCollections).toBe(1)
    expect(scene.collections).toBe(1)
  })

  it('does not hold a loop that is busy without pause (a long copy) for it, and hands back once quiet', async ({ expect }) => {
    const scene = await runScene('copying')
    expect(scene.held).toBeGreaterThan(30)
    expect(scene.busyFreedMs, JSON.stringify(scene)).toBeNull()
    expect(scene.busyCollections).toBe(0)
    expect(scene.after, JSON.stringify(scene)).toBeLessThan(8)
    expect(scene.collections).toBe(1)
  })

  it('collects nothing itself when its collect does nothing: the streaming Host keeps the garbage', async ({ expect }) => {
    const scene = await runScene('streaming', 'none')
    expect(scene.busyFreedMs, JSON.stringify(scene)).toBeNull()
  })
})
