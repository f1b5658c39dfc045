import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { dbText, LAYOUT_KEY, parseRest, readDbText } from '../../electron/host/storage/db-file'
import { EventBus } from '../../electron/host/contract/events'
import { Host } from '../../electron/host/host'
import { Records } from '../../electron/host/storage/records'
import { SessionListing } from '../../electron/host/storage/session-listing'
import { DB_VERSION, Store, type DbData } from '../../electron/host/storage/store'
import type { SessionRecord } from '../../shared/domain'
import { FIRST_PAGE, FIRST_RECORDS } from '../../shared/session-listing'
import { FIRST_LOAD } from '../../renderer/src/first-load'
import { removeDir, tempDir } from '../helpers'

/**
 * db.json's layout (db-file.ts): the Host opens with the records the window's
 * first load reads and each group's count, and reads the rest when it needs
 * them, never writing a file without them.
 */

let dataDir: string
beforeEach(async () => (dataDir = await tempDir('db-file')))
afterEach(async () => {
  vi.restoreAllMocks()
  await removeDir(dataDir)
})

const day = (n: number): string => new Date(Date.UTC(2026, 0, 1) + n * 3_600_000).toISOString()

function session(id: string, projectId: string, agentId: string, hour: number, extra: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    acpSessionId: `acp-${id}`,
    agentId,
    projectId,
    cwd: `/home/me/${projectId}`,
    title: `Session ${id}`,
    titleSource: 'prompt',
    createdAt: day(hour),
    updatedAt: day(hour),
    ...extra
  }
}

/** 3 projects, 2 agents: 40 sessions in p1 with a, 3 in p1 with b, 25 in p2 with a, 1 in p3 with b; one old unseen, one old queued. */
function history(): DbData {
  const sessions: SessionRecord[] = []
  for (let i = 0; i < 40; i++) sessions.push(session(`p1a-${i}`, 'p1', 'a', i))
  for (let i = 0; i < 3; i++) sessions.push(session(`p1b-${i}`, 'p1', 'b', 100 + i))
  for (let i = 0; i < 25; i++) sessions.push(session(`p2a-${i}`, 'p2', 'a', 50 - i))
  sessions.push(session('p3b-0', 'p3', 'b', 7))
  // Old ones the first load reads all the same: the inbox lists a turn unseen, the queue is shown at start.
  sessions[2].unseen = { at: day(200), stopReason: 'end_turn' }
  sessions[60].queue = [{ id: 'q1', text: 'and then the docs', attachments: [], queuedAt: day(201) }]
  return {
    version: DB_VERSION,
    projects: ['p1', 'p2', 'p3'].map((id) => ({ id, name: id, cwd: `/home/me/${id}`, createdAt: day(0) })),
    agents: [
      { id: 'a', name: 'A', transport: { kind: 'process', command: 'a', args: [], env: {} } },
      { id: 'b', name: 'B', transport: { kind: 'process', command: 'b', args: [], env: {} } }
    ],
    sessions,
    permissionRules: [],
    mcpProfiles: [],
    mcpDisabled: {}
  }
}

const ids = (records: readonly SessionRecord[]): string[] => records.map((r) => r.id).sort()

