import { describe, expect, it } from 'vitest'
import type { Project, SessionRecord } from '../../shared/domain'
import type { SearchHit, SearchResults } from '../../shared/search'
import MiniSearch from 'minisearch'
import { MINISEARCH_OPTIONS, SearchDocs, tokenize } from '../../electron/host/search/documents'
import { parseDocId, type EntryText, type IndexedDoc } from '../../electron/host/search/index-file'
import { queryDocs } from '../../electron/host/search/query'
import { rankDocs } from '../../electron/host/search/rank'
import { seededRandom } from '../seeded-random'

/**
 * A query ranks over MiniSearch's postings itself (rank.ts) and makes snippets
 * for the hits shown only: what it answers must be what MiniSearch's own
 * `search` ranks, taken the way query.ts always took it (the best 400 by score,
 * those holding the exact phrase ×3, best first in each group, the first
 * `limit` shown). Over a varied corpus (words of every length, near misses a
 * typo away, prefixes, titles, projects, replaced and removed documents), for
 * queries of every shape: the same hits, the same scores, the same order, and
 * the ones shown the best.
 */

const VOCABULARY = (
  'render renders rendering tender listing listings lasting list agent agents session project stream streaming ' +
  'transcript search searching index indexer thread entry tool tools diff plan terminal permission a an the of to ' +
  'in it is fix bug build test tests code config window pane palette query result results snippet word words'
).split(' ')

const at = '2026-01-01T00:00:00.000Z'

function corpus(): { docs: SearchDocs; projects: Project[]; sessions: SessionRecord[] } {
  const next = seededRandom(40)
  const words = (n: number): string => Array.from({ length: n }, () => VOCABULARY[Math.floor(next() * VOCABULARY.length)]).join(' ')
  const docs = new SearchDocs(() => {})
  const projects: Project[] = Array.from({ length: 6 }, (_, p) => ({
    id: `p${p}`,
    name: p % 2 ? `render-${p}` : `listing ${p}`,
    cwd: `/code/${words(2).replace(/ /g, '-')}`,
    createdAt: at
  }))
  docs.syncProjects(projects)
  const sessions: SessionRecord[] = []
  for (let s = 0; s < 300; s++) {
    const record: SessionRecord = {
      id: `s${s}`,
      acpSessionId: `acp-${s}`,
      agentId: 'agent-a',
      projectId: `p${s % projects.length}`,
      cwd: '/code',
      title: s % 7 === 0 ? `Render listing ${words(2)}` : words(2 + Math.floor(next() * 5)),
      titleSource: 'prompt',
      createdAt: at,
      updatedAt: at
    }
    sessions.push(record)
    docs.putSession(record)
    const texts = new Map<string, EntryText>()
    const entries = 2 + Math.floor(next() * 8)
    for (let e = 0; e < entries; e++) {
      const kind = ['user', 'assistant', 'thought', 'tool_call'][e % 4]
      // Some hold the phrase exactly, most only its words (or near misses), at lengths from 3 to 60 words.
      const text = e % 5 === 1 ? `${words(3)} render listing ${words(1 + Math.floor(next() * 20))}` : words(3 + Math.floor(next() * 57))
      texts.set(`e${e}`, { kind, text: kind === 'assistant' ? `**${text}**` : text })
    }
    docs.indexEntries(record.id, texts)
  }
  // Replaced and removed documents: their postings stay in MiniSearch until it is vacuumed.
  for (let s = 0; s < 300; s += 11) {
    const texts = new Map(docs.sessions.get(`s${s}`)!.texts)
    texts.set('e0', { kind: 'user', text: `rendering listings replaced ${s}` })
    texts.delete('e1')
    docs.indexEntries(`s${s}`, texts)
  }
  for (let s = 5; s < 300; s += 23) docs.removeSession(`s${s}`)
  return { docs, projects, sessions: sessions.filter((s) => docs.sessions.has(s.id)) }
}

const QUERIES = [
  'render listing',
  'listing render',
  'render',
  'rend',
  'rendr',
  'listin',
  'render listing tool',
  '"render listing"',
  'tool tool',
  'the',
  'a',
  'Render-Listing',
  // More words than the arrays kept between queries (rank.ts KEPT_SUMS): the later words' sums are the query's own.
  'a the to of in render',
  'xyzzy'
]

