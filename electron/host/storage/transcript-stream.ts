import { promises as fs, readFileSync } from 'node:fs'
import type { TranscriptRecord } from '../../../shared/transcript'
import { slicer, type Pause } from './slices'
import { outlivesReset, parseLine } from './transcripts'

/**
 * A transcript read from its start a chunk at a time, line by line, so that
 * copying a long one (a fork, a seed) holds a chunk and the records in hand,
 * never the whole file, its lines and all its records at once.
 */

const READ_CHUNK = 1024 * 1024
/**
 * The first read's: most transcripts are a few KB, and a build of the search index or the spend backfill reads
 * thousands of them one after another: a megabyte zeroed for each cost more than reading it (at 100,000
 * transcripts, 100 GB zeroed and as much for the GC to follow). A transcript longer than this goes on in
 * READ_CHUNK reads. The bytes past what a read returned are never looked at, so neither is zeroed.
 */
const FIRST_CHUNK = 64 * 1024

/**
 * The lines of a transcript in order, with their seq (line number); `upTo`:
 * only its first lines. A last line without its newline is given too, as
 * `readTranscript` gives it, marked `torn` (it may still be being written). A
 * missing file has none. Given in slices (slices.ts): what the reader does
 * with a megabyte's lines was one task of 25-90 ms (a 10,000-entry
 * conversation read by the search index's build held a window's open of a
 * conversation that long); between slices the reader waits out `pause` (work
 * in the background gives way to the window's requests). `knownSize`: the
 * file's size by a stat just taken, if the caller has one (`chunksOf`).
 */
export async function* transcriptLines(
  file: string,
  upTo = Infinity,
  pause?: Pause,
  knownSize?: number
): AsyncGenerator<{ seq: number; line: string; torn?: true }> {
  const slice = slicer(pause)
  let pending: Buffer[] = []
  let seq = 0
  for await (const data of chunksOf(file, knownSize)) {
    if (seq >= upTo) return
    let start = 0
    for (let end = data.indexOf(0x0a, 0); end !== -1; end = data.indexOf(0x0a, start)) {
      // Decoded from the chunk in place: no Buffer made for each line.
      const line = pending.length ? Buffer.concat([...pending, data.subarray(start, end)]).toString('utf8') : data.toString('utf8', start, end)
      pending = []
      start = end + 1
      yield { seq, line }
      if (++seq >= upTo) return
      const wait = slice()
      if (wait) await wait
    }
    // Kept apart from the chunk, which the next read fills again.
    if (start < data.length) pending.push(Buffer.from(data.subarray(start)))
  }
  if (pending.length) yield { seq, line: Buffer.concat(pending).toString('utf8'), torn: true }
}

/**
 * A transcript's bytes in chunks, each read once the one before has been taken in (it is filled again); none for a
 * missing file. One known to be at most FIRST_CHUNK long (`knownSize`, from a stat just taken) is read whole in one
 * call: opened, read to its end and closed, each step a hand-off to libuv's threads and back, cost a build of the
 * search index over 100,000 small transcripts ~140 µs each where reading them at once cost 40–90 (30,000 of them read in
 * turn here), and a file of that size is read in well under a slice. Read so, a file that grew meanwhile is read whole.
 */
async function* chunksOf(file: string, knownSize?: number): AsyncGenerator<Buffer> {
  if (knownSize !== undefined && knownSize <= FIRST_CHUNK) {
    let whole: Buffer
    try {
      whole = readFileSync(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    if (whole.length > 0) yield whole
    return
  }
  let handle: fs.FileHandle
  try {
    handle = await fs.open(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  try {
    let chunk = Buffer.allocUnsafe(FIRST_CHUNK)
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) return
      yield chunk.subarray(0, bytesRead)
      // A transcript longer than the first read: the rest in larger reads.
      if (bytesRead === chunk.length && chunk.length < READ_CHUNK) chunk = Buffer.allocUnsafe(READ_CHUNK)
    }
  } finally {
    await handle.close()
  }
}

/** The readable records of a transcript in order (damaged lines skipped), read as `transcriptLines` reads. */
export async function* transcriptRecords(file: string, upTo?: number): AsyncGenerator<TranscriptRecord> {
  for await (const { line } of transcriptLines(file, upTo)) {
    const record = parseLine(line)
    if (record) yield record
  }
}

/**
 * `currentView` of a transcript read in two passes instead of whole: the first
 * finds the last `reset` (only a line that mentions one is parsed), the second
 * gives what a copy of the conversation takes. Seqs order records as their
 * index in the list of records would.
 */
export async function* currentViewOf(file: string, upTo?: number): AsyncGenerator<TranscriptRecord> {
  for await (const { record } of currentViewLinesOf(file, upTo)) yield record
}

/** A record read from a transcript, with its line as written there: a copy writes the line again as it is. */
export interface ReadRecord {
  record: TranscriptRecord
  line: string
}

/** `currentViewOf` with each record's line (one that parsed: a damaged line is skipped, as everywhere). */
export async function* currentViewLinesOf(file: string, upTo?: number): AsyncGenerator<ReadRecord> {
  let lastReset = -1
  for await (const { seq, line } of transcriptLines(file, upTo)) if (isReset(line)) lastReset = seq
  yield* viewLinesAfter(file, lastReset, upTo)
}

/** The line is a `reset` record (only a line that mentions one is parsed). */
export function isReset(line: string): boolean {
  return line.includes('"reset"') && parseLine(line)?.t === 'reset'
}

/**
 * `currentViewLinesOf`'s second pass, for a reader that already knows the seq of the last `reset` before `upTo`
 * (-1: none): one read of the file, not two.
 */
export async function* viewLinesAfter(file: string, lastReset: number, upTo?: number): AsyncGenerator<ReadRecord> {
  for await (const { seq, line } of transcriptLines(file, upTo)) {
    const record = parseLine(line)
    if (record && record.t !== 'header' && (seq > lastReset || outlivesReset(record))) yield { record, line }
  }
}

/** The records of `first`, then `last`. */
export async function* followedBy<T>(first: AsyncIterable<T>, ...last: TranscriptRecord[]): AsyncGenerator<T | TranscriptRecord> {
  yield* first
  yield* last
}
