import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import { fold, openHost, recordEvents, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * Organising the sidebar through the Host (projects renamed, reordered,
 * removed; sessions renamed) and searching every transcript, across a restart
 * and as sessions stream.
 */

let root: string
let dataDir: string
let host: Host

beforeEach(async () => {
  root = await tempDir('organise')
  dataDir = join(root, 'data')
  host = await openHost(dataDir)
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function addProject(name: string): Promise<string> {
  const dir = join(root, name)
  await mkdir(dir, { recursive: true })
  return (await host.request('projects.add', { cwd: dir })).id
}

describe('projects', () => {
  it('are renamed, reordered and removed, and the change survives a restart', async () => {
    const a = await addProject('alpha')
    const b = await addProject('beta')
    const c = await addProject('gamma')
    const events = recordEvents(host)

    expect((await host.request('projects.rename', { projectId: b, name: '  Beta service ' })).name).toBe('Beta service')
    await expect(host.request('projects.rename', { projectId: b, name: '   ' })).rejects.toThrow(/A project needs a name/)

    const order = await host.request('projects.reorder', { projectIds: [c, a, b] })
    expect(order.map((p) => p.id)).toEqual([c, a, b])
    await expect(host.request('projects.reorder', { projectIds: [c, a] })).rejects.toThrow(/every project exactly once/)
    await expect(host.request('projects.reorder', { projectIds: [c, a, a] })).rejects.toThrow(/every project exactly once/)

    // A removed project takes its sessions out of the list; their transcripts are kept aside.
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))
    const session = await host.request('sessions.new', { projectId: a, agentId: agent.id })
    await host.request('sessions.prompt', { id: session.id, text: 'remember the alpha plan' })
    expect(await host.request('projects.remove', { projectId: a })).toEqual({ removedSessions: 1 })
    expect(await host.request('sessions.list', {})).toEqual([])
    expect(existsSync(join(dataDir, 'deleted-transcripts', `${session.id}.jsonl`))).toBe(true)
    expect(existsSync(join(dataDir, 'transcripts', `${session.id}.jsonl`))).toBe(false)
    expect(existsSync(join(root, 'alpha'))).toBe(true)
    expect((await host.request('search.query', { q: 'alpha plan' })).entries).toEqual([])

    host.events.flush()
    expect(events.filter((e) => e.type === 'session.removed').map((e) => e.payload)).toEqual([{ id: session.id }])
    const last = events.filter((e) => e.type === 'projects.changed').pop()!
    expect((last.payload as { name: string }[]).map((p) => p.name)).toEqual(['gamma', 'Beta service'])

    await host.close()
    host = await openHost(dataDir)
    expect((await host.request('projects.list', {})).map((p) => p.name)).toEqual(['gamma', 'Beta service'])
  })
})

describe('sessions', () => {
  it('keep a title the user gave them, whatever the agent announces later', async () => {
    const projectId = await addProject('app')
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))
    const named = await host.request('sessions.new', { projectId, agentId: agent.id })
    const other = await host.request('sessions.new', { projectId, agentId: agent.id })

    await host.request('sessions.prompt', { id: other.id, text: '/title Agent title' })
    expect((await host.request('sessions.list', {})).find((s) => s.id === other.id)!.title).toBe('Agent title')

    const renamed = await host.request('sessions.rename', { id: named.id, title: ' Release checklist ' })
    expect(renamed).toMatchObject({ title: 'Release checklist', titleSource: 'user' })
    await host.request('sessions.prompt', { id: named.id, text: 'first words\n/title Agent title' })
    expect((await host.request('sessions.list', {})).find((s) => s.id === named.id)!.title).toBe('Release checklist')
    await expect(host.request('sessions.rename', { id: named.id, title: '' })).rejects.toThrow(/cannot be empty/)
    await expect(host.request('sessions.rename', { id: 'nope', title: 'x' })).rejects.toThrow(/No session/)
  })
})

describe('search', () => {
  it('finds the text of old sessions after a restart, and of live ones as they stream', async () => {
    const projectId = await addProject('search-app')
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))
    const old = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: old.id, text: 'Where do we configure the flux capacitor?' })
    await host.request('sessions.prompt', { id: old.id, text: '/say The **flux capacitor** lives in `config/time.ts`.\n/stream 5' })

    await host.close()
    host = await openHost(dataDir)
    // The index is built in the background: the first query may come before it is complete.
    await expect.poll(async () => (await host.request('search.query', { q: 'flux capacitor' })).indexing).toBeNull()
    const found = await host.request('search.query', { q: 'flux capacitor' })
    // Both prompts, the echo of the first and the answer to the second.
    expect(found.entries.map((h) => h.entryKind).sort()).toEqual(['assistant', 'assistant', 'user', 'user'])
    const reply = found.entries.find((h) => h.entryKind === 'assistant' && h.snippet.text.includes('lives in'))!
    // The hit names the entry as the renderer folds the transcript.
    const thread = fold((await host.request('sessions.open', { id: old.id })).records)
    const entry = thread.entries.find((e) => e.id === reply.entryId)!
    expect(entry.kind === 'assistant' && entry.text).toContain('The **flux capacitor** lives in')
    expect(reply.snippet.marks.map(([a, b]) => reply.snippet.text.slice(a, b).toLowerCase())).toEqual(['flux capacitor'])
    expect(reply).toMatchObject({ sessionId: old.id, projectId, title: 'Where do we configure the flux capacitor?' })

    // A session streaming now is searchable as it goes; its title too.
    const fresh = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: fresh.id, text: '/title Quantum tunnelling notes\n/say Tunnelling through the barrier' })
    const streamed = (await host.request('search.query', { q: 'barrier' })).entries
    expect(streamed.map((h) => [h.entryKind, h.sessionId]).sort()).toEqual([
      ['assistant', fresh.id],
      ['user', fresh.id]
    ])
    expect((await host.request('search.query', { q: 'quantum' })).sessions.map((h) => h.sessionId)).toEqual([fresh.id])

    // A deleted session is no longer found.
    await host.request('sessions.delete', { id: old.id })
    expect((await host.request('search.query', { q: 'flux capacitor' })).entries).toEqual([])
  })
})
