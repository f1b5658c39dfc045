import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { HostEvent } from '../../shared/contract'
import type { PermissionRule, SessionRecord } from '../../shared/domain'
import { EventBus } from '../../electron/host/contract/events'
import { Records } from '../../electron/host/storage/records'
import { DB_VERSION, Store, type DbData } from '../../electron/host/storage/store'
import { removeDir, tempDir } from '../helpers'

/**
 * Records is the one way the Host changes db.json's data: each update changes
 * it, saves it and tells the windows in one step, and what every other room
 * gets is read-only to the type checker.
 */

let dataDir: string
let records: Records
let told: HostEvent[]

const at = (hour: number): string => new Date(Date.UTC(2026, 0, 1, hour)).toISOString()
const session = (id: string, hour: number): SessionRecord => ({
  id,
  acpSessionId: `acp-${id}`,
  agentId: 'a',
  projectId: 'p',
  cwd: '/home/me/p',
  title: `Session ${id}`,
  titleSource: 'prompt',
  createdAt: at(hour),
  updatedAt: at(hour)
})

beforeEach(async () => {
  dataDir = await tempDir('records')
  const data: DbData = {
    version: DB_VERSION,
    projects: [{ id: 'p', name: 'p', cwd: '/home/me/p', createdAt: at(0) }],
    agents: [{ id: 'a', name: 'A', transport: { kind: 'process', command: 'a', args: [], env: {} } }],
    sessions: [session('s1', 1), session('s2', 2), session('s3', 3)],
    permissionRules: [],
    mcpProfiles: [],
    mcpDisabled: {}
  }
  await writeFile(join(dataDir, 'db.json'), JSON.stringify(data))
  const { store } = await Store.open(dataDir, [])
  const events = new EventBus()
  told = []
  events.tap((event) => told.push(event))
  records = new Records(store, events)
})
afterEach(async () => removeDir(dataDir))

async function onDisk(): Promise<DbData> {
  return JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as DbData
}

describe('Records', () => {
  it('saves a session change and tells the windows once, with the record as saved', async () => {
    await records.updateSession('s1', { title: 'Renamed', titleSource: 'user' })
    expect((await onDisk()).sessions.find((s) => s.id === 's1')).toMatchObject({ title: 'Renamed', titleSource: 'user' })
    expect(told.map((e) => e.type)).toEqual(['session.record'])
    expect(told[0].payload).toMatchObject({ id: 's1', title: 'Renamed' })
  })

  it('moves a session whose last activity changed to the top of its group, its count unchanged', async () => {
    await records.updateSession('s1', { updatedAt: at(9) })
    expect(records.listing.page('p', 'a', undefined, 10).sessions.map((s) => s.id)).toEqual(['s1', 's3', 's2'])
    expect(told.map((e) => e.type)).toEqual(['session.record'])
  })

  it('drops a field set to undefined from db.json', async () => {
    await records.updateSession('s2', { unseen: { at: at(5), stopReason: 'end_turn' } })
    await records.updateSession('s2', { unseen: undefined })
    expect('unseen' in (await onDisk()).sessions.find((s) => s.id === 's2')!).toBe(false)
  })

  it('adds a session with its group count, and removes one with the count that is left', async () => {
    await records.addSessions(session('s4', 4))
    expect(told.map((e) => e.type)).toEqual(['session.record', 'sessions.count'])
    expect(told[1].payload).toEqual({ projectId: 'p', agentId: 'a', count: 4 })
    told.length = 0
    await records.removeSession('s2')
    expect((await onDisk()).sessions.map((s) => s.id)).toEqual(['s1', 's3', 's4'])
    expect(told).toEqual([
      { type: 'session.removed', payload: { id: 's2' } },
      { type: 'sessions.count', payload: { projectId: 'p', agentId: 'a', count: 3 } }
    ])
  })

  it('never brings a removed session back by a late change (a turn that ends after its session was deleted)', async () => {
    await records.removeSession('s3')
    told.length = 0
    await records.updateSession('s3', { updatedAt: at(10) })
    expect(told).toEqual([])
    expect((await onDisk()).sessions.map((s) => s.id)).toEqual(['s1', 's2'])
    expect(records.listing.page('p', 'a', undefined, 10).count).toBe(2)
  })

  it('saves the remembered permissions and tells the windows the whole list once', async () => {
    const rule: PermissionRule = {
      id: 'r1',
      agentId: 'a',
      projectId: 'p',
      tool: 'Bash',
      toolKind: 'execute',
      scope: { kind: 'command', command: 'ls' },
      decision: 'allow',
      createdAt: at(6)
    }
    await records.setRules([rule])
    expect((await onDisk()).permissionRules).toEqual([rule])
    expect(told).toEqual([{ type: 'permissions.changed', payload: [rule] }])
  })

  it('removes a project with the permissions remembered for it, telling both lists', async () => {
    await records.setRules([
      { id: 'r1', agentId: 'a', projectId: 'p', tool: 'Read', toolKind: 'read', scope: { kind: 'files' }, decision: 'allow', createdAt: at(6) }
    ])
    told.length = 0
    await records.removeProject('p')
    const disk = await onDisk()
    expect([disk.projects, disk.permissionRules]).toEqual([[], []])
    expect(told.map((e) => e.type)).toEqual(['projects.changed', 'permissions.changed'])
  })

  it('hands out data no other room can write: each write below fails to compile', () => {
    // Never run: `npm run typecheck` checks that each marked line is an error (an unused @ts-expect-error is one too).
    const writes = (): void => {
      // @ts-expect-error a list of the saved data is read-only
      records.data.projects[1] = { id: 'x', name: 'x', cwd: '/x', createdAt: at(0) }
      // @ts-expect-error a list cannot be replaced
      records.data.permissionRules = []
      // @ts-expect-error a record's field is read-only
      records.session('s1').title = 'Changed in place'
      // @ts-expect-error nor can one be deleted
      delete records.agent('a').startingMode
    }
    expect(typeof writes).toBe('function')
  })
})
