import { promises as fs } from 'node:fs'
import MiniSearch, { type Options, type SearchResult } from 'minisearch'
import type { HostEvent } from '../../shared/contract'
import type { Project, SessionRecord } from '../../shared/domain'
import type { SearchHit, SearchResults, SearchSnippet } from '../../shared/search'
import { applyRecordAt, createThread, type Thread, type ThreadEntry } from '../../shared/thread'
import type { TranscriptRecord } from '../../shared/transcript'
import { AtomicTextFile } from './atomic-file'
import { plainText } from './plain-text'
import { QuietStart } from './quiet-start'
import {
  entryDocId,
  indexFileText,
  parseDocId,
  projectDocId,
  readIndexFile,
  ReadAbandoned,
  sessionDocId,
  type EntryText,
  type IndexedDoc,
  type SessionDocs,
  type StoredIndex
} from './search-file'
import { transcriptPath } from './transcripts'

/**
 * Full-text search over project names and paths, session titles and the text
 * of every transcript, with MiniSearch. The unit of a transcript is a thread
 * entry (a whole message, thought, tool call title, plan, error), folded with
 * the same `applyRecord` as everywhere else (entries named after their records'
 * seqs, `applyRecordAt`, as the renderer names them), so a phrase streamed over
 * many chunks is one document and a hit names the entry the renderer shows.
 *
 * The index is kept in the data folder (`search-index.json`, search-file.ts:
 * MiniSearch's own serialisation, with the text, seqs and title of each
 * session's entries and the size, mtime and inode its transcript had when it
 * was read). It is built once the Host has answered the window's first
 * requests and been quiet for a moment (`buildWhenQuiet`), or at the first
 * search if that comes sooner, so the Host's start never waits for it; queries
 * say `indexing` until it is complete. The build reads the file in slices (the
 * Host answers between them) and brings it up to date: projects and titles
 * from db.json, sessions gone dropped, and only transcripts whose size, mtime
 * or inode changed since they were read (appended while the Host was down, or
 * after it last saved and crashed), and sessions it does not know, are read
 * again. A file that cannot be read or does not hold together is said in the
 * log and the index rebuilt from every transcript: nothing is lost, the start
 * never fails.
 *
 * After that it follows the Host's events as they are emitted: a record
 * appended to a live session marks the session, and its entries are
 * re-indexed from the Host's own fold of it in batches (every `FLUSH_MS`, and
 * before every query, so a query sees everything appended before it). Titles,
 * removed sessions and projects follow their events.
 *
 * The file is only ever replaced by a complete index: when the Host closes
 * after the build completed, the sessions that went live are read from their
 * transcripts again and the index saved (the next start reads none); a build
 * still under way at close is abandoned and nothing saved, so the file stays
 * the last complete one and the next start reads what changed since it (see
 * `close`). A build that read many transcripts is also saved soon after it
 * completes, so that a crash does not cost that work again.
 */

/** The index kept in the data folder. */
export const SEARCH_INDEX_FILE = 'search-index.json'

/** A moment of the build, for tests (`SearchHooks.onBuildStep`). */
export type BuildStep =
  | { step: 'start' }
  /** The file was read: `found` false when there was none, or none usable. */
  | { step: 'file'; found: boolean }
  | { step: 'batch'; done: number; total: number }
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

const MINISEARCH_OPTIONS: Options<IndexedDoc> = {
  fields: ['title', 'text'],
  tokenize,
  searchOptions: { boost: { title: 3 } },
  // MiniSearch's own vacuuming walks the index in batches, waiting between them, and a document added meanwhile
  // can split a node it is walking: it then throws where nothing catches it (lucaong/minisearch#306), which
  // stops the Host. The index starts it itself instead, and adds nothing while it runs (`vacuumSoon`).
  autoVacuum: false
}
/** When the index is vacuumed: MiniSearch's own thresholds (of discarded documents, in number and in share). */
const VACUUM_AT = { dirtCount: 20, dirtFactor: 0.1 }

