import type { SearchResult } from 'minisearch'
import type { Project, SessionRecord } from '../../../shared/domain'
import type { SearchHit, SearchResults, SearchSnippet } from '../../../shared/search'
import { plainText } from './plain-text'
import { tokenize, type SearchDocs } from './documents'
import { parseDocId } from './index-file'

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
  known: { projects: readonly Project[]; sessions: readonly SessionRecord[] },
  indexing: SearchResults['indexing']
): SearchResults {
  const trimmed = q.trim()
  const quoted = /^"(.+)"$/s.exec(trimmed)
  const phrase = normaliseSpaces(quoted ? quoted[1] : trimmed)
  const empty: SearchResults = { projects: [], sessions: [], entries: [], indexing }
  if (!phrase) return empty
  const results = docs.mini
    .search(phrase, {
      combineWith: 'AND',
      prefix: (_term, index, terms) => index === terms.length - 1,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      boost: { title: 3 }
    })
    .slice(0, MAX_QUERY_RESULTS)

  const projects = new Map(known.projects.map((p) => [p.id, p]))
  const sessions = new Map(known.sessions.map((s) => [s.id, s]))
  const hits: SearchHit[] = []
  for (const result of results) {
    const hit = toHit(docs, result, phrase, projects, sessions)
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

function toHit(
  docs: SearchDocs,
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
  const indexed = docs.sessions.get(sessionId)
  const entry = indexed?.texts.get(entryId)
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
      seq: indexed?.seqs.get(entryId),
      title: session.title,
      // A message is markdown: its snippet is the words as the window shows them, not the marks around them.
      snippet: snippet(MARKDOWN_KINDS.has(entry.kind) ? plainText(entry.text) : entry.text, phrase, terms),
      score: rank(result.score, exact)
    },
    exact
  }
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
