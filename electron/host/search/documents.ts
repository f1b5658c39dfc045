import MiniSearch, { type Options } from 'minisearch'
import type { Project, SessionRecord } from '../../../shared/domain'
import type { Thread } from '../../../shared/thread'
import { DocLengths } from './doc-lengths'
import { slicer, type Pause } from '../storage/slices'
import { entryDocId, projectDocId, sessionDocId, type EntryText, type IndexedDoc, type SessionDocs, type StoredIndex } from './index-file'
import { textsOf } from './intake'

/** A live session's last entry of these kinds may still be streaming. */
const GROWING_KINDS = new Set(['assistant', 'thought', 'user'])

/**
 * What the search index holds: the MiniSearch index and, beside it, what each
 * document was indexed with (per session its title, transcript signature,
 * entry texts and seqs; per project its name and folder), so that only what
 * changed is indexed again. Every change marks it `unsaved`. A discarded
 * document leaves dirt in MiniSearch's index: `onDiscard` lets the owner
 * vacuum it (search-index.ts).
 */

export const MINISEARCH_OPTIONS: Options<IndexedDoc> = {
  fields: ['title', 'text'],
  tokenize,
  searchOptions: { boost: { title: 3 } },
  // MiniSearch's own vacuuming walks the index in batches, waiting between them, and a document added meanwhile
  // can split a node it is walking: it then throws where nothing catches it (lucaong/minisearch#306), which
  // stops the Host. The index starts it itself instead, and adds nothing while it runs (`vacuumSoon`).
  autoVacuum: false
}

/** Words are runs of letters and digits: punctuation and symbols (`, _, /, -) separate them. */
const WORD_SEPARATOR = /[^\p{L}\p{N}\p{M}]+/u

export function tokenize(text: string): string[] {
  return text.split(WORD_SEPARATOR).filter(Boolean)
}

export class SearchDocs implements StoredIndex {
  mini = new MiniSearch<IndexedDoc>(MINISEARCH_OPTIONS)
  /** Each document's field lengths in typed arrays, for the ranking (rank.ts), kept in step with `mini`. */
  readonly lengths = new DocLengths()
  sessions = new Map<string, SessionDocs>()
  /** The project documents indexed, with what they were indexed with. */
  projects = new Map<string, { name: string; cwd: string }>()
  /** Something changed since the index was loaded or last saved (until a usable file is read, the first save writes one). */
  unsaved = true

  constructor(private readonly onDiscard: () => void) {}

  /**
   * Takes the index read from disk in place of this one (only the Host's events since the start are in this one):
   * the sessions that went live meanwhile (`live`) keep the seqs their entries were given (those read from a
   * transcript are exact; the fold only names what came after) and are to be re-indexed from the Host's fold.
   */
  adopt(stored: StoredIndex, live: ReadonlySet<string> = new Set()): void {
    const followed = this.sessions
    this.mini = stored.mini
    this.sessions = stored.sessions
    this.projects = stored.projects
    this.unsaved = false
    for (const id of live) {
      const docs = this.docsOf(id)
      const before = followed.get(id)
      if (before) {
        for (const [entryId, seq] of before.seqs) if (!docs.seqs.has(entryId)) docs.seqs.set(entryId, seq)
        docs.scanned = before.scanned
      }
      docs.signature = null
      this.unsaved = true
    }
  }

  docsOf(sessionId: string): SessionDocs {
    let docs = this.sessions.get(sessionId)
    if (!docs) {
      docs = { title: null, signature: null, texts: new Map(), seqs: new Map(), scanned: 0 }
      this.sessions.set(sessionId, docs)
    }
    return docs
  }

  /**
   * Indexes a live session's entries as its thread holds them; `batch` (a flush of the Host's batches): a message
   * still streaming (the thread's last) stays as it was indexed, and true is said: the session is to be indexed
   * again once another entry follows it, or before a query (whole). Indexed whole at every batch, its old terms
   * discarded and vacuumed, it was most of what a streaming Host's heap took in and let go (the soak).
   */
  indexLive(sessionId: string, thread: Thread, batch: boolean): boolean {
    const last = thread.entries.at(-1)
    const streaming = batch && last !== undefined && GROWING_KINDS.has(last.kind)
    // The message still streaming is not read: trimming its text (appended to at each chunk) copied the whole
    // reply at every batch (four streams of 20,000 chunks: ~40 MB the Host allocated and let go).
    const texts = textsOf(thread, streaming ? thread.entries.length - 1 : thread.entries.length)
    const docs = this.docsOf(sessionId)
    const indexed = streaming && docs.texts.get(last.id)
    if (indexed) texts.set(last.id, indexed)
    // A loaded or copied session's thread holds its transcript's tail only: what was indexed before it stays.
    let from = Infinity
    for (const entry of thread.entries) from = Math.min(from, docs.seqs.get(entry.id) ?? Infinity)
    this.indexEntries(sessionId, texts, undefined, from)
    return streaming
  }

