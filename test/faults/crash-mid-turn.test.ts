import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import type { HostEvent } from '../../shared/contract'
import { confirmEverything, entriesOf, fold, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * An agent that dies in the middle of a turn: the user is told (the session
 * state and an error in the thread), the transcript holds every update that
 * arrived before, exactly, and after restarting the app the next message
 * brings the session back through session/load and goes on.
 */

let root: string
let host: Host | null = null
const wire: { direction: 'in' | 'out'; message: Record<string, unknown> }[] = []

beforeEach(async () => {
  root = await tempDir('crash')
  await mkdir(join(root, 'project'))
  wire.length = 0
})
afterEach(async () => {
  await host?.close()
  await removeDir(root)
})

function start(): Promise<Host> {
  return Host.open({
    dataDir: join(root, 'data'),
    version: 'test',
    confirmCommand: confirmEverything,
    presets: [],
    initializeTimeoutMs: 20_000,
    agentIdleMs: 0,
    onAgentMessage: (_agent, direction, message) => wire.push({ direction, message: message as Record<string, unknown> })
  })
}

describe('an agent crash mid-turn', () => {
  it('is shown, loses no update, and the session goes on after a restart through session/load', async () => {
    host = await start()
    const events: HostEvent[] = []
    host.events.subscribe((batch) => events.push(...batch))
    const project = await host.request('projects.add', { cwd: join(root, 'project') })
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))
    const record = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })

    const turn = host.request('sessions.prompt', {
      id: record.id,
      text: '/stream 40\n/tool Run the migration\n/plan a;b\n/think about it\n/stderr disk on fire\n/exit 137'
    })
    await expect(turn).rejects.toThrow(/Agent 'Scripted' exited with code 137; stderr: disk on fire.*The conversation so far is kept/s)
    host.events.flush()

    // Told: the session's state carries the error, and so does the thread.
    const states = events.flatMap((e) => (e.type === 'session.state' && e.payload.id === record.id ? [e.payload] : []))
    expect(states.at(-1)).toMatchObject({ status: 'idle', error: expect.stringContaining('exited with code 137') })
    const snapshot = await host.request('sessions.open', { id: record.id })
    const thread = fold(snapshot.records)
    expect(entriesOf(thread, 'error').map((e) => (e as { message: string }).message)).toEqual([expect.stringContaining('exited with code 137')])

    // Every session/update that arrived is in the transcript, in order, as it arrived.
    const arrived = wire
      .filter((m) => m.direction === 'in' && m.message.method === 'session/update')
      .map((m) => (m.message.params as { update: unknown }).update)
    const kept = snapshot.records.flatMap((r) => (r.t === 'update' ? [r.update] : []))
    expect(arrived.length).toBe(40 + 3 + 1 + 1)
    expect(kept).toEqual(arrived)

    // Quit and start again.
    await host.close()
    host = await start()
    wire.length = 0
    const result = await host.request('sessions.prompt', { id: record.id, text: 'are you there?' })
    expect(result.stopReason).toBe('end_turn')
    expect(wire.filter((m) => m.direction === 'out').map((m) => m.message.method)).toEqual(
      expect.arrayContaining(['initialize', 'session/load', 'session/prompt'])
    )
    const after = fold((await host.request('sessions.open', { id: record.id })).records)
    const said = (entriesOf(after, 'assistant') as { text: string }[]).map((e) => e.text)
    expect(said[0]).toBe(Array.from({ length: 40 }, (_, i) => `chunk ${i + 1} `).join(''))
    expect(said.at(-1)).toBe('You said: are you there?')
    expect(entriesOf(after, 'tool_call')).toHaveLength(1)
  })
})
