import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { TranscriptHeader, TranscriptRecord } from '../../shared/transcript'

/**
 * One append-only JSONL file per session: a header line, then one record per
 * line. A record's seq is its line number. A line torn by a crash is skipped
 * when read and sealed with a newline before the next append, so it never
 * corrupts what comes after it.
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

export async function readTranscript(file: string): Promise<TranscriptContents> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { records: [], nextSeq: 0, skippedLines: 0, endsClean: true }
    }
    throw error
  }
  return parseTranscript(text)
}

export function parseTranscript(text: string): TranscriptContents {
  if (text === '') return { records: [], nextSeq: 0, skippedLines: 0, endsClean: true }
  const lines = text.split('\n')
  const endsClean = lines[lines.length - 1] === ''
  if (endsClean) lines.pop()
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

/** The header lines of every transcript in a folder (used to rebuild a lost db.json). */
export async function readTranscriptHeaders(dir: string): Promise<TranscriptHeader[]> {
  let names: string[]
  try {
    names = (await fs.readdir(dir)).filter((n) => n.endsWith('.jsonl'))
  } catch {
    return []
  }
  const headers: TranscriptHeader[] = []
  for (const name of names) {
    const handle = await fs.open(join(dir, name), 'r')
    try {
      const buffer = Buffer.alloc(64 * 1024)
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
      const first = buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0]
      const record = parseLine(first)
      if (record && record.t === 'header') headers.push(record)
    } finally {
      await handle.close()
    }
  }
  return headers
}

export class TranscriptWriter {
  private queue: string[] = []
  private writing: Promise<void> = Promise.resolve()
  private scheduled = false
  private sealTornLine: boolean

  constructor(
    readonly file: string,
    private seq: number,
    endsClean: boolean,
    private readonly onError: (error: Error) => void
  ) {
    this.sealTornLine = !endsClean
  }

  static async create(file: string, header: TranscriptHeader, onError: (error: Error) => void): Promise<TranscriptWriter> {
    await fs.writeFile(file, JSON.stringify(header) + '\n', { flag: 'wx' })
    return new TranscriptWriter(file, 1, true, onError)
  }

  get nextSeq(): number {
    return this.seq
  }

  /** Queues a record and returns its seq; the write happens within the tick. */
  append(record: TranscriptRecord): number {
    this.queue.push(JSON.stringify(record) + '\n')
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(() => this.drain())
    }
    return this.seq++
  }

  /** Resolves once every record appended so far is on disk. */
  async flush(): Promise<void> {
    this.drain()
    await this.writing
  }

  private drain(): void {
    this.scheduled = false
    if (this.queue.length === 0) return
    let text = this.queue.join('')
    this.queue = []
    if (this.sealTornLine) {
      text = '\n' + text
      this.sealTornLine = false
    }
    this.writing = this.writing
      .then(() => fs.appendFile(this.file, text))
      .catch((error: Error) => this.onError(error))
  }
}
