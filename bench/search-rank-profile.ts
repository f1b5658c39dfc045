import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SearchDocs } from '../electron/host/search/documents'
import { readEntries } from '../electron/host/search/intake'
import { queryDocs } from '../electron/host/search/query'
import { rankDocs } from '../electron/host/search/rank'
import { transcriptPath } from '../electron/host/storage/transcripts'
import type { SessionRecord } from '../shared/domain'
import { makeDataset } from './data'

/** The search bench's index in process (no browser, no transcripts per session): `npx tsx bench/search-rank-profile.ts 100000`. */
async function main(): Promise<void> {
  const size = Number(process.argv[2] ?? 100_000)
  const root = await mkdtemp(join(tmpdir(), 'search-rank-'))
  const { dataDir } = await makeDataset(root, { projects: 1, sessions: 1, turnsPerSession: 1 })
  const { texts, seqs } = await readEntries(transcriptPath(join(dataDir, 'transcripts'), 's-0'))
  const docs = new SearchDocs(() => {})
  const sessions: SessionRecord[] = []
  const t0 = performance.now()
  const heap0 = process.memoryUsage().heapUsed
  for (let s = 0; s < size; s++) {
    const record: SessionRecord = {
      id: `s-${s}`,
      acpSessionId: `acp-${s}`,
      agentId: 'bench-agent',
      projectId: `project-${s % 50}`,
      cwd: '/',
      title: `Session ${s}: agent transcript thread terminal`,
      titleSource: 'prompt',
      createdAt: '',
      updatedAt: ''
    }
    sessions.push(record)
    docs.putSession(record)
    docs.indexEntries(record.id, texts, seqs)
  }
  global.gc?.()
  console.log(
    `built ${size} in ${(performance.now() - t0).toFixed(0)} ms, heap ${((process.memoryUsage().heapUsed - heap0) / size / 1024).toFixed(2)} KB/session`
  )
  for (const q of ['render listing', 'render', 'listing']) {
    const times: number[] = []
    for (let i = 0; i < 15; i++) {
      const t = performance.now()
      rankDocs(docs.mini, q, 400, docs.lengths)
      times.push(performance.now() - t)
    }
    times.sort((a, b) => a - b)
    const total = rankDocs(docs.mini, q, 400, docs.lengths).total
    console.log(`rank ${q}: median ${times[7].toFixed(1)} ms min ${times[0].toFixed(1)} (${total} matched)`)
  }
  const times: number[] = []
  for (let i = 0; i < 15; i++) {
    const t = performance.now()
    queryDocs(docs, 'render listing', 40, { projects: () => [], sessions: () => sessions }, null)
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  console.log(`query: median ${times[7].toFixed(1)} ms`)
}

void main()
