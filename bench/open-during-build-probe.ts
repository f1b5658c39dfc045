import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Host } from '../electron/host/host'
import type { BuildStep } from '../electron/host/search/build'
import { SEARCH_INDEX_FILE } from '../electron/host/search/search-index'
import { makeDataset } from './data'
import { percentile, withTempDir } from './lib'

/**
 * How long a window waits for a conversation's tail while the search index is built (the Host alone, in this
 * process; no page): a Host on `sessions` short sessions and one long one (`turns` × 4 entries) opens, a search
 * starts the build, and as long as it runs the long conversation is opened again and again (`sessions.open` of its
 * 400-record tail, one at a time, 20 ms apart). At a first start (no index on disk) the build reads the long
 * transcript; at the next (the index saved at the close before) it reads the file. Three of each, alternated.
 * `npx tsx bench/open-during-build-probe.ts [turns] [sessions]`.
 */

async function main(): Promise<void> {
  const turns = Number(process.argv[2] ?? 2_500)
  const sessions = Number(process.argv[3] ?? 1_000)
  await withTempDir('open-during-build', async (root) => {
    const { dataDir, longSessionIds } = await makeDataset(root, { projects: 1, sessions, turnsPerSession: 1, longTurns: turns })
    for (const start of ['first', 'next', 'first', 'next', 'first', 'next']) {
      if (start === 'first') await rm(join(dataDir, SEARCH_INDEX_FILE), { force: true })
      let building = false
      let complete!: () => void
      const completed = new Promise<void>((resolve) => (complete = resolve))
      const onBuildStep = (step: BuildStep): void => {
        if (step.step === 'start') building = true
        if (step.step !== 'complete') return
        building = false
        complete()
      }
      const host = await Host.open({ dataDir, version: 'bench', presets: [], agentIdleMs: 0, search: { onBuildStep } })
      const t0 = performance.now()
      void host.handle('search.query', { q: 'anything' })
      const waits: number[] = []
      while (!building) await new Promise((resolve) => setTimeout(resolve, 1))
      while (building) {
        const asked = performance.now()
        const answer = await host.handle('sessions.open', { id: longSessionIds[0], tail: 400 })
        if (!answer.ok) throw new Error(answer.error.message)
        waits.push(performance.now() - asked)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await completed
      console.log(
        `${start} start: the build ${(performance.now() - t0).toFixed(0)} ms; sessions.open meanwhile ×${waits.length}: ` +
          `median ${percentile(waits, 50).toFixed(1)} ms, p90 ${percentile(waits, 90).toFixed(1)}, longest ${Math.max(...waits).toFixed(1)}`
      )
      await host.close()
    }
  })
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
