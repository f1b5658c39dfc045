import { promises as fs } from 'node:fs'
import MiniSearch, { type SearchResult } from 'minisearch'
import type { HostEvent } from '../../shared/contract'
import type { Project, SessionRecord } from '../../shared/domain'
import type { SearchHit, SearchResults, SearchSnippet } from '../../shared/search'
import { applyRecordAt, createThread, type Thread, type ThreadEntry } from '../../shared/thread'
import type { TranscriptRecord } from '../../shared/transcript'
import { plainText } from './plain-text'
import { transcriptPath } from './transcripts'

/**
 * Full-text search over project names and paths, session titles and the text
 * of every transcript, with MiniSearch. The unit of a transcript is a thread
 * entry (a whole message, thought, tool call title, plan, error), folded with
 * the same `applyRecord` as everywhere else (entries named after their records' seqs, `applyRecordAt`, as the renderer names them), so a phrase streamed over many
 * chunks is one document and a hit names the entry the renderer shows.
 *
 * At start the index is built from the JSONL transcripts, one file at a time.
 * After that it follows the Host's events as they are emitted: a record
 * appended to a live session marks the session, and its entries are
 * re-indexed from the Host's own fold of it in batches (every
 * `FLUSH_MS`, and before every query, so a query sees everything appended
 * before it). Titles, removed sessions and projects follow their events.
 */

export interface SearchSources {
  transcriptDir: string
  projects(): Project[]
  sessions(): SessionRecord[]
  /** The Host's fold of a live session (complete: it starts from the whole transcript). */
  threadOf(sessionId: string): Thread | undefined
}

interface IndexedDoc {
  id: string
  kind: 'project' | 'session' | 'entry'
  title: string
  text: string
  projectId: string
  sessionId?: string
  entryId?: string
}

interface EntryText {
  kind: string
  text: string
}

interface SessionDocs {
  /** What is indexed for each entry, by entry id. */
  texts: Map<string, EntryText>
  /** The seq of the record that started each entry. */
  seqs: Map<string, number>
  /** How many entries of the live thread have been given a seq. */
  scanned: number
}

const FLUSH_MS = 250
/** Longer entries are indexed by their start (a pasted log is not worth more). */
const MAX_ENTRY_CHARS = 100_000
const MAX_QUERY_RESULTS = 400
const SNIPPET_BEFORE = 50
const SNIPPET_LENGTH = 180

export class SearchIndex {
  private readonly mini = new MiniSearch<IndexedDoc>({
    fields: ['title', 'text'],
    tokenize,
    storeFields: ['kind', 'projectId', 'sessionId', 'entryId'],
    searchOptions: { boost: { title: 3 } }
  })
  private readonly perSession = new Map<string, SessionDocs>()
  private readonly dirty = new Set<string>()
  private timer: NodeJS.Timeout | null = null
  private building: Promise<void> | null = null
  private progress: { done: number; total: number } | null = null
  private closed = false

  constructor(private readonly sources: SearchSources) {}

  /** Indexes every project, session and transcript; resolves when all are in (or the index was closed). */
  build(): Promise<void> {
    this.building ??= this.buildAll()
    return this.building
  }

  private async buildAll(): Promise<void> {
    this.syncProjects(this.sources.projects())
    const sessions = this.sources.sessions()
    this.progress = { done: 0, total: sessions.length }
    for (const record of sessions) {
      if (this.closed) return
      this.putSession(record)
      if (!this.perSession.has(record.id)) {
        try {
          const { texts, seqs } = await readEntries(transcriptPath(this.sources.transcriptDir, record.id))
          // A session that went live meanwhile was indexed from the Host's fold, which is newer.
          if (!this.perSession.has(record.id) && this.sessionExists(record.id)) this.indexEntries(record, texts, seqs)
        } catch (error) {
          console.warn(`search: could not index the transcript of ${record.id}: ${(error as Error).message}`)
        }
      }
      this.progress.done++
    }
    this.progress = null
  }