function groups(hits: SearchHit[], limit: number): SearchResults {
  return {
    projects: hits.filter((h) => h.kind === 'project').slice(0, Math.min(limit, 5)),
    sessions: hits.filter((h) => h.kind === 'session').slice(0, Math.min(limit, 10)),
    entries: hits.filter((h) => h.kind === 'entry').slice(0, limit),
    indexing: null
  }
}

/**
 * query.ts as it was, over MiniSearch's own `search`, what the ranking must stay equal to: every hit of the query,
 * ranked as query.ts ranks them, of the best `cut` by MiniSearch's score.
 */
function referenceHits(docs: SearchDocs, q: string, sessions: SessionRecord[], projects: Project[], cut: number): SearchHit[] {
  docsUnderTest = docs
  const trimmed = q.trim()
  const quoted = /^"(.+)"$/s.exec(trimmed)
  const phrase = (quoted ? quoted[1] : trimmed).replace(/\s+/g, ' ').trim()
  const pattern = new RegExp(tokenize(phrase).join('[^\\p{L}\\p{N}\\p{M}]+'), 'iu')
  const results = docs.mini
    .search(phrase, {
      combineWith: 'AND',
      prefix: (_term, index, terms) => index === terms.length - 1,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      boost: { title: 3 }
    })
    // Of equal scores, the document indexed last first (MiniSearch's short ids count up as documents are added).
    .sort((a, b) => Math.round((b.score - a.score) * 1e9) || shortId(String(b.id)) - shortId(String(a.id)))
    .slice(0, cut)
  const hits: SearchHit[] = []
  for (const result of results) {
    const doc = parseDocId(String(result.id))!
    let texts: string[]
    let hit: Omit<SearchHit, 'score' | 'snippet'>
    if (doc.kind === 'project') {
      const project = projects.find((p) => p.id === doc.projectId)!
      texts = [project.name, project.cwd]
      hit = { kind: 'project', projectId: project.id, title: project.name }
    } else {
      const session = sessions.find((s) => s.id === doc.sessionId)!
      texts = [doc.kind === 'session' ? session.title : docs.sessions.get(doc.sessionId)!.texts.get(doc.entryId)!.text]
      hit = {
        kind: doc.kind,
        projectId: session.projectId,
        sessionId: session.id,
        title: session.title,
        entryId: doc.kind === 'entry' ? doc.entryId : undefined
      }
    }
    const exact = texts.some((text) => pattern.test(text))
    if (quoted && !exact) continue
    hits.push({ ...hit, score: exact ? result.score * 3 : result.score, snippet: { text: '', marks: [] } })
  }
  return hits.sort((a, b) => b.score - a.score)
}

const shortId = (id: string): number => (docsUnderTest!.mini as unknown as { _idToShortId: Map<string, number> })._idToShortId.get(id)!
let docsUnderTest: SearchDocs | null = null

const key = (h: SearchHit): string => `${h.kind}:${h.sessionId ?? h.projectId}:${h.entryId ?? ''}`

/**
 * The same scores in the same order (so the ones shown are the best), each hit's score its own (what MiniSearch
 * gives that document, exact phrase ×3), no hit twice. Of documents with equal scores, either may be shown.
 */
function expectSameHits(got: SearchHit[], want: SearchHit[], truth: Map<string, number>, what: string): void {
  expect(
    got.map((h) => h.score),
    what
  ).toEqual(want.map((h): unknown => expect.closeTo(h.score, 9)))
  for (const hit of got) expect(hit.score, key(hit)).toBeCloseTo(truth.get(key(hit)) ?? NaN, 9)
  expect(new Set(got.map(key)).size).toBe(got.length)
}

