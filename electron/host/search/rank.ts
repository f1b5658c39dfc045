import type MiniSearch from 'minisearch'
import { tokenize } from './documents'
import type { IndexedDoc } from './index-file'
import { DocLengths } from './doc-lengths'
import { BLOCK_SHIFT, boundsOf, isDense, liveCount, maskBit, maskWord, walkOf, type Bounds } from './block-bounds'

/**
 * The best `k` documents for a query, scored exactly as MiniSearch's `search`
 * scores them with the options query.ts gives it (every word required, the
 * last also as a prefix, a typo allowed in words of five letters or more,
 * titles boosted 3×, BM25 with MiniSearch's parameters), without what makes
 * `search` cost a microsecond or more per matching document (an object, an
 * array and a Map entry for every posting, a result for every match, all
 * sorted: at 10,000 sessions where every transcript holds the query, 50–70 ms
 * of the Host), and without scoring what cannot be kept.
 *
 * A word's sparse postings are walked (as arrays kept between queries when
 * there are thousands: block-bounds.ts `walkOf`) and summed per document in
 * typed arrays (the same from query to query, only what was summed zeroed
 * after), marking per block of 64 short ids which documents they hold. A
 * word's dense postings (block-bounds.ts: one for every 4 short ids or more,
 * the words most documents hold) are not walked: per block they have a bound
 * (the highest count, the shortest field) and a mask of the documents that
 * hold the word. The blocks are then visited newest first; a block's
 * candidates are its documents with a posting of every word (the masks
 * ANDed); a block with none, or whose candidates' bound cannot beat the worst
 * of the best `k` kept so far, is passed by, and the candidates of the others
 * are scored one by one (a dense posting read with the Map's `get`). The bound
 * is per candidate (its sparse sums with the dense words' bounds): the best
 * sum of each word over the block, added up, came from different documents
 * where titles hold one word of the query each, and passed no block by
 * (the search bench at 100,000 sessions: ~4 of a query's ~9 ms). Of equal scores the document indexed last ranks
 * first, as before, so a block that can at best equal the worst kept is passed
 * by too: at 100,000 sessions of the same turn, where 200,000 entries score
 * the same, a query scores the newest few hundred and sweeps the rest by
 * block (~6,000 blocks) instead of summing 400,000 postings. A bound is summed
 * in the order a document's score is, each part at least the document's, so
 * with floating-point addition monotonic a bound is never below a score it
 * stands for, and the documents kept are those a walk of every posting keeps
 * (test/unit/search-rank.test.ts, "a long history", fails on a stop too early;
 * a word's sparse postings summed apart from the words before may differ in
 * the last bit from the walk's running sum, as MiniSearch's own order does).
 * Each posting's document length is read from typed arrays kept beside the
 * index (doc-lengths.ts), not from MiniSearch's Map of arrays (~200 ns a
 * posting once the index outgrew the caches).
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

/** A word's postings in a field, dense enough to be swept by block (block-bounds.ts), and what a posting there is worth. */
interface Swept {
  freqs: Map<number, number>
  bounds: Bounds
  factor: number
  lengths: Float32Array
  avg: number
}

/**
 * One word of the query: its sparse postings summed per document (`sums`; which documents in `marks`, two words a
 * block as a dense word's mask), its dense ones swept.
 */
interface Term {
  sums: Float64Array
  marks: Uint32Array
  touched: number[]
  swept: Swept[]
}

