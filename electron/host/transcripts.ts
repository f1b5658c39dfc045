import { promises as fs } from 'node:fs'
import { dirname, join } from 'node:path'
import type { ContentBlock } from '@agentclientprotocol/sdk'
import { contentToText, isSwitchboardNote } from '../../shared/thread'
import type { TranscriptHeader, TranscriptRecord } from '../../shared/transcript'
import { syncFolder } from './atomic-file'
import { PRIVATE_FILE_MODE } from './private-files'

/**
 * One append-only JSONL file per session: a header line, then one record per
 * line. A record's seq is its line number. A line torn by a crash is skipped
 * when read and sealed with a newline before the next append, so it never
 * corrupts what comes after it.
 *
 * Appends are flushed to the disk (fdatasync) batch by batch; a long
 * transcript is read from its end, a page at a time (`readTranscriptTail`,
 * `readTranscriptPage`), so showing it never needs the whole file in memory.
 */

export interface TranscriptContents {
  records: TranscriptRecord[]
  /** The seq the next appended record will get (= number of lines). */
  nextSeq: number
  skippedLines: number
  /** False when the last line has no newline (a torn write). */
  endsClean: boolean
}

export function transcriptPath(dir: string, id: string): string {
  return join(dir, `${id}.jsonl`)
}

/** The transcript's records; `upTo`: only its first lines (those that were written when that many were). */
export async function readTranscript(file: string, upTo?: number): Promise<TranscriptContents> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { records: [], nextSeq: 0, skippedLines: 0, endsClean: true }
    }
    throw error
  }
  return parseTranscript(text, upTo)
}

export function parseTranscript(text: string, upTo?: number): TranscriptContents {
  if (text === '') return { records: [], nextSeq: 0, skippedLines: 0, endsClean: true }
  const lines = text.split('\n')
  const endsClean = lines[lines.length - 1] === ''
  if (endsClean) lines.pop()
  if (upTo !== undefined && lines.length > upTo) lines.splice(upTo)
  const records: TranscriptRecord[] = []
  let skippedLines = 0
  for (const line of lines) {
    const record = parseLine(line)
    if (record) records.push(record)
    else skippedLines++
  }
  return { records, nextSeq: lines.length, skippedLines, endsClean }
}

function parseLine(line: string): TranscriptRecord | null {
  try {
    const value = JSON.parse(line) as TranscriptRecord
    return typeof value === 'object' && value !== null && typeof value.t === 'string' ? value : null
  } catch {
    return null
  }
}

/**
 * The records a copy of the conversation takes (a fork's): all but the conversation a later `reset` superseded (a replay written by an earlier version, or an imported session's first). What a reset leaves in the view
 * (session state, terminals' output) is kept; the header is left out.
 */
export function currentView(lines: TranscriptRecord[]): TranscriptRecord[] {
  const lastReset = lines.map((r) => r.t).lastIndexOf('reset')
  return lines.filter((record, i) => record.t !== 'header' && (i > lastReset || outlivesReset(record)))
}

/** A record whose effect a `reset` does not clear (it clears the entries only). */
function outlivesReset(record: TranscriptRecord): boolean {
  if (record.t === 'session' || record.t === 'terminal') return true
  return record.t === 'update' && !record.child && !VIEW_UPDATES.has(record.update.sessionUpdate)
}

/** Updates that make the conversation's entries (what a reset clears). */
const VIEW_UPDATES = new Set(['user_message_chunk', 'agent_message_chunk', 'agent_thought_chunk', 'tool_call', 'tool_call_update', 'plan'])

/**
 * What each checkpoint's turn asked: the first line of the prompt that follows each `checkpoint` record (index →
 * line; a later record of the same index wins: a fork's own checkpoints come after its parent's copied ones). Kept
 * per file and read on from where it stopped: a transcript only grows.
 */
export class CheckpointPrompts {
  private readonly files = new Map<string, { offset: number; waiting: number | null; prompts: Map<number, string> }>()

  async of(file: string): Promise<Map<number, string>> {
    let known = this.files.get(file)
    let handle: fs.FileHandle
    try {
      handle = await fs.open(file, 'r')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map()
      throw error
    }
    try {
      const size = (await handle.stat()).size
      if (!known || size < known.offset) {
        known = { offset: 0, waiting: null, prompts: new Map() }
        this.files.set(file, known)
      }
      if (size === known.offset) return known.prompts
      const buffer = Buffer.alloc(size - known.offset)
      await handle.read(buffer, 0, buffer.length, known.offset)
      const end = buffer.lastIndexOf(0x0a)
      if (end < 0) return known.prompts
      // Only whole lines: a torn or half-written last one is read next time.
      for (const line of buffer.subarray(0, end).toString('utf8').split('\n')) {
        if (!line.includes('"t":"checkpoint"') && !line.includes('"t":"prompt"')) continue
        const record = parseLine(line)
        if (record?.t === 'checkpoint') known.waiting = record.index ?? null
        else if (record?.t === 'prompt' && !record.steered) {
          if (known.waiting !== null) known.prompts.set(known.waiting, firstLineOf(record.content))
          known.waiting = null
        }
      }
      known.offset += end + 1
      return known.prompts
    } finally {
      await handle.close()
    }
  }
}

/** A prompt's first line as the user wrote it (Switchboard's notes to the agent left out), at most 120 characters. */
function firstLineOf(content: ContentBlock[]): string {
  const text = contentToText(content.filter((block) => !isSwitchboardNote(block))).trim()
  const line = text.split('\n')[0]?.trim() ?? ''
  return line.length > 120 ? `${line.slice(0, 119)}…` : line
}

