import { spawn } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { SEARCH_INDEX_FILE } from '../electron/host/search/search-index'
import type { SearchResults } from '../shared/search'
import { repoRoot } from './agents'
import { now, until } from './lib'
import { servedUrl, WsClient } from './serve-client'

/**
 * Host start: the Host as shipped (`node out/main/serve.js`, or the build
 * `BENCH_SERVE_JS` names, to measure another version), started on a data
 * folder. Two moments, from the spawn:
 * - *ready*: it serves, and the session list has been answered over its
 *   WebSocket (what the window needs to show every session);
 * - *search complete*: `search.query` answers with `indexing: null` (every
 *   session findable); the longest any of those searches waited for its
 *   answer says how long reading the index held the Host up.
 * `fresh` deletes the search index kept on disk first (the first start).
 */
export interface HostStart {
  readyMs: number
  searchMs: number
  /** The longest a search (asked every 5 ms from ready to search complete) waited for its answer: how long the Host was held up by the index. */
  longestAnswerMs: number
}

export async function hostStart(dataDir: string, fresh: boolean): Promise<HostStart> {
  if (fresh) await rm(join(dataDir, SEARCH_INDEX_FILE), { force: true })
  const serveJs = process.env.BENCH_SERVE_JS ?? join(repoRoot, 'out', 'main', 'serve.js')
  const t0 = now()
  // BENCH_CPU_PROF=<folder>: each start writes a CPU profile there (node --cpu-prof), to see what its time goes to.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []
  const child = spawn(process.execPath, [...profile, serveJs, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  try {
    const url = await servedUrl(child)
    const client = await WsClient.connect(url, () => undefined)
    try {
      await client.request('sessions.list', {})
      const readyMs = now() - t0
      let longestAnswerMs = 0
      const complete = async (): Promise<boolean> => {
        const asked = now()
        const { indexing } = await client.request<SearchResults>('search.query', { q: '' })
        longestAnswerMs = Math.max(longestAnswerMs, now() - asked)
        return indexing === null
      }
      await until(complete, 'the search index', 600_000)
      return { readyMs, searchMs: now() - t0, longestAnswerMs }
    } finally {
      client.close()
    }
  } finally {
    // SIGTERM closes the Host as the user's quit does (the index is saved then).
    child.kill('SIGTERM')
    await exited
  }
}
