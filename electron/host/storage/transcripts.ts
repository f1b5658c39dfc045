import { promises as fs } from 'node:fs'
import { dirname, join } from 'node:path'
import type { ContentBlock } from '@agentclientprotocol/sdk'
import { contentToText, isSwitchboardNote } from '../../../shared/thread'
import type { TranscriptHeader, TranscriptRecord } from '../../../shared/transcript'
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
 * `readTranscriptPage`, transcript-pages.ts), so showing it never needs the
 * whole file in memory.
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

export function parseLine(line: string): TranscriptRecord | null {
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
export function outlivesReset(record: TranscriptRecord): boolean {
  if (record.t === 'session' || record.t === 'terminal') return true
  return record.t === 'update' && !record.child && !VIEW_UPDATES.has(record.update.sessionUpdate)
}

/** Updates that make the conversation's entries (what a reset clears). */
const VIEW_UPDATES = new Set(['user_message_chunk', 'agent_message_chunk', 'agent_thought_chunk', 'tool_call', 'tool_call_update', 'plan'])

const PROMPTS_CHUNK = 1024 * 1024

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
      // A chunk at a time (a long transcript is not read whole), whole lines only: a torn or half-written last one is
      // read next time.
      const chunk = Buffer.alloc(Math.min(PROMPTS_CHUNK, size - known.offset))
      let carried: Buffer[] = []
      let at = known.offset
      while (at < size) {
        const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - at), at)
        if (bytesRead === 0) break
        at += bytesRead
        let start = 0
        for (let end = chunk.indexOf(0x0a); end !== -1 && end < bytesRead; end = chunk.indexOf(0x0a, start)) {
          const piece = chunk.subarray(start, end)
          const line = carried.length ? Buffer.concat([...carried, piece]) : piece
          known.offset += line.length + 1
          carried = []
          start = end + 1
          if (line.includes('"t":"checkpoint"') || line.includes('"t":"prompt"')) this.read(known, line.toString('utf8'))
        }
        if (start < bytesRead) carried.push(Buffer.from(chunk.subarray(start, bytesRead)))
      }
      return known.prompts
    } finally {
      await handle.close()
    }
  }

  private read(known: { waiting: number | null; prompts: Map<number, string> }, line: string): void {
    const record = parseLine(line)
    if (record?.t === 'checkpoint') known.waiting = record.index ?? null
    else if (record?.t === 'prompt' && !record.steered) {
      if (known.waiting !== null) known.prompts.set(known.waiting, firstLineOf(record.content))
      known.waiting = null
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
    return this.appendLine(JSON.stringify(record))
  }

  /** Queues a record's line as another transcript has it (a copy's, read and checked: one line, no newline); returns its seq. */
  appendLine(line: string): number {
    this.queue.push(line + '\n')
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

  /**
   * Writes what is queued, batch after batch, until the queue is empty. The file stays open for the whole run
   * (a streamed reply is one run of many batches) and its size is counted rather than asked: a batch costs one
   * write and one fdatasync, not an open, a stat and a close as well.
   */
  private async writeAll(): Promise<void> {
    let file: { handle: fs.FileHandle; size: number } | null = null
    try {
      while (this.queue.length > 0) {
        const batch = this.queue
        this.queue = []
        // The batch's joined text made bytes at once, not held while the write and its fdatasync wait: a copy's batch
        // (1,000 lines, ~0.6 MB) is a large object that outlived the young generation whenever a scavenge came
        // meanwhile, and the copy of a 99 MB conversation left ~50 MB of them in the old one (2 MB now).
        const bytes = Buffer.from((this.sealTornLine ? '\n' : '') + batch.join(''), 'utf8')
        try {
          file ??= await this.open()
          await this.write(file, bytes)
          this.sealTornLine = false
          this.written += batch.length
          // Nothing more to write: closed before anyone waiting is told (they may move or remove the file next).
          if (this.queue.length === 0) {
            const done = file
            file = null
            await done.handle.close().catch(() => undefined)
          }
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
    } finally {
      await file?.handle.close().catch(() => undefined)
    }
  }

  private settle(done: (waiter: { seq: number }) => boolean): void {
    const ready = this.waiters.filter(done)
    if (ready.length === 0) return
    this.waiters = this.waiters.filter((w) => !done(w))
    for (const waiter of ready) waiter.resolve()
  }

  private async open(): Promise<{ handle: fs.FileHandle; size: number }> {
    const handle = await fs.open(this.file, 'a', PRIVATE_FILE_MODE)
    try {
      const size = (await handle.stat()).size
      if (!this.folderSynced) {
        // A new file's name must survive a power loss too.
        await syncFolder(dirname(this.file))
        this.folderSynced = true
      }
      return { handle, size }
    } catch (error) {
      await handle.close().catch(() => undefined)
      throw error
    }
  }

  /** Appends `bytes` and flushes them to the disk; a partial write is undone, so the file ends with a whole line again. */
  private async write(file: { handle: fs.FileHandle; size: number }, bytes: Buffer): Promise<void> {
    try {
      await file.handle.appendFile(bytes)
      await file.handle.datasync()
      file.size += bytes.length
    } catch (error) {
      await file.handle.truncate(file.size).catch(() => undefined)
      throw error
    }
  }
}