  /** Follows an event the Host emits, at the moment it is emitted. */
  noteEvent(event: HostEvent): void {
    if (this.closed) return
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
      this.timer = setTimeout(() => this.flush(), FLUSH_MS)
      this.timer.unref?.()
    }
  }

  /** Re-indexes the entries of every session that grew since the last flush. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    for (const sessionId of this.dirty) {
      const thread = this.sources.threadOf(sessionId)
      const record = this.sources.sessions().find((s) => s.id === sessionId)
      if (!thread || !record) continue
      this.indexEntries(record, textsOf(thread))
    }
    this.dirty.clear()
  }

  /** Makes the indexed entries of a session equal to `texts`: changed ones replaced, gone ones dropped. */
  private indexEntries(record: SessionRecord, texts: Map<string, EntryText>, seqs?: Map<string, number>): void {
    const docs = this.docsOf(record.id)
    if (seqs) for (const [id, seq] of seqs) if (!docs.seqs.has(id)) docs.seqs.set(id, seq)
    for (const [entryId, before] of docs.texts) {
      const now = texts.get(entryId)
      if (!now || now.text !== before.text) {
        this.mini.discard(entryDocId(record.id, entryId))
        docs.texts.delete(entryId)
      }
    }
    for (const [entryId, now] of texts) {
      if (docs.texts.has(entryId)) continue
      this.mini.add({
        id: entryDocId(record.id, entryId),
        kind: 'entry',
        title: '',
        text: now.text,
        projectId: record.projectId,
        sessionId: record.id,
        entryId
      })
      docs.texts.set(entryId, now)
    }
  }

  private docsOf(sessionId: string): SessionDocs {
    let docs = this.perSession.get(sessionId)
    if (!docs) {
      docs = { texts: new Map(), seqs: new Map(), scanned: 0 }
      this.perSession.set(sessionId, docs)
    }
    return docs
  }

  private sessionExists(id: string): boolean {
    return this.sources.sessions().some((s) => s.id === id)
  }

  private putSession(record: SessionRecord): void {
    const id = `session:${record.id}`
    if (this.mini.has(id)) this.mini.discard(id)
    this.mini.add({ id, kind: 'session', title: record.title, text: '', projectId: record.projectId, sessionId: record.id })
  }

  private removeSession(sessionId: string): void {
    const id = `session:${sessionId}`
    if (this.mini.has(id)) this.mini.discard(id)
    const docs = this.perSession.get(sessionId)
    if (docs) for (const entryId of docs.texts.keys()) this.mini.discard(entryDocId(sessionId, entryId))
    this.perSession.delete(sessionId)
    this.dirty.delete(sessionId)
  }

  private syncProjects(projects: Project[]): void {
    const keep = new Set(projects.map((p) => `project:${p.id}`))
    for (const id of this.projectDocIds) if (!keep.has(id) && this.mini.has(id)) this.mini.discard(id)
    this.projectDocIds = keep
    for (const project of projects) {
      const id = `project:${project.id}`
      if (this.mini.has(id)) this.mini.discard(id)
      this.mini.add({ id, kind: 'project', title: project.name, text: project.cwd, projectId: project.id })
    }
  }
  private projectDocIds = new Set<string>()

  /**
   * Hits for a query, best first in each group. Words are matched whole, the
   * last one also as a prefix (search as you type), longer ones with a typo
   * allowed; every word must match. Text that holds the query as an exact
   * phrase ranks above text that only holds its words; a query in double
   * quotes finds only the exact phrase.
   */
  query(q: string, limit = 30): SearchResults {
    this.flush()
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
    const kind = result.kind as IndexedDoc['kind']
    const projectId = result.projectId as string
    const terms = result.terms
    if (kind === 'project') {
      const project = projects.get(projectId)
      if (!project) return null
      const inName = containsPhrase(project.name, phrase)
      const exact = inName || containsPhrase(project.cwd, phrase)
      const shown = inName || !terms.some((t) => containsPhrase(project.cwd, t)) ? project.name : project.cwd
      return {
        hit: { kind, projectId, title: project.name, snippet: snippet(shown, phrase, terms), score: rank(result.score, exact) },
        exact
      }
    }
    const sessionId = result.sessionId as string
    const session = sessions.get(sessionId)
    if (!session) return null
    if (kind === 'session') {
      const exact = containsPhrase(session.title, phrase)
      return {
        hit: {
          kind,
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
    const entryId = result.entryId as string
    const docs = this.perSession.get(sessionId)
    const entry = docs?.texts.get(entryId)
    if (!entry) return null
    const exact = containsPhrase(entry.text, phrase)
    return {
      hit: {
        kind,
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

  /** Stops following and building; resolves once a build under way has stopped. */
  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    await this.building?.catch(() => undefined)
  }
}

/** Entries whose text is markdown (the others are titles, plans and messages from the Host, shown as they are). */
const MARKDOWN_KINDS = new Set(['user', 'assistant', 'thought'])

function entryDocId(sessionId: string, entryId: string): string {
  return `entry:${sessionId}:${entryId}`
}

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
