/**
 * Each document's length in each field, in typed arrays indexed by
 * MiniSearch's short id, for the ranking (rank.ts) to read at every posting.
 * MiniSearch keeps them in a Map of arrays (`_fieldLength`): a lookup there is
 * a hash of the id and two objects far apart in memory, ~200 ns a posting
 * once the index no longer fits the caches (at 100,000 sessions, 400,000
 * documents: ~90 ms of a query's 100, for two words held by 200,000 entries
 * each). Here it is one read of a contiguous array.
 *
 * Kept in step with the index it was taken from, a change at a time: the
 * documents added since (short ids only grow), and those discarded since, which
 * the owner notes before it discards them (`noteDiscard`: the short id is
 * gone from MiniSearch after). If the count of live documents then differs
 * from MiniSearch's, or the index is another one (read from the file, reset),
 * they are read again from `_fieldLength` whole (a few ms at 400,000
 * documents). A document not live (discarded, removed, or never added) reads
 * NaN in every field.
 */

/** MiniSearch's protected fields read here (minisearch 7). */
interface LengthsView {
  _fieldLength: Map<number, number[]>
  _idToShortId: Map<string, number>
  _fieldIds: Record<string, number>
  _nextId: number
  _documentCount: number
}

/** Discarded documents noted between two queries, at most (then the lengths are read whole at the next). */
const MAX_NOTED = 50_000

export class DocLengths {
  /** By field id, by short id: the document's length in that field (NaN: not live). */
  private fields: Float32Array[] = []
  private index: LengthsView | null = null
  /** The short ids below this have been taken in. */
  private nextId = 0
  private live = 0
  /** Short ids discarded since the last `of`. */
  private discarded: number[] = []
  /** Counts up whenever a document's length is taken away (discarded) or the lengths are read whole: counts kept of live documents are stale then. */
  changes = 0

  /** A document of `index` is about to be discarded (call before MiniSearch's `discard`, which forgets its short id). */
  noteDiscard(index: object, docId: string): void {
    const view = index as LengthsView
    if (view !== this.index) return
    const shortId = view._idToShortId.get(docId)
    if (shortId !== undefined) this.discarded.push(shortId)
    // Hours of streaming with no query: rather than keep every id, the next query reads the lengths whole.
    if (this.discarded.length > MAX_NOTED) this.forget()
  }

  private forget(): void {
    this.index = null
    this.fields = []
    this.discarded = []
  }

  /** The lengths by field id, in step with `index` (a MiniSearch). Valid until the index next changes. */
  of(index: object): readonly Float32Array[] {
    const view = index as LengthsView
    if (view !== this.index) return this.readWhole(view)
    const fieldLength = view._fieldLength
    if (view._nextId > this.fields[0].length) this.grow(view._nextId)
    for (let id = this.nextId; id < view._nextId; id++) {
      const lengths = fieldLength.get(id)
      for (let f = 0; f < this.fields.length; f++) this.fields[f][id] = lengths ? (lengths[f] ?? 0) : NaN
      if (lengths) this.live++
    }
    this.nextId = view._nextId
    for (const id of this.discarded) {
      if (id >= this.nextId || Number.isNaN(this.fields[0][id])) continue
      for (const field of this.fields) field[id] = NaN
      this.live--
      this.changes++
    }
    this.discarded = []
    // Something changed the index that was not noted: read it whole.
    if (this.live !== view._documentCount) return this.readWhole(view)
    return this.fields
  }

  private readWhole(view: LengthsView): readonly Float32Array[] {
    const count = Object.keys(view._fieldIds).length
    const capacity = Math.max(1024, view._nextId * 1.5)
    this.fields = Array.from({ length: count }, () => new Float32Array(capacity).fill(NaN))
    this.live = 0
    view._fieldLength.forEach((lengths, id) => {
      for (let f = 0; f < count; f++) this.fields[f][id] = lengths[f] ?? 0
      this.live++
    })
    this.index = view
    this.nextId = view._nextId
    this.discarded = []
    this.changes++
    return this.fields
  }

  private grow(size: number): void {
    this.fields = this.fields.map((field) => {
      const grown = new Float32Array(Math.ceil(size * 1.5)).fill(NaN)
      grown.set(field)
      return grown
    })
  }
}