describe('ranking a query', () => {
  it('finds what MiniSearch finds, never a replaced or removed document', () => {
    const { docs, sessions } = corpus()
    const liveIds = new Set<string>()
    for (const id of docs.sessions.keys()) {
      liveIds.add(`s\u0000${id}`)
      for (const entry of docs.sessions.get(id)!.texts.keys()) liveIds.add(`e\u0000${id}\u0000${entry}`)
    }
    for (const q of QUERIES) {
      // Before MiniSearch's own search has taken the discarded documents' postings out of the words it met.
      const ranked = rankDocs(docs.mini, q.replace(/"/g, ''), 10_000)
      for (const doc of ranked.top) if (!doc.id.startsWith('p')) expect(liveIds, `${q}: ${doc.id}`).toContain(doc.id)
      const theirs = docs.mini.search(q.replace(/"/g, ''), {
        combineWith: 'AND',
        prefix: (_term, index, terms) => index === terms.length - 1,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
        boost: { title: 3 }
      })
      expect(new Set(ranked.top.map((d) => d.id)), q).toEqual(new Set(theirs.map((r) => String(r.id))))
      expect(ranked.top.length).toBe(theirs.length)
    }
    expect(sessions.length).toBeGreaterThan(250)
  })

  it('answers the same hits, scores and order as MiniSearch ranks them, the best of them shown, for every shape of query', async () => {
    const { docs, projects, sessions } = corpus()
    // MiniSearch's search counts the postings of discarded documents in a word's frequency until it has taken them out
    // (a count at a time, as it meets them): its scores are exact once the index is vacuumed, as ours always are.
    await docs.mini.vacuum()
    let compared = 0
    for (const q of QUERIES) {
      const best = referenceHits(docs, q, sessions, projects, 400)
      const truth = new Map(referenceHits(docs, q, sessions, projects, Infinity).map((h) => [key(h), h.score]))
      for (const limit of [3, 40, 400]) {
        const want = groups(best, limit)
        const got = queryDocs(docs, q, limit, { projects: () => projects, sessions: () => sessions }, null)
        for (const group of ['projects', 'sessions', 'entries'] as const) {
          expect(got[group].length, `${q} ${group} ${limit}`).toBe(want[group].length)
          expectSameHits(
            got[group],
            want[group],
            truth,
            `${q} ${group} ${limit}: ${got[group].map(key).join(' ')} / ${want[group].map(key).join(' ')}`
          )
          compared += got[group].length
        }
      }
    }
    // The corpus is not empty of what is asked: most queries find many documents in every group.
    expect(compared).toBeGreaterThan(2_000)
  })

  it('keeps the best documents when more match than it keeps, best first', () => {
    const { docs } = corpus()
    for (const q of ['the', 'a', 'render', 'rend']) {
      const every = rankDocs(docs.mini, q, 100_000)
      const best = rankDocs(docs.mini, q, 25)
      expect(every.top.length).toBeGreaterThan(100)
      expect(best.top.map((d) => d.score)).toEqual(every.top.slice(0, 25).map((d) => d.score))
      for (let i = 1; i < best.top.length; i++) expect(best.top[i].score).toBeLessThanOrEqual(best.top[i - 1].score)
    }
  })

  it('marks in each snippet the words the query matched, typos and prefixes included', () => {
    const { docs, projects, sessions } = corpus()
    const got = queryDocs(docs, 'rendr listin', 40, { projects: () => projects, sessions: () => sessions }, null)
    expect(got.entries.length).toBeGreaterThan(10)
    for (const hit of got.entries) {
      const marked = hit.snippet.marks.map(([start, end]) => hit.snippet.text.slice(start, end).toLowerCase())
      // The snippet is a window around the first match: at least that one is marked, and nothing else is.
      expect(marked.length, hit.snippet.text).toBeGreaterThan(0)
      for (const word of marked) expect(['render', 'renders', 'listin', 'listing', 'listings', 'lasting'], hit.snippet.text).toContain(word)
      // A message is markdown: the snippet is its words, without the stars.
      expect(hit.snippet.text).not.toContain('**')
    }
  })

  it('follows the index as it changes between queries: documents added, replaced and removed, an index read from its file', async () => {
    const { docs, projects, sessions } = corpus()
    const ask = (): void => void queryDocs(docs, 'render listing', 40, { projects: () => projects, sessions: () => live }, null)
    let live = [...sessions]
    // Each query after the first takes in only what changed since the one before: each is held to MiniSearch's own.
    const compare = async (when: string): Promise<void> => {
      // MiniSearch's scores count discarded documents until it is vacuumed (which leaves the field lengths as they are).
      await docs.mini.vacuum()
      for (const q of ['render listing', 'listin', 'rendr', 'round']) {
        const best = referenceHits(docs, q, live, projects, 400)
        const truth = new Map(referenceHits(docs, q, live, projects, Infinity).map((h) => [key(h), h.score]))
        const got = queryDocs(docs, q, 400, { projects: () => projects, sessions: () => live }, null)
        const want = groups(best, 400)
        for (const group of ['projects', 'sessions', 'entries'] as const) {
          expect(got[group].length, `${when}: ${q} ${group}`).toBe(want[group].length)
          expectSameHits(got[group], want[group], truth, `${when}: ${q} ${group}`)
        }
        expect(got.entries.length + got.sessions.length, q).toBeGreaterThan(5)
      }
    }
    const next = seededRandom(7)
    for (let round = 0; round < 3; round++) {
      // Removed: their documents discarded (the Host's list of sessions is a new array then).
      for (const session of live.filter((_, i) => i % 17 === round + 1)) docs.removeSession(session.id)
      live = live.filter((s) => docs.sessions.has(s.id))
      // A query takes each document's field lengths and the sessions by id; what follows changes both under them.
      ask()
      for (let s = 0; s < 40; s++) {
        const id = `new-${round}-${s}`
        const record = { ...sessions[0], id, title: s % 3 ? `render listing round ${round}` : `round ${round}` }
        // A session added is pushed onto the same list.
        live.push(record)
        docs.putSession(record)
        const words = Array.from({ length: 1 + Math.floor(next() * 30) }, () => VOCABULARY[Math.floor(next() * VOCABULARY.length)]).join(' ')
        docs.indexEntries(id, new Map([['e0', { kind: 'user', text: `render ${words} listing` }]]))
      }
      // Replaced (a streamed answer grows): documents whose lengths were taken discarded, others added.
      for (const session of live.filter((_, i) => i % 9 === round)) {
        const texts = new Map(docs.sessions.get(session.id)!.texts)
        texts.set('e0', { kind: 'assistant', text: `render listing ${round} ${'grown '.repeat(round * 7)}` })
        docs.indexEntries(session.id, texts)
      }
      await compare(`round ${round}`)
    }
    // The index as the file gives it back: another MiniSearch, with the same documents under the same short ids.
    const reread = MiniSearch.loadJSON<IndexedDoc>(JSON.stringify(docs.mini), MINISEARCH_OPTIONS)
    docs.adopt({ mini: reread, projects: docs.projects, sessions: docs.sessions })
    await compare('read from its file')
  })

  it('of documents with equal scores keeps the ones indexed last, as MiniSearch orders them', () => {
    // The bench's corpus: every session the same turn, so every entry holding the query scores the same.
    const docs = new SearchDocs(() => {})
    for (let s = 0; s < 2_000; s++) docs.indexEntries(`s${s}`, new Map([['e0', { kind: 'user', text: 'render the listing' }]]))
    const ranked = rankDocs(docs.mini, 'render listing', 400, docs.lengths)
    expect(new Set(ranked.top.map((d) => d.score)).size).toBe(1)
    expect(ranked.top.map((d) => d.id)).toEqual(Array.from({ length: 400 }, (_, i) => `e\u0000s${1_999 - i}\u0000e0`))
  })
})

describe('a long history', () => {
  // Every session holds the words asked; the few that say exactly that are the oldest, one in the middle, and whatever
  // is added after the query first read the index. The ranking passes by whole blocks of documents that cannot reach
  // the best it keeps: those few must still come first, wherever they are, in order.
  const FILLER = 'we should render the listing of every project with its sessions and their titles sorted by name'
  const ANSWER = Array.from({ length: 80 }, (_, i) => `step${i}`).join(' ')
  const sessions: SessionRecord[] = []
  const docs = new SearchDocs(() => {})
  const put = (id: string, text: string): void => {
    const record = {
      id,
      acpSessionId: id,
      agentId: 'agent-a',
      projectId: 'p0',
      cwd: '/',
      title: `Session ${id}`,
      titleSource: 'prompt' as const,
      createdAt: at,
      updatedAt: at
    }
    if (!docs.sessions.has(id)) sessions.push(record)
    docs.putSession(record)
    // Each question has a long answer without the words (80 of them): the questions are shorter than the average text.
    docs.indexEntries(
      id,
      new Map([
        ['e0', { kind: 'user', text }],
        ['e1', { kind: 'assistant', text: ANSWER }]
      ])
    )
  }
  const firstRows = (n: number): string[] =>
    queryDocs(docs, 'render listing', 40, { projects: () => [], sessions: () => sessions }, null)
      .entries.slice(0, n)
      .map((hit) => hit.sessionId!)
  const newest = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => `s${from - i}`)

  it('shows the best matches first even when they are the oldest, then the rest newest first', () => {
    for (let s = 0; s < 3_000; s++) {
      const text = s === 0 || s === 1 || s === 1_700 ? 'render listing' : s === 10 ? 'render listing, then sort it by name' : FILLER
      put(`s${s}`, text)
    }
    // Equal scores: the session indexed last first.
    expect(firstRows(40)).toEqual(['s1700', 's1', 's0', 's10', ...newest(2_999, 36).filter((id) => id !== 's1700')])
  })

  it('follows what is added and replaced after a query, and thousands more sessions after that', () => {
    put('late', 'render listing')
    put('s1700', FILLER)
    // A document indexed again is the newest of its score.
    expect(firstRows(6)).toEqual(['late', 's1', 's0', 's10', 's1700', 's2999'])
    for (let s = 3_000; s < 8_000; s++) put(`s${s}`, FILLER)
    put('s1', 'render listing, then sort it by name')
    expect(firstRows(6)).toEqual(['late', 's0', 's1', 's10', 's7999', 's7998'])
  })
})

describe('titles that hold one word of the query each', () => {
  // The bench's shape: half the titles hold "render", the other half "listing", none both, and every session's
  // question holds both. The titles' postings are many (a walk of arrays kept between queries) but sparse, and a block's
  // documents that hold every word are its questions only: what the ranking keeps must still be what MiniSearch ranks,
  // before and after sessions are added.
  const sessions: SessionRecord[] = []
  const docs = new SearchDocs(() => {})
  const put = (s: number, title: string, question: string): void => {
    const record = {
      id: `s${s}`,
      acpSessionId: `a${s}`,
      agentId: 'agent-a',
      projectId: 'p0',
      cwd: '/',
      title,
      titleSource: 'prompt' as const,
      createdAt: at,
      updatedAt: at
    }
    if (!docs.sessions.has(record.id)) sessions.push(record)
    docs.putSession(record)
    docs.indexEntries(
      record.id,
      new Map([
        ['e0', { kind: 'user', text: question }],
        ['e1', { kind: 'assistant', text: 'an answer of other words, long enough to be longer than the question' }]
      ])
    )
  }
  const title = (s: number): string => (s % 2 === 0 ? `Session ${s}: render` : `Session ${s}: listing`)
  const expectAsMiniSearch = (q: string): void => {
    const live = sessions.filter((s) => docs.sessions.has(s.id))
    const want = referenceHits(docs, q, live, [], 400)
    const got = queryDocs(docs, q, 400, { projects: () => [], sessions: () => live }, null)
    const truth = new Map(referenceHits(docs, q, live, [], Infinity).map((h) => [key(h), h.score]))
    const groupsWanted = groups(want, 400)
    expectSameHits(got.entries, groupsWanted.entries, truth, `${q}: entries`)
    expectSameHits(got.sessions, groupsWanted.sessions, truth, `${q}: sessions`)
  }

  it('ranks as MiniSearch does, and again once sessions were added since', () => {
    for (let s = 0; s < 8_400; s++) put(s, title(s), s % 1_000 === 7 ? 'render listing' : 'please render the listing of the projects')
    for (const q of ['render listing', 'listing render', 'render']) expectAsMiniSearch(q)
    // Added since the last query (the kept walks are of fewer postings than now): more titles of one word, one of both,
    // questions that rank first. (A replaced or removed document's postings stay until a vacuum, and MiniSearch's own
    // search, the reference, drops them as it meets them: 'follows the index as it changes…' holds those to it.)
    for (let s = 8_400; s < 8_700; s++) put(s, s === 8_401 ? 'render listing' : title(s), s % 50 === 3 ? 'render listing' : 'render the listing')
    for (const q of ['render listing', 'listing render', 'render']) expectAsMiniSearch(q)
  })
})
