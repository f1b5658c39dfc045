/**
 * What `search.query` answers: hits over project names and paths, session
 * titles and the text of every transcript (electron/host/search/search-index.ts).
 */

export type SearchHitKind = 'project' | 'session' | 'entry'

/** A piece of the matched text, with the ranges (start, end: offsets into `text`) that matched the query. */
export interface SearchSnippet {
  text: string
  marks: [number, number][]
}

export interface SearchHit {
  kind: SearchHitKind
  projectId: string
  /** session and entry hits. */
  sessionId?: string
  agentId?: string
  /** entry hits: the thread entry's id (as `shared/thread.ts` folds it), to open the session scrolled to it. */
  entryId?: string
  /** entry hits: what the entry is (user, assistant, thought, tool_call, plan, error, notice). */
  entryKind?: string
  /** entry hits: seq of the transcript record that started the entry. */
  seq?: number
  /** The project's name (project hits) or the session's title (session and entry hits). */
  title: string
  snippet: SearchSnippet
  score: number
}

export interface SearchResults {
  projects: SearchHit[]
  sessions: SearchHit[]
  entries: SearchHit[]
  /** While the index is still being built at start-up: how many transcripts are in so far. */
  indexing: { done: number; total: number } | null
}
