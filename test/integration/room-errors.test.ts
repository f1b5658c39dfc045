import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Host } from '../../electron/host/host'
import type { HostEvent } from '../../shared/contract'
import { confirmEverything, recordEvents, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * An error nothing caught in one of the Host's rooms does not stop the Host
 * (electron/host/contract/room-errors.ts): it goes to the log with its stack, to
 * `app.info`'s warnings and to the windows (`app.warning`), and the room is
 * reset. Here the search index throws from its flush, which runs on a timer
 * (a test-only hook, HostOptions.search.onFlush, that the contract cannot
 * reach): before, that error reached the process as an uncaught exception.
 */

let root: string
let host: Host
let events: HostEvent[]
let breakNextFlush = false
const uncaught: unknown[] = []
const note = (error: unknown): void => {
  uncaught.push(error)
}

beforeEach(async () => {
  root = await tempDir('room-errors')
  await mkdir(join(root, 'project'))
  breakNextFlush = false
  uncaught.length = 0
  process.on('uncaughtException', note)
  process.on('unhandledRejection', note)
  host = await Host.open({
    dataDir: join(root, 'data'),
    version: 'test',
    presets: [],
    initializeTimeoutMs: 20_000,
    confirmCommand: confirmEverything,
    search: {
      buildOnSearchOnly: true,
      onFlush: () => {
        if (!breakNextFlush) return
        breakNextFlush = false
        throw new Error('the index broke (test)')
      }
    },
    faults: {
      // A bug in the fold, for one record: a message saying "the view breaks here".
      onFold: (record) => {
        if (record.t === 'update' && JSON.stringify(record.update).includes('the view breaks here')) throw new Error('the fold broke (test)')
      }
    }
  })
  events = recordEvents(host)
})

afterEach(async () => {
  process.off('uncaughtException', note)
  process.off('unhandledRejection', note)
  vi.restoreAllMocks()
  await host.close()
  await removeDir(root)
})

describe('an error in a room of the Host', () => {
  it('search: an error thrown in its timer is logged, warned, told to the windows, and the index rebuilt; the Host answers on', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent')))
    const { id } = await host.request('sessions.new', { projectId, agentId: agent.id })
    await expect.poll(async () => (await host.request('search.query', { q: 'anything' })).indexing).toBeNull()

    // The reply is indexed on the flush timer: that flush throws.
    breakNextFlush = true
    await host.request('sessions.prompt', { id, text: '/say the zebra crossing' })
    await expect.poll(() => breakNextFlush).toBe(false)

    const warning = 'Search had an internal error; it is rebuilding: the index broke (test)'
    await expect.poll(async () => (await host.request('app.info', {})).warnings).toEqual([warning])
    await expect.poll(() => events.filter((e) => e.type === 'app.warning').map((e) => e.payload)).toEqual([{ room: 'Search', message: warning }])
    expect(logged.mock.calls.some(([line]) => String(line).startsWith(`${warning}\nError: the index broke (test)\n    at `))).toBe(true)
    expect(uncaught).toEqual([])
    // Rebuilt from the transcripts: the reply is found, and the Host goes on answering.
    await expect.poll(async () => (await host.request('search.query', { q: 'zebra crossing' })).entries.map((e) => e.sessionId)).toContain(id)
    expect((await host.request('sessions.prompt', { id, text: '/say still here' })).stopReason).toBe('end_turn')
  })

  it("a session's view: a record its fold cannot take is kept in the transcript, the error logged, warned and told, the view read again; the turn and the Host go on", async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent')))
    const { id } = await host.request('sessions.new', { projectId, agentId: agent.id })
    const turn = await host.request('sessions.prompt', { id, text: '/say before\n/say the view breaks here\n/say after' })
    expect(turn.stopReason).toBe('end_turn')
    const warning = (await host.request('app.info', {})).warnings.find((w) => w.includes('the fold broke (test)'))
    expect(warning).toMatch(/^The conversation .* had an internal error; its view is read again from the transcript: the fold broke \(test\)$/)
    await expect.poll(() => events.some((e) => e.type === 'app.warning' && e.payload.message === warning)).toBe(true)
    expect(logged.mock.calls.some(([line]) => String(line).includes('Error: the fold broke (test)\n    at '))).toBe(true)
    expect(uncaught).toEqual([])
    // Nothing the agent sent was lost: the transcript has the record the fold could not take.
    const { records } = await host.request('sessions.open', { id })
    expect(records.some((r) => r.t === 'update' && JSON.stringify(r.update).includes('the view breaks here'))).toBe(true)
    expect(records.some((r) => r.t === 'update' && JSON.stringify(r.update).includes('after'))).toBe(true)
    expect((await host.request('sessions.prompt', { id, text: '/say still here' })).stopReason).toBe('end_turn')
  })
})
