import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { EventBus } from '../../electron/host/contract/events'
import { Records } from '../../electron/host/storage/records'
import { Store } from '../../electron/host/storage/store'
import { SessionRegistry } from '../../electron/host/sessions/registry'
import {
  IllegalTransition,
  LivePhase,
  next,
  type Phase,
  type PhaseEvent,
  type PhaseEventType,
  type PhaseName,
  type Replay
} from '../../electron/host/sessions/turn-phase'
import type { SessionRecord } from '../../shared/domain'
import { removeDir, tempDir } from '../helpers'

/**
 * The session's phase (turn-phase.ts): every transition it allows, what each
 * leads to, and that every other event is refused, reported and leaves the
 * phase as it was.
 */

const abort = new AbortController()
const done = Promise.resolve()
const replay: Replay = { keep: true, dropped: 0, held: null, resetWritten: false, lastAt: 0 }
const timer = setTimeout(() => undefined, 0)
clearTimeout(timer)
const otherTimer = setTimeout(() => undefined, 0)
clearTimeout(otherTimer)

/** One phase of each kind, as a session may be in it. */
const phases: Record<PhaseName, Phase> = {
  idle: { phase: 'idle' },
  connecting: { phase: 'connecting', abort, done },
  replaying: { phase: 'replaying', abort, done, replay },
  starting: { phase: 'starting', prompts: 1, hold: null, failure: null },
  prompting: { phase: 'prompting', prompts: 1, hold: null, failure: null, checkpoint: 4 },
  cancelling: { phase: 'cancelling', prompts: 1, hold: null, failure: null, checkpoint: 4, timer }
}

/** One event of each kind. */
const events: Record<PhaseEventType, PhaseEvent> = {
  connect: { type: 'connect', abort, done },
  replay: { type: 'replay', replay },
  replayEnded: { type: 'replayEnded' },
  reopened: { type: 'reopened' },
  begin: { type: 'begin' },
  join: { type: 'join' },
  checkpointed: { type: 'checkpointed', checkpoint: 7 },
  failure: { type: 'failure', text: 'it broke' },
  hold: { type: 'hold', reason: 'The turn was cancelled, so the queue waits.' },
  endKept: { type: 'endKept' },
  cancelTimed: { type: 'cancelTimed', timer: otherTimer },
  graceOver: { type: 'graceOver' },
  answered: { type: 'answered' }
}

const turn = { prompts: 1, hold: null, failure: null }

/** Every legal transition: from which phase, on which event, to what. */
const legal: [PhaseName, PhaseEventType, Phase][] = [
  ['idle', 'connect', { phase: 'connecting', abort, done }],
  ['connecting', 'replay', { phase: 'replaying', abort, done, replay }],
  ['replaying', 'replayEnded', { phase: 'connecting', abort, done }],
  ['connecting', 'reopened', { phase: 'idle' }],
  ['replaying', 'reopened', { phase: 'idle' }],
  ['idle', 'begin', { phase: 'starting', ...turn }],
  ['starting', 'join', { phase: 'starting', ...turn, prompts: 2 }],
  ['prompting', 'join', { phase: 'prompting', ...turn, prompts: 2, checkpoint: 4 }],
  ['cancelling', 'join', { phase: 'cancelling', ...turn, prompts: 2, checkpoint: 4, timer }],
  ['starting', 'checkpointed', { phase: 'prompting', ...turn, checkpoint: 7 }],
  ['starting', 'failure', { phase: 'starting', ...turn, failure: 'it broke' }],
  ['prompting', 'failure', { phase: 'prompting', ...turn, failure: 'it broke', checkpoint: 4 }],
  ['cancelling', 'failure', { phase: 'cancelling', ...turn, failure: 'it broke', checkpoint: 4, timer }],
  ['starting', 'hold', { phase: 'starting', ...turn, hold: 'The turn was cancelled, so the queue waits.' }],
  ['prompting', 'hold', { phase: 'prompting', ...turn, hold: 'The turn was cancelled, so the queue waits.', checkpoint: 4 }],
  ['cancelling', 'hold', { phase: 'cancelling', ...turn, hold: 'The turn was cancelled, so the queue waits.', checkpoint: 4, timer }],
  ['prompting', 'endKept', { phase: 'prompting', ...turn, checkpoint: null }],
  ['cancelling', 'endKept', { phase: 'cancelling', ...turn, checkpoint: null, timer }],
  ['prompting', 'cancelTimed', { phase: 'cancelling', ...turn, checkpoint: 4, timer: otherTimer }],
  ['cancelling', 'graceOver', { phase: 'prompting', ...turn, checkpoint: 4 }],
  ['starting', 'answered', { phase: 'idle' }],
  ['prompting', 'answered', { phase: 'idle' }],
  ['cancelling', 'answered', { phase: 'idle' }]
]

