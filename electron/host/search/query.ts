import type { Project, SessionRecord } from '../../../shared/domain'
import type { SearchHit, SearchHitKind, SearchResults, SearchSnippet } from '../../../shared/search'
import { plainText } from './plain-text'
import { tokenize, type SearchDocs } from './documents'
import { parseDocId } from './index-file'
import type { SearchSources } from './build'
import { queryTerms as queryTermsOf, rankDocs, type Ranked } from './rank'

/**
 * A query against the search index: words matched whole, the last one also as
 * a prefix (search as you type), longer ones with a typo allowed, every word
 * required; text that holds the query as an exact phrase ranks above text that
 * only holds its words, and a query in double quotes finds only the exact
 * phrase. Each hit carries a snippet: a window of the text around the first
 * match with every match in it marked.
 */

const MAX_QUERY_RESULTS = 400
const SNIPPET_BEFORE = 50
const SNIPPET_LENGTH = 180

/** Entries whose text is markdown (the others are titles, plans and messages from the Host, shown as they are). */
const MARKDOWN_KINDS = new Set(['user', 'assistant', 'thought'])

/** Hits for a query, best first in each group; `indexing` says how far a build under way is. */
export function queryDocs(
  docs: SearchDocs,
  q: string,
  limit: number,
  known: Pick<SearchSources, 'projects' | 'sessions'>,
  indexing: SearchResults['indexing']
): SearchResults {
  const trimmed = q.trim()
  const quoted = /^"(.+)"$/s.exec(trimmed)
  const phrase = normaliseSpaces(quoted ? quoted[1] : trimmed)
  const empty: SearchResults = { projects: [], sessions: [], entries: [], indexing }
  if (!phrase) return empty
  // The best by MiniSearch's score only are looked at: of them, those holding the exact phrase rank first.
  const { top, matched } = rankDocs(docs.mini, phrase, MAX_QUERY_RESULTS, docs.lengths)
  const pattern = phrasePattern(phrase)
  const exactPattern = pattern && new RegExp(pattern.source, 'iu')
  const exactIn = (text: string): boolean => exactPattern !== null && exactPattern.test(text)
  const projects = new Map(known.projects().map((p) => [p.id, p]))
  const sessions = sessionsOf(top, known.sessions())
  const found: Found[] = []
  for (const ranked of top) {
    const hit = toFound(docs, ranked, exactIn, projects, sessions)
    if (!hit) continue
    if (quoted && !hit.exact) continue
    found.push(hit)
  }
  found.sort((a, b) => b.score - a.score)
  const shown = (kind: SearchHitKind, most: number): SearchHit[] =>
    found
      .filter((f) => f.hit.kind === kind)
      .slice(0, most)
      .map((f) => withSnippet(f, phrase, matched))
  return {
    projects: shown('project', Math.min(limit, 5)),
    sessions: shown('session', Math.min(limit, 10)),
    entries: shown('entry', limit),
    indexing
  }
}

/**
 * The records of the sessions the documents belong to, looked up by id. The Host's list of records is an array
 * (100,000 of them: 10–15 ms to walk, a cache miss a record): its map by id is made once and kept while the
 * list is the same array of the same length (records change in place; a session added is pushed, one removed
 * makes a new array; none is replaced in place).
 */
function sessionsOf(top: Ranked[], all: readonly SessionRecord[]): Map<string, SessionRecord> {
  const byId = sessionsById(all)
  const found = new Map<string, SessionRecord>()
  for (const ranked of top) {
    const doc = parseDocId(ranked.id)
    if (!doc || doc.kind === 'project' || found.has(doc.sessionId)) continue
    const record = byId.get(doc.sessionId)
    if (record && record.id === doc.sessionId) found.set(doc.sessionId, record)
  }
  return found
}

const byIdOf = new WeakMap<readonly SessionRecord[], { length: number; byId: Map<string, SessionRecord> }>()

function sessionsById(all: readonly SessionRecord[]): Map<string, SessionRecord> {
  let kept = byIdOf.get(all)
  if (!kept || kept.length !== all.length) {
    kept = { length: all.length, byId: new Map(all.map((session) => [session.id, session])) }
    byIdOf.set(all, kept)
  }
  return kept.byId
}

/** A document found, ranked, its snippet not yet made (only those shown get one). */
interface Found {
  hit: Omit<SearchHit, 'snippet'>
  score: number
  exact: boolean
  /** The text the snippet is cut from (a project: its name, or its folder when only that holds the query). */
  shows: string
  /** The text the document was indexed with, whose words are marked. */
  words: string
  /** A project whose name does not hold the phrase: its folder may (decided with the words marked). */
  folder?: string
}

