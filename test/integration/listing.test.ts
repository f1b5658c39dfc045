import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HostEvent } from '../../shared/contract'
import type { SessionRecord } from '../../shared/domain'
import { FIRST_PAGE, newerFirst } from '../../shared/session-listing'
import type { TranscriptHeader } from '../../shared/transcript'
import { Host } from '../../electron/host/host'
import { Store } from '../../electron/host/storage/store'
import { transcriptPath } from '../../electron/host/storage/transcripts'
import { confirmEverything, recordEvents, removeDir, tempDir } from '../helpers'
import { StubAgents } from '../host/stub-agent'

/**
 * The sidebar's listing in pages (`sessions.summary`, `sessions.page`,
 * `sessions.get`, the `sessions.count` event): a data folder of a couple of
 * hundred sessions in two projects and two agents, and the Host with an
 * in-process agent. Pages join up into each group's whole order, and the
 * order and the counts follow sessions added, given a new turn, imported and
 * deleted. (The window's side, on the same index: component/sidebar-listing.)
 */

let root: string
let host: Host
const PROJECTS = ['alpha', 'beta']
const AGENTS = ['stub-x', 'stub-y']
/** Sessions per group, and the ones sharing an `updatedAt` (order by id then). */
const SIZES: Record<string, number> = { 'alpha stub-x': 130, 'alpha stub-y': 40, 'beta stub-x': 25 }
const base = Date.parse('2026-03-01T00:00:00Z')

beforeAll(async () => {
  root = await tempDir('listing')
  const dataDir = join(root, 'data')
  await writeDataFolder(dataDir)
  const stub = new StubAgents({
    // Two sessions made in another client long ago: imported, they belong below what the window has loaded.
    listed: (cwd) =>
      cwd.endsWith('alpha')
        ? [0, 1].map((i) => ({
            sessionId: `elsewhere-${i}`,
            cwd,
            title: `From elsewhere ${i}`,
            updatedAt: new Date(base - (i + 1) * 86_400_000).toISOString()
          }))
        : []
  })
  host = await Host.open({ dataDir, version: 'test', confirmCommand: confirmEverything, presets: [], connectAgent: stub.connect })
})

afterAll(async () => {
  await host?.close()
  await removeDir(root)
})

describe('the listing, from the Host', () => {
  it('answers each project and agent with its count and newest page, pages through the rest in order, and gives records by id', async () => {
    const summary = await host.request('sessions.summary', { limit: FIRST_PAGE })
    expect(summary.map((g) => [`${g.projectId} ${g.agentId}`, g.count, g.sessions.length]).sort()).toEqual(
      Object.entries(SIZES).map(([key, count]) => [key, count, FIRST_PAGE])
    )
    for (const group of summary) {
      const all = await everyPage(group.projectId, group.agentId, 17)
      // Pages join up into the whole group, newest first, each session once (ties in updatedAt included).
      expect(all.map((s) => s.id)).toEqual(await fullOrder(group.projectId, group.agentId))
      expect(group.sessions.map((s) => s.id)).toEqual(all.slice(0, FIRST_PAGE).map((s) => s.id))
    }
    expect(await host.request('sessions.page', { projectId: 'alpha', agentId: 'nobody', limit: 5 })).toEqual({ sessions: [], count: 0 })
    const got = await host.request('sessions.get', { ids: ['alpha-stub-y-3', 'no-such-session', 'beta-stub-x-0'] })
    expect(got.map((s) => s.id)).toEqual(['alpha-stub-y-3', 'beta-stub-x-0'])
  })

  it('gives first pages until the records asked for are given, to the projects in the sidebar’s order, and every group’s count', async () => {
    const asked = FIRST_PAGE + 3
    const inOrder = async (): Promise<[string, number, number][]> =>
      (await host.request('sessions.summary', { limit: FIRST_PAGE, records: asked })).map((g) => [
        `${g.projectId} ${g.agentId}`,
        g.count,
        g.sessions.length
      ])
    // alpha's groups first, the one with the newest session first, each page whole; beta's group past the records asked for: its count only.
    const newestFirst = (await host.request('sessions.summary', { limit: 1 }))
      .filter((g) => g.projectId === 'alpha')
      .sort((a, b) => newerFirst(a.sessions[0], b.sessions[0]))
      .map((g) => `alpha ${g.agentId}`)
    expect(await inOrder()).toEqual([
      [newestFirst[0], SIZES[newestFirst[0]], FIRST_PAGE],
      [newestFirst[1], SIZES[newestFirst[1]], FIRST_PAGE],
      ['beta stub-x', 25, 0]
    ])
    // Moved to the top of the sidebar, beta's sessions come first.
    await host.request('projects.reorder', { projectIds: ['beta', 'alpha'] })
    try {
      expect((await inOrder())[0]).toEqual(['beta stub-x', 25, FIRST_PAGE])
      expect((await inOrder()).map(([, , n]) => n)).toEqual([FIRST_PAGE, FIRST_PAGE, 0])
    } finally {
      await host.request('projects.reorder', { projectIds: ['alpha', 'beta'] })
    }
  })

  it('tells the windows a group’s count when a session is added or deleted, and moves one with a new turn to the top', async () => {
    const events = recordEvents(host)
    const record = await host.request('sessions.new', { projectId: 'beta', agentId: 'stub-x' })
    host.events.flush()
    expect(countsIn(events)).toEqual([{ projectId: 'beta', agentId: 'stub-x', count: 26 }])
    expect((await firstPage('beta', 'stub-x'))[0]).toBe(record.id)

    // The oldest session of the group gets a turn: it leads the first page, and no count changes.
    events.length = 0
    await host.request('sessions.prompt', { id: 'beta-stub-x-0', text: 'Once more' })
    host.events.flush()
    expect(countsIn(events)).toEqual([])
    expect((await firstPage('beta', 'stub-x')).slice(0, 2)).toEqual(['beta-stub-x-0', record.id])

    events.length = 0
    await host.request('sessions.delete', { id: record.id, keepTranscript: false })
    host.events.flush()
    expect(countsIn(events)).toEqual([{ projectId: 'beta', agentId: 'stub-x', count: 25 }])
    expect(await firstPage('beta', 'stub-x')).not.toContain(record.id)
    expect(await host.request('sessions.get', { ids: [record.id] })).toEqual([])

    // Imported from the agent's own list: counted, and placed by their own (older) times, at the end.
    events.length = 0
    await host.request('sessions.import', { projectId: 'alpha', agentId: 'stub-x' })
    host.events.flush()
    expect(countsIn(events)).toEqual([
      { projectId: 'alpha', agentId: 'stub-x', count: 131 },
      { projectId: 'alpha', agentId: 'stub-x', count: 132 }
    ])
    expect((await everyPage('alpha', 'stub-x', 50)).slice(-2).map((s) => s.title)).toEqual(['From elsewhere 0', 'From elsewhere 1'])
  })
})

