import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spendCsv, type SpendRow } from '../../shared/spend'
import type { TranscriptRecord } from '../../shared/transcript'
import { readSpendBook, SpendBook, type SpendEntry } from '../../electron/host/spend/book'
import { SpendFold } from '../../electron/host/spend/fold'
import { spendReport } from '../../electron/host/spend/report'
import { EventBus } from '../../electron/host/contract/events'
import { SpendService } from '../../electron/host/spend/service'
import type { Records } from '../../electron/host/storage/records'
import { removeDir, tempDir } from '../helpers'

/** The rules of what is summed (fold.ts), the buckets of the chart (report.ts), the file (book.ts) and the CSV, without an agent. */

const cost = (at: string, amount: number, currency = 'USD'): TranscriptRecord => ({
  t: 'update',
  at,
  update: { sessionUpdate: 'usage_update', used: 10, size: 100, cost: { amount, currency } }
})
const prompt = (at: string): TranscriptRecord => ({ t: 'prompt', at, content: [] })
const stop = (at: string, totalTokens?: number): TranscriptRecord => ({
  t: 'stop',
  at,
  stopReason: 'end_turn',
  ...(totalTokens ? { usage: { totalTokens, inputTokens: totalTokens, outputTokens: 0 } } : {})
})

function spentBy(fold: SpendFold, records: TranscriptRecord[]): string[] {
  return records.flatMap((r) => {
    const fact = fold.take(r)
    return fact?.cost ? [`${fact.cost.amount.toFixed(2)} ${fact.cost.currency}`] : fact?.tokens ? [`${fact.tokens.totalTokens} tokens`] : []
  })
}

describe('what a session spent (SpendFold)', () => {
  it('adds a cumulative cost’s rises, per currency, and each turn’s tokens', () => {
    const fold = new SpendFold(null)
    const spent = spentBy(fold, [
      prompt('1'),
      cost('2', 0.1),
      cost('3', 0.1),
      cost('4', 0.25),
      cost('5', 2, 'eur'),
      stop('6', 500),
      // Lower outside a turn: a replay after a load, or a stale reading.
      cost('7', 0.1),
      prompt('8'),
      // Lower inside a turn: the agent's new process counts from zero.
      cost('9', 0.05),
      cost('10', 0.07),
      { t: 'error', at: '11', message: 'boom', endsTurn: true },
      cost('12', 0.01)
    ])
    expect(spent).toEqual(['0.10 USD', '0.15 USD', '2.00 EUR', '500 tokens', '0.05 USD', '0.02 USD'])
  })

  it('leaves out the records a fork copied from its parent, and a cost reading in the wrong shape', () => {
    const fold = new SpendFold('2025-06-02T00:00:00.000Z')
    const spent = spentBy(fold, [
      prompt('2025-06-01T10:00:00.000Z'),
      cost('2025-06-01T10:00:01.000Z', 3),
      stop('2025-06-01T10:00:02.000Z', 900),
      prompt('2025-06-02T10:00:00.000Z'),
      {
        t: 'update',
        at: '2025-06-02T10:00:01.000Z',
        update: { sessionUpdate: 'usage_update', used: 1, size: 2, cost: { amount: -1, currency: 'USD' } }
      },
      {
        t: 'update',
        at: '2025-06-02T10:00:01.000Z',
        update: { sessionUpdate: 'usage_update', used: 1, size: 2, cost: { amount: 1, currency: ' ' } }
      },
      cost('2025-06-02T10:00:02.000Z', 0.5, 'credits'),
      stop('2025-06-02T10:00:03.000Z', 40)
    ])
    expect(spent).toEqual(['0.50 credits', '40 tokens'])
  })
})

function entry(at: string, amount: number, agentId = 'claude'): SpendEntry {
  return {
    t: 'spend',
    at,
    sessionId: `s-${agentId}`,
    projectId: 'p',
    agentId,
    sessionTitle: 'A session',
    projectName: 'P',
    agentName: agentId,
    cost: { amount, currency: 'USD', reading: amount }
  }
}
const none = { session: () => undefined, project: () => undefined, agent: () => undefined }

describe('the chart’s buckets (spendReport)', () => {
  it('counts a day in the window’s time zone, of 23 hours on the day clocks go forward', () => {
    // Paris went to summer time on 30 March 2025: its day ran from 23:00Z on the 29th to 22:00Z on the 30th.
    const r = spendReport(
      [entry('2025-03-29T22:30:00.000Z', 1), entry('2025-03-29T23:30:00.000Z', 2), entry('2025-03-30T21:59:00.000Z', 4, 'gemini')],
      { from: '2025-03-29T23:00:00.000Z', to: '2025-03-30T22:00:00.000Z', unit: 'auto', timeZone: 'Europe/Paris' },
      none,
      Date.parse('2025-04-01T00:00:00.000Z')
    )
    expect(r.unit).toBe('hour')
    expect(r.buckets).toHaveLength(23)
    expect(r.buckets[0]).toBe('2025-03-30T00')
    expect(r.buckets).not.toContain('2025-03-30T02')
    expect(r.total.cost).toEqual({ USD: 6 })
    expect(r.series.find((s) => s.agentId === 'gemini')?.cost.USD.at(-1)).toBe(4)
    expect(r.agents.map((a) => [a.name, a.gone])).toEqual([
      ['gemini', true],
      ['claude', true]
    ])
  })

  it('goes by month over a long period, and coarser when a finer unit would make too many buckets', () => {
    const entries = [entry('2024-01-15T12:00:00.000Z', 1), entry('2025-02-01T12:00:00.000Z', 1)]
    const query = { unit: 'auto' as const, timeZone: 'UTC' }
    const r = spendReport(entries, query, none, Date.parse('2025-02-02T00:00:00.000Z'))
    expect([r.unit, r.buckets.length, r.buckets[0], r.buckets.at(-1)]).toEqual(['month', 14, '2024-01', '2025-02'])
    expect(spendReport(entries, { ...query, unit: 'hour' }, none, Date.parse('2025-02-02T00:00:00.000Z')).unit).toBe('day')
  })
})

