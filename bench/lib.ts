import { execFile } from 'node:child_process'
import { cp, link, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Small helpers shared by the benchmarks: statistics, timing, temporary folders. */

export interface Figure {
  /** What was measured, e.g. "stream: Host (store + transcript)". */
  name: string
  /** The group in the table (one per numbered item of docs/BENCHMARKS.md). */
  group: string
  unit: string
  /** Size of the work (chunks, sessions, entries) when the figure has several sizes. */
  size?: number
  median: number
  min: number
  max: number
  runs: number
  /** median / baseline median, when the figure has a baseline measured in the same run. */
  ratio?: number
  baseline?: string
  /** The goal the figure is held to, and whether it is met. */
  goal?: string
  met?: boolean
  /** Why a goal not met cannot be on this machine, from a baseline measured in the same run. */
  reach?: string
  note?: string
}

export function stats(samples: number[]): { median: number; min: number; max: number; runs: number } {
  if (samples.length === 0) throw new Error('no samples')
  const sorted = [...samples].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  return { median, min: sorted[0], max: sorted[sorted.length - 1], runs: samples.length }
}

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b)
  if (sorted.length === 0) return NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index]
}

/** Runs `measure` `runs` times (after one warm-up unless `warmup` is 0) and returns the samples. */
export async function repeat(runs: number, measure: (run: number) => Promise<number>, warmup = 1): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await measure(-1 - i)
  const samples: number[] = []
  for (let i = 0; i < runs; i++) samples.push(await measure(i))
  return samples
}

/**
 * Waits for the disk to have written what the bench just wrote (a data folder
 * of 10,000 transcripts is megabytes of dirty pages): `sync`, so that the
 * system's writeback does not run during the timings that follow.
 */
export async function settleDisk(): Promise<void> {
  await new Promise<void>((resolve) => execFile('sync', () => resolve()))
}

/**
 * A copy of a data folder whose transcripts are hard links to the original's: a past session's transcript is only read
 * (a new one is a new file; the Host appends only to the transcript of a session that runs), and the rest (db.json,
 * the spend book, the search index) is copied. The idle group's 10,000 transcripts took ~10 s to copy, and the index
 * names a transcript by its size, time and inode: the copy's Host read each again, where a link's is taken as indexed.
 */
export async function copyDataFolder(from: string, to: string): Promise<void> {
  await mkdir(join(to, 'transcripts'), { recursive: true })
  for (const name of await readdir(from)) if (name !== 'transcripts') await cp(join(from, name), join(to, name), { recursive: true })
  const transcripts = await readdir(join(from, 'transcripts'), { withFileTypes: true })
  const place = (name: string): [string, string] => [join(from, 'transcripts', name), join(to, 'transcripts', name)]
  for (let at = 0; at < transcripts.length; at += 256)
    await Promise.all(
      transcripts.slice(at, at + 256).map((entry) => (entry.isFile() ? link(...place(entry.name)) : cp(...place(entry.name), { recursive: true })))
    )
}

/**
 * Says on stderr how long each phase of a group took, each from the end of the one before (`phase('seeded')`):
 * where a group's seconds go, seeding and cleaning up as well as the runs measured.
 */
export function phases(group: string): (what: string) => void {
  let last = Date.now()
  return (what) => {
    const at = Date.now()
    console.error(`  ${group}, ${what}: ${((at - last) / 1000).toFixed(1)} s`)
    last = at
  }
}

export async function withTempDir<T>(prefix: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `switchboard-bench-${prefix}-`))
  try {
    return await use(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

export function now(): number {
  return performance.now()
}

export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US')
  if (Math.abs(value) >= 10) return value.toFixed(1)
  return value.toFixed(2)
}

/** The markdown table printed to stdout and kept in docs/BENCHMARKS.md. */
export function table(figures: Figure[]): string {
  const rows = [
    '| # | figure | size | median | min | max | runs | ratio to baseline | goal |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |'
  ]
  for (const f of figures) {
    const ratio = f.ratio === undefined ? '' : `${fmt(f.ratio)} × ${f.baseline ?? ''}`.trim()
    const goal = f.goal ? `${f.goal}: ${f.met === undefined ? '—' : f.met ? '**met**' : '**not met**'}${f.reach ? ` (${f.reach})` : ''}` : ''
    rows.push(
      `| ${f.group} | ${f.name}${f.note ? ` (${f.note})` : ''} | ${f.size === undefined ? '' : f.size.toLocaleString('en-US')} | ${fmt(f.median)} ${f.unit} | ${fmt(f.min)} | ${fmt(f.max)} | ${f.runs} | ${ratio} | ${goal} |`
    )
  }
  return rows.join('\n')
}
