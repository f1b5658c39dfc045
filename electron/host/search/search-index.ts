import type { HostEvent } from '../../../shared/contract'
import type { SearchResults } from '../../../shared/search'
import type { TranscriptRecord } from '../../../shared/transcript'
import { QuietStart, whenQuiet } from './quiet-start'
import { bringUpToDate, type SearchSources } from './build'
import { SearchDocs } from './documents'
import { IndexSaves, ReadAbandoned, type StoredIndex } from './index-file'
import { readEntries, signatureOf, type Entries } from './intake'
import { queryDocs } from './query'
import { transcriptPath } from '../storage/transcripts'

/**
 * Full-text search over project names and paths, session titles and the text of every transcript, with MiniSearch.
 * The unit of a transcript is a thread entry (a whole message, thought, tool call title, plan, error), folded with the
 * same `applyRecord` as everywhere else (entries named after their records' seqs, `applyRecordAt`, as the renderer
 * names them), so a phrase streamed over many chunks is one document and a hit names the entry the renderer shows.
 *
 * The index is kept in the data folder (`search-index.json`, index-file.ts: MiniSearch's own serialisation, with the
 * text, seqs and title of each session's entries and the size, mtime and inode its transcript had when it was read).
 * It is built once the Host has answered the window's first requests and been quiet for a moment (`buildWhenQuiet`),
 * or at the first search if that comes sooner, so the Host's start never waits for it; queries say `indexing` until
 * it is complete (the build: build.ts; what it indexes: intake.ts, documents.ts; a query: query.ts).
 *
 * After that it follows the Host's events as they are emitted: a record appended to a live session marks it, and
 * its entries are re-indexed from the Host's fold in batches (every `FLUSH_MS`, a message still streaming once done;
 * before every query, whole: a query sees all appended before it). A live thread holds its transcript's tail only:
 * what was indexed before the tail stays, and a copied conversation's is read from its transcript (`copied`).
 * Titles, removed sessions and projects follow.
 *
 * The file is only ever replaced by a complete index: when the Host closes after the build completed, the sessions
 * that went live are read from their transcripts again and the index saved (the next start reads none); a build
 * still under way at close is abandoned and nothing saved, so the file stays the last complete one and the next
 * start reads what changed since it (see `close`). A build that read many transcripts is also saved soon after it
 * completes, so that a crash does not cost that work again.
 */

/** The index kept in the data folder. */
export const SEARCH_INDEX_FILE = 'search-index.json'

/** When the index is vacuumed: MiniSearch's own thresholds (of discarded documents, in number and in share). */
const VACUUM_AT = { dirtCount: 20, dirtFactor: 0.1 }

const FLUSH_MS = 250
/** A build that read at least this many transcripts is saved soon after (reading them again would cost more than writing the file). */
const SAVE_AFTER_READS = 200
/** How soon (then once the Host is quiet: `IndexSaves.soon`). */
const SAVE_AFTER_BUILD_MS = 2_000

export class SearchIndex {
  private docs = new SearchDocs(() => this.vacuumSoon())
  /** Sessions that went live in this run: their entries follow the Host's fold, not the file. */
  private readonly live = new Set<string>()
  /** Sessions with records not indexed yet; `streaming`: those whose last message, still streaming, a batch left. */
  private readonly dirty = new Set<string>()
  private readonly streaming = new Set<string>()
  /** Sessions removed in this run (ids are never reused): a read under way for one is dropped. */
  private readonly removed = new Set<string>()
  private timer: NodeJS.Timeout | null = null
  private vacuumTimer: NodeJS.Immediate | null = null
  /** A vacuum under way: nothing is added to the index meanwhile (events that would are held, the flush waits). */
  private vacuuming: Promise<void> | null = null
  private held: HostEvent[] = []
  private buildRunning = false
  /** Saves to the file, once the index is complete. */
  private readonly saves: IndexSaves | null
  /** When the build starts by itself: once the Host is quiet; and what its slices wait out (`giveWay`: a window's request being answered). */
  private readonly quiet = new QuietStart(() => void this.build())
  private readonly giveWay = (): Promise<void> | null => this.quiet.answering()
  /** Every session has been brought up to date: only then may the index replace the file. */
  private complete = false
  private building: Promise<void> | null = null
  private progress: { done: number; total: number } | null = null
  private closed = false
  /** Counts rebuilds: a build or vacuum of an index that was since reset gives up (`rebuild`). */
  private generation = 0