describe('the phase of a session', () => {
  it.each(legal)('%s takes %s', (from, event, to) => {
    expect(next(phases[from], events[event])).toEqual(to)
  })

  const isLegal = new Set(legal.map(([from, event]) => `${from} ${event}`))
  const illegal = (Object.keys(phases) as PhaseName[]).flatMap((from) =>
    (Object.keys(events) as PhaseEventType[]).filter((event) => !isLegal.has(`${from} ${event}`)).map((event) => [from, event] as const)
  )

  it('refuses every other event, naming the phase and the event', () => {
    expect(illegal).toHaveLength(6 * 13 - legal.length)
    for (const [from, event] of illegal) {
      const refused = (() => {
        try {
          next(phases[from], events[event])
          return null
        } catch (error) {
          return error
        }
      })()
      expect(refused, `${from} ${event}`).toBeInstanceOf(IllegalTransition)
      expect(refused).toMatchObject({ from, event, message: expect.stringContaining(`'${event}'`) })
    }
  })

  it('counts the prompts of a turn: an answer ends it only when it was the last', () => {
    const two: Phase = { phase: 'prompting', prompts: 2, hold: 'held', failure: null, checkpoint: 4 }
    expect(next(two, events.answered)).toEqual({ ...two, prompts: 1 })
    expect(next(next(two, events.answered), events.answered)).toEqual({ phase: 'idle' })
  })

  it('keeps the first reason the queue must wait for, and a new turn starts without it', () => {
    const held = next(phases.prompting, { type: 'hold', reason: 'first' })
    expect(next(held, { type: 'hold', reason: 'second' })).toMatchObject({ hold: 'first' })
    expect(next(next(held, events.answered), events.begin)).toEqual({ phase: 'starting', prompts: 1, hold: null, failure: null })
  })

  it('lets the failure the agent reported be taken back (it went on)', () => {
    const failed = next(phases.prompting, events.failure)
    expect(next(failed, { type: 'failure', text: null })).toEqual(phases.prompting)
  })
})

describe('LivePhase', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('goes through a whole turn, returning the phase each event left', () => {
    const phase = new LivePhase(() => expect.fail('nothing is refused'))
    expect(phase.inTurn).toBe(false)
    phase.move({ type: 'begin' })
    expect(phase.inTurn).toBe(true)
    phase.move({ type: 'checkpointed', checkpoint: 3 })
    expect(phase.move({ type: 'endKept' })).toMatchObject({ phase: 'prompting', checkpoint: 3 })
    expect(phase.turn).toMatchObject({ checkpoint: null })
    phase.move({ type: 'answered' })
    expect(phase.now).toEqual({ phase: 'idle' })
    expect(phase.turn).toBeNull()
  })

  it('reports a refused event, throws it to the caller, and stays as it was', () => {
    const refused: IllegalTransition[] = []
    const phase = new LivePhase((error) => refused.push(error))
    phase.move({ type: 'begin' })
    const before = phase.now
    expect(phase.allows({ type: 'begin' })).toBe(false)
    expect(() => phase.move({ type: 'begin' })).toThrow(IllegalTransition)
    expect(refused).toEqual([expect.objectContaining({ from: 'starting', event: 'begin' })])
    expect(phase.now).toBe(before)
  })

  it('stops the cancel timer when the turn ends before the grace period is over', () => {
    vi.useFakeTimers()
    const stopped = vi.fn()
    const phase = new LivePhase(() => undefined)
    phase.move({ type: 'begin' })
    phase.move({ type: 'checkpointed', checkpoint: null })
    phase.move({ type: 'cancelTimed', timer: setTimeout(stopped, 1000) })
    expect(phase.now.phase).toBe('cancelling')
    phase.move({ type: 'answered' })
    vi.advanceTimersByTime(5000)
    expect(stopped).not.toHaveBeenCalled()
  })

  it('keeps the cancel timer while prompts join the cancelling turn', () => {
    vi.useFakeTimers()
    const stopped = vi.fn()
    const phase = new LivePhase(() => undefined)
    phase.move({ type: 'begin' })
    phase.move({ type: 'checkpointed', checkpoint: null })
    phase.move({ type: 'cancelTimed', timer: setTimeout(stopped, 1000) })
    phase.move({ type: 'join' })
    phase.move({ type: 'answered' })
    vi.advanceTimersByTime(1000)
    expect(stopped).toHaveBeenCalledOnce()
  })

  it('tells whoever waits for the session to be idle once its turn or reopening is over', async () => {
    const phase = new LivePhase(() => undefined)
    await phase.untilIdle()
    const reopening = new AbortController()
    phase.move({ type: 'connect', abort: reopening, done })
    expect(phase.reopening?.abort).toBe(reopening)
    phase.move({ type: 'replay', replay })
    expect(phase.replay).toBe(replay)
    let idle = false
    const waiting = phase.untilIdle().then(() => (idle = true))
    phase.move({ type: 'replayEnded' })
    await Promise.resolve()
    expect(idle).toBe(false)
    phase.move({ type: 'reopened' })
    await waiting
    expect(idle).toBe(true)
  })
})

describe('a session in memory', () => {
  it("reports an event its phase refuses where the Host's rooms report, naming the conversation", async () => {
    const dir = await tempDir('turn-phase')
    try {
      const reported: { room: string; error: Error }[] = []
      const events = new EventBus()
      const { store } = await Store.open(join(dir, 'data'), [])
      const registry = new SessionRegistry({
        transcriptDir: dir,
        records: new Records(store, events),
        events,
        phaseRefused: (room, error) => reported.push({ room, error })
      })
      const at = new Date().toISOString()
      const record: SessionRecord = {
        id: 's1',
        acpSessionId: 'acp-1',
        agentId: 'a',
        projectId: 'p',
        cwd: dir,
        title: 'Fix the tests',
        titleSource: 'user',
        createdAt: at,
        updatedAt: at
      }
      const live = registry.create(record)
      expect(() => live.phase.move({ type: 'answered' })).toThrow(IllegalTransition)
      expect(reported).toEqual([{ room: 'The turn of “Fix the tests”', error: expect.any(IllegalTransition) }])
      expect(reported[0].error.message).toBe("a session that is idle cannot take 'answered'")
      await registry.flushAll()
    } finally {
      await removeDir(dir)
    }
  })
})