const FLUSH_MS = 250
/** A build that read at least this many transcripts is saved soon after (reading them again would cost more than writing the file). */
const SAVE_AFTER_READS = 200
/** How soon. */
const SAVE_AFTER_BUILD_MS = 2_000
/** Transcripts looked at (stat) at once when the index is brought up to date. */
const STAT_BATCH = 256
/** Longer entries are indexed by their start (a pasted log is not worth more). */
const MAX_ENTRY_CHARS = 100_000
const MAX_QUERY_RESULTS = 400
const SNIPPET_BEFORE = 50
const SNIPPET_LENGTH = 180

export class SearchIndex {
  private mini: MiniSearch<IndexedDoc>
  private perSession = new Map<string, SessionDocs>()
  /** The project documents indexed, with what they were indexed with. */
  private projectDocs = new Map<string, { name: string; cwd: string }>()
  /** Sessions that went live in this run: their entries follow the Host's fold, not the file. */
  private readonly live = new Set<string>()
  private readonly dirty = new Set<string>()
  /** Sessions removed in this run (ids are never reused): a read under way for one is dropped. */
  private readonly removed = new Set<string>()
  private readonly file: AtomicTextFile | null
  /** Something changed since the index was loaded or last saved. */
  private unsaved = false
  private timer: NodeJS.Timeout | null = null
  private vacuumTimer: NodeJS.Immediate | null = null
  /** A vacuum under way: nothing is added to the index meanwhile (events that would are held, the flush waits). */
  private vacuuming: Promise<void> | null = null
  private held: HostEvent[] = []
  private buildRunning = false
  private saveTimer: NodeJS.Timeout | null = null
  /** The last save (saves run one after another, each taking the index as it is when it starts). */
  private saving: Promise<void> = Promise.resolve()
  /** When the build starts by itself: once the Host is quiet. */
  private readonly quiet = new QuietStart(() => void this.build())
  /** Every session has been brought up to date: only then may the index replace the file. */
  private complete = false
  private building: Promise<void> | null = null
  private progress: { done: number; total: number } | null = null
  private closed = false
  /** Counts rebuilds: a build or vacuum of an index that was since reset gives up (`rebuild`). */
  private generation = 0

