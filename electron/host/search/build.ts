import type { Project, SessionRecord } from '../../../shared/domain'
import type { Thread } from '../../../shared/thread'
import { MINISEARCH_OPTIONS, type SearchDocs } from './documents'
import { readIndexFile, type StoredIndex } from './index-file'
import { readEntries, signatureOf, sizeOf, type Entries } from './intake'
import { givenWay, turn, type Pause } from '../storage/slices'
import { transcriptPath } from '../storage/transcripts'

/**
 * The build of the search index: what it reads (`SearchSources`) and the steps
 * that bring it up to date. It reads the file in slices (the Host answers
 * between them) and brings it up to date: projects and titles from db.json,
 * sessions gone dropped, and only transcripts whose size, mtime or inode
 * changed since they were read (appended while the Host was down, or after it
 * last saved and crashed), and sessions it does not know, are read again. A
 * file that cannot be read or does not hold together is said in the log and
 * the index rebuilt from every transcript: nothing is lost, the start never
 * fails. Each step may find the build abandoned (the Host closing, or the
 * index reset after an error).
 */

/** A moment of the build, for tests (`SearchHooks.onBuildStep`). */
export type BuildStep =
  | { step: 'start' }
  /** The file was read: `found` false when there was none, or none usable. */
  | { step: 'file'; found: boolean }
  | { step: 'batch'; done: number; total: number }
  /** A pause in taking in a long transcript's entries (a slice of them is in). */
  | { step: 'entries'; sessionId: string }
  | { step: 'complete' }

/** What tests see of the index and how they steer it (HostOptions.search). */
export interface SearchHooks {
  /** Called for each transcript read from disk (tests see which ones were). */
  onTranscriptRead?: (sessionId: string) => void
  /** Called at each step of the build, which waits for what it returns: a test holds the build there (and closes the Host meanwhile). */
  onBuildStep?: (step: BuildStep) => void | Promise<void>
  /** Build only when a search asks (tests decide when; no timer does). */
  buildOnSearchOnly?: boolean
  /** Called as each flush starts, with the sessions it re-indexes: a test throws from it, as a broken index would. */
  onFlush?: (sessionIds: string[]) => void
}

export interface SearchSources extends SearchHooks {
  transcriptDir: string
  projects(): readonly Project[]
  sessions(): readonly SessionRecord[]
  /** The Host's fold of a live session (complete: it starts from the whole transcript). */
  threadOf(sessionId: string): Thread | undefined
  /** Where the index is kept (read at start, saved); without it, every transcript is read at start and nothing is saved. */
  file?: string
  /**
   * An error nothing above caught (a timer's, the vacuum's, a flush's): the Host reports it (RoomErrors) and calls
   * `rebuild`. Without it, the error is logged and the index rebuilt.
   */
  onError?: (error: unknown) => void
}

/** Transcripts looked at (stat) at once when the index is brought up to date. */
const STAT_BATCH = 256
/**
 * Transcripts being read ahead of the one indexed: a read waits mostly on the disk and the thread pool (at 10,000
 * sessions the build was idle half its time reading one after another), and they are still indexed in order.
 */
const READ_AHEAD = 8

/** What the build works on: the index's documents and the sessions it follows. */
export interface BuildTarget {
  sources: SearchSources
  docs: SearchDocs
  /** Sessions that went live in this run: they are indexed from the Host's fold, which is newer than their transcript. */
  live: ReadonlySet<string>
  /** Sessions removed in this run. */
  removed: ReadonlySet<string>
  /** Closed, or the index was reset meanwhile (a rebuild after an error runs its own build). */
  abandoned(): boolean
  /** What the build waits out between its steps and slices: the Host answering the window's requests (QuietStart.answering). */
  pause: Pause
  setProgress(progress: { done: number; total: number } | null): void
  /** Takes the index read from disk in place of the one followed while it was read. */
  adopt(stored: StoredIndex): void
  removeSession(sessionId: string): void
  /** Indexes a session's transcript as it is on disk; `signature` is the file's, taken before it was read; `read`: its read, started ahead. */
  readSession(sessionId: string, signature: string | null, read?: Promise<Entries>): Promise<void>
}

/** Brings the index up to date; null when abandoned, else how many transcripts were read and whether a usable file was. */
export async function bringUpToDate(target: BuildTarget): Promise<{ reads: number; stored: boolean } | null> {
  const { sources, docs, abandoned, pause } = target
  const step = sources.onBuildStep
  target.setProgress({ done: 0, total: sources.sessions().length })
  await step?.({ step: 'start' })
  let reads = 0
  let stored: StoredIndex | null = null
  if (sources.file && !abandoned()) stored = await readIndexFile(sources.file, MINISEARCH_OPTIONS, abandoned, pause)
  if (abandoned()) return null
  if (stored) target.adopt(stored)
  await step?.({ step: 'file', found: stored !== null })
  if (abandoned()) return null
  docs.syncProjects(sources.projects())
  const sessions = sources.sessions()
  const progress = { done: 0, total: sessions.length }
  target.setProgress(progress)
  const known = new Set(sessions.map((s) => s.id))
  for (const id of [...docs.sessions.keys()]) if (!known.has(id)) target.removeSession(id)
  // Every title first (db.json has them): a conversation is found by its title from the start, not once the
  // transcripts before it have been read (on a first start with thousands, that took minutes under load).
  for (let start = 0; start < sessions.length; start += STAT_BATCH) {
    for (const record of sessions.slice(start, start + STAT_BATCH)) if (!target.removed.has(record.id)) docs.putSession(record)
    await turn(pause)
    if (abandoned()) return null
  }
  for (let start = 0; start < sessions.length; start += STAT_BATCH) {
    const batch = sessions.slice(start, start + STAT_BATCH)
    const signatures = await Promise.all(batch.map((s) => signatureOf(transcriptPath(sources.transcriptDir, s.id))))
    await givenWay(pause)
    if (abandoned()) return null
    // The sessions whose transcript is to be read again (a session removed or gone live meanwhile drops its read).
    const wanted = batch.map((record, i) => {
      const indexed = docs.sessions.get(record.id)
      const current = indexed?.signature !== null && indexed?.signature === signatures[i]
      // A session that went live meanwhile was indexed from the Host's fold, which is newer.
      return !current && !target.removed.has(record.id) && !target.live.has(record.id)
    })
    const readsAhead: (Promise<Entries> | undefined)[] = []
    let ahead = 0
    for (let i = 0; i < batch.length; i++) {
      for (; ahead < Math.min(batch.length, i + READ_AHEAD); ahead++) {
        if (!wanted[ahead]) continue
        const read = readEntries(transcriptPath(sources.transcriptDir, batch[ahead].id), pause, sizeOf(signatures[ahead]))
        // Its error is handled when its turn comes (a build abandoned meanwhile drops it).
        read.catch(() => {})
        readsAhead[ahead] = read
      }
      const record = batch[i]
      // A session deleted while its transcript was looked at is gone from the index already.
      if (!target.removed.has(record.id)) {
        docs.putSession(record)
        if (wanted[i] && !target.live.has(record.id)) {
          // A transcript at a time: a window's request goes first.
          await givenWay(pause)
          await target.readSession(record.id, signatures[i], readsAhead[i])
          readsAhead[i] = undefined
          reads++
        }
        if (abandoned()) return null
      }
      progress.done++
    }
    await step?.({ step: 'batch', done: progress.done, total: progress.total })
    if (abandoned()) return null
  }
  return { reads, stored: stored !== null }
}
