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
import { seededRandom } from '../test/seeded-random'

/**
 * The search bench's index in process (no browser, no transcripts per session): `node --expose-gc --import tsx
 * bench/search-rank-profile.ts 100000`. With `varied` after the size, each session's entries are words drawn from a
 * vocabulary of 300 (the query's among them) at lengths of 3 to 150 instead of the bench's same turn: scores spread
 * over lengths and counts, where a block of documents' bound is far from most of its documents' scores.
 */
async function main(): Promise<void> {
  const size = Number(process.argv[2] ?? 100_000)
  const varied = process.argv[3] === 'varied'
  const next = seededRandom(53)
  const vocabulary = ['render', 'listing', ...Array.from({ length: 298 }, (_, i) => `word${i}`)]
  const words = (n: number): string => Array.from({ length: n }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(' ')
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
    // Each session's texts its own strings, as each transcript read gives.
    const own = new Map(
      [...texts].map(([id, entry]) => [id, { kind: entry.kind, text: varied ? words(3 + Math.floor(next() * 148)) : [...entry.text].join('') }])
    )
    docs.indexEntries(record.id, own, seqs)
  }
  global.gc?.()
  console.log(
    `built ${size} in ${(performance.now() - t0).toFixed(0)} ms, heap ${((process.memoryUsage().heapUsed - heap0) / size / 1024).toFixed(2)} KB/session`
  )
  for (const q of ['render listing', 'render', 'listing']) {
    const kept = rankDocs(docs.mini, q, 400, docs.lengths).top.length
    console.log(`rank ${q}: ${timed(() => rankDocs(docs.mini, q, 400, docs.lengths))} (${kept} kept)`)
  }
  // The palette asks for a screenful's messages first (12), all 40 once the rest is to be drawn; each twice, alternated.
  for (const limit of [40, 12, 40, 12]) {
    console.log(
      `query, ${limit} messages: ${timed(() => queryDocs(docs, 'render listing', limit, { projects: () => [], sessions: () => sessions }, null))}`
    )
  }
  if (global.gc) heapByPart(docs, size)
}

/** 15 runs of `run`: the median and least CPU time (on a loaded machine the wall time is mostly the wait for a core), and the median wall time. */
function timed(run: () => void): string {
  const cpu: number[] = []
  const wall: number[] = []
  for (let i = 0; i < 15; i++) {
    const t = performance.now()
    const c = process.cpuUsage()
    run()
    const spent = process.cpuUsage(c)
    cpu.push((spent.user + spent.system) / 1000)
    wall.push(performance.now() - t)
  }
  const sorted = (values: number[]): number[] => values.sort((a, b) => a - b)
  return `CPU median ${sorted(cpu)[7].toFixed(1)} ms, least ${cpu[0].toFixed(1)}; wall median ${sorted(wall)[7].toFixed(1)} ms`
}

/** What of the heap each part of the index holds, a document at a time (each part let go of in turn, the heap read after a GC). */
function heapByPart(docs: SearchDocs, size: number): void {
  const heap = (): number => {
    global.gc?.()
    global.gc?.()
    const { heapUsed, arrayBuffers } = process.memoryUsage()
    return heapUsed + arrayBuffers
  }
  const documents = docs.mini.documentCount
  const mini = docs.mini as unknown as Record<string, unknown>
  const parts: [string, () => void][] = [
    ['the texts and seqs kept for snippets (SearchDocs.sessions)', () => (docs.sessions = new Map())],
    ["MiniSearch's postings (its radix tree of words, a Map per word and field)", () => (mini._index = null)],
    ["MiniSearch's field lengths (a Map of arrays)", () => (mini._fieldLength = null)],
    ["MiniSearch's document ids, both ways", () => ((mini._documentIds = null), (mini._idToShortId = null))]
  ]
  let before = heap()
  for (const [what, drop] of parts) {
    drop()
    const after = heap()
    console.log(`${((before - after) / documents).toFixed(0).padStart(5)} B a document: ${what}`)
    before = after
  }
  console.log(`(${documents} documents, ${size} sessions)`)
}

void main()