/** What a lost db.json can be rebuilt from: each transcript's header, first prompt and last change. */
export interface TranscriptSummary {
  header: TranscriptHeader
  /** From the first prompt, when it is near the start of the file. */
  title?: string
  updatedAt?: string
}

/** The header (and a title) of every transcript in a folder (used to rebuild a lost db.json). */
export async function readTranscriptSummaries(dir: string): Promise<TranscriptSummary[]> {
  let names: string[]
  try {
    names = (await fs.readdir(dir)).filter((n) => n.endsWith('.jsonl'))
  } catch {
    return []
  }
  const summaries: TranscriptSummary[] = []
  for (const name of names) {
    const file = join(dir, name)
    const handle = await fs.open(file, 'r')
    try {
      const buffer = Buffer.alloc(64 * 1024)
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
      const lines = buffer.subarray(0, bytesRead).toString('utf8').split('\n')
      const header = parseLine(lines[0])
      if (!header || header.t !== 'header') continue
      // Version 1 headers called the agent's id `sessionId`.
      header.acpSessionId ??= (header as { sessionId?: string }).sessionId ?? ''
      const summary: TranscriptSummary = { header, updatedAt: (await handle.stat()).mtime.toISOString() }
      for (const line of lines.slice(1, -1)) {
        const record = parseLine(line)
        if (record?.t !== 'prompt') continue
        const text =
          record.content
            .flatMap((c) => (c.type === 'text' ? [c.text] : []))
            .join('\n')
            .trim()
            .split('\n')[0] ?? ''
        if (text) summary.title = text.length > 80 ? text.slice(0, 77) + '…' : text
        break
      }
      summaries.push(summary)
    } finally {
      await handle.close()
    }
  }
  return summaries
}

// ---- reading from the end ----------------------------------------------------

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
const counted = new Map<string, { size: number; newlines: number }>()
const MAX_COUNTED_FILES = 500

async function countNewlines(file: string, handle: fs.FileHandle, size: number): Promise<number> {
  const known = counted.get(file)
  let pos = known && known.size <= size ? known.size : 0
  let newlines = known && known.size <= size ? known.newlines : 0
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
  return newlines
}

// ---- writing -------------------------------------------------------------------

/**
 * Appends records to one transcript. Records queued in a tick are written
 * together; while a write is on its way, later records wait and go in the
 * next one, so a flood of updates makes few, larger writes. Each write is
 * flushed to the disk before the next. A write that fails (disk full) is
 * undone to the last whole line and kept to try again with the next append,
 * so line numbers stay seqs. (spend.jsonl is appended the same way, with its own lines: `R`.)
 */
export class TranscriptWriter<R = TranscriptRecord> {
  private queue: string[] = []
  private busy = false
  private scheduled = false
  private sealTornLine: boolean
  private folderSynced = false
  private retryTimer: NodeJS.Timeout | null = null
  /** Records on disk so far (a seq: everything below it is written). */
  private written: number
  /** flush() calls waiting for the records below `seq` to be written. */
  private waiters: { seq: number; resolve: () => void }[] = []

  constructor(
    readonly file: string,
    private seq: number,
    endsClean: boolean,
    private readonly onError: (error: Error) => void
  ) {
    this.sealTornLine = !endsClean
    this.written = seq
  }

  get nextSeq(): number {
    return this.seq
  }

  /** Queues a record and returns its seq; the write happens within the tick. */
  append(record: R): number {
    this.queue.push(JSON.stringify(record) + '\n')
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.drain())
    }
    return this.seq++
  }

  /**
   * Resolves once every record appended so far is on disk (or its write
   * failed and was reported). Records appended later do not hold it up, so a
   * flood of updates cannot keep a reader waiting.
   */
  flush(): Promise<void> {
    if (this.written >= this.seq) return Promise.resolve()
    const done = new Promise<void>((resolve) => this.waiters.push({ seq: this.seq, resolve }))
    this.drain()
    return done
  }

  private drain(): void {
    this.scheduled = false
    if (this.retryTimer) {
      clearTimeout(this.retryTimer)
      this.retryTimer = null
    }
    if (this.busy || this.queue.length === 0) return
    this.busy = true
    void this.writeAll().finally(() => (this.busy = false))
  }

  private async writeAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      const text = (this.sealTornLine ? '\n' : '') + batch.join('')
      try {
        await this.write(text)
        this.sealTornLine = false
        this.written += batch.length
        this.settle((w) => w.seq <= this.written)
      } catch (error) {
        // Keep the records, in order, for the next attempt.
        this.queue = batch.concat(this.queue)
        this.onError(error as Error)
        this.settle(() => true)
        this.retryTimer ??= setTimeout(() => this.drain(), 1000)
        this.retryTimer.unref?.()
        return
      }
    }
  }

  private settle(done: (waiter: { seq: number }) => boolean): void {
    const ready = this.waiters.filter(done)
    if (ready.length === 0) return
    this.waiters = this.waiters.filter((w) => !done(w))
    for (const waiter of ready) waiter.resolve()
  }

  private async write(text: string): Promise<void> {
    const handle = await fs.open(this.file, 'a', PRIVATE_FILE_MODE)
    let sizeBefore = -1
    try {
      sizeBefore = (await handle.stat()).size
      await handle.appendFile(text, 'utf8')
      await handle.datasync()
    } catch (error) {
      // Undo a partial write so the file ends with a whole line again.
      if (sizeBefore >= 0) await handle.truncate(sizeBefore).catch(() => undefined)
      throw error
    } finally {
      await handle.close()
    }
    if (!this.folderSynced) {
      // A new file's name must survive a power loss too.
      this.folderSynced = true
      await syncFolder(dirname(this.file))
    }
  }
}