describe('spend.jsonl (SpendBook)', () => {
  let dir: string
  beforeAll(async () => {
    dir = await tempDir('spend-book')
  })
  afterAll(() => removeDir(dir))

  it('leaves out a torn last line, says so, and appends after it on a line of its own', async () => {
    const dataDir = join(dir, 'torn')
    await mkdir(dataDir)
    const file = join(dataDir, 'spend.jsonl')
    const header = JSON.stringify({ t: 'header', v: 1, createdAt: '2025-06-01T00:00:00.000Z', backfilled: 0 })
    await writeFile(file, `${header}\n${JSON.stringify(entry('2025-06-01T00:00:00.000Z', 1))}\n{"t":"spend","at":"2025-06-0`)
    const read = await readSpendBook(dataDir)
    expect(read.entries).toHaveLength(1)
    expect(read.warnings).toEqual([`The last line of ${file} was cut short (Switchboard stopped while writing it) and is left out.`])
    const book = new SpendBook(dataDir, read)
    book.append(entry('2025-06-02T00:00:00.000Z', 2))
    await book.flush()
    const again = await readSpendBook(dataDir)
    expect(again.entries?.map((e) => e.cost?.amount)).toEqual([1, 2])
    expect(again.warnings).toEqual([])
    await appendFile(file, 'garbage\n')
    expect((await readSpendBook(dataDir)).warnings[0]).toMatch(/1 line of .* could not be read; the file was moved to .*spend\.corrupt-/)
    expect((await readFile(file, 'utf8')).split('\n')).toHaveLength(4)
  })
})

describe('CSV', () => {
  it('quotes text, doubles inner quotes, and keeps a title from running as a formula', () => {
    const row: SpendRow = {
      id: 's',
      name: '=HYPERLINK("http://x","click")',
      projectName: 'a,b',
      agentName: 'line\nbreak',
      cost: { USD: 0.1 + 0.2 },
      tokens: { total: 3, input: 2, output: 1, thought: 0, cachedRead: 0, cachedWrite: 0 },
      last: '2025-06-01T00:00:00.000Z'
    }
    const lines = spendCsv({ currencies: ['USD', 'EUR'], sessions: [row] }, 'sessions').split('\r\n')
    expect(lines[1]).toBe(`"'=HYPERLINK(""http://x"",""click"")","a,b","line\nbreak",0.3,,3,2,1,0,0,0,"2025-06-01T00:00:00.000Z",`)
  })

  it('neutralises a leading space, tab, CR, LF, pipe and the full-width formula signs too', () => {
    const starts = [' =1+1', '\t=1+1', '\r=1+1', '\n=1+1', '|cmd', '＝1+1', '＋1', '－1', '＠SUM(A1)', '=1', '+1', '-1', '@A1']
    const rows: SpendRow[] = starts.map((name, i) => ({
      id: `s${i}`,
      name,
      cost: {},
      tokens: { total: 0, input: 0, output: 0, thought: 0, cachedRead: 0, cachedWrite: 0 },
      last: '2025-06-01T00:00:00.000Z'
    }))
    const csv = spendCsv({ currencies: [], agents: rows }, 'agents')
    for (const name of starts) expect(csv, JSON.stringify(name)).toContain(`\r\n"'${name}",`)
    // Text that starts otherwise is left as written.
    expect(spendCsv({ currencies: [], agents: [{ ...rows[0], name: 'Fix = bug' }] }, 'agents')).toContain('\r\n"Fix = bug",')
  })
})

describe('what sessions spent, asked for at once (SpendService.totalsOf)', () => {
  it('counts a turn that ended before the past transcripts were read (a new data folder, a race compared at once)', async () => {
    const dataDir = await tempDir('spend-at-once')
    try {
      await mkdir(join(dataDir, 'transcripts'))
      const events = new EventBus()
      const records = { findSession: () => undefined, findProject: () => undefined, findAgent: () => undefined } as unknown as Records
      const service = new SpendService({ dataDir, events, records, read: await readSpendBook(dataDir) })
      const header: TranscriptRecord = {
        t: 'header',
        v: 2,
        id: 's1',
        acpSessionId: 'acp-1',
        agentId: 'a1',
        projectId: 'p1',
        cwd: '/work/app',
        createdAt: '2026-01-01T00:00:00.000Z'
      }
      events.emit('session.records', {
        id: 's1',
        seq: 0,
        records: [header, prompt('2026-01-01T00:00:01.000Z'), cost('2026-01-01T00:00:02.000Z', 0.25), stop('2026-01-01T00:00:03.000Z', 40)]
      })
      const totals = (await service.totalsOf(['s1'])).get('s1')
      expect(totals?.cost).toEqual({ USD: 0.25 })
      expect(totals?.tokens.total).toBe(40)
      await service.close()
    } finally {
      await removeDir(dataDir)
    }
  })
})
