import { promises as fs } from 'node:fs'
import type { TranscriptRecord } from '../../../shared/transcript'
import { keepLineCount, keptLineCount, type LineCount } from './line-counts'
import { parseLine } from './transcripts'

/**
 * A long transcript read from its end, a page at a time: the tail a window
 * opens with (`readTranscriptTail`) and the page before a cursor
 * (`readTranscriptPage`), read backwards in chunks, so showing it never needs
 * the whole file in memory. Pages begin at the start of a turn where they can.
 */

/** Records read backwards from a point in a transcript, in file order. */
export interface TranscriptPage {
  records: TranscriptRecord[]
  /** seq (line number) of the first line read; 0 when the page reaches the start. */
  firstSeq: number
  /** Byte offset of that line: with firstSeq, the cursor for the page before this one. */
  firstOffset: number
  /** Lines in the page that could not be read (torn or damaged). */
  skippedLines: number
}

export interface TranscriptTail extends TranscriptPage {
  nextSeq: number
  endsClean: boolean
}

export interface PageOptions {
  /** Records wanted at least (fewer only when the start of the file or maxBytes is reached first). */
  limit: number
  /**
   * Stop after about this many bytes even if fewer records were read (a line
   * is never cut: one huge line is returned whole).
   */
  maxBytes?: number
}

/** Reading backwards starts with small chunks (a page is often near the end) and doubles them up to the largest. */
const FIRST_READ_CHUNK = 64 * 1024
const LARGEST_READ_CHUNK = 1024 * 1024
const DEFAULT_PAGE_BYTES = 1024 * 1024

/**
 * Records at the start of a turn: a page begins at one where it can, so the
 * first thing shown is a whole turn rather than the middle of an answer.
 */
function startsTurn(record: TranscriptRecord | null): boolean {
  return record !== null && (record.t === 'prompt' || record.t === 'reset' || record.t === 'header')
}

/**
 * The last records of a transcript (at least `limit`, back to the start of a
 * turn), without reading the rest of it into memory. `nextSeq` needs the
 * number of lines, which is counted in chunks and remembered per file, so a
 * transcript that grew is only counted from where it was.
 */
export async function readTranscriptTail(file: string, options: PageOptions): Promise<TranscriptTail> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { records: [], firstSeq: 0, firstOffset: 0, skippedLines: 0, nextSeq: 0, endsClean: true }
    }
    throw error
  }
  try {
    const size = (await handle.stat()).size
    if (size === 0) return { records: [], firstSeq: 0, firstOffset: 0, skippedLines: 0, nextSeq: 0, endsClean: true }
    const newlines = await countNewlines(file, handle, size)
    const last = Buffer.alloc(1)
    await handle.read(last, 0, 1, size - 1)
    const endsClean = last[0] === 0x0a
    const nextSeq = newlines + (endsClean ? 0 : 1)
    // A torn last line is a line of its own (skipped), ending at the end of the file.
    const page = await readBackwards(handle, endsClean ? size - 1 : size, nextSeq, options)
    return { ...page, nextSeq, endsClean }
  } finally {
    await handle.close()
  }
}

/**
 * The records before a cursor from an earlier page (`before` = its firstSeq,
 * `offset` = its firstOffset). Transcripts only grow, so a cursor stays valid;
 * one that does not point at the start of a line is refused.
 */
export async function readTranscriptPage(file: string, before: number, offset: number, options: PageOptions): Promise<TranscriptPage> {
  if (before === 0 || offset === 0) return { records: [], firstSeq: 0, firstOffset: 0, skippedLines: 0 }
  const handle = await fs.open(file, 'r')
  try {
    const size = (await handle.stat()).size
    const previous = Buffer.alloc(1)
    if (offset > size || (await handle.read(previous, 0, 1, offset - 1)).bytesRead !== 1 || previous[0] !== 0x0a) {
      throw new Error('That place in the transcript no longer exists; open the conversation again')
    }
    return await readBackwards(handle, offset - 1, before, options)
  } finally {
    await handle.close()
  }
}

/**
 * Reads lines backwards from `lineEnd` (the exclusive end of the content of
 * line `endSeq - 1`, i.e. the offset of its newline) in fixed-size chunks.
 */