  constructor(private readonly sources: SearchSources) {
    this.saves = sources.file ? new IndexSaves(sources.file, () => (this.complete ? this.docs : null)) : null
  }

  /** Brings the index up to date with the file, db.json and the transcripts; resolves when all are in (or the index was closed). */
  build(): Promise<void> {
    this.quiet.cancel()
    this.building ??= this.buildAll().catch((error: unknown) => {
      if (!(error instanceof ReadAbandoned)) console.warn(`search: the index could not be built: ${(error as Error).message}`)
    })
    return this.building
  }

  /**
   * Builds once the Host is quiet (`QuietStart`: a moment after its last
   * request, see `noteRequest`), or at the first search if that is sooner:
   * the window's first requests are answered before the index is read.
   */
  buildWhenQuiet(): void {
    if (this.sources.buildOnSearchOnly || this.building || this.closed) return
    this.quiet.arm()
  }

  /** The Host answers a request (`answered`: once it is): a build still waiting waits until the Host is quiet again. */
  noteRequest(answered?: Promise<unknown>, drawn = false): void {
    this.quiet.noteRequest(answered, drawn)
  }

  private async buildAll(): Promise<void> {
    // A build adds as it goes: it waits for a vacuum under way, and none starts until it is done.
    const generation = this.generation
    this.buildRunning = true
    try {
      if (this.vacuuming) await this.vacuuming
      await this.buildSteps(generation)
    } finally {
      if (generation === this.generation) {
        this.buildRunning = false
        this.vacuumSoon()
      }
    }
  }

  private async buildSteps(generation: number): Promise<void> {
    const abandoned = (): boolean => this.closed || generation !== this.generation
    const built = await bringUpToDate({
      sources: this.sources,
      docs: this.docs,
      live: this.live,
      removed: this.removed,
      abandoned,
      pause: this.giveWay,
      setProgress: (progress) => (this.progress = progress),
      adopt: (stored) => this.adopt(stored),
      removeSession: (id) => this.removeSession(id),
      readSession: (id, signature, read) => this.readSession(id, signature, read)
    })
    if (!built) return
    this.progress = null
    this.complete = true
    await this.sources.onBuildStep?.({ step: 'complete' })
    if (this.docs.unsaved && (built.reads >= SAVE_AFTER_READS || !built.stored)) this.saves?.soon(SAVE_AFTER_BUILD_MS, () => this.quiet.quietIn())
  }

  /**
   * Takes the index read from disk in place of the one followed while it was
   * read (only the Host's events since the start are in that one): projects,
   * titles and removed sessions are compared with db.json by the build; the
   * sessions that went live meanwhile are re-indexed from the Host's fold.
   */
  private adopt(stored: StoredIndex): void {
    this.docs.adopt(stored, this.live)
    for (const id of this.live) this.dirty.add(id)
  }

  /** A new session's conversation was copied (a fork's, a seed's), its thread the tail only: once the Host is quiet, and after the build (which adopts the file's index, holding nothing of the copy), what the thread does not hold is read from its transcript, as the next start would. */
  copied(sessionId: string): void {
    const gone = (generation: number): boolean => this.closed || this.removed.has(sessionId) || generation !== this.generation
    const read = async (): Promise<void> => {
      if (!this.complete && !this.closed) await this.build()
      const generation = this.generation
      if (gone(generation) || !this.complete) return
      const { texts, seqs } = await readEntries(transcriptPath(this.sources.transcriptDir, sessionId), this.giveWay)
      while (this.vacuuming) await this.vacuuming
      if (gone(generation)) return
      this.docs.indexCopy(sessionId, texts, seqs)
      this.dirty.add(sessionId)
      this.flushOrRebuild()
    }
    const failed = (error: Error): void => console.warn(`search: could not index the copied conversation of ${sessionId}: ${error.message}`)
    void whenQuiet(() => this.quiet.quietIn())
      .then(read)
      .catch(failed)
  }

