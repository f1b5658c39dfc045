/**
 * What lets a query stop scoring what cannot reach the best it keeps (rank.ts):
 * for a word's postings in a field (one of MiniSearch's Maps, short id → how
 * often), per block of 64 short ids, the highest count and the shortest field
 * among the block's live documents, and which of them hold the word (a mask of
 * 64 bits). A document's score for the word cannot exceed the BM25 score of
 * that count at that length, so a block whose bound is below the worst kept is
 * skipped unread; a document of the block with no bit for one of the query's
 * words is not read at all. Short ids only grow and a
 * document's postings and length never change under its short id (a document
 * indexed again gets a new one), so the bounds of the blocks taken in stay
 * true as the index changes: a document discarded or removed only lowers what
 * its block could reach (its bit stays, and the document is read and passed by). The blocks from `upTo` on (documents added since)
 * have no bound and are scored; once there are more than `MAX_OPEN` of those
 * ids the bounds are read again (a walk of the postings).
 *
 * Kept only for a word's postings that are dense (at least one for every 4
 * short ids: the bounds then cost at most a byte a posting, against the
 * ~40 of MiniSearch's Map entry, and a block scored document by document, a
 * Map lookup each, costs at most 4 times its postings' walk); sparser postings
 * are walked whole, as before (at one for every 6 short ids, scoring whole
 * blocks of loose bounds cost 10 times the walk: bench/search-rank-profile.ts
 * `varied`). Held in a WeakMap
 * by the postings' Map: an index read from its file, or a word whose postings
 * MiniSearch made anew, gets its own.
 */

export const BLOCK_SHIFT = 6
/** Documents added since the bounds were read, at most (then they are read again). */
const MAX_OPEN = 4_096
/** Postings below this are walked whole, however large the index. */
const MIN_DENSE = 256

export interface Bounds {
  /** The blocks below this have a bound (`upTo` short ids taken in, in whole blocks). */
  blocks: number
  /** Per block: the highest count of a live document's posting (0: none). */
  maxTf: Uint32Array
  /** Per block: the shortest field among the live documents with a posting. */
  minLength: Float32Array
  /** Per block, two words: which of its 64 documents had a live posting (bit `doc & 31` of word `(doc >> 5) & 1`). */
  mask: Uint32Array
}

interface Kept extends Bounds {
  upTo: number
}

const kept = new WeakMap<Map<number, number>, Kept>()

/** Where a document's bit is in a mask of two words per block (Bounds' `mask`, rank.ts's sparse marks). */
export function maskWord(doc: number): number {
  return ((doc >> BLOCK_SHIFT) << 1) | ((doc >> 5) & 1)
}

export function maskBit(doc: number): number {
  return 1 << (doc & 31)
}

/** Whether a word's postings in a field are dense enough to be swept by block rather than walked (`nextId`: MiniSearch's). */
export function isDense(freqs: Map<number, number>, nextId: number): boolean {
  return freqs.size >= Math.max(MIN_DENSE, nextId >> 2)
}

/** The bounds of `freqs`, read again if too many documents were added since; `lengths`: the field's, by short id (NaN: not live). */
export function boundsOf(freqs: Map<number, number>, lengths: Float32Array, nextId: number): Bounds {
  const known = kept.get(freqs)
  if (known && nextId - known.upTo <= MAX_OPEN) return known
  const blocks = nextId >> BLOCK_SHIFT
  const maxTf = new Uint32Array(blocks)
  const minLength = new Float32Array(blocks).fill(Infinity)
  const mask = new Uint32Array(blocks * 2)
  freqs.forEach((tf, doc) => {
    const block = doc >> BLOCK_SHIFT
    const length = lengths[doc]
    if (block >= blocks || length !== length) return
    if (tf > maxTf[block]) maxTf[block] = tf
    if (length < minLength[block]) minLength[block] = length
    mask[maskWord(doc)] |= maskBit(doc)
  })
  const bounds = { upTo: nextId, blocks, maxTf, minLength, mask }
  kept.set(freqs, bounds)
  return bounds
}

const liveCounts = new WeakMap<Map<number, number>, { size: number; nextId: number; changes: number; live: number }>()

/**
 * How many of `freqs`' documents are live (MiniSearch keeps a discarded document's postings until it is vacuumed),
 * counted again only when the postings, the documents added (`nextId`) or those discarded (`changes`) differ from
 * the last count: a walk of every posting, once per change rather than at every query.
 */
export function liveCount(freqs: Map<number, number>, lengths: Float32Array, nextId: number, changes: number): number {
  const known = liveCounts.get(freqs)
  if (known && known.size === freqs.size && known.nextId === nextId && known.changes === changes) return known.live
  let live = 0
  for (const doc of freqs.keys()) if (lengths[doc] === lengths[doc]) live++
  liveCounts.set(freqs, { size: freqs.size, nextId, changes, live })
  return live
}

/** A word's postings at least this many are kept as arrays to walk (a Map's `forEach` over a large one: ~55 ns a posting). */
const MIN_WALK_KEPT = 4_096

interface Walk {
  size: number
  nextId: number
  docs: Int32Array
  tfs: Uint32Array
}

const walks = new WeakMap<Map<number, number>, Walk>()

/**
 * A word's sparse postings in a field as two arrays in the Map's order (short id, count), for the walk a query makes
 * of them; null below MIN_WALK_KEPT (walked as the Map). Read again whenever they may have changed: a posting is
 * added only with a new short id (`nextId` grows) and removed only by a vacuum (their count falls), and a document's
 * postings never change under its short id.
 */
export function walkOf(freqs: Map<number, number>, nextId: number): Walk | null {
  if (freqs.size < MIN_WALK_KEPT) return null
  const known = walks.get(freqs)
  if (known && known.size === freqs.size && known.nextId === nextId) return known
  const walk = { size: freqs.size, nextId, docs: new Int32Array(freqs.size), tfs: new Uint32Array(freqs.size) }
  let at = 0
  freqs.forEach((tf, doc) => {
    walk.docs[at] = doc
    walk.tfs[at++] = tf
  })
  walks.set(freqs, walk)
  return walk
}
