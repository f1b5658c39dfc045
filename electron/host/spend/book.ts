import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { AtomicTextFile } from '../storage/atomic-file'
import { TranscriptWriter } from '../storage/transcripts'

/**
 * `spend.jsonl` in the data folder, beside db.json: a header line, then one
 * line per thing spent (a cost's rise or a turn's tokens), appended as it
 * happens, crash-safely (the transcripts' writer: each batch flushed to the
 * disk, a torn last line sealed). Each line names its session, project and
 * agent by id and by the names they had, so a deleted session still counts
 * in its project's and agent's totals and is still called what it was.
 *
 * Its own file, not db.json: it only grows, by small appends, while db.json is
 * rewritten whole. A file that cannot be read whole is moved aside (nothing
 * in it is lost) and its readable lines are kept in a new one; a torn last
 * line (a crash mid-write) is left out; both are said at start.
 */

export const SPEND_FILE = 'spend.jsonl'

const count = z.number().finite().nonnegative()
const text = z.string().max(10_000)
const entrySchema = z.object({
  t: z.literal('spend'),
  at: z.iso.datetime({ offset: true }),
  sessionId: z.string().min(1).max(200),
  projectId: z.string().min(1).max(200),
  agentId: z.string().min(1).max(200),
  sessionTitle: text,
  projectName: text,
  agentName: text,
  cost: z.object({ amount: count, currency: z.string().min(1).max(40), reading: count }).optional(),
  tokens: z
    .object({
      totalTokens: count,
      inputTokens: count,
      outputTokens: count,
      thoughtTokens: count.optional(),
      cachedReadTokens: count.optional(),
      cachedWriteTokens: count.optional()
    })
    .optional()
})
const headerSchema = z.object({ t: z.literal('header'), v: z.literal(1), createdAt: z.string(), backfilled: count })

export type SpendEntry = z.infer<typeof entrySchema>
type SpendLine = SpendEntry | z.infer<typeof headerSchema>

export interface ReadSpend {
  /** null: there is no spend.jsonl yet (the first start with spend), so past transcripts are to be read for it. */
  entries: SpendEntry[] | null
  /** Lines in the file, and whether it ends with a whole line (what the appender continues from). */
  lines: number
  endsClean: boolean
  warnings: string[]
}

/** Reads spend.jsonl before the Host is put together (what it could not read is in `warnings`). */
export async function readSpendBook(dataDir: string): Promise<ReadSpend> {
  const file = new AtomicTextFile(join(dataDir, SPEND_FILE))
  let text: string | null
  try {
    text = await file.read()
  } catch (error) {
    throw new Error(`${file.file} could not be read (${(error as Error).message}); check its permissions, then start Switchboard again.`)
  }
  if (text === null) return { entries: null, lines: 0, endsClean: true, warnings: [] }
  const lines = text.split('\n')
  const endsClean = lines[lines.length - 1] === ''
  if (endsClean) lines.pop()
  const entries: SpendEntry[] = []
  let header = false
  let bad = 0
  for (const line of lines) {
    const parsed = parseLine(line)
    if (parsed?.t === 'spend') entries.push(parsed)
    else if (parsed?.t === 'header') header = true
    else bad++
  }
  if (bad === 0) return { entries: header ? entries : null, lines: lines.length, endsClean, warnings: [] }
  if (!endsClean && bad === 1 && parseLine(lines[lines.length - 1]) === null) {
    // A crash mid-append: the file is cut back to its last whole line, so the next append starts clean.
    await fs.truncate(file.file, Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1)))
    const warnings = [`The last line of ${file.file} was cut short (Switchboard stopped while writing it) and is left out.`]
    return { entries: header ? entries : null, lines: lines.length - 1, endsClean: true, warnings }
  }
  // Damaged beyond a torn end: the file is kept as it is, aside, and what could be read goes on in a new one.
  const aside = file.file.replace(/\.jsonl$/, `.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`)
  await fs.rename(file.file, aside)
  const kept = header ? entries : []
  if (header) await file.write(wholeText(kept, 0))
  const what = header
    ? `its ${kept.length} readable entr${kept.length === 1 ? 'y was' : 'ies were'} kept`
    : 'past conversations are read again for what they spent'
  return {
    entries: header ? kept : null,
    lines: header ? kept.length + 1 : 0,
    endsClean: true,
    warnings: [`${bad} line${bad === 1 ? '' : 's'} of ${file.file} could not be read; the file was moved to ${aside} and ${what}.`]
  }
}

function parseLine(line: string): SpendLine | null {
  try {
    const value: unknown = JSON.parse(line)
    const entry = entrySchema.safeParse(value)
    if (entry.success) return entry.data
    const header = headerSchema.safeParse(value)
    return header.success ? header.data : null
  } catch {
    return null
  }
}

function wholeText(entries: SpendEntry[], backfilled: number): string {
  const header: SpendLine = { t: 'header', v: 1, createdAt: new Date().toISOString(), backfilled }
  return [header, ...entries].map((line) => JSON.stringify(line) + '\n').join('')
}

/** The spend kept: every entry in memory (what reports are made from) and the file they are appended to. */
export class SpendBook {
  readonly entries: SpendEntry[]
  private readonly file: string
  private writer: TranscriptWriter<SpendLine> | null = null
  /** Entries that came while the whole file was being written (after a backfill): appended once it is. */
  private waiting: SpendEntry[] = []

  constructor(dataDir: string, read: ReadSpend) {
    this.file = join(dataDir, SPEND_FILE)
    this.entries = read.entries ?? []
    if (read.entries) this.writer = this.writerAt(read.lines, read.endsClean)
  }

  append(entry: SpendEntry): void {
    this.entries.push(entry)
    if (this.writer) this.writer.append(entry)
    else this.waiting.push(entry)
  }

  /**
   * The first book of this data folder, from the past transcripts (`entries`, in time order): written whole and
   * atomically, so a Host stopped before it is done leaves no file and reads them again next time.
   */
  async writeWhole(entries: SpendEntry[], backfilled: number): Promise<void> {
    this.entries.unshift(...entries)
    const waiting = this.waiting
    await new AtomicTextFile(this.file).write(wholeText(entries, backfilled))
    this.writer = this.writerAt(entries.length + 1, true)
    this.waiting = []
    for (const entry of waiting) this.writer.append(entry)
  }

  /** Resolves once everything appended is on the disk. */
  async flush(): Promise<void> {
    await this.writer?.flush()
  }

  private writerAt(lines: number, endsClean: boolean): TranscriptWriter<SpendLine> {
    return new TranscriptWriter<SpendLine>(this.file, lines, endsClean, (error) => console.error(`Could not write ${this.file}: ${error.message}`))
  }
}