  /** Indexes a session's transcript as it is on disk (its entries in slices, but at the close); `signature` is the file's, taken before it was read; `read`: its read, started ahead (by the build). */
  private async readSession(sessionId: string, signature: string | null, read?: Promise<Entries>, closing = false): Promise<void> {
    try {
      this.sources.onTranscriptRead?.(sessionId)
      const { texts, seqs } = await (read ?? readEntries(transcriptPath(this.sources.transcriptDir, sessionId), closing ? undefined : this.giveWay))
      const gone = (): boolean => (!closing && (this.closed || this.live.has(sessionId))) || this.removed.has(sessionId)
      if (gone()) return
      const docs = this.docs.docsOf(sessionId)
      docs.seqs = new Map()
      if (closing) this.docs.indexEntries(sessionId, texts, seqs)
      else if (!(await this.docs.indexEntriesInSlices(sessionId, texts, seqs, this.sources.onBuildStep, gone, this.giveWay))) return
      docs.signature = signature
      this.docs.unsaved = true
    } catch (error) {
      console.warn(`search: could not index the transcript of ${sessionId}: ${(error as Error).message}`)
    }
  }

  /** Follows an event the Host emits, at the moment it is emitted. */
  noteEvent(event: HostEvent): void {
    if (this.closed) return
    // While the index is vacuumed, what would add to it waits, in order (removals too, to keep that order).
    if (this.vacuuming && (event.type === 'session.record' || event.type === 'session.removed' || event.type === 'projects.changed')) {
      this.held.push(event)
      return
    }
    switch (event.type) {
      case 'session.records':
        this.noteRecords(event.payload.id, event.payload.seq, event.payload.records)
        return
      case 'session.record':
        this.docs.putSession(event.payload)
        return
      case 'session.removed':
        this.removeSession(event.payload.id)
        return
      case 'projects.changed':
        this.docs.syncProjects(event.payload)
        return
      default:
        return
    }
  }

  /** Records were appended to a session and folded into its live thread. */
  private noteRecords(sessionId: string, seq: number, records: readonly TranscriptRecord[]): void {
    const thread = this.sources.threadOf(sessionId)
    if (!thread) return
    const docs = this.docs.docsOf(sessionId)
    this.live.add(sessionId)
    // The transcript has grown past what was read from it: the next start reads it again.
    docs.signature = null
    this.docs.unsaved = true
    if (thread.entries.length < docs.scanned || records.some((record) => record.t === 'reset')) {
      // A reset (session/load replay) emptied the thread: what follows starts again, and nothing before it is kept.
      docs.seqs.clear()
      docs.scanned = 0
    }
    const last = seq + Math.max(0, records.length - 1)
    for (let i = docs.scanned; i < thread.entries.length; i++) {
      const id = thread.entries[i].id
      if (!docs.seqs.has(id)) docs.seqs.set(id, last)
    }
    docs.scanned = thread.entries.length
    this.dirty.add(sessionId)
    if (!this.timer) {
      this.timer = setTimeout(() => this.flushOrRebuild(true), FLUSH_MS)
      this.timer.unref?.()
    }
  }