function toFound(
  docs: SearchDocs,
  ranked: Ranked,
  exactIn: (text: string) => boolean,
  projects: Map<string, Project>,
  sessions: Map<string, SessionRecord>
): Found | null {
  const doc = parseDocId(ranked.id)
  if (!doc) return null
  if (doc.kind === 'project') {
    const project = projects.get(doc.projectId)
    if (!project) return null
    const inName = exactIn(project.name)
    const exact = inName || exactIn(project.cwd)
    const score = rank(ranked.score, exact)
    const hit = { kind: 'project' as const, projectId: project.id, title: project.name, score }
    return { hit, score, exact, shows: project.name, words: `${project.name} ${project.cwd}`, folder: inName ? undefined : project.cwd }
  }
  const sessionId = doc.sessionId
  const session = sessions.get(sessionId)
  if (!session) return null
  const projectId = session.projectId
  if (doc.kind === 'session') {
    const exact = exactIn(session.title)
    const score = rank(ranked.score, exact)
    const hit = { kind: 'session' as const, projectId, sessionId, agentId: session.agentId, title: session.title, score }
    return { hit, score, exact, shows: session.title, words: session.title }
  }
  const entryId = doc.entryId
  const indexed = docs.sessions.get(sessionId)
  const entry = indexed?.texts.get(entryId)
  if (!entry) return null
  const exact = exactIn(entry.text)
  const score = rank(ranked.score, exact)
  const hit = {
    kind: 'entry' as const,
    projectId,
    sessionId,
    agentId: session.agentId,
    entryId,
    entryKind: entry.kind,
    seq: indexed?.seqs.get(entryId),
    title: session.title,
    score
  }
  return { hit, score, exact, shows: entry.text, words: entry.text }
}

/** A hit shown: its snippet, with the words of the index the query matched that are in it marked. */
function withSnippet(found: Found, phrase: string, matched: Set<string>): SearchHit {
  const { hit } = found
  // A long entry's snippet is made from the part around its first match (its words, markdown and marks read there only).
  const part = hit.kind === 'entry' ? around(found.words, phrase, matched) : { text: found.words, cut: NOT_CUT }
  const terms = [...new Set(queryTermsOf(part.text))].filter((word) => matched.has(word))
  let shows = hit.kind === 'entry' ? part.text : found.shows
  // A project's name is shown, unless only its folder holds what was asked.
  const folder = found.folder
  if (folder !== undefined && terms.some((t) => containsPhrase(folder, t))) shows = folder
  // A message is markdown: its snippet is the words as the window shows them, not the marks around them.
  if (hit.kind === 'entry' && MARKDOWN_KINDS.has(hit.entryKind ?? '')) shows = plainText(shows)
  return { ...hit, snippet: snippet(shows, phrase, terms, part.cut) }
}

/**
 * An entry longer than this has its snippet made from `AROUND` characters either side of its first match: made from
 * the whole text, each hit's markdown, words and spaces were read whole (30 hits of a 30 KB reply: 100–300 ms of a
 * query's time, the soak's search growing 3 × as its replies filled the 30 hits; docs/BENCHMARKS.md, item 11).
 */
const LONG_ENTRY = 4_000
const AROUND = 1_000
const NOT_CUT = { before: false, after: false }
const WORD = /[\p{L}\p{N}\p{M}]+/gu

/** The part of an entry's text its snippet is made from, and whether text was cut before or after it. */
export function around(text: string, phrase: string, matched: Set<string>): { text: string; cut: { before: boolean; after: boolean } } {
  if (text.length <= LONG_ENTRY) return { text, cut: NOT_CUT }
  // The exact phrase, as `snippet` looks first; else the first word the query matched (read up to it only).
  const pattern = phrasePattern(phrase)
  let at = pattern ? text.search(new RegExp(pattern.source, 'iu')) : -1
  if (at < 0) {
    WORD.lastIndex = 0
    for (let word = WORD.exec(text); word; word = WORD.exec(text))
      if (matched.has(word[0].toLowerCase())) {
        at = word.index
        break
      }
  }
  at = Math.max(0, at)
  let start = Math.max(0, at - AROUND)
  // From a line's start when there is one near (markdown's blocks read as they are), else a word's.
  if (start > 0) {
    const line = text.lastIndexOf('\n', start)
    const space = text.lastIndexOf(' ', start)
    start = line >= 0 && start - line < AROUND / 2 ? line + 1 : space >= 0 && start - space < 100 ? space + 1 : start
  }
  let end = Math.min(text.length, at + AROUND)
  if (end < text.length) {
    const space = text.indexOf(' ', end)
    if (space >= 0 && space - end < 100) end = space
  }
  return { text: text.slice(start, end), cut: { before: start > 0, after: end < text.length } }
}

/** An exact phrase is worth more than its words scattered. */
function rank(score: number, exact: boolean): number {
  return exact ? score * 3 : score
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
export function snippet(text: string, phrase: string, terms: string[], cut = NOT_CUT): SearchSnippet {
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
  // `cut`: `text` is a part of a longer one (`around`).
  const prefix = start > 0 || cut.before ? '…' : ''
  const body = flat.slice(start, end)
  const suffix = end < flat.length || cut.after ? '…' : ''
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
