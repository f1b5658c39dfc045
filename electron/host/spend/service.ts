import { basename } from 'node:path'
import type { SpendTotals } from '../../../shared/spend'
import type { TranscriptHeader, TranscriptRecord } from '../../../shared/transcript'
import type { EventBus } from '../contract/events'
import type { HandlerSlice } from '../contract/handlers'
import type { Records } from '../storage/records'
import { QuietStart } from '../search/quiet-start'
import { readPastSpend, transcriptFiles } from './backfill'
import { SpendBook, type ReadSpend, type SpendEntry } from './book'
import { mattersToSpend, SpendFold, type SpendFact } from './fold'
import { sessionTotals, spendReport } from './report'

export { readSpendBook, type ReadSpend } from './book'

/**
 * The `spend.*` requests: what agents reported they spent, per session,
 * project and agent. It follows the Host's transcript records as they are
 * appended (EventBus.tap), folds each session's with `SpendFold`, keeps what
 * was spent in spend.jsonl (`SpendBook`) and tells the windows
 * (`spend.changed`). The first time a data folder has no spend.jsonl, the
 * past transcripts are read for it in the background; records that come
 * meanwhile wait and are folded after what their files held.
 */

export interface SpendOptions {
  dataDir: string
  events: EventBus
  records: Records
  read: ReadSpend
}

/** A record that came live while the past transcripts were being read. */
interface Waiting {
  id: string
  seq: number
  record: TranscriptRecord
}

const PROGRESS_EVERY_MS = 250

export class SpendService {
  private readonly book: SpendBook
  private readonly folds = new Map<string, SpendFold>()
  /** The last cumulative cost per currency of each session, as spend.jsonl left it. */
  private readonly readings = new Map<string, Map<string, number>>()
  /** Headers seen live: a new session's ids before its record is saved. */
  private readonly headers = new Map<string, TranscriptHeader>()
  /** While past transcripts are read: the live records, in order, and how far along it is. */
  private waiting: Waiting[] | null = null
  private progress: { done: number; total: number } | null = null
  private backfilling: Promise<void> = Promise.resolve()
  /** Past transcripts are read once the Host is quiet (its first requests answered first), or when the page asks. */
  private readonly quiet = new QuietStart(() => {
    // Only while there is something to read (no spend.jsonl yet), and not once closing.
    if (this.closing || !this.waiting) return
    this.backfilling = this.backfill().catch((error: Error) => console.error(`Could not read past conversations for their spend: ${error.message}`))
  })
  private closing = false
  private changed = new Set<string>()
  private announcing: NodeJS.Immediate | null = null
  private lastProgress = 0

  constructor(private readonly options: SpendOptions) {
    this.book = new SpendBook(options.dataDir, options.read)
    for (const entry of this.book.entries) {
      if (!entry.cost) continue
      const readings = this.readings.get(entry.sessionId) ?? new Map<string, number>()
      readings.set(entry.cost.currency, entry.cost.reading)
      this.readings.set(entry.sessionId, readings)
    }
    options.events.tap((event) => {
      if (event.type === 'session.records') this.noteRecords(event.payload.id, event.payload.seq, event.payload.records)
    })
    if (!options.read.entries) {
      this.waiting = []
      this.progress = { done: 0, total: 0 }
      this.quiet.arm()
    }
  }

  /** The Host answers a request (`answered`: once it is): past transcripts still to read wait until it is quiet again. */
  noteRequest(answered?: Promise<unknown>, drawn = false): void {
    this.quiet.noteRequest(answered, drawn)
  }

  handlers(): HandlerSlice<'spend'> {
    const { records } = this.options
    return {
      'spend.report': async (query) => {
        this.quiet.now()
        return {
          ...spendReport(this.book.entries, query, {
            session: (id) => records.findSession(id)?.title,
            project: (id) => records.findProject(id)?.name,
            agent: (id) => records.findAgent(id)?.name
          }),
          ...(this.progress ? { backfill: { ...this.progress } } : {})
        }
      }
    }
  }