  /** Re-indexes the entries of every session that grew since the last flush; `batch`: a message still streaming waits. */
  flush(batch = false): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    // Nothing is added while the index is vacuumed: the vacuum's end flushes.
    if (this.vacuuming) return
    const marked = batch ? [...this.dirty] : [...new Set([...this.dirty, ...this.streaming])]
    this.sources.onFlush?.(marked)
    this.dirty.clear()
    for (const sessionId of marked) {
      this.streaming.delete(sessionId)
      const thread = this.sources.threadOf(sessionId)
      if (!thread || this.removed.has(sessionId)) continue // removeSession unmarks a session: here, a streaming one
      if (this.docs.indexLive(sessionId, thread, batch)) this.streaming.add(sessionId)
    }
  }

  /** A flush where nothing above would catch what it throws (a timer, the end of a vacuum): an error rebuilds the index. */
  private flushOrRebuild(batch = false): void {
    try {
      this.flush(batch)
    } catch (error) {
      this.failed(error)
    }
  }

  /** An internal error: reported (the Host's RoomErrors, which calls `rebuild`), or logged and rebuilt. */
  private failed(error: unknown): void {
    if (this.closed) return
    if (this.sources.onError) return this.sources.onError(error)
    console.error('search: internal error; the index is rebuilt', error)
    this.rebuild()
  }

  /**
   * Starts the index again after an internal error: emptied, then built as at
   * start (the file, db.json, the transcripts; live sessions follow their next
   * records, folded whole). A build or vacuum under way on the old index gives
   * up or ends unseen; nothing is saved until the new build completes.
   */
  rebuild(): void {
    if (this.closed) return
    this.generation++
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    if (this.vacuumTimer) clearImmediate(this.vacuumTimer)
    this.vacuumTimer = null
    this.docs = new SearchDocs(() => this.vacuumSoon())
    this.live.clear()
    for (const marked of [this.dirty, this.streaming]) marked.clear()
    this.held = []
    this.vacuuming = null
    this.buildRunning = false
    this.complete = false
    this.progress = null
    this.building = null
    void this.build()
  }

  /**
   * Vacuums the index once what discarded documents left reaches MiniSearch's
   * thresholds, in MiniSearch's batches (the Host answers between them), but
   * never while a build runs, and with nothing added meanwhile (see
   * MINISEARCH_OPTIONS in documents.ts): the events that would add are held and the flush
   * waits, then both follow.
   */
  private vacuumSoon(): void {
    if (this.vacuumTimer || this.vacuuming || this.closed) return
    this.vacuumTimer = setImmediate(() => {
      this.vacuumTimer = null
      const mini = this.docs.mini
      if (this.vacuuming || this.buildRunning || this.closed) return
      if (mini.dirtCount < VACUUM_AT.dirtCount || mini.dirtFactor < VACUUM_AT.dirtFactor) return
      const generation = this.generation
      this.vacuuming = mini
        .vacuum()
        .then(
          () => {
            // Reset meanwhile: that index is gone, and what was held with it.
            if (generation !== this.generation) return
            this.vacuuming = null
            const held = this.held
            this.held = []
            for (const event of held) this.noteEvent(event)
            if (this.dirty.size > 0 && !this.closed) this.flush()
          },
          (error: unknown) => {
            if (generation !== this.generation) return
            this.vacuuming = null
            throw error
          }
        )
        .catch((error: unknown) => this.failed(error))
    })
  }

  private removeSession(sessionId: string): void {
    this.docs.removeSession(sessionId)
    this.dirty.delete(sessionId)
    this.live.delete(sessionId)
    this.removed.add(sessionId)
  }

  /**
   * Hits for a query, best first in each group. Words are matched whole, the
   * last one also as a prefix (search as you type), longer ones with a typo
   * allowed; every word must match. Text that holds the query as an exact
   * phrase ranks above text that only holds its words; a query in double
   * quotes finds only the exact phrase.
   */
  query(q: string, limit = 30): SearchResults {
    if (!this.building && !this.closed) void this.build()
    this.flushOrRebuild()
    const indexing = this.progress ? { ...this.progress } : null
    return queryDocs(this.docs, q, limit, this.sources, indexing)
  }

  /** Stops following the Host's events and building; resolves once a build under way has stopped (it is abandoned at its next step). */
  async stop(): Promise<void> {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.quiet.cancel()
    this.saves?.cancel()
    if (this.vacuumTimer) clearImmediate(this.vacuumTimer)
    this.vacuumTimer = null
    await this.building
    await this.vacuuming
  }

  /**
   * Stops, and saves the index if its build completed: the sessions that were live are read again from their
   * transcripts first (call it once they are all written out), so the file matches every transcript and the next
   * start reads none of them.
   *
   * A build still under way is abandoned, not finished, and nothing is saved: the file stays the last complete index
   * (an index not yet brought up to date would name as current what it has not looked at, or hold only this run's
   * sessions), and the next start reads what changed since it, this run's sessions included. Finishing instead could
   * keep a quit waiting for thousands of transcripts (a first start at 10,000 sessions reads them for 10 to 20 s on a
   * loaded machine).
   */
  async close(): Promise<void> {
    await this.stop()
    if (this.complete) {
      try {
        this.flush()
      } catch (error) {
        console.warn(`search: ${(error as Error).message}`)
      }
      for (const id of this.live) {
        const record = this.sources.sessions().find((s) => s.id === id)
        if (record) await this.readSession(id, await signatureOf(transcriptPath(this.sources.transcriptDir, id)), undefined, true)
      }
      this.live.clear()
    }
    await this.saves?.save()
  }
}