/** `lengths`: the documents' field lengths kept beside the index (SearchDocs); without it they are read whole for this query. */
export function rankDocs(mini: MiniSearch<IndexedDoc>, phrase: string, k: number, lengths = new DocLengths()): RankedQuery {
  const index = mini as unknown as Internals
  const words = queryTerms(phrase)
  const matched = new Set<string>()
  if (words.length === 0 || k <= 0) return { top: [], matched }
  const nextId = index._nextId
  const blocks = (nextId >> BLOCK_SHIFT) + 1
  const documentCount = index._documentCount
  const byField = lengths.of(mini)
  const fields = FIELD_BOOSTS.map(([field, boost]) => {
    const id = index._fieldIds[field]
    return { id, boost, avg: index._avgFieldLength[id], lengths: byField[id] }
  })
  const last = words.length - 1
  const terms: Term[] = []
  for (let i = 0; i <= last; i++) {
    const term: Term = { sums: scratch(i, nextId), marks: new Uint32Array(blocks * 2), touched: [], swept: [] }
    terms.push(term)
    for (const { word, postings, weight } of derivedTerms(index._index, words[i], i === last)) {
      matched.add(word)
      for (const field of fields) {
        const freqs = postings.get(field.id)
        if (!freqs) continue
        const fieldLengths = field.lengths
        const live = index._dirtCount > 0 ? liveCount(freqs, fieldLengths, nextId, lengths.changes) : freqs.size
        const idf = Math.log(1 + (documentCount - live + 0.5) / (live + 0.5))
        const factor = weight * field.boost * idf
        const avg = field.avg
        if (isDense(freqs, nextId)) {
          term.swept.push({ freqs, bounds: boundsOf(freqs, fieldLengths, nextId), factor, lengths: fieldLengths, avg })
          continue
        }
        const { sums, marks, touched } = term
        const take = (tf: number, doc: number): void => {
          const length = fieldLengths[doc]
          // Discarded (its postings wait for the vacuum): NaN.
          if (length !== length) return
          if (sums[doc] === 0) touched.push(doc)
          sums[doc] += worth(factor, tf, length, avg)
          marks[maskWord(doc)] |= maskBit(doc)
        }
        const walk = walkOf(freqs, nextId)
        if (walk) for (let at = 0; at < walk.docs.length; at++) take(walk.tfs[at], walk.docs[at])
        else freqs.forEach(take)
      }
    }
  }
  const kept = new Best(k)
  const dense = terms.some((term) => term.swept.length > 0)
  if (!dense) {
    // No word dense: the matches are what the last word's walk touched that every word's did (newest first, as below).
    const matches = terms[last].touched.filter((doc) => terms.every((term) => term.sums[doc] > 0)).sort((a, b) => b - a)
    for (const doc of matches) kept.offer(doc, scoreOf(terms, doc, doc >> BLOCK_SHIFT))
  }
  // Newest first: of equal scores the document indexed last ranks first, so a block that can at best equal the worst kept is passed by.
  for (let block = dense ? blocks - 1 : -1; block >= 0; block--) {
    if (!candidatesOf(terms, block)) {
      // Documents added since a word's bounds were read: each one scored.
      for (let doc = Math.min(nextId, (block + 1) << BLOCK_SHIFT) - 1; doc >= block << BLOCK_SHIFT; doc--) {
        const score = scoreOf(terms, doc, block)
        if (score === score) kept.offer(doc, score)
      }
      continue
    }
    const high = candidates[1]
    const low = candidates[0]
    if ((low | high) === 0 || (kept.full() && boundOf(terms, block, low, high) <= kept.worst())) continue
    // The candidates only, newest first: the high word's bits, then the low word's, each from its top bit down.
    for (let half = 1; half >= 0; half--) {
      let bits = half ? high : low
      while (bits !== 0) {
        const bit = 31 - Math.clz32(bits)
        bits = (bits ^ (1 << bit)) >>> 0
        const score = scoreOf(terms, (block << BLOCK_SHIFT) | (half << 5) | bit, block)
        if (score === score) kept.offer((block << BLOCK_SHIFT) | (half << 5) | bit, score)
      }
    }
  }
  // The sums are kept for the next query (only what was summed zeroed); the marks are this query's own.
  for (const term of terms) for (const doc of term.touched) term.sums[doc] = 0
  // MiniSearch multiplies by how many distinct words matched: with every word required, the same for all.
  const quality = new Set(words).size
  const top = kept.sorted().map(([doc, score]) => ({ id: index._documentIds.get(doc) ?? '', score: score * quality }))
  return { top, matched }
}

/** What a posting adds to its document's score (BM25 as MiniSearch computes it): more the more often, less the longer the field. */
function worth(factor: number, tf: number, length: number, avg: number): number {
  const norm = BM25.k * (1 - BM25.b + (BM25.b * length) / avg)
  return factor * (BM25.d + (tf * (BM25.k + 1)) / (tf + norm))
}

/** A block's documents that hold every word of the query (a posting of each, sparse or dense), as two words of bits. */
const candidates = new Uint32Array(2)

/**
 * Sets `candidates` to the block's documents with a posting for every word (each word's sparse marks and its dense
 * words' masks); false if a word's bounds do not reach the block (documents added since: any of them may match).
 */
function candidatesOf(terms: Term[], block: number): boolean {
  let low = -1
  let high = -1
  for (const term of terms) {
    let termLow = term.marks[block << 1]
    let termHigh = term.marks[(block << 1) | 1]
    for (const { bounds } of term.swept) {
      if (block >= bounds.blocks) return false
      termLow |= bounds.mask[block << 1]
      termHigh |= bounds.mask[(block << 1) | 1]
    }
    low &= termLow
    high &= termHigh
  }
  candidates[0] = low
  candidates[1] = high
  return true
}

/**
 * The most a candidate of the block (`low`, `high`: candidatesOf's bits) can score: per candidate, its sparse sums
 * with each dense word's bound for the block, summed in the order `scoreOf` sums (floating-point addition being
 * monotonic, each part at least the document's makes the sum at least its score). The bound of the candidates with
 * no sparse posting is summed once; a candidate with one adds its own sums (a word's maxima of different documents,
 * added up, would stand for none of them: a session's title holding one word and another's the other).
 */