async function readBackwards(handle: fs.FileHandle, lineEnd: number, endSeq: number, options: PageOptions): Promise<TranscriptPage> {
  const maxBytes = options.maxBytes ?? DEFAULT_PAGE_BYTES
  const found: (TranscriptRecord | null)[] = []
  let seq = endSeq
  let firstOffset = lineEnd + 1
  let pos = lineEnd
  /** Pieces of the line being assembled, last piece first. */
  let parts: Buffer[] = []
  const enough = (record: TranscriptRecord | null): boolean => {
    const count = found.length
    if (seq === 0) return true
    if (lineEnd - firstOffset >= maxBytes) return true
    return count >= options.limit && startsTurn(record)
  }
  const emit = (start: number): boolean => {
    const record = parseLine(Buffer.concat(parts.reverse()).toString('utf8'))
    parts = []
    found.push(record)
    seq -= 1
    firstOffset = start
    return enough(record)
  }
  let chunk = Buffer.alloc(FIRST_READ_CHUNK)
  let done = seq === 0
  while (!done) {
    if (pos === 0) {
      emit(0)
      break
    }
    const size = Math.min(chunk.length, pos)
    pos -= size
    await handle.read(chunk, 0, size, pos)
    let end = size
    let index = chunk.lastIndexOf(0x0a, end - 1)
    while (index !== -1 && index >= 0) {
      parts.push(Buffer.from(chunk.subarray(index + 1, end)))
      if (emit(pos + index + 1)) {
        done = true
        break
      }
      end = index
      index = end > 0 ? chunk.lastIndexOf(0x0a, end - 1) : -1
    }
    if (!done) parts.push(Buffer.from(chunk.subarray(0, end)))
    if (chunk.length < LARGEST_READ_CHUNK) chunk = Buffer.alloc(chunk.length * 2)
  }
  found.reverse()
  const records = found.filter((r): r is TranscriptRecord => r !== null)
  return { records, firstSeq: seq, firstOffset, skippedLines: found.length - records.length }
}

/** Newline counts by file, from a previous count: transcripts only grow, so only the new bytes are counted. */
const counted = new Map<string, LineCount>()
const MAX_COUNTED_FILES = 500

async function countNewlines(file: string, handle: fs.FileHandle, size: number): Promise<number> {
  // In memory from this run, or kept from an earlier one (line-counts.ts).
  let known: LineCount | null | undefined = counted.get(file)
  if (!known || known.size > size) known = await keptLineCount(file, handle, size)
  let pos = known && known.size <= size ? known.size : 0
  let newlines = known && known.size <= size ? known.newlines : 0
  const from = pos
  const chunk = Buffer.alloc(1024 * 1024)
  while (pos < size) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - pos), pos)
    if (bytesRead === 0) break
    for (let i = chunk.indexOf(0x0a, 0); i !== -1 && i < bytesRead; i = chunk.indexOf(0x0a, i + 1)) newlines++
    pos += bytesRead
  }
  counted.delete(file)
  counted.set(file, { size: pos, newlines })
  const oldest = counted.keys().next()
  if (counted.size > MAX_COUNTED_FILES && !oldest.done) counted.delete(oldest.value)
  if (pos > from) await keepLineCount(file, handle, { size: pos, newlines }, pos - from)
  return newlines
}

// ---- writing -------------------------------------------------------------------

/** Records read forwards from a cursor: the page after one a window let go of. */
export interface TranscriptLaterPage {
  records: TranscriptRecord[]
  /** seq and byte offset just past the last line read: the cursor for the page after this one. */
  endSeq: number
  endOffset: number
  skippedLines: number
  /** True when the page reaches the end of what is written (a last line still being written is left for later). */
  atEnd: boolean
}

/**
 * The records from a cursor on (`from` = the seq of the line at byte `offset`,
 * as a page's firstSeq/firstOffset), at least `limit` unless the end comes
 * first, ending before the start of a turn where it can. One that does not
 * point at the start of a line is refused.
 */
export async function readTranscriptLater(file: string, from: number, offset: number, options: PageOptions): Promise<TranscriptLaterPage> {
  const maxBytes = options.maxBytes ?? DEFAULT_PAGE_BYTES
  const handle = await fs.open(file, 'r')
  try {
    const size = (await handle.stat()).size
    const previous = Buffer.alloc(1)
    if (offset > size || (offset > 0 && ((await handle.read(previous, 0, 1, offset - 1)).bytesRead !== 1 || previous[0] !== 0x0a))) {
      throw new Error('That place in the transcript no longer exists; open the conversation again')
    }
    const records: TranscriptRecord[] = []
    let skippedLines = 0
    let seq = from
    let pos = offset
    let parts: Buffer[] = []
    let chunk = Buffer.alloc(FIRST_READ_CHUNK)
    while (pos < size) {
      const start = pos + parts.reduce((n, p) => n + p.length, 0)
      const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - start), start)
      if (bytesRead === 0) break
      let lineStart = 0
      for (let end = chunk.indexOf(0x0a, 0); end !== -1 && end < bytesRead; end = chunk.indexOf(0x0a, lineStart)) {
        parts.push(chunk.subarray(lineStart, end))
        const record = parseLine(Buffer.concat(parts).toString('utf8'))
        parts = []
        // A full page stops before the next turn: it is the next page's first.
        if (records.length >= options.limit && startsTurn(record)) return { records, endSeq: seq, endOffset: pos, skippedLines, atEnd: false }
        if (record) records.push(record)
        else skippedLines++
        seq += 1
        pos = start + end + 1
        lineStart = end + 1
        if (pos - offset >= maxBytes) return { records, endSeq: seq, endOffset: pos, skippedLines, atEnd: pos >= size }
      }
      if (lineStart < bytesRead) parts.push(Buffer.from(chunk.subarray(lineStart, bytesRead)))
      if (chunk.length < LARGEST_READ_CHUNK) chunk = Buffer.alloc(chunk.length * 2)
    }
    return { records, endSeq: seq, endOffset: pos, skippedLines, atEnd: true }
  } finally {
    await handle.close()
  }
}
