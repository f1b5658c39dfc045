import { cp, mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HostEvent } from '../../shared/contract'
import type { InboxItem } from '../../shared/inbox'
import type { Host } from '../../electron/host/host'
import { openHost, recordEvents, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * The inbox, at the Host: what waits on the user in several sessions of two
 * projects at once (two permission requests, a question, an agent to sign in
 * to, a failed turn, a finished one), each said with its project, agent and
 * session; answered through the requests the inbox's window uses; seen when a
 * window shows the session; and after a restart, the failed and unseen turns
 * still there while a permission whose agent is gone is no longer offered.
 * One Host (then its restart on the same data), one scripted agent.
 */

let root: string
let dataDir: string
let host: Host
let events: HostEvent[]
const projects = { app: '', docs: '' }
let agentId: string
let lockedId: string

beforeAll(async () => {
  root = await tempDir('inbox')
  dataDir = join(root, 'data')
  await mkdir(join(root, 'app'))
  await mkdir(join(root, 'docs'))
  host = await openHost(dataDir)
  events = recordEvents(host)
  projects.app = (await host.request('projects.add', { cwd: join(root, 'app') })).id
  projects.docs = (await host.request('projects.add', { cwd: join(root, 'docs') })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state')))).id
  lockedId = (await host.request('agents.add', scriptedAgent(join(root, 'state-locked'), { SCRIPTED_AGENT_AUTH: '1' }, 'Locked'))).id
})

afterAll(async () => {
  await host.close()
  await removeDir(root)
})

async function session(project: keyof typeof projects, title: string): Promise<string> {
  const { id } = await host.request('sessions.new', { projectId: projects[project], agentId })
  await host.request('sessions.rename', { id, title })
  return id
}

/** What the list says of each item: kind, project, agent, session. */
function shape(items: InboxItem[]): string[] {
  return items.map((i) => `${i.kind} · ${i.project?.name ?? '-'} · ${i.agent.name} · ${i.session?.title ?? '-'}`)
}

const list = (): Promise<InboxItem[]> => host.request('inbox.list', {})

describe('the inbox', () => {
  const ids = { build: '', release: '', deploy: '', overloaded: '', summary: '', late: '' }

  it('lists what waits in every session and project at once, answered and seen from there', async () => {
    ids.summary = await session('app', 'Summarise the README')
    ids.overloaded = await session('docs', 'Translate the guide')
    ids.build = await session('app', 'Clean the build')
    ids.release = await session('docs', 'Tag the release')
    ids.deploy = await session('app', 'Deploy staging')
    await host.request('sessions.prompt', { id: ids.summary, text: 'summarise it' })
    await expect(host.request('sessions.prompt', { id: ids.overloaded, text: '/fail The model is overloaded' })).rejects.toThrow(/overloaded/)
    const turns = [host.request('sessions.prompt', { id: ids.build, text: '/permission' })]
    // Oldest first: the second request is asked once the first is listed.
    await waitUntil('the first permission request', async () => (await list()).some((i) => i.kind === 'permission'))
    turns.push(host.request('sessions.prompt', { id: ids.release, text: '/permission' }))
    turns.push(host.request('sessions.prompt', { id: ids.deploy, text: '/elicit' }))
    await expect(host.request('sessions.new', { projectId: projects.app, agentId: lockedId })).rejects.toThrow(/sign in/)

    const items = await waitUntil('six things waiting', async () => {
      const now = await list()
      return now.length === 6 ? now : null
    })
    // What blocks an agent first (oldest first), then what is only to be read.
    expect(shape(items)).toEqual([
      'permission · app · Scripted · Clean the build',
      'permission · docs · Scripted · Tag the release',
      'elicitation · app · Scripted · Deploy staging',
      'sign_in · - · Locked · -',
      'error · docs · Scripted · Translate the guide',
      'finished · app · Scripted · Summarise the README'
    ])
    const [build, release, deploy, signIn, failed, finished] = items
    expect(build).toMatchObject({ permission: { title: 'Run dangerous command', options: [{ optionId: 'allow' }, { optionId: 'reject' }] } })
    expect(deploy).toMatchObject({ elicitation: { message: 'Which deployment should I use?' } })
    expect(signIn).toMatchObject({ summary: 'Locked needs you to sign in first.' })
    expect(failed).toMatchObject({ message: expect.stringContaining('The model is overloaded') })
    // A finished turn shows the start of the agent's reply.
    expect(finished).toMatchObject({ stopReason: 'end_turn', reply: 'You said: summarise it' })
    // Every window was told the same list.
    await waitUntil('the list told to the windows', () =>
      events.some((e) => e.type === 'inbox.changed' && JSON.stringify(e.payload) === JSON.stringify(items))
    )

    // Answered in place, each on its own (each turn then ends): the other sessions still wait.
    const [buildTurn, releaseTurn, deployTurn] = turns
    await host.request('sessions.respondPermission', {
      id: ids.build,
      requestId: build.kind === 'permission' ? build.permission.requestId : '',
      optionId: 'allow'
    })
    await buildTurn
    expect(shape(await list())).toContain('permission · docs · Scripted · Tag the release')
    await host.request('inbox.dismiss', { itemId: release.id })
    await releaseTurn
    if (deploy.kind !== 'elicitation') throw new Error('not a question')
    await host.request('elicitations.answer', {
      requestId: deploy.elicitation.requestId,
      action: 'accept',
      content: { target: 'staging', replicas: 2, regions: ['eu'] }
    })
    await deployTurn
    await host.request('inbox.dismiss', { itemId: signIn.id })
    // A window shows the summary: its finished turn is seen.
    await host.request('inbox.seen', { sessionIds: [ids.summary] })
    // The answered turns have ended since, and their results are not seen yet.
    expect(shape(await list())).toEqual([
      'error · docs · Scripted · Translate the guide',
      'finished · app · Scripted · Clean the build',
      'finished · docs · Scripted · Tag the release',
      'finished · app · Scripted · Deploy staging'
    ])
    // What each answer did reached the agent.
    const said = async (id: string) => JSON.stringify((await host.request('sessions.open', { id })).records.filter((r) => r.t === 'update'))
    expect(await said(ids.build)).toContain('permission: allow')
    expect(await said(ids.release)).toContain('permission: cancelled')
    expect(await said(ids.deploy)).toContain('elicitation: accept')
    expect(await host.handle('inbox.dismiss', { itemId: release.id })).toMatchObject({ ok: false, error: { message: /no longer in the inbox/ } })
  })

  it('keeps failed and unseen turns across a restart, and no longer offers a permission whose agent is gone', async () => {
    ids.late = await session('docs', 'Rotate the keys')
    const waiting = host.request('sessions.prompt', { id: ids.late, text: '/permission' }).catch((error: Error) => error)
    const asked = await waitUntil('the permission request', async () => (await list()).find((i) => i.kind === 'permission'))
    await host.close()
    await waiting
    host = await openHost(dataDir)

    const items = await list()
    expect(shape(items)).toEqual([
      'error · docs · Scripted · Translate the guide',
      'error · docs · Scripted · Rotate the keys',
      'finished · app · Scripted · Clean the build',
      'finished · docs · Scripted · Tag the release',
      'finished · app · Scripted · Deploy staging'
    ])
    expect(items[0]).toMatchObject({ message: expect.stringContaining('The model is overloaded') })
    expect(items[1]).toMatchObject({
      message:
        'Switchboard was closed while Scripted waited for your permission (“Run dangerous command”), so that turn was cut short and can no longer be answered. Send again to go on.'
    })
    const answer = await host.handle('sessions.respondPermission', {
      id: ids.late,
      requestId: asked.kind === 'permission' ? asked.permission.requestId : '',
      optionId: 'allow'
    })
    expect(answer).toMatchObject({ ok: false, error: { message: 'That permission request is no longer pending' } })

    await host.request('inbox.seen', { sessionIds: [ids.late, ids.build, ids.release, ids.deploy] })
    await host.request('inbox.dismiss', { itemId: items[0].id })
    expect(await list()).toEqual([])
    // What was seen stays seen.
    await host.close()
    host = await openHost(dataDir)
    expect(await list()).toEqual([])
  })

  it('lists a turn cut short by a Host that stopped without closing (killed, crashed) once, and ends it in the thread', async () => {
    const id = await session('app', 'Wipe the cache')
    const waiting = host.request('sessions.prompt', { id, text: '/permission' }).catch((error: Error) => error)
    await waitUntil('the permission request', async () => (await list()).find((i) => i.kind === 'permission'))
    // What a Host killed now leaves on disk: its data folder as it is (a copy, opened while this Host runs on;
    // the copy's lock names this process, alive, where a killed Host's names a dead one: it is left out).
    const recordOf = async (dir: string): Promise<Record<string, unknown> | undefined> =>
      (JSON.parse(await readFile(join(dir, 'db.json'), 'utf8')) as { sessions: Record<string, unknown>[] }).sessions.find((s) => s.id === id)
    await waitUntil('the turn under way in db.json', async () => (await recordOf(dataDir))?.underWay)
    const crashed = join(root, 'crashed')
    await cp(dataDir, crashed, { recursive: true, filter: (source) => !source.endsWith('switchboard.lock') })

    let next = await openHost(crashed)
    try {
      const cut = (await next.request('inbox.list', {})).filter((i) => i.session?.id === id)
      expect(cut).toMatchObject([
        {
          kind: 'error',
          message:
            'Switchboard stopped unexpectedly while Scripted waited for your permission (“Run dangerous command”), so that turn was cut short and can no longer be answered. Send again to go on.'
        }
      ])
      expect((await next.request('sessions.states', {})).filter((s) => s.id === id)).toEqual([])
      // The thread ends with that turn's error, written once.
      const snapshot = await waitUntil('the error in the transcript', async () => {
        const opened = await next.request('sessions.open', { id })
        return opened.records.at(-1)?.t === 'error' ? opened : null
      })
      expect(snapshot.records.at(-1)).toMatchObject({ t: 'error', endsTurn: true, message: cut[0].kind === 'error' ? cut[0].message : '' })
      // db.json is saved after the transcript: the mark goes with that save.
      await waitUntil('the turn no longer under way in db.json', async () => !(await recordOf(crashed))?.underWay)
      await next.close()
      // Listed once: the next start finds nothing under way.
      next = await openHost(crashed)
      expect((await next.request('inbox.list', {})).filter((i) => i.session?.id === id)).toHaveLength(1)
      const reopened = await next.request('sessions.open', { id })
      expect(reopened.records.filter((r) => r.t === 'error')).toHaveLength(1)
    } finally {
      await next.close()
    }

    // The Host that went on: once the turn is over, nothing is left marked under way.
    const [asked] = (await host.request('sessions.states', {})).find((s) => s.id === id)?.permissions ?? []
    await host.request('sessions.respondPermission', { id, requestId: asked.requestId, optionId: 'allow' })
    await waiting
    await waitUntil('the mark cleared in db.json', async () => !('underWay' in ((await recordOf(dataDir)) ?? { underWay: 'unread' })))
    expect(await recordOf(dataDir)).not.toHaveProperty('underWay')
  })
})
