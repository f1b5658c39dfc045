import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RequestParams } from '../../shared/contract'
import { spendCsv, type SpendReport, type SpendRow } from '../../shared/spend'
import type { TranscriptRecord } from '../../shared/transcript'
import type { Host } from '../../electron/host/host'
import { openHost, recordEvents, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * Spend through the Host and the scripted agent: what each session, project
 * and agent spent, checked against what the agent reported (`/cost` sends its
 * cumulative cost in a usage_update, `/tokens` puts the turn's tokens in the
 * prompt response); currencies kept apart; the period filter; a past
 * transcript read once; a deleted session still counted; a restart (the
 * agent's count starts again in its new process, and its replay of the old
 * usage updates adds nothing); a damaged spend.jsonl moved aside; the CSV.
 */

let root: string
let dataDir: string
let host: Host
let p1: string
let p2: string
const sessions = { s1: '', s2: '', s3: '' }
/** A moment between S1's two turns. */
let between = ''

const DAY = 86_400_000
const past = (days: number): string => new Date(Date.now() - days * DAY).toISOString()

beforeAll(async () => {
  root = await tempDir('spend')
  dataDir = join(root, 'data')
  // A conversation deleted (its transcript kept) before Switchboard kept spend: read once, at the first start.
  await mkdir(join(dataDir, 'deleted-transcripts'), { recursive: true })
  await writeFile(join(dataDir, 'deleted-transcripts', 'old-session.jsonl'), pastTranscript())
  for (const name of ['north', 'beta']) await mkdir(join(root, name))
  host = await openHost(dataDir)
  p1 = (await host.request('projects.add', { cwd: join(root, 'north'), name: 'Acme, "north"' })).id
  p2 = (await host.request('projects.add', { cwd: join(root, 'beta'), name: 'Beta' })).id
  expect((await host.request('agents.add', scriptedAgent(join(root, 'agent-a'), {}, 'Scripted'))).id).toBe('scripted')
  await host.request('agents.add', scriptedAgent(join(root, 'agent-b'), {}, 'Other'))
})

afterAll(async () => {
  await host.close()
  await removeDir(root)
})

function pastTranscript(): string {
  const at = (minutes: number): string => new Date(Date.now() - 10 * DAY + minutes * 60_000).toISOString()
  const records: TranscriptRecord[] = [
    {
      t: 'header',
      v: 2,
      id: 'old-session',
      acpSessionId: 'acp-old',
      agentId: 'scripted',
      projectId: 'gone-project',
      cwd: '/work/legacy',
      createdAt: at(0)
    },
    { t: 'prompt', at: at(1), content: [{ type: 'text', text: 'Port the legacy billing module' }] },
    { t: 'update', at: at(2), update: { sessionUpdate: 'usage_update', used: 900, size: 200000, cost: { amount: 0.7, currency: 'USD' } } },
    { t: 'stop', at: at(3), stopReason: 'end_turn', usage: { totalTokens: 300, inputTokens: 200, outputTokens: 100 } },
    // Replayed by a load after a restart: lower, outside a turn, adds nothing.
    { t: 'update', at: at(60), update: { sessionUpdate: 'usage_update', used: 900, size: 200000, cost: { amount: 0.3, currency: 'USD' } } },
    { t: 'prompt', at: at(61), content: [{ type: 'text', text: 'Go on' }] },
    // The agent's new process counts from zero: inside a turn, all of it is new.
    { t: 'update', at: at(62), update: { sessionUpdate: 'usage_update', used: 900, size: 200000, cost: { amount: 0.2, currency: 'USD' } } },
    { t: 'stop', at: at(63), stopReason: 'end_turn' }
  ]
  return records.map((r) => JSON.stringify(r) + '\n').join('')
}

async function report(params: Partial<RequestParams<'spend.report'>> = {}): Promise<SpendReport> {
  return host.request('spend.report', { timeZone: 'UTC', ...params })
}

function row(rows: SpendRow[], id: string): SpendRow {
  const found = rows.find((r) => r.id === id)
  if (!found) throw new Error(`No row ${id} in ${JSON.stringify(rows.map((r) => r.id))}`)
  return found
}

async function newSession(projectId: string, agentId: string, title: string): Promise<string> {
  const { id } = await host.request('sessions.new', { projectId, agentId })
  await host.request('sessions.rename', { id, title })
  return id
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('spend', () => {
  it('counts what each session, project and agent spent, currencies apart, over a chosen period', async () => {
    // The past transcript was read in the background at the start.
    await waitUntil('the past transcripts read', async () => (await report()).backfill === undefined)
    sessions.s1 = await newSession(p1, 'scripted', 'Parser refactor')
    sessions.s2 = await newSession(p1, 'other', 'Release notes')
    sessions.s3 = await newSession(p2, 'scripted', 'Beta spike')
    const events = recordEvents(host)
    await host.request('sessions.prompt', { id: sessions.s1, text: '/cost 0.02 USD\n/tokens 1000 200' })
    await pause(5)
    between = new Date().toISOString()
    await pause(5)
    await host.request('sessions.prompt', { id: sessions.s1, text: '/cost 0.03 USD\n/tokens 500 100' })
    await host.request('sessions.prompt', { id: sessions.s2, text: '/cost 1.5 EUR\n/cost 0.25 USD\n/tokens 10 5' })
    await host.request('sessions.prompt', { id: sessions.s3, text: '/cost 0.1 USD\n/tokens 100 50' })
    await waitUntil('spend.changed for the three sessions', () => {
      const changed = new Set(events.flatMap((e) => (e.type === 'spend.changed' ? e.payload.sessionIds : [])))
      return Object.values(sessions).every((id) => changed.has(id))
    })

    const all = await report()
    expect(all.currencies).toEqual(['USD', 'EUR'])
    expect(all.total.cost).toEqual({ USD: 1.3, EUR: 1.5 })
    expect(row(all.sessions, sessions.s1)).toMatchObject({
      name: 'Parser refactor',
      cost: { USD: 0.05 },
      tokens: { total: 1800, input: 1500, output: 300 }
    })
    expect(row(all.sessions, sessions.s2)).toMatchObject({ cost: { USD: 0.25, EUR: 1.5 }, tokens: { total: 15 }, agentName: 'Other' })
    expect(row(all.sessions, sessions.s3)).toMatchObject({ cost: { USD: 0.1 }, tokens: { total: 150 }, projectName: 'Beta' })
    expect(row(all.sessions, 'old-session')).toMatchObject({
      name: 'Port the legacy billing module',
      gone: true,
      cost: { USD: 0.9 },
      tokens: { total: 300 }
    })
    expect(row(all.projects, p1)).toMatchObject({ name: 'Acme, "north"', cost: { USD: 0.3, EUR: 1.5 }, tokens: { total: 1815 } })
    expect(row(all.projects, p2)).toMatchObject({ cost: { USD: 0.1 }, tokens: { total: 150 } })
    expect(row(all.projects, 'gone-project')).toMatchObject({ name: 'legacy', gone: true, cost: { USD: 0.9 } })
    expect(row(all.agents, 'scripted')).toMatchObject({ name: 'Scripted', cost: { USD: 1.05 }, tokens: { total: 2250 } })
    expect(row(all.agents, 'other')).toMatchObject({ cost: { USD: 0.25, EUR: 1.5 }, tokens: { total: 15 } })
    // All time in days: from the past conversation's day to today, every day there.
    expect(all.unit).toBe('day')
    expect(all.buckets).toHaveLength(11)

    // The period: before and after a moment between S1's turns; the last 7 and 30 days.
    const before = await report({ to: between })
    expect(row(before.sessions, sessions.s1).cost).toEqual({ USD: 0.02 })
    expect(before.sessions.map((r) => r.id).sort()).toEqual([sessions.s1, 'old-session'].sort())
    const after = await report({ from: between })
    expect(row(after.sessions, sessions.s1)).toMatchObject({ cost: { USD: 0.03 }, tokens: { total: 600 } })
    expect(after.total.cost).toEqual({ USD: 0.38, EUR: 1.5 })
    const week = await report({ from: past(7) })
    expect(week.sessions.some((r) => r.id === 'old-session')).toBe(false)
    expect(row(week.agents, 'scripted').cost).toEqual({ USD: 0.15 })
    const month = await report({ from: past(30) })
    expect(row(month.agents, 'scripted').cost).toEqual({ USD: 1.05 })
    // The chart's series add up to the totals, in today's bucket.
    const today = new Date().toISOString().slice(0, 10)
    const scripted = week.series.find((s) => s.agentId === 'scripted')
    expect(week.buckets[week.buckets.length - 1]).toBe(today)
    expect(scripted?.cost.USD[week.buckets.length - 1]).toBe(0.15)
    expect(scripted?.tokens.reduce((a, b) => a + b, 0)).toBe(1950)
    // Today in hours, in the window's time zone.
    const hours = await report({ from: new Date(Date.now() - 3_600_000).toISOString(), timeZone: 'Asia/Kolkata' })
    expect(hours.unit).toBe('hour')
    expect(hours.buckets.every((b) => /^\d{4}-\d\d-\d\dT\d\d$/.test(b))).toBe(true)
    await expect(report({ timeZone: 'Mars/Olympus' })).rejects.toThrow(/Unknown time zone 'Mars\/Olympus'/)
  })

  it('keeps a deleted session in its project and agent, across a restart and a damaged file', async () => {
    await host.request('sessions.delete', { id: sessions.s3 })
    const afterDelete = await report()
    expect(row(afterDelete.sessions, sessions.s3)).toMatchObject({ name: 'Beta spike', gone: true, cost: { USD: 0.1 } })
    expect(row(afterDelete.projects, p2).cost).toEqual({ USD: 0.1 })
    expect(row(afterDelete.agents, 'scripted').cost).toEqual({ USD: 1.05 })

    // A line in the middle of spend.jsonl damaged while Switchboard was closed.
    await host.close()
    const file = join(dataDir, 'spend.jsonl')
    const lines = (await readFile(file, 'utf8')).split('\n')
    lines.splice(2, 0, '{"t":"spend","at":"not a time"')
    const damaged = lines.join('\n')
    await writeFile(file, damaged)
    host = await openHost(dataDir)
    const { warnings } = await host.request('app.info', {})
    expect(warnings.join('\n')).toMatch(
      /1 line of .*spend\.jsonl could not be read; the file was moved to .*spend\.corrupt-.*\.jsonl and its \d+ readable entries were kept/
    )
    const aside = (await readdir(dataDir)).find((n) => n.startsWith('spend.corrupt-'))
    expect(await readFile(join(dataDir, aside ?? ''), 'utf8')).toBe(damaged)
    const restarted = await report()
    expect(restarted.total).toEqual(afterDelete.total)
    expect(restarted.sessions).toEqual(afterDelete.sessions)

    // S1 again, in a new agent process: its replay of the old usage updates adds nothing; its new count is new.
    await host.request('sessions.prompt', { id: sessions.s1, text: '/cost 0.01 USD\n/tokens 40 2' })
    const later = await report()
    expect(row(later.sessions, sessions.s1)).toMatchObject({ cost: { USD: 0.06 }, tokens: { total: 1842 } })
    expect(row(later.projects, p1).cost).toEqual({ USD: 0.31, EUR: 1.5 })
    expect(later.total.cost).toEqual({ USD: 1.31, EUR: 1.5 })
  })

  it('exports the rows shown as CSV, values quoted', async () => {
    const projects = spendCsv(await report({ from: between }), 'projects')
    expect(projects).toBe(
      '\uFEFF' +
        [
          '"Project","Cost (USD)","Cost (EUR)","Tokens","Input tokens","Output tokens","Thought tokens","Cached read tokens","Cached write tokens","Last spent","Deleted"',
          `"Acme, ""north""",0.29,1.5,657,550,107,0,0,0,"${row((await report({ from: between })).projects, p1).last}",`,
          `"Beta",0.1,,150,100,50,0,0,0,"${row((await report({ from: between })).projects, p2).last}",`
        ].join('\r\n') +
        '\r\n'
    )
    const sessionsCsv = spendCsv(await report({ from: between }), 'sessions').split('\r\n')
    expect(sessionsCsv[0]).toMatch(/^\uFEFF"Session","Project","Agent","Cost \(USD\)","Cost \(EUR\)",/)
    expect(sessionsCsv.find((line) => line.startsWith('"Beta spike"'))).toMatch(/^"Beta spike","Beta","Scripted",0\.1,,150,.*,"yes"$/)
  })
})