  /**
   * What each of these sessions reported it spent, all told (those that reported nothing are left out). Past
   * transcripts still waiting for a quiet moment are read first: until then what the sessions spend live waits too, and
   * a race's comparison asked for meanwhile (one that polls keeps the Host from being quiet) said they spent nothing.
   */
  async totalsOf(sessionIds: readonly string[]): Promise<Map<string, SpendTotals>> {
    this.quiet.now()
    await this.backfilling
    return sessionTotals(this.book.entries, sessionIds)
  }

  /** Stops reading past transcripts (they are read again next time: nothing was written) and flushes what was spent. */
  async close(): Promise<void> {
    this.closing = true
    this.quiet.cancel()
    await this.backfilling
    if (this.announcing) clearImmediate(this.announcing)
    await this.book.flush()
  }

  private noteRecords(id: string, seq: number, records: TranscriptRecord[]): void {
    records.forEach((record, i) => {
      if (!mattersToSpend(record)) return
      if (this.waiting) this.waiting.push({ id, seq: seq + i, record })
      else this.take(id, record)
    })
  }

  private take(id: string, record: TranscriptRecord): void {
    if (record.t === 'header') this.headers.set(id, record)
    let fold = this.folds.get(id)
    if (!fold) {
      // A transcript that starts now may begin with a copy of another session's records (a fork's).
      fold = new SpendFold(record.t === 'header' ? record.createdAt : null, this.readings.get(id))
      this.folds.set(id, fold)
    }
    const fact = fold.take(record)
    if (fact) this.spent(id, fact)
  }

  private spent(id: string, fact: SpendFact, past?: { header: TranscriptHeader; title?: string }): SpendEntry | null {
    const { records } = this.options
    const record = records.findSession(id)
    const header = past?.header ?? this.headers.get(id)
    const projectId = record?.projectId ?? header?.projectId
    const agentId = record?.agentId ?? header?.agentId
    if (!projectId || !agentId) return null
    const entry: SpendEntry = {
      t: 'spend',
      at: fact.at,
      sessionId: id,
      projectId,
      agentId,
      sessionTitle: record?.title ?? past?.title ?? 'Untitled session',
      projectName: records.findProject(projectId)?.name ?? (header ? basename(header.cwd) : projectId),
      agentName: records.findAgent(agentId)?.name ?? agentId,
      ...(fact.cost ? { cost: fact.cost } : {}),
      ...(fact.tokens ? { tokens: fact.tokens } : {})
    }
    if (past) return entry
    this.book.append(entry)
    this.announce(id)
    return entry
  }

  /** Reads every past transcript once, then writes spend.jsonl whole and folds what came meanwhile. */
  private async backfill(): Promise<void> {
    const files = await transcriptFiles(this.options.dataDir)
    this.progress = { done: 0, total: files.length }
    const entries: SpendEntry[] = []
    const readUpTo = new Map<string, number>()
    for (const file of files) {
      if (this.closing) return
      const past = await readPastSpend(
        file,
        (id) => !this.options.records.findSession(id),
        () => this.quiet.answering()
      )
      this.progress.done++
      if (!past || readUpTo.has(past.header.id)) continue
      readUpTo.set(past.header.id, past.nextSeq)
      this.folds.set(past.header.id, past.fold)
      for (const fact of past.facts) {
        const entry = this.spent(past.header.id, fact, past)
        if (entry) entries.push(entry)
      }
      if (Date.now() - this.lastProgress > PROGRESS_EVERY_MS) this.announce(past.header.id)
    }
    if (this.closing) return
    entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
    const waiting = this.waiting ?? []
    this.waiting = null
    this.progress = null
    // What the files already held is not taken twice.
    for (const { id, seq, record } of waiting) if (seq >= (readUpTo.get(id) ?? 0)) this.take(id, record)
    await this.book.writeWhole(entries, files.length)
    this.announce(null)
  }

  /** One `spend.changed` per tick, naming the sessions whose spend changed. */
  private announce(id: string | null): void {
    if (id) this.changed.add(id)
    this.announcing ??= setImmediate(() => {
      this.announcing = null
      this.lastProgress = Date.now()
      const sessionIds = [...this.changed]
      this.changed.clear()
      this.options.events.emit('spend.changed', { sessionIds, ...(this.progress ? { backfill: { ...this.progress } } : {}) })
    })
  }
}
