import type MiniSearch from 'minisearch'
import { tokenize } from './documents'
import type { IndexedDoc } from './index-file'
import { DocLengths } from './doc-lengths'

/**
 * The best `k` documents for a query, scored exactly as MiniSearch's `search`
 * scores them with the options query.ts gives it (every word required, the
 * last also as a prefix, a typo allowed in words of five letters or more,
 * titles boosted 3×, BM25 with MiniSearch's parameters), without what makes
 * `search` cost a microsecond or more per matching document: it builds an
 * object, an array and a Map entry for every posting of every word, then a
 * result object for every match and sorts them all (at 10,000 sessions where
 * every transcript holds the query, 20,000 matches: 50–70 ms of the Host). Here
 * the scores are summed in typed arrays over MiniSearch's postings and the best
 * `k` kept in a heap, so a query costs ~10–20 nanoseconds a posting (at 100,000
 * sessions, two words held by 200,000 entries each: 5–10 ms) and allocates for
 * the `k` kept only. Each posting's document length is read from typed arrays
 * kept beside the index (doc-lengths.ts), not from MiniSearch's Map of arrays,
 * a lookup there cost ~200 ns a posting once the index outgrew the caches (90
 * of a query's 100 ms at 100,000 sessions); the arrays a query sums into are
 * the same from query to query; of equal scores, the documents indexed last
 * are met first, so the heap is not rebuilt at every one of them.
 *
 * It reads MiniSearch's index through its `protected` fields (the API MiniSearch
 * offers subclasses, here a view of them), and never changes it: MiniSearch's
 * own `search` deletes postings of discarded documents as it meets them, which
 * a query during a vacuum must not do (see search-index.ts `vacuumSoon`).
 * test/unit/search-rank.test.ts holds the scores and their order to
 * MiniSearch's `search` over a varied corpus.
 */

export interface Ranked {
  /** The document's id (`p␀…`, `s␀…`, `e␀…␀…`). */
  id: string
  score: number
}

export interface RankedQuery {
  /** The best documents, best first (equal scores: the one indexed last first). */
  top: Ranked[]
  /** Every word of the index the query matched (its words, what the last one prefixes, what is a typo away): a hit's marks are its words among these. */
  matched: Set<string>
  /** How many documents matched every word. */
  total: number
}

/** What MiniSearch keeps for a word: per field, per document (short id), how often it occurs. */
type Postings = Map<number, Map<number, number>>

/** The part of a SearchableMap (MiniSearch's radix tree of words) a query reads. */
interface Words {
  get(term: string): Postings | undefined
  atPrefix(prefix: string): Iterable<[string, Postings]>
  fuzzyGet(term: string, maxEditDistance: number): Map<string, [Postings, number]>
}

/** MiniSearch's protected fields (minisearch 7), as a subclass sees them. */
interface Internals {
  _index: Words
  _documentCount: number
  _documentIds: Map<number, string>
  _fieldIds: Record<string, number>
  _avgFieldLength: number[]
  _nextId: number
  _dirtCount: number
}

/** MiniSearch's defaults for what query.ts does not set. */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 }
const PREFIX_WEIGHT = 0.375
const FUZZY_WEIGHT = 0.45
const MAX_FUZZY = 6
/** The fields and their boosts, as query.ts asks MiniSearch. */
const FIELD_BOOSTS: [field: keyof IndexedDoc, boost: number][] = [
  ['title', 3],
  ['text', 1]
]

/** The words of a query as MiniSearch takes them (its tokenizer, lower case). */
export function queryTerms(phrase: string): string[] {
  return tokenize(phrase)
    .map((term) => term.toLowerCase())
    .filter(Boolean)
}

/** A word of the query and what of the index it matches, with the weight MiniSearch gives each. */
interface Derived {
  word: string
  postings: Postings
  weight: number
}

