import { describe, expect, it, vi } from 'vitest'
import { EventBus } from '../../electron/host/contract/events'
import type { HostEvent } from '../../shared/contract'

const at = '2026-01-01T00:00:00.000Z'

describe('the event bus', () => {
  it('delivers one batch per tick, merging consecutive records of a session', async () => {
    const bus = new EventBus()
    const batches: HostEvent[][] = []
    bus.subscribe((b) => batches.push(b))
    for (let seq = 1; seq <= 100; seq++) {
      bus.emit('session.records', { id: 's', seq, records: [{ t: 'stop', at, stopReason: String(seq) }] })
    }
    bus.emit('session.records', { id: 'other', seq: 1, records: [{ t: 'stop', at, stopReason: 'x' }] })
    bus.emit('session.state', { id: 's', status: 'running' })
    bus.emit('session.state', { id: 's', status: 'ready' })
    expect(batches).toHaveLength(0)
    await new Promise((r) => setImmediate(r))
    expect(batches).toHaveLength(1)
    const [batch] = batches
    expect(batch.map((e) => e.type)).toEqual(['session.records', 'session.records', 'session.state'])
    expect(batch[0].payload).toMatchObject({ id: 's', seq: 1 })
    expect((batch[0].payload as { records: unknown[] }).records).toHaveLength(100)
    expect(batch[2].payload).toMatchObject({ status: 'ready' })
  })
})

describe('states in a batch', () => {
  it('replace the state just before of the same session or agent, and keep the order of everything else', async () => {
    const bus = new EventBus()
    const batches: HostEvent[][] = []
    bus.subscribe((b) => batches.push(b))
    bus.emit('session.state', { id: 's', status: 'starting' })
    bus.emit('session.state', { id: 's', status: 'ready' })
    bus.emit('session.state', { id: 't', status: 'ready' })
    bus.emit('agent.state', { agentId: 'a', status: 'starting', stderrTail: '' })
    bus.emit('agent.state', { agentId: 'a', status: 'ready', stderrTail: '' })
    bus.emit('session.records', { id: 's', seq: 1, records: [{ t: 'stop', at, stopReason: 'end_turn' }] })
    bus.emit('session.state', { id: 's', status: 'idle' })
    await new Promise((r) => setImmediate(r))
    expect(
      batches[0].map((e) => [
        e.type,
        'id' in e.payload ? e.payload.id : 'agentId' in e.payload ? e.payload.agentId : '',
        'status' in e.payload ? e.payload.status : ''
      ])
    ).toEqual([
      ['session.state', 's', 'ready'],
      ['session.state', 't', 'ready'],
      ['agent.state', 'a', 'ready'],
      ['session.records', 's', ''],
      ['session.state', 's', 'idle']
    ])
  })
})

describe('the event bus under a flood', () => {
  it('sends at most one batch a frame while events keep coming, losing none', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'Date'] })
    try {
      const bus = new EventBus()
      const batches: HostEvent[][] = []
      bus.subscribe((b) => batches.push(b))
      // An event every millisecond for 320 ms (the clock is simulated).
      for (let seq = 0; seq < 320; seq++) {
        bus.emit('session.records', { id: 's', seq, records: [{ t: 'stop', at, stopReason: String(seq) }] })
        vi.advanceTimersByTime(1)
      }
      vi.advanceTimersByTime(100)
      const received = batches.flat().flatMap((e) => (e.type === 'session.records' ? e.payload.records : []))
      expect(received.map((r) => (r as { stopReason: string }).stopReason)).toEqual(Array.from({ length: 320 }, (_, i) => String(i)))
      // The first batch at once, then one per 16 ms.
      expect(batches.length).toBeLessThanOrEqual(1 + 320 / 16 + 1)
      expect(batches[0].length).toBe(1)
    } finally {
      vi.useRealTimers()
    }
  })
})