describe("db.json's layout", () => {
  it('is JSON any reader takes whole, with the first load’s records first and the rest after', async () => {
    const data = history()
    const text = dbText(data)
    const { [LAYOUT_KEY]: layout, ...whole } = JSON.parse(text) as DbData & Record<string, unknown>
    expect(ids(whole.sessions)).toEqual(ids(data.sessions))
    expect(whole).toEqual({ ...data, sessions: whole.sessions })
    expect(layout).toEqual({
      groups: [
        ['p1', 'a', 40],
        ['p1', 'b', 3],
        ['p2', 'a', 25],
        ['p3', 'b', 1]
      ],
      first: FIRST_PAGE + 3 + FIRST_PAGE + 1 + 2
    })

    const read = readDbText(text)
    const first = (read.data as DbData).sessions
    // Each group's newest page, the unseen and the queued: nothing else.
    expect(ids(first)).toEqual(
      [
        ...Array.from({ length: FIRST_PAGE }, (_, i) => `p1a-${39 - i}`),
        'p1b-0',
        'p1b-1',
        'p1b-2',
        ...Array.from({ length: FIRST_PAGE }, (_, i) => `p2a-${i}`),
        'p3b-0',
        'p1a-2',
        'p2a-17'
      ].sort()
    )
    const rest = parseRest((await read.rest?.()) ?? '')
    expect(ids([...first, ...rest])).toEqual(ids(data.sessions))
    expect(rest.find((r) => r.id === 'p1a-0')).toEqual(data.sessions[0])
  })

  it('puts a session whose turn was under way when the last Host stopped without closing in the first part: it is listed as the Host opens', () => {
    const data = history()
    data.sessions[3].underWay = 'your permission (“rm -rf build/”)'
    const first = (readDbText(dbText(data)).data as DbData).sessions
    expect(ids(first)).toContain('p1a-3')
    expect(ids(first)).not.toContain('p1a-4')
  })

  it('is read whole when the file is laid out otherwise (an older Switchboard’s, or edited by hand)', () => {
    const data = history()
    for (const text of [JSON.stringify(data), JSON.stringify(data, null, 2), dbText(data).replace(`"${LAYOUT_KEY}":`, '"other":')]) {
      const read = readDbText(text)
      expect(read.rest).toBeNull()
      expect(ids((read.data as DbData).sessions)).toEqual(ids(data.sessions))
    }
    expect(() => readDbText('{"version": 5, "projects": [')).toThrow()
  })

  it('opens with the first part: the first load’s listing is the one every record gives, and the rest comes when asked', async () => {
    const data = history()
    await writeFile(join(dataDir, 'db.json'), dbText(data))
    const { store } = await Store.open(dataDir, [])
    const records = new Records(store, new EventBus())
    expect(store.isWhole).toBe(false)
    expect(store.data.sessions.length).toBeLessThan(data.sessions.length)

    const everyRecord = new SessionListing(data.sessions)
    const order = ['p1', 'p2', 'p3']
    expect(records.listing.summary(FIRST_PAGE, FIRST_RECORDS, order)).toEqual(everyRecord.summary(FIRST_PAGE, FIRST_RECORDS, order))
    expect(records.listing.summary(FIRST_PAGE, 10, order)).toEqual(everyRecord.summary(FIRST_PAGE, 10, order))

    await store.whole()
    expect(store.isWhole).toBe(true)
    expect(ids(store.data.sessions)).toEqual(ids(data.sessions))
    expect(records.listing.page('p1', 'a', { updatedAt: day(30), id: 'p1a-30' }, 50).sessions.map((s) => s.id)).toEqual(
      Array.from({ length: 30 }, (_, i) => `p1a-${29 - i}`)
    )
    expect(records.listing.summary(50, undefined, order)).toEqual(everyRecord.summary(50, undefined, order))
  })

  it('reads on past the first 256 KB when the first part is longer (many projects, long titles)', async () => {
    const data = history()
    data.sessions = []
    for (let p = 0; p < 300; p++) {
      for (let i = 0; i <= FIRST_PAGE; i++)
        data.sessions.push(session(`s${p}-${i}`, `p${p}`, 'a', i, { title: `${'A long title '.repeat(20)}${p}-${i}` }))
    }
    const text = dbText(data)
    expect(text.indexOf('\n', text.indexOf('\n') + 1)).toBeGreaterThan(256 * 1024)
    await writeFile(join(dataDir, 'db.json'), text)
    const { store } = await Store.open(dataDir, [])
    expect(store.isWhole).toBe(false)
    expect(store.data.sessions).toHaveLength(300 * FIRST_PAGE)
    expect(store.data.sessions.some((s) => s.id.endsWith('-0'))).toBe(false)
    await store.whole()
    expect(ids(store.data.sessions)).toEqual(ids(data.sessions))
  })

  it('never writes a file without the records not read yet: a save reads them first', async () => {
    await writeFile(join(dataDir, 'db.json'), dbText(history()))
    const { store } = await Store.open(dataDir, [])
    const records = new Records(store, new EventBus())
    store.data.projects[0].name = 'renamed'
    await store.save()

    const saved = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as DbData
    expect(saved.projects[0].name).toBe('renamed')
    expect(ids(saved.sessions)).toEqual(ids(history().sessions))
    // Read on the way, and listed.
    expect(store.isWhole).toBe(true)
    expect(records.listing.page('p1', 'a', undefined, 50).sessions).toHaveLength(40)
  })

  it('recovers the rest from the transcripts when it cannot be read, keeping the damaged file and saying so', async () => {
    const data = history()
    // A record of the rest is cut short: the first line and the first part read, the rest does not.
    const text = dbText(data).replace(/"id":"p1a-0"[^\n]*\n/, '"id":"p1a-0",\n')
    await writeFile(join(dataDir, 'db.json'), text)
    await mkdir(join(dataDir, 'transcripts'))
    const header = { t: 'header', v: 2, id: 'p1a-0', acpSessionId: 'acp-p1a-0', agentId: 'a', projectId: 'p1', cwd: '/home/me/p1', createdAt: day(0) }
    await writeFile(join(dataDir, 'transcripts', 'p1a-0.jsonl'), `${JSON.stringify(header)}\n`)
    const { store, warnings } = await Store.open(dataDir, [])
    const events = new EventBus()
    const counts: unknown[] = []
    events.subscribe((batch) => counts.push(...batch.filter((e) => e.type === 'sessions.count').map((e) => e.payload)))
    const records = new Records(store, events)
    expect(warnings).toEqual([])

    await store.whole()
    const aside = (await readdir(dataDir)).filter((n) => n.startsWith('db.corrupt-'))
    expect(aside).toHaveLength(1)
    expect(await readFile(join(dataDir, aside[0]), 'utf8')).toBe(text)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain("db.json's older sessions could not be read")
    expect(warnings[0]).toContain('1 session(s) were recovered from their transcripts')
    // The first part's records are kept as they were, with the one recovered; the windows hear the counts that changed.
    expect(store.data.sessions.find((s) => s.id === 'p1a-2')?.unseen).toBeDefined()
    expect(store.data.sessions.find((s) => s.id === 'p1a-0')).toMatchObject({ projectId: 'p1', agentId: 'a', title: 'Recovered session' })
    events.flush()
    expect(counts).toContainEqual({ projectId: 'p1', agentId: 'a', count: FIRST_PAGE + 2 })
    // Saved whole again: the next open reads every record there is.
    await store.save()
    const reopened = await Store.open(dataDir, [])
    await reopened.store.whole()
    expect(ids(reopened.store.data.sessions)).toEqual(ids(store.data.sessions))
  })

  it('gives the window’s first load the same answers as every record would, without reading the rest; anything else reads it', async () => {
    const data = history()
    const firstLoad = async (text: string): Promise<{ answers: unknown[]; readRest: boolean; sessions: number }> => {
      await writeFile(join(dataDir, 'db.json'), text)
      const whole = vi.spyOn(Store.prototype, 'whole')
      const host = await Host.open({ dataDir, version: 'test', presets: [] })
      try {
        const answers = []
        for (const [method, params] of FIRST_LOAD) answers.push(await host.request(method, params as never))
        const readRest = whole.mock.calls.length > 0
        const sessions = (await host.request('sessions.list', {})).length
        return { answers, readRest, sessions }
      } finally {
        whole.mockRestore()
        await host.close()
      }
    }
    const inPart = await firstLoad(dbText(data))
    const whole = await firstLoad(JSON.stringify(data))
    expect(inPart.readRest).toBe(false)
    expect(inPart.answers).toEqual(whole.answers)
    // The first load's listing is the sidebar's: counts for every group, the newest page of each.
    const summary = inPart.answers[FIRST_LOAD.findIndex(([method]) => method === 'sessions.summary')] as { count: number }[]
    expect(summary.map((g) => g.count).sort((a, b) => a - b)).toEqual([1, 3, 25, 40])
    expect(inPart.sessions).toBe(data.sessions.length)
    expect(whole.sessions).toBe(data.sessions.length)
  })
})