async function everyPage(projectId: string, agentId: string, limit: number): Promise<SessionRecord[]> {
  const all: SessionRecord[] = []
  for (;;) {
    const last = all.at(-1)
    const page = await host.request('sessions.page', { projectId, agentId, limit, before: last && { updatedAt: last.updatedAt, id: last.id } })
    all.push(...page.sessions)
    if (page.sessions.length < limit) return all
  }
}

async function firstPage(projectId: string, agentId: string): Promise<string[]> {
  return (await host.request('sessions.page', { projectId, agentId, limit: FIRST_PAGE })).sessions.map((s) => s.id)
}

/** The group as the Host holds it now, sorted here from the whole list (`sessions.list`, which tools and tests still have). */
async function fullOrder(projectId: string, agentId: string): Promise<string[]> {
  return (await host.request('sessions.list', { projectId }))
    .filter((s) => s.agentId === agentId)
    .sort(newerFirst)
    .map((s) => s.id)
}

function countsIn(events: HostEvent[]): unknown[] {
  return events.flatMap((e) => (e.type === 'sessions.count' ? [e.payload] : []))
}

/**
 * The groups of SIZES, written as the app writes them (db.json and a
 * transcript header each). Every third session shares its `updatedAt` with
 * the one before it, so pages must order ties by id.
 */
async function writeDataFolder(dataDir: string): Promise<void> {
  await mkdir(join(dataDir, 'transcripts'), { recursive: true })
  const { store } = await Store.open(dataDir, [])
  for (const id of AGENTS) store.data.agents.push({ id, name: id, transport: { kind: 'process', command: 'stub-agent', args: [], env: {} } })
  for (const id of PROJECTS) {
    const cwd = join(root, id)
    await mkdir(cwd, { recursive: true })
    store.data.projects.push({ id, name: id, cwd, createdAt: new Date(base).toISOString() })
  }
  for (const [key, size] of Object.entries(SIZES)) {
    const [projectId, agentId] = key.split(' ')
    for (let i = 0; i < size; i++) {
      const at = new Date(base + (i - (i % 3 === 2 ? 1 : 0)) * 60_000).toISOString()
      const record: SessionRecord = {
        id: `${projectId}-${agentId}-${i}`,
        acpSessionId: `acp-${projectId}-${agentId}-${i}`,
        agentId,
        projectId,
        cwd: join(root, projectId),
        title: `Session ${i} of ${key}`,
        titleSource: 'prompt',
        createdAt: at,
        updatedAt: at
      }
      store.data.sessions.push(record)
      const header: TranscriptHeader = {
        t: 'header',
        v: 2,
        id: record.id,
        acpSessionId: `acp-${record.id}`,
        agentId,
        projectId,
        cwd: record.cwd,
        createdAt: at
      }
      // A turn on record: continuing the session resumes it (the view is kept) rather than asking the agent to replay it.
      const turn = [
        { t: 'prompt', at, content: [{ type: 'text', text: `Question ${i}` }] },
        { t: 'stop', at, stopReason: 'end_turn' }
      ]
      await writeFile(transcriptPath(join(dataDir, 'transcripts'), record.id), [header, ...turn].map((r) => JSON.stringify(r)).join('\n') + '\n')
    }
  }
  await store.save()
}
