import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { isSwitchboardNote } from '../../../shared/thread'
import type { TranscriptHeader, TranscriptRecord } from '../../../shared/transcript'
import type { Pause } from '../storage/slices'
import { transcriptLines } from '../storage/transcript-stream'
import { SpendFold, type SpendFact } from './fold'

/**
 * The spend in transcripts written before spend.jsonl existed: they hold every
 * `usage_update` and every prompt response's usage (in `stop` records), so
 * they are read once, through the same fold as live records, when a data
 * folder has no spend.jsonl yet. Deleted conversations whose transcripts were
 * kept (deleted-transcripts/) count too; those deleted without theirs cannot.
 */

export interface PastSpend {
  header: TranscriptHeader
  /** The first prompt's first line, for a session that is gone (asked for with `wantTitle`). */
  title?: string
  facts: SpendFact[]
  /** The fold as the file leaves it, to go on with the session's live records. */
  fold: SpendFold
  /** The seq after the last whole line read: live records from it on were not in the file. */
  nextSeq: number
}

/** Every transcript file of the data folder, kept ones of deleted sessions last. */
export async function transcriptFiles(dataDir: string): Promise<string[]> {
  const files: string[] = []
  for (const folder of ['transcripts', 'deleted-transcripts']) {
    const dir = join(dataDir, folder)
    const names = await fs.readdir(dir).catch(() => [] as string[])
    files.push(...names.filter((n) => n.endsWith('.jsonl')).map((n) => join(dir, n)))
  }
  return files
}

/**
 * What one transcript spent; null when it has no header. Most lines are streamed text: a line's
 * type is read from its start (`{"t":"update"`, as the writer writes it) and only the lines that
 * matter to spend are parsed. In slices, waiting out `giveWay` between them (the Host answering the window).
 */
export async function readPastSpend(file: string, wantTitle: (id: string) => boolean, giveWay?: Pause): Promise<PastSpend | null> {
  let read: { header: TranscriptHeader; fold: SpendFold; title: string | undefined } | null = null
  const facts: SpendFact[] = []
  let nextSeq = 0
  try {
    // A chunk at a time: a long transcript is never in memory whole.
    for await (const { seq, line, torn } of transcriptLines(file, Infinity, giveWay)) {
      // A last line without its newline may still be being written: it is left to the live records.
      if (torn) break
      nextSeq = seq + 1
      if (!read) {
        const header = parse(line)
        if (header?.t !== 'header') return null
        read = { header, fold: new SpendFold(header.createdAt), title: wantTitle(header.id) ? '' : undefined }
        continue
      }
      const type = /^\{"t":"(\w+)"/.exec(line)?.[1]
      if (type === 'update' && !line.includes('"usage_update"')) continue
      if (type !== undefined && !['prompt', 'stop', 'error', 'reset', 'reconnected', 'update'].includes(type)) continue
      const record = type === 'prompt' && read.title !== '' ? promptStart(line) : parse(line)
      if (!record) continue
      if (read.title === '' && record.t === 'prompt') read.title = firstLine(record)
      const fact = read.fold.take(record)
      if (fact) facts.push(fact)
    }
  } catch {
    return null
  }
  if (!read) return null
  const { header, fold, title } = read
  return { header, ...(title ? { title } : {}), facts, fold, nextSeq }
}

function parse(line: string): TranscriptRecord | null {
  try {
    const value = JSON.parse(line) as TranscriptRecord | null
    return typeof value === 'object' && value !== null && typeof value.t === 'string' ? value : null
  } catch {
    return null
  }
}

/** A prompt's time, without parsing what may be megabytes of attachments (the fold needs only that a turn began, and when). */
function promptStart(line: string): TranscriptRecord | null {
  const at = /^\{"t":"prompt","at":"([^"\\]+)"/.exec(line)?.[1]
  return at ? { t: 'prompt', at, content: [] } : parse(line)
}

function firstLine(record: Extract<TranscriptRecord, { t: 'prompt' }>): string {
  const text =
    record.content
      .flatMap((c) => (c.type === 'text' && !isSwitchboardNote(c) ? [c.text] : []))[0]
      ?.trim()
      .split('\n')[0] ?? ''
  return text.length > 80 ? text.slice(0, 77) + '…' : text
}