  /**
   * Makes the indexed entries of a session equal to `texts`: changed ones replaced, gone ones dropped, but for
   * those that started before the seq `keepBefore` (a thread's tail begins there).
   */
  indexEntries(sessionId: string, texts: Map<string, EntryText>, seqs?: Map<string, number>, keepBefore = -Infinity): void {
    for (const _added of this.entryChanges(sessionId, texts, seqs, keepBefore));
  }

  /**
   * `indexEntries` for a transcript the build read, in slices: at each pause the Host answers what waits, and it
   * stops half done (resolving false) once `gone` (the session went live or away, or the index closed).
   */
  async indexEntriesInSlices(
    sessionId: string,
    texts: Map<string, EntryText>,
    seqs: Map<string, number>,
    /** The build's hook (SearchHooks.onBuildStep), told of each pause: typed here, not imported, as build.ts imports this file. */
    onPause: ((step: { step: 'entries'; sessionId: string }) => void | Promise<void>) | undefined,
    gone: () => boolean,
    /** What the build waits out at each pause (the Host answering the window). */
    giveWay?: Pause
  ): Promise<boolean> {
    const slice = slicer(giveWay)
    for (const _added of this.entryChanges(sessionId, texts, seqs)) {
      const wait = slice()
      if (!wait) continue
      await wait
      await onPause?.({ step: 'entries', sessionId })
      if (gone()) return false
    }
    return true
  }

  /**
   * What `indexEntries` does, a step for each entry added: the build takes a transcript it read in slices (a
   * 10,000-entry conversation's entries were one task of 300-900 ms, and a window opening a conversation meanwhile
   * waited for its answer until it was over).
   */
  *entryChanges(sessionId: string, texts: Map<string, EntryText>, seqs?: Map<string, number>, keepBefore = -Infinity): Generator<void> {
    const docs = this.docsOf(sessionId)
    if (seqs) for (const [id, seq] of seqs) if (!docs.seqs.has(id)) docs.seqs.set(id, seq)
    for (const [entryId, before] of docs.texts) {
      const now = texts.get(entryId)
      if (!now && (docs.seqs.get(entryId) ?? Infinity) < keepBefore) continue
      if (!now || now.text !== before.text) {
        this.discard(entryDocId(sessionId, entryId))
        docs.texts.delete(entryId)
      }
    }
    for (const [entryId, now] of texts) {
      if (docs.texts.has(entryId)) continue
      this.mini.add({ id: entryDocId(sessionId, entryId), title: '', text: now.text })
      docs.texts.set(entryId, now)
      yield
    }
  }

  /** A copied conversation's entries, read from its transcript: those not indexed yet are added (the thread's stay as they are). */
  indexCopy(sessionId: string, texts: Map<string, EntryText>, seqs: Map<string, number>): void {
    const docs = this.docsOf(sessionId)
    for (const [entryId, text] of texts) {
      if (docs.texts.has(entryId)) continue
      const seq = seqs.get(entryId)
      if (seq !== undefined && !docs.seqs.has(entryId)) docs.seqs.set(entryId, seq)
      this.mini.add({ id: entryDocId(sessionId, entryId), title: '', text: text.text })
      docs.texts.set(entryId, text)
    }
    this.unsaved = true
  }

  putSession(record: SessionRecord): void {
    const docs = this.docsOf(record.id)
    const id = sessionDocId(record.id)
    if (docs.title === record.title && this.mini.has(id)) return
    if (this.mini.has(id)) this.discard(id)
    this.mini.add({ id, title: record.title, text: '' })
    docs.title = record.title
    this.unsaved = true
  }

  removeSession(sessionId: string): void {
    const id = sessionDocId(sessionId)
    if (this.mini.has(id)) this.discard(id)
    const docs = this.sessions.get(sessionId)
    if (docs) for (const entryId of docs.texts.keys()) this.discard(entryDocId(sessionId, entryId))
    this.sessions.delete(sessionId)
    this.unsaved = true
  }

  syncProjects(projects: readonly Project[]): void {
    const keep = new Set(projects.map((p) => p.id))
    for (const id of [...this.projects.keys()]) {
      if (keep.has(id)) continue
      const docId = projectDocId(id)
      if (this.mini.has(docId)) this.discard(docId)
      this.projects.delete(id)
      this.unsaved = true
    }
    for (const project of projects) {
      const id = projectDocId(project.id)
      const before = this.projects.get(project.id)
      if (before && before.name === project.name && before.cwd === project.cwd && this.mini.has(id)) continue
      if (this.mini.has(id)) this.discard(id)
      this.mini.add({ id, title: project.name, text: project.cwd })
      this.projects.set(project.id, { name: project.name, cwd: project.cwd })
      this.unsaved = true
    }
  }

  /** Takes a document out of the index; what it leaves there is vacuumed once there is enough of it. */
  private discard(docId: string): void {
    this.lengths.noteDiscard(this.mini, docId)
    this.mini.discard(docId)
    this.onDiscard()
  }
}
