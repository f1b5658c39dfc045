import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { HostEvent } from '../../shared/contract'
import type { Host } from '../../electron/host/host'
import { DB_VERSION } from '../../electron/host/store'
import { entriesOf, fold, openHost, recordEvents, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/** session/request_permission: asked inline, "always" answers remembered per agent + project + tool kind, revocable. */

let root: string
let dataDir: string
let host: Host
let events: HostEvent[]
let projectId: string
let agentId: string

beforeEach(async () => {
  root = await tempDir('permissions')
  dataDir = join(root, 'data')
  await mkdir(join(root, 'project'))
  host = await openHost(dataDir)
  events = recordEvents(host)
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state')))).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

/** Runs a prompt, answering the permission request it raises (if any) with `optionId`. */
async function promptAnswering(id: string, text: string, optionId: string | null): Promise<string> {
  const turn = host.request('sessions.prompt', { id, text })
  let ended = false
  void turn.then(
    () => (ended = true),
    () => (ended = true)
  )
  // The turn may end without asking (a remembered answer): then there is nothing to answer.
  const permission = await waitUntil('the permission request or the end of the turn', async () => {
    if (ended) return 'ended'
    return (await host.request('sessions.open', { id })).state.permissions?.[0] ?? null
  })
  if (permission !== 'ended') await host.request('sessions.respondPermission', { id, requestId: permission.requestId, optionId })
  await turn
  const thread = fold((await host.request('sessions.open', { id })).records)
  return (entriesOf(thread, 'assistant').at(-1) as { text: string }).text
}

describe('permissions', () => {
  it('remembers "always allow" for that tool kind, in that project, for that agent, until revoked', async () => {
    const first = await host.request('sessions.new', { projectId, agentId })
    expect(await promptAnswering(first.id, '/permission-always execute', 'allow-always')).toBe('permission: allow-always')
    const rules = await host.request('permissions.list', { projectId })
    expect(rules).toMatchObject([{ agentId, projectId, toolKind: 'execute', decision: 'allow' }])
    host.events.flush()
    expect(events.some((e) => e.type === 'permissions.changed')).toBe(true)

    // Another session of the same agent and project: answered without asking.
    const second = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: second.id, text: '/permission-always execute' })
    const thread = fold((await host.request('sessions.open', { id: second.id })).records)
    expect(entriesOf(thread, 'permission')).toMatchObject([{ answer: 'Always allow', allowed: true, remembered: true }])

    // A different kind of tool still asks.
    expect(await promptAnswering(second.id, '/permission-always edit', 'reject')).toBe('permission: reject')

    await host.request('permissions.revoke', { ruleId: rules[0].id })
    expect(await host.request('permissions.list', {})).toEqual([])
    expect(await promptAnswering(second.id, '/permission-always execute', 'reject')).toBe('permission: reject')
  })

  it('remembers "always reject" too, and survives a restart', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    await promptAnswering(session.id, '/permission-always execute', 'reject-always')
    await host.close()
    host = await openHost(dataDir)
    await host.request('sessions.prompt', { id: session.id, text: '/permission-always execute' })
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('permission: reject-always')
    expect(entriesOf(thread, 'permission').at(-1)).toMatchObject({ answer: 'Always reject', allowed: false, remembered: true })
  })

  it('refuses an option the agent did not offer, and records a dismissal', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: session.id, text: '/permission' })
    let requestId: string | undefined
    await expect
      .poll(async () => (requestId = (await host.request('sessions.open', { id: session.id })).state.permissions?.[0]?.requestId))
      .toBeDefined()
    await expect(host.request('sessions.respondPermission', { id: session.id, requestId: requestId!, optionId: 'allow-always' })).rejects.toThrow(
      /'allow-always' is not one of the options the agent offered \(allow, reject\)/
    )
    await host.request('sessions.respondPermission', { id: session.id, requestId: requestId!, optionId: null })
    await turn
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect(entriesOf(thread, 'permission')).toMatchObject([{ answer: 'Dismissed', allowed: false, remembered: false }])
    expect(await host.request('permissions.list', {})).toEqual([])
  })
})

describe('several permission requests at once', () => {
  it('lists both, oldest first, and answers each on its own', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: session.id, text: '/permissions 2' })
    const pending = await waitUntil('two pending requests', async () => {
      const list = (await host.request('sessions.open', { id: session.id })).state.permissions ?? []
      return list.length === 2 ? list : null
    })
    expect(pending.map((p) => p.title)).toEqual(['Step 1 of 2', 'Step 2 of 2'])

    // The second first: the first stays listed and waiting.
    await host.request('sessions.respondPermission', { id: session.id, requestId: pending[1].requestId, optionId: 'reject' })
    const after = (await host.request('sessions.open', { id: session.id })).state.permissions ?? []
    expect(after.map((p) => p.requestId)).toEqual([pending[0].requestId])
    await host.request('sessions.respondPermission', { id: session.id, requestId: pending[0].requestId, optionId: 'allow' })

    expect(await turn).toEqual({ stopReason: 'end_turn' })
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('permissions: allow, reject')
    expect(entriesOf(thread, 'permission').map((e) => (e as { title: string; answer: string }).title)).toEqual(['Step 2 of 2', 'Step 1 of 2'])
    expect((await host.request('sessions.open', { id: session.id })).state.permissions).toEqual([])
  })
})

describe('database migrations', () => {
  it('migrates a version 1 db.json, keeping a backup and every record', async () => {
    await host.close()
    const v1 = {
      version: 1,
      projects: [{ id: 'p1', name: 'old', cwd: join(root, 'project'), createdAt: '2026-01-01T00:00:00.000Z' }],
      agents: [{ id: 'a1', name: 'Old agent', command: 'old-agent', args: [], env: {} }],
      sessions: []
    }
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(v1))
    host = await openHost(dataDir)
    const migrated = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8'))
    expect(migrated).toEqual({ ...v1, version: DB_VERSION, permissionRules: [], mcpProfiles: [], mcpDisabled: {} })
    expect(JSON.parse(await readFile(join(dataDir, 'db.v1.backup.json'), 'utf8'))).toEqual(v1)
    expect(await host.request('projects.list', {})).toEqual(v1.projects)
  })

  it('refuses a database from a newer Switchboard without touching it', async () => {
    await host.close()
    const future = JSON.stringify({ version: 99, projects: [], agents: [], sessions: [] })
    await writeFile(join(dataDir, 'db.json'), future)
    await expect(openHost(dataDir)).rejects.toThrow(`written by a newer Switchboard (database version 99, this one reads ${DB_VERSION})`)
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).toBe(future)
    expect(existsSync(join(dataDir, 'db.v99.backup.json'))).toBe(false)
    host = await openHost(join(root, 'other-data'))
  })
})

describe('$/cancel_request', () => {
  it('takes a withdrawn permission request off the screen and answers it cancelled', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: session.id, text: '/permission-withdrawn 300' })
    await expect.poll(async () => Boolean((await host.request('sessions.open', { id: session.id })).state.permissions?.[0])).toBe(true)
    await turn
    const snapshot = await host.request('sessions.open', { id: session.id })
    expect(snapshot.state.permissions?.[0]).toBeFalsy()
    const thread = fold(snapshot.records)
    expect((entriesOf(thread, 'assistant').at(-1) as { text: string }).text).toBe('withdrawn: cancelled')
    expect(entriesOf(thread, 'permission')).toMatchObject([{ answer: 'Dismissed', allowed: false }])
  })
})
