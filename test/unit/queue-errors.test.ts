import { describe, expect, it } from 'vitest'
import type { SessionRecord } from '../../shared/domain'
import type { HostEvent } from '../../shared/contract'
import { EventBus } from '../../electron/host/contract/events'
import { RoomErrors } from '../../electron/host/contract/room-errors'
import { PromptQueue, type PromptQueueDeps } from '../../electron/host/sessions/queue'

/**
 * The prompt queue saves what a turn's end did to it (held, with why) where no
 * request awaits it. A save that fails there used to be a promise rejected
 * with nothing to catch it, which stops a Node process; now it ends in the
 * Host's RoomErrors: a warning, the windows told, the queue's state shown
 * again as the Host holds it.
 */

describe('the prompt queue, when a save no request awaits fails', () => {
  it('reports the error once and shows the queue as it is held, instead of leaving a rejected promise', async () => {
    const record = {
      id: 's1',
      agentId: 'a1',
      queue: [{ id: 'q1', text: 'next', attachments: [], queuedAt: '2026-01-01T00:00:00.000Z' }]
    } as unknown as SessionRecord
    const states: unknown[] = []
    const turns = { closing: false }
    const deps = {
      records: {
        data: { sessions: [record], agents: [] },
        findSession: (id: string) => (id === record.id ? record : undefined),
        noteSession: (_id: string, patch: Partial<SessionRecord>) => Object.assign(record, patch),
        // The change is made in memory, then the save fails.
        updateSession: (_id: string, patch: Partial<SessionRecord>) => {
          Object.assign(record, patch)
          return Promise.reject(new Error('disk full (test)'))
        }
      },
      registry: { setState: (_id: string, state: unknown) => states.push(state) },
      turns
    } as unknown as PromptQueueDeps
    const events = new EventBus()
    const seen: HostEvent[] = []
    events.tap((event) => seen.push(event))
    const warnings: string[] = []
    const logged: string[] = []
    const rooms = new RoomErrors({ events, warnings, log: (line) => logged.push(line) })
    const queue: PromptQueue = new PromptQueue({
      ...deps,
      onError: (error, failed) =>
        rooms.report('The prompt queue', error, { says: 'its state is shown as the Host holds it', run: () => queue.publish(failed) })
    })
    const unhandled: unknown[] = []
    const note = (reason: unknown): void => {
      unhandled.push(reason)
    }
    process.on('unhandledRejection', note)
    try {
      // At start a queue is held (restore); the user resumed it.
      record.queueHeld = undefined
      states.length = 0
      // The turn ended failed: the queue is held, and that is saved where nothing awaits it.
      queue.turnOver('s1', 'The last turn failed, so the queue waits.')
      await expect.poll(() => warnings).toEqual(['The prompt queue had an internal error; its state is shown as the Host holds it: disk full (test)'])
      await new Promise((resolve) => setTimeout(resolve, 20))
    } finally {
      process.off('unhandledRejection', note)
    }
    expect(unhandled).toEqual([])
    expect(seen.map((e) => e.type)).toEqual(['app.warning'])
    expect(logged[0]).toMatch(/^The prompt queue had an internal error.*\nError: disk full \(test\)\n {4}at /)
    // Published as it changed, then again by the reset: the held queue, as the Host holds it.
    expect(states.at(-1)).toEqual({ queue: record.queue, queueHeld: 'The last turn failed, so the queue waits.' })
  })
})