  constructor(private readonly sources: SearchSources) {
    this.mini = new MiniSearch<IndexedDoc>(MINISEARCH_OPTIONS)
    this.file = sources.file ? new AtomicTextFile(sources.file) : null
    // Until a usable file is read, the first save writes one.
    this.unsaved = true
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

  /** The Host answered a request: a build still waiting waits until the Host is quiet again. */
  noteRequest(): void {
    this.quiet.noteRequest()
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
    const { onBuildStep: step } = this.sources
    // Closed, or the index was reset meanwhile (a rebuild after an error runs its own build).
    const abandoned = (): boolean => this.closed || generation !== this.generation
    this.progress = { done: 0, total: this.sources.sessions().length }
    await step?.({ step: 'start' })
    let reads = 0
    let stored: StoredIndex | null = null
    if (this.file && !abandoned()) stored = await readIndexFile(this.file.file, MINISEARCH_OPTIONS, abandoned)
    if (abandoned()) return
    if (stored) this.adopt(stored)
    await step?.({ step: 'file', found: stored !== null })
    if (abandoned()) return
    this.syncProjects(this.sources.projects())
    const sessions = this.sources.sessions()
    const progress = (this.progress = { done: 0, total: sessions.length })
    const known = new Set(sessions.map((s) => s.id))
    for (const id of [...this.perSession.keys()]) if (!known.has(id)) this.removeSession(id)
    for (let start = 0; start < sessions.length; start += STAT_BATCH) {
      const batch = sessions.slice(start, start + STAT_BATCH)
      const signatures = await Promise.all(batch.map((s) => signatureOf(transcriptPath(this.sources.transcriptDir, s.id))))
      if (abandoned()) return
      for (let i = 0; i < batch.length; i++) {
        const record = batch[i]
        // A session deleted while its transcript was looked at is gone from the index already.
        if (!this.removed.has(record.id)) {
          this.putSession(record)
          const docs = this.perSession.get(record.id)
          const current = docs?.signature !== null && docs?.signature === signatures[i]
          // A session that went live meanwhile was indexed from the Host's fold, which is newer.
          if (!current && !this.live.has(record.id)) {
            await this.readSession(record.id, signatures[i])
            reads++
          }
          if (abandoned()) return
        }
        progress.done++
      }
      await step?.({ step: 'batch', done: progress.done, total: progress.total })
      if (abandoned()) return
    }
    this.progress = null
    this.complete = true
    await step?.({ step: 'complete' })
    if (this.unsaved && (reads >= SAVE_AFTER_READS || !stored)) this.saveSoon(SAVE_AFTER_BUILD_MS)
  }

  /**
   * Takes the index read from disk in place of the one followed while it was
   * read (only the Host's events since the start are in that one): projects,
   * titles and removed sessions are compared with db.json by the build; the
   * sessions that went live meanwhile are re-indexed from the Host's fold.
   */
  private adopt(stored: StoredIndex): void {
    const followed = this.perSession
    this.mini = stored.mini
    this.perSession = stored.sessions
    this.projectDocs = stored.projects
    this.unsaved = false
    for (const id of this.live) {
      const docs = this.docsOf(id)
      const before = followed.get(id)
      if (before) {
        // Seqs read from the transcript are exact; the fold only names what came after.
        for (const [entryId, seq] of before.seqs) if (!docs.seqs.has(entryId)) docs.seqs.set(entryId, seq)
        docs.scanned = before.scanned
      }
      docs.signature = null
      this.dirty.add(id)
      this.unsaved = true
    }
  }

  /** Indexes a session's transcript as it is on disk; `signature` is the file's, taken before it was read. */
  private async readSession(sessionId: string, signature: string | null, closing = false): Promise<void> {
    try {
      this.sources.onTranscriptRead?.(sessionId)
      const { texts, seqs } = await readEntries(transcriptPath(this.sources.transcriptDir, sessionId))
      if (!closing && (this.closed || this.live.has(sessionId))) return
      if (this.removed.has(sessionId)) return
      const docs = this.docsOf(sessionId)
      docs.seqs = new Map()
      this.indexEntries(sessionId, texts, seqs)
      docs.signature = signature
      this.unsaved = true
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
        this.noteRecords(event.payload.id, event.payload.seq, event.payload.records.length)
        return
      case 'session.record':
        this.putSession(event.payload)
        return
      case 'session.removed':
        this.removeSession(event.payload.id)
        return
      case 'projects.changed':
        this.syncProjects(event.payload)
        return
      default:
        return
    }
  }

  /** Records were appended to a session and folded into its live thread. */
  private noteRecords(sessionId: string, seq: number, count: number): void {
    const thread = this.sources.threadOf(sessionId)
    if (!thread) return
    const docs = this.docsOf(sessionId)
    this.live.add(sessionId)
    // The transcript has grown past what was read from it: the next start reads it again.
    docs.signature = null
    this.unsaved = true
    if (thread.entries.length < docs.scanned) {
      // A reset (session/load replay) emptied the thread: what follows starts again.
      docs.seqs.clear()
      docs.scanned = 0
    }
    const last = seq + Math.max(0, count - 1)
    for (let i = docs.scanned; i < thread.entries.length; i++) {
      const id = thread.entries[i].id
      if (!docs.seqs.has(id)) docs.seqs.set(id, last)
    }
    docs.scanned = thread.entries.length
    this.dirty.add(sessionId)
    if (!this.timer) {
      this.timer = setTimeout(() => this.flushOrRebuild(), FLUSH_MS)
      this.timer.unref?.()
    }
  }

  /** Re-indexes the entries of every session that grew since the last flush. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    // Nothing is added while the index is vacuumed: the vacuum's end flushes.
    if (this.vacuuming) return
    this.sources.onFlush?.([...this.dirty])
    for (const sessionId of this.dirty) {
      // removeSession takes a removed session out of the dirty ones; this check is only a guard.
      const thread = this.sources.threadOf(sessionId)
      if (!thread || this.removed.has(sessionId)) continue
      this.indexEntries(sessionId, textsOf(thread))
    }
    this.dirty.clear()
  }

  /** A flush where nothing above would catch what it throws (a timer, the end of a vacuum): an error rebuilds the index. */
  private flushOrRebuild(): void {
    try {
      this.flush()
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
    this.mini = new MiniSearch<IndexedDoc>(MINISEARCH_OPTIONS)
    this.perSession = new Map()
    this.projectDocs = new Map()
    this.live.clear()
    this.dirty.clear()
    this.held = []
    this.vacuuming = null
    this.buildRunning = false
    this.complete = false
    this.progress = null
    this.unsaved = true
    this.building = null
    void this.build()
  }

  /** Makes the indexed entries of a session equal to `texts`: changed ones replaced, gone ones dropped. */
  private indexEntries(sessionId: string, texts: Map<string, EntryText>, seqs?: Map<string, number>): void {
    const docs = this.docsOf(sessionId)
    if (seqs) for (const [id, seq] of seqs) if (!docs.seqs.has(id)) docs.seqs.set(id, seq)
    for (const [entryId, before] of docs.texts) {
      const now = texts.get(entryId)
      if (!now || now.text !== before.text) {
        this.discard(entryDocId(sessionId, entryId))
        docs.texts.delete(entryId)
      }
    }
    for (const [entryId, now] of texts) {
      if (docs.texts.has(entryId)) continue
      this.mini.add({ id: entryDocId(sessionId, entryId), title: '', text: now.text })
      docs.texts.set(entryId, now)
    }
  }

  /** Takes a document out of the index; what it leaves there is vacuumed once there is enough of it. */
  private discard(docId: string): void {
    this.mini.discard(docId)
    this.vacuumSoon()
  }

  /**
   * Vacuums the index once what discarded documents left reaches MiniSearch's
   * thresholds, in MiniSearch's batches (the Host answers between them), but
   * never while a build runs, and with nothing added meanwhile (see
   * MINISEARCH_OPTIONS): the events that would add are held and the flush
   * waits, then both follow.
   */
  private vacuumSoon(): void {
    if (this.vacuumTimer || this.vacuuming || this.closed) return
    this.vacuumTimer = setImmediate(() => {
      this.vacuumTimer = null
      const mini = this.mini
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

  private docsOf(sessionId: string): SessionDocs {
    let docs = this.perSession.get(sessionId)
    if (!docs) {
      docs = { title: null, signature: null, texts: new Map(), seqs: new Map(), scanned: 0 }
      this.perSession.set(sessionId, docs)
    }
    return docs
  }

  private putSession(record: SessionRecord): void {
    const docs = this.docsOf(record.id)
    const id = sessionDocId(record.id)
    if (docs.title === record.title && this.mini.has(id)) return
    if (this.mini.has(id)) this.discard(id)
    this.mini.add({ id, title: record.title, text: '' })
    docs.title = record.title
    this.unsaved = true
  }

  private removeSession(sessionId: string): void {
    const id = sessionDocId(sessionId)
    if (this.mini.has(id)) this.discard(id)
    const docs = this.perSession.get(sessionId)
    if (docs) for (const entryId of docs.texts.keys()) this.discard(entryDocId(sessionId, entryId))
    this.perSession.delete(sessionId)
    this.dirty.delete(sessionId)
    this.live.delete(sessionId)
    this.removed.add(sessionId)
    this.unsaved = true
  }

  private syncProjects(projects: readonly Project[]): void {
    const keep = new Set(projects.map((p) => p.id))
    for (const id of [...this.projectDocs.keys()]) {
      if (keep.has(id)) continue
      const docId = projectDocId(id)
      if (this.mini.has(docId)) this.discard(docId)
      this.projectDocs.delete(id)
      this.unsaved = true
    }
    for (const project of projects) {
      const id = projectDocId(project.id)
      const before = this.projectDocs.get(project.id)
      if (before && before.name === project.name && before.cwd === project.cwd && this.mini.has(id)) continue
      if (this.mini.has(id)) this.discard(id)
      this.mini.add({ id, title: project.name, text: project.cwd })
      this.projectDocs.set(project.id, { name: project.name, cwd: project.cwd })
      this.unsaved = true
    }
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
    const trimmed = q.trim()
    const quoted = /^"(.+)"$/s.exec(trimmed)
    const phrase = normaliseSpaces(quoted ? quoted[1] : trimmed)
    const empty: SearchResults = { projects: [], sessions: [], entries: [], indexing }
    if (!phrase) return empty
    const results = this.mini
      .search(phrase, {
        combineWith: 'AND',
        prefix: (_term, index, terms) => index === terms.length - 1,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
        boost: { title: 3 }
      })
      .slice(0, MAX_QUERY_RESULTS)

    const projects = new Map(this.sources.projects().map((p) => [p.id, p]))
    const sessions = new Map(this.sources.sessions().map((s) => [s.id, s]))
    const hits: SearchHit[] = []
    for (const result of results) {
      const hit = this.toHit(result, phrase, projects, sessions)
      if (!hit) continue
      if (quoted && !hit.exact) continue
      hits.push(hit.hit)
    }
    hits.sort((a, b) => b.score - a.score)
    return {
      projects: hits.filter((h) => h.kind === 'project').slice(0, Math.min(limit, 5)),
      sessions: hits.filter((h) => h.kind === 'session').slice(0, Math.min(limit, 10)),
      entries: hits.filter((h) => h.kind === 'entry').slice(0, limit),
      indexing
    }
  }

  private toHit(
    result: SearchResult,
    phrase: string,
    projects: Map<string, Project>,
    sessions: Map<string, SessionRecord>
  ): { hit: SearchHit; exact: boolean } | null {
    const doc = parseDocId(String(result.id))
    if (!doc) return null
    const terms = result.terms
    if (doc.kind === 'project') {
      const project = projects.get(doc.projectId)
      if (!project) return null
      const inName = containsPhrase(project.name, phrase)
      const exact = inName || containsPhrase(project.cwd, phrase)
      const shown = inName || !terms.some((t) => containsPhrase(project.cwd, t)) ? project.name : project.cwd
      return {
        hit: {
          kind: 'project',
          projectId: project.id,
          title: project.name,
          snippet: snippet(shown, phrase, terms),
          score: rank(result.score, exact)
        },
        exact
      }
    }
    const sessionId = doc.sessionId
    const session = sessions.get(sessionId)
    if (!session) return null
    const projectId = session.projectId
    if (doc.kind === 'session') {
      const exact = containsPhrase(session.title, phrase)
      return {
        hit: {
          kind: 'session',
          projectId,
          sessionId,
          agentId: session.agentId,
          title: session.title,
          snippet: snippet(session.title, phrase, terms),
          score: rank(result.score, exact)
        },
        exact
      }
    }
    const entryId = doc.entryId
    const docs = this.perSession.get(sessionId)
    const entry = docs?.texts.get(entryId)
    if (!entry) return null
    const exact = containsPhrase(entry.text, phrase)
    return {
      hit: {
        kind: 'entry',
        projectId,
        sessionId,
        agentId: session.agentId,
        entryId,
        entryKind: entry.kind,
        seq: docs?.seqs.get(entryId),
        title: session.title,
        // A message is markdown: its snippet is the words as the window shows them, not the marks around them.
        snippet: snippet(MARKDOWN_KINDS.has(entry.kind) ? plainText(entry.text) : entry.text, phrase, terms),
        score: rank(result.score, exact)
      },
      exact
    }
  }

  /** Saves the index in `ms` (once; a save already planned stays). */
  private saveSoon(ms: number): void {
    if (!this.file || this.saveTimer) return
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null
      void this.save()
    }, ms)
    this.saveTimer.unref?.()
  }

  /**
   * Writes the index to its file (atomically) if it changed since it was
   * loaded or last saved, and only once it is complete; a failure is logged.
   * Saves run one after another, each taking the index as it is when it starts.
   */
  private save(): Promise<void> {
    const file = this.file
    if (!file) return this.saving
    this.saving = this.saving.then(async () => {
      if (!this.complete || !this.unsaved) return
      this.unsaved = false
      try {
        await file.write(await indexFileText({ mini: this.mini, projects: this.projectDocs, sessions: this.perSession }))
      } catch (error) {
        this.unsaved = true
        console.warn(`search: could not save the index to ${file.file}: ${(error as Error).message}`)
      }
    })
    return this.saving
  }

  /** Stops following the Host's events and building; resolves once a build under way has stopped (it is abandoned at its next step). */
  async stop(): Promise<void> {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    this.quiet.cancel()
    if (this.saveTimer) clearTimeout(this.saveTimer)
    this.saveTimer = null
    if (this.vacuumTimer) clearImmediate(this.vacuumTimer)
    this.vacuumTimer = null
    await this.building
    await this.vacuuming
  }

  /**
   * Stops, and saves the index if its build completed: the sessions that were
   * live are read again from their transcripts first (call it once they are
   * all written out), so the file matches every transcript and the next start
   * reads none of them.
   *
   * A build still under way is abandoned, not finished, and nothing is saved:
   * the file stays the last complete index (an index not yet brought up to
   * date would name as current what it has not looked at, or hold only this
   * run's sessions), and the next start reads what changed since it, this
   * run's sessions included. Finishing instead could keep a quit waiting for
   * thousands of transcripts (a first start at 10,000 sessions reads them for
   * 10 to 20 s on a loaded machine).
   */
  async close(): Promise<void> {
    await this.stop()
    if (this.complete) {
      this.flushQuietly()
      for (const id of this.live) {
        const record = this.sources.sessions().find((s) => s.id === id)
        if (record) await this.readSession(id, await signatureOf(transcriptPath(this.sources.transcriptDir, id)), true)
      }
      this.live.clear()
    }
    await this.save()
  }

  private flushQuietly(): void {
    try {
      this.flush()
    } catch (error) {
      console.warn(`search: ${(error as Error).message}`)
    }
  }
}

/**
 * What a transcript is on disk (size, mtime, inode): appended, rewritten or
 * replaced, it differs. A missing file has one too (a session may have none yet).
 */
async function signatureOf(file: string): Promise<string | null> {
  try {
    const stat = await fs.stat(file)
    return `${stat.size}:${stat.mtimeMs}:${stat.ino}`
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : null
  }
}

/** Entries whose text is markdown (the others are titles, plans and messages from the Host, shown as they are). */
const MARKDOWN_KINDS = new Set(['user', 'assistant', 'thought'])

/** An exact phrase is worth more than its words scattered. */
function rank(score: number, exact: boolean): number {
  return exact ? score * 3 : score
}

/** The searchable text of a thread entry, or null for entries with nothing to find (turn ends, permissions). */
export function entryText(entry: ThreadEntry): string | null {
  let text: string
  switch (entry.kind) {
    case 'user':
    case 'assistant':
    case 'thought':
      text = entry.text
      break
    case 'tool_call':
      text = entry.title
      break
    case 'plan':
      text = entry.entries.map((e) => e.content).join('\n')
      break
    case 'error':
      text = entry.message
      break
    case 'notice':
      text = [entry.title, entry.description ?? ''].join('\n')
      break
    case 'session_message':
      text = entry.text
      break
    case 'subagent':
      // A subagent is found by its title, what it is for and what it said and did.
      text = [entry.title ?? '', entry.description ?? '', ...entry.thread.entries.map((child) => entryText(child) ?? '')].join('\n')
      break
    default:
      return null
  }
  text = text.trim()
  if (!text) return null
  return text.length > MAX_ENTRY_CHARS ? text.slice(0, MAX_ENTRY_CHARS) : text
}

/**
 * Reads a transcript and folds it, noting the seq (line number) of the record
 * that started each entry. A damaged line is skipped, as everywhere.
 */
async function readEntries(file: string): Promise<{ texts: Map<string, EntryText>; seqs: Map<string, number> }> {
  let content: string
  try {
    content = await fs.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return entriesResult(createThread(), new Map())
    throw error
  }
  const thread = createThread()
  const seqs = new Map<string, number>()
  const lines = content.split('\n')
  for (let seq = 0; seq < lines.length; seq++) {
    const line = lines[seq]
    if (!line) continue
    let record: TranscriptRecord
    try {
      record = JSON.parse(line) as TranscriptRecord
    } catch {
      continue
    }
    if (typeof record !== 'object' || record === null || typeof record.t !== 'string') continue
    const before = thread.entries.length
    applyRecordAt(thread, record, seq)
    if (thread.entries.length < before) seqs.clear()
    for (let i = thread.entries.length < before ? 0 : before; i < thread.entries.length; i++) {
      const id = thread.entries[i].id
      if (!seqs.has(id)) seqs.set(id, seq)
    }
  }
  return entriesResult(thread, seqs)
}

function entriesResult(thread: Thread, seqs: Map<string, number>): { texts: Map<string, EntryText>; seqs: Map<string, number> } {
  return { texts: textsOf(thread), seqs }
}

/** The searchable text of each entry of a thread, by entry id. */
function textsOf(thread: Thread): Map<string, EntryText> {
  const texts = new Map<string, EntryText>()
  for (const entry of thread.entries) {
    const text = entryText(entry)
    if (text) texts.set(entry.id, { kind: entry.kind, text })
  }
  return texts
}

/** Words are runs of letters and digits: punctuation and symbols (`, _, /, -) separate them. */
const WORD_SEPARATOR = /[^\p{L}\p{N}\p{M}]+/u

function tokenize(text: string): string[] {
  return text.split(WORD_SEPARATOR).filter(Boolean)
}

function normaliseSpaces(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** The phrase's words in order, with anything but letters and digits between them, case-insensitive. */
function phrasePattern(phrase: string): RegExp | null {
  const words = tokenize(phrase)
  if (words.length === 0) return null
  return new RegExp(words.map(escapeRegExp).join('[^\\p{L}\\p{N}\\p{M}]+'), 'giu')
}

function containsPhrase(text: string, phrase: string): boolean {
  const pattern = phrasePattern(phrase)
  return pattern ? pattern.test(text) : false
}

/**
 * A window of the text around the first match (the exact phrase if it is
 * there, else the first matched word), with every match in it marked.
 */
export function snippet(text: string, phrase: string, terms: string[]): SearchSnippet {
  const flat = text.replace(/\s+/g, ' ')
  const patterns = [phrasePattern(phrase), ...terms.map((t) => new RegExp(escapeRegExp(t), 'giu'))].filter((p): p is RegExp => p !== null)
  const firstOf = (pattern: RegExp): number => flat.search(new RegExp(pattern.source, 'iu'))
  const exactAt = patterns.length > terms.length ? firstOf(patterns[0]) : -1
  const termsAt = patterns
    .slice(patterns.length - terms.length)
    .map(firstOf)
    .filter((i) => i >= 0)
  const first = exactAt >= 0 ? exactAt : termsAt.length ? Math.min(...termsAt) : -1
  let start = 0
  let end = flat.length
  if (flat.length > SNIPPET_LENGTH) {
    start = Math.max(0, (first < 0 ? 0 : first) - SNIPPET_BEFORE)
    // Start at a word boundary.
    if (start > 0) {
      const space = flat.indexOf(' ', start)
      if (space >= 0 && space < (first < 0 ? start + 15 : first)) start = space + 1
    }
    end = Math.min(flat.length, start + SNIPPET_LENGTH)
    if (end < flat.length) {
      const space = flat.lastIndexOf(' ', end)
      if (space > start + SNIPPET_LENGTH / 2) end = space
    }
  }
  const prefix = start > 0 ? '…' : ''
  const body = flat.slice(start, end)
  const suffix = end < flat.length ? '…' : ''
  const ranges: [number, number][] = []
  for (const pattern of patterns) {
    for (const match of body.matchAll(new RegExp(pattern.source, 'giu'))) {
      if (match[0].length === 0) continue
      ranges.push([prefix.length + match.index, prefix.length + match.index + match[0].length])
    }
  }
  return { text: prefix + body + suffix, marks: mergeRanges(ranges) }
}

function mergeRanges(ranges: [number, number][]): [number, number][] {
  const sorted = ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const merged: [number, number][] = []
  for (const range of sorted) {
    const last = merged[merged.length - 1]
    if (last && range[0] <= last[1]) last[1] = Math.max(last[1], range[1])
    else merged.push([range[0], range[1]])
  }
  return merged
}
