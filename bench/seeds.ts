import { existsSync } from 'node:fs'
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SEARCH_INDEX_FILE } from '../electron/host/search/search-index'
import { makeDataset } from './data'

/**
 * Data folders of one shape (`projects` projects, `sessions` sessions of `turnsPerSession` turns: the listing's,
 * search's, startup's and app-memory's), seeded once a run and lent to each group that asks for that shape, in the
 * state the seed left it. At 100,000 sessions a seed took ~30 s and its removal ~18 s, in the listing and again in
 * search; at 10,000, ~5 s and ~2 s in listing, search, startup and app-memory.
 *
 * What a lend puts back: every name a Host added at the folder's top (the search index, settings, logs, serve's and
 * the door's files, the marker of the tree made private, a migration's backup) and in its transcripts folder (the
 * sessions it made, `.line-counts.json`) is removed, and db.json and the spend book are copied back from the seed's
 * own. The seed's transcripts are read by those groups, never written (a new session writes a transcript of its
 * own); the modes a Host's first start gave them stay (the next start's walk finds them private and changes none).
 * A copy of the folder for each group (`cp -r`, tried) cost as much as a seed at 10,000 sessions.
 *
 * The search index a Host saved there (search's, startup's) is kept aside at the next lend, when no session was added
 * meanwhile, and put in for a group that asks for it (`searchIndex`: app-memory's Host loads it, as every start after a
 * folder's first does): a Host of its own built it again before (~6–9 s at 10,000 sessions). The transcripts are the
 * seed's own files, never rewritten, so the index kept names each as it is (its size, time and inode).
 *
 * `releaseSeeds()` removes them all, once the run's last group is done (bench/run.ts).
 */

export interface Shape {
  projects: number
  sessions: number
  turnsPerSession: number
}

interface Seeded {
  dataDir: string
  /** Where db.json and the spend book are kept as the seed wrote them. */
  kept: string
  /** The names at the folder's top as seeded. */
  top: Set<string>
  /** The names in its transcripts folder as seeded, a line each (one string: 100,000 of them kept as strings of their own would be garbage the bench's in-process Hosts' collections walk). */
  transcripts: string
  /** A complete search index a Host saved here, kept in `kept` (putBack). */
  index: boolean
}

let root: Promise<string> | null = null
const seeds = new Map<string, Promise<Seeded>>()

/**
 * The data folder of `shape` (seeded at the first ask of the run), as the seed left it; `searchIndex`: with the search
 * index an earlier group's Host saved for it, when there is one.
 */
export async function seededDataDir(shape: Shape, { searchIndex = false } = {}): Promise<string> {
  const key = `${shape.projects}p-${shape.sessions}s-${shape.turnsPerSession}t`
  let seed = seeds.get(key)
  if (!seed) {
    seed = seedOnce(key, shape)
    seeds.set(key, seed)
    // A seed that failed is asked again next time, not handed out.
    seed.catch(() => seeds.delete(key))
  }
  const seeded = await seed
  await putBack(seeded)
  if (searchIndex && seeded.index) await copyFile(join(seeded.kept, SEARCH_INDEX_FILE), join(seeded.dataDir, SEARCH_INDEX_FILE))
  return seeded.dataDir
}

/** Removes every folder seeded this run. */
export async function releaseSeeds(): Promise<void> {
  if (!root) return
  const dir = await root
  root = null
  seeds.clear()
  await rm(dir, { recursive: true, force: true })
}

const SEED_FILES = ['db.json', 'spend.jsonl']

async function seedOnce(key: string, shape: Shape): Promise<Seeded> {
  root ??= mkdtemp(join(tmpdir(), 'switchboard-bench-seeds-'))
  const at = join(await root, key)
  const { dataDir } = await makeDataset(at, shape)
  const kept = join(at, 'kept')
  await mkdir(kept)
  for (const name of SEED_FILES) await copyFile(join(dataDir, name), join(kept, name))
  const top = new Set(await readdir(dataDir))
  return { dataDir, kept, top, transcripts: (await readdir(join(dataDir, 'transcripts'))).join('\n'), index: false }
}

async function putBack(seeded: Seeded): Promise<void> {
  const transcripts = join(seeded.dataDir, 'transcripts')
  const seededNames = new Set(seeded.transcripts.split('\n'))
  const added = (await readdir(transcripts)).filter((name) => !seededNames.has(name))
  // A Host writes the index only once complete: one saved over the seed's sessions alone is kept for the next lends.
  const index = join(seeded.dataDir, SEARCH_INDEX_FILE)
  if (added.length === 0 && !seeded.top.has(SEARCH_INDEX_FILE) && existsSync(index)) {
    await copyFile(index, join(seeded.kept, SEARCH_INDEX_FILE))
    seeded.index = true
  }
  for (const name of await readdir(seeded.dataDir)) {
    if (!seeded.top.has(name)) await rm(join(seeded.dataDir, name), { recursive: true, force: true })
  }
  for (const name of added) await rm(join(transcripts, name), { recursive: true, force: true })
  for (const name of SEED_FILES) await copyFile(join(seeded.kept, name), join(seeded.dataDir, name))
}

/** The listing's and search's folders: one session in one project (their baselines), or `sessions` in 50 projects. */
export function listingShape(sessions: number): Shape {
  return sessions === 1 ? { projects: 1, sessions: 1, turnsPerSession: 1 } : { projects: 50, sessions, turnsPerSession: 1 }
}