/** `lengths`: the documents' field lengths kept beside the index (SearchDocs); without it they are read whole for this query. */
export function rankDocs(mini: MiniSearch<IndexedDoc>, phrase: string, k: number, lengths = new DocLengths()): RankedQuery {
  const index = mini as unknown as Internals
  const terms = queryTerms(phrase)
  const matched = new Set<string>()
  if (terms.length === 0) return { top: [], matched, total: 0 }
  const { scores, words } = scratch(index._nextId)
  const candidates: number[] = []
  const checkLive = index._dirtCount > 0
  const documentCount = index._documentCount
  const byField = lengths.of(mini)
  const fields = FIELD_BOOSTS.map(([field, boost]) => {
    const id = index._fieldIds[field]
    return { id, boost, avg: index._avgFieldLength[id], lengths: byField[id] }
  })
  const last = terms.length - 1
  for (let i = 0; i <= last; i++) {
    for (const { word, postings, weight } of derivedTerms(index._index, terms[i], i === last)) {
      matched.add(word)
      for (const field of fields) {
        const freqs = postings.get(field.id)
        if (!freqs) continue
        const fieldLengths = field.lengths
        const live = checkLive ? countLive(freqs, fieldLengths) : freqs.size
        const idf = Math.log(1 + (documentCount - live + 0.5) / (live + 0.5))
        const factor = weight * field.boost * idf
        const avg = field.avg
        freqs.forEach((tf, doc) => {
          const seen = words[doc]
          // A document that missed an earlier word is out.
          if (seen < i) return
          const length = fieldLengths[doc]
          // Discarded (its postings wait for the vacuum): NaN.
          if (length !== length) return
          const norm = BM25.k * (1 - BM25.b + (BM25.b * length) / avg)
          scores[doc] += factor * (BM25.d + (tf * (BM25.k + 1)) / (tf + norm))
          if (seen === i) {
            words[doc] = i + 1
            if (i === last) candidates.push(doc)
          }
        })
      }
    }
  }
  // MiniSearch multiplies by how many distinct words matched: with every word required, the same for all.
  const quality = new Set(terms).size
  const top = bestOf(candidates, scores, k).map((doc) => ({ id: index._documentIds.get(doc) ?? '', score: scores[doc] * quality }))
  return { top, matched, total: candidates.length }
}

/**
 * The words of the index a query word matches, as MiniSearch's
 * `executeQuerySpec` finds them: the word itself, the words it is a prefix of
 * (the last word only), the words one typo away (words of 5 letters or more),
 * each with its weight.
 */
function derivedTerms(words: Words, term: string, prefix: boolean): Derived[] {
  const out: Derived[] = []
  const exact = words.get(term)
  if (exact) out.push({ word: term, postings: exact, weight: 1 })
  const maxDistance = term.length >= 5 ? Math.min(MAX_FUZZY, Math.round(term.length * 0.2)) : 0
  const fuzzy = maxDistance ? words.fuzzyGet(term, maxDistance) : null
  if (prefix) {
    for (const [word, postings] of words.atPrefix(term)) {
      const distance = word.length - term.length
      if (!distance) continue
      fuzzy?.delete(word)
      out.push({ word, postings, weight: (PREFIX_WEIGHT * word.length) / (word.length + 0.3 * distance) })
    }
  }
  if (fuzzy) {
    for (const [word, [postings, distance]] of fuzzy) {
      if (!distance) continue
      out.push({ word, postings, weight: (FUZZY_WEIGHT * word.length) / (word.length + distance) })
    }
  }
  return out
}

function countLive(freqs: Map<number, number>, lengths: Float32Array): number {
  let live = 0
  for (const doc of freqs.keys()) if (!Number.isNaN(lengths[doc])) live++
  return live
}

let scratchScores = new Float64Array(0)
let scratchWords = new Uint16Array(0)

/**
 * A score and a count of words matched per document (by short id), zeroed: the same arrays from query to query
 * (a query is synchronous), grown as the index grows, so that a query does not allocate megabytes for the GC.
 */
function scratch(size: number): { scores: Float64Array; words: Uint16Array } {
  if (scratchScores.length < size) {
    scratchScores = new Float64Array(Math.ceil(size * 1.25))
    scratchWords = new Uint16Array(scratchScores.length)
  } else {
    scratchScores.fill(0, 0, size)
    scratchWords.fill(0, 0, size)
  }
  return { scores: scratchScores, words: scratchWords }
}

/** The `k` best of `docs` by score, best first; of equal scores, the higher short id (indexed later) first. */
function bestOf(docs: number[], scores: Float64Array, k: number): number[] {
  const better = (a: number, b: number): boolean => scores[a] > scores[b] || (scores[a] === scores[b] && a > b)
  if (docs.length <= k) return docs.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0))
  // A min-heap of the best k so far: its root is the worst kept, which most documents do not beat.
  // Documents come in the order they were indexed, mostly: the last first, so of equal scores the first kept stay.
  const heap = docs.slice(docs.length - k)
  const down = (at: number): void => {
    for (;;) {
      const left = 2 * at + 1
      const right = left + 1
      let worst = at
      if (left < k && better(heap[worst], heap[left])) worst = left
      if (right < k && better(heap[worst], heap[right])) worst = right
      if (worst === at) return
      ;[heap[at], heap[worst]] = [heap[worst], heap[at]]
      at = worst
    }
  }
  for (let i = (k >> 1) - 1; i >= 0; i--) down(i)
  for (let i = docs.length - k - 1; i >= 0; i--) {
    if (!better(docs[i], heap[0])) continue
    heap[0] = docs[i]
    down(0)
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0))
}