function boundOf(terms: Term[], block: number, low: number, high: number): number {
  let sparseLow = 0
  let sparseHigh = 0
  for (const term of terms) {
    sparseLow |= term.marks[block << 1]
    sparseHigh |= term.marks[(block << 1) | 1]
  }
  sparseLow &= low
  sparseHigh &= high
  let bound = (low & ~sparseLow) | (high & ~sparseHigh) ? boundWith(terms, block, -1) : -Infinity
  for (let half = 1; half >= 0; half--) {
    let bits = half ? sparseHigh : sparseLow
    while (bits !== 0) {
      const bit = 31 - Math.clz32(bits)
      bits = (bits ^ (1 << bit)) >>> 0
      bound = Math.max(bound, boundWith(terms, block, (block << BLOCK_SHIFT) | (half << 5) | bit))
    }
  }
  return bound
}

/** The most `doc` can score (-1: a document with no sparse posting), its sparse sums and the dense words' bounds for the block. */
function boundWith(terms: Term[], block: number, doc: number): number {
  let bound = 0
  for (const term of terms) {
    if (doc >= 0) bound += term.sums[doc]
    for (const { bounds, factor, avg } of term.swept) {
      const tf = bounds.maxTf[block]
      if (tf !== 0) bound += worth(factor, tf, bounds.minLength[block], avg)
    }
  }
  return bound
}

/** A document's score, summed word by word (its sparse postings' sum, then each dense posting): NaN if it misses a word. */
function scoreOf(terms: Term[], doc: number, block: number): number {
  let score = 0
  for (const term of terms) {
    const sparse = term.sums[doc]
    let any = sparse > 0
    score += sparse
    for (const { freqs, bounds, factor, lengths, avg } of term.swept) {
      if (block < bounds.blocks && bounds.maxTf[block] === 0) continue
      const tf = freqs.get(doc)
      const length = lengths[doc]
      if (tf === undefined || length !== length) continue
      any = true
      score += worth(factor, tf, length, avg)
    }
    if (!any) return NaN
  }
  return score
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

let sums: Float64Array[] = []
/** The words of a query whose arrays are kept from query to query; a longer query's others are its own (a pasted sentence of 30 words would keep 30 arrays the index's size for good). */
const KEPT_SUMS = 4

/**
 * Per word of the query, a sum per document (by short id), zeroed: the same arrays from query to query (a query is
 * synchronous; each zeroes what it summed into), grown as the index grows, so that a query neither allocates
 * megabytes for the GC nor zeroes the whole index's worth.
 */
function scratch(term: number, size: number): Float64Array {
  if (term >= KEPT_SUMS) return new Float64Array(size)
  if (sums.length <= term || sums[term].length < size) {
    if (sums.length <= term) sums = [...sums, ...Array.from({ length: term + 1 - sums.length }, () => new Float64Array(0))]
    sums[term] = new Float64Array(Math.ceil(size * 1.25))
  }
  return sums[term]
}

/** The `k` best documents offered, in a min-heap whose root is the worst kept; offered newest first, so an equal score does not enter. */
class Best {
  private readonly docs: number[] = []
  private readonly scores: number[] = []
  constructor(private readonly k: number) {}

  full(): boolean {
    return this.docs.length === this.k
  }

  worst(): number {
    return this.scores[0]
  }

  offer(doc: number, score: number): void {
    if (!this.full()) {
      this.docs.push(doc)
      this.scores.push(score)
      this.up(this.docs.length - 1)
    } else if (score > this.scores[0]) {
      this.docs[0] = doc
      this.scores[0] = score
      this.down(0)
    }
  }

  /** Best first; of equal scores, the one indexed last first. */
  sorted(): [doc: number, score: number][] {
    const pairs = this.docs.map((doc, i): [number, number] => [doc, this.scores[i]])
    return pairs.sort((a, b) => b[1] - a[1] || b[0] - a[0])
  }

  /** Whether the kept at `a` is worse than the one at `b` (lower score; of equal ones, indexed earlier). */
  private worse(a: number, b: number): boolean {
    const { scores, docs } = this
    return scores[a] < scores[b] || (scores[a] === scores[b] && docs[a] < docs[b])
  }

  private swap(a: number, b: number): void {
    const { scores, docs } = this
    ;[docs[a], docs[b]] = [docs[b], docs[a]]
    ;[scores[a], scores[b]] = [scores[b], scores[a]]
  }

  private up(at: number): void {
    while (at > 0) {
      const parent = (at - 1) >> 1
      if (!this.worse(at, parent)) return
      this.swap(at, parent)
      at = parent
    }
  }

  private down(at: number): void {
    const size = this.docs.length
    for (;;) {
      const left = 2 * at + 1
      let worst = at
      if (left < size && this.worse(left, worst)) worst = left
      if (left + 1 < size && this.worse(left + 1, worst)) worst = left + 1
      if (worst === at) return
      this.swap(at, worst)
      at = worst
    }
  }
}
