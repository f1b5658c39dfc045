import type { TranscriptRecord } from '../../../shared/transcript'

/**
 * The phase a session in memory is in, and every way it may change: the one
 * place that says what a session is doing with its agent right now. A session
 * is idle; or being reopened in its agent (connecting, and replaying while a
 * `session/load` streams the conversation back); or in a turn, which starts
 * (its first prompt takes the checkpoint of the files), runs (prompting: more
 * prompts may join it, for agents that take prompts mid-turn), and may be
 * asked to cancel (cancelling: the agent is stopped if it does not end the
 * turn within a grace period). A turn is over when its last prompt is
 * answered, however: done, cancelled, failed, or its agent gone.
 *
 * `next` is pure: it gives the phase an event leads to, or refuses the event
 * (IllegalTransition). `LivePhase` holds one session's phase and is the only
 * thing that changes it; a refusal is reported where the Host reports its
 * rooms' errors, and thrown to the caller, and the phase stays as it was.
 */

/** A `session/load`'s replay as it is taken in (replay.ts): its own bookkeeping, changed in place while it lasts. */
export interface Replay {
  /** The view Switchboard recorded is kept: replayed conversation updates are counted and dropped. */
  keep: boolean
  /** Replayed conversation updates dropped because the view was kept. */
  dropped: number
  /** The replayed conversation, held aside until the load answers (null once it has, or when the view is kept). */
  held: TranscriptRecord[] | null
  resetWritten: boolean
  /** When the last replayed update came (ms). */
  lastAt: number
}

/** What a turn keeps while it lasts, whatever its phase. */
interface TurnState {
  /** Prompts sent and not answered yet: more than one once a prompt was handed to the running turn (send now). */
  readonly prompts: number
  /** Why the queue must wait once the turn is over (a prompt of it was cancelled, refused or failed); null: it goes on. */
  readonly hold: string | null
  /**
   * The agent said mid-turn that the turn failed (quirks.ts, `turnFailureSignal`): the text it streamed since,
   * which is the failure's reason; null while it has not.
   */
  readonly failure: string | null
}

/** The reopening under way: cancelling the session aborts it ($/cancel_request); other requests wait for `done`. */
interface Reopening {
  readonly abort: AbortController
  readonly done: Promise<void>
}

export type Phase =
  | { readonly phase: 'idle' }
  | ({ readonly phase: 'connecting' } & Reopening)
  | ({ readonly phase: 'replaying'; readonly replay: Replay } & Reopening)
  /** The turn's first prompt is taking the checkpoint of the files; nothing is sent yet but prompts that joined. */
  | ({ readonly phase: 'starting' } & TurnState)
  /** `checkpoint`: the one the turn started with (none when it could not be taken, or once its end is kept against it). */
  | ({ readonly phase: 'prompting'; readonly checkpoint: number | null } & TurnState)
  /** Asked to cancel: `timer` stops the agent if it does not end the turn in time. */
  | ({ readonly phase: 'cancelling'; readonly checkpoint: number | null; readonly timer: NodeJS.Timeout } & TurnState)

export type PhaseName = Phase['phase']
export type TurnPhase = Extract<Phase, { prompts: number }>

export type PhaseEvent =
  /** The session is reopened in its agent (connector.ts). */
  | { readonly type: 'connect'; readonly abort: AbortController; readonly done: Promise<void> }
  /** A `session/load` is about to be sent: its replay is taken in as `replay` says. */
  | { readonly type: 'replay'; readonly replay: Replay }
  /** The replay is over (gone quiet, or the load failed). */
  | { readonly type: 'replayEnded' }
  /** The reopening is over, whether the session is linked to its agent now or not. */
  | { readonly type: 'reopened' }
  /** A prompt starts a turn. */
  | { readonly type: 'begin' }
  /** A prompt is handed to the running turn (an agent that takes prompts mid-turn). */
  | { readonly type: 'join' }
  /** The turn's checkpoint is taken (null: none could be). */
  | { readonly type: 'checkpointed'; readonly checkpoint: number | null }
  /** What the agent has said of the turn's failure so far (null: nothing, or it went on). */
  | { readonly type: 'failure'; readonly text: string | null }
  /** A prompt of the turn ended so that the queue must wait (the first reason stays). */
  | { readonly type: 'hold'; readonly reason: string }
  /** The files as the turn left them are kept against its checkpoint, which is then spent. */
  | { readonly type: 'endKept' }
  /** The user cancelled the running turn: `timer` stops the agent after the grace period. */
  | { readonly type: 'cancelTimed'; readonly timer: NodeJS.Timeout }
  /** The grace period ran out (the agent is being stopped); a new cancel times again. */
  | { readonly type: 'graceOver' }
  /** A prompt of the turn is answered (or failed): the turn is over with its last. */
  | { readonly type: 'answered' }

export type PhaseEventType = PhaseEvent['type']

const IDLE: Phase = { phase: 'idle' }

/** An event the phase cannot take: a bug in whoever sent it (the phase stays as it was). */
export class IllegalTransition extends Error {
  constructor(
    readonly from: PhaseName,
    readonly event: PhaseEventType
  ) {
    super(`a session ${from === 'idle' ? 'that is idle' : `in its '${from}' phase`} cannot take '${event}'`)
    this.name = 'IllegalTransition'
  }
}

export function isTurn(phase: Phase): phase is TurnPhase {
  return phase.phase === 'starting' || phase.phase === 'prompting' || phase.phase === 'cancelling'
}

/** The phase `event` leads to from `phase`; throws IllegalTransition when it may not happen there. */
export function next(phase: Phase, event: PhaseEvent): Phase {
  const to = transition(phase, event)
  if (!to) throw new IllegalTransition(phase.phase, event.type)
  return to
}

function transition(phase: Phase, event: PhaseEvent): Phase | null {
  switch (event.type) {
    case 'connect':
      return phase.phase === 'idle' ? { phase: 'connecting', abort: event.abort, done: event.done } : null
    case 'replay':
      return phase.phase === 'connecting' ? { phase: 'replaying', abort: phase.abort, done: phase.done, replay: event.replay } : null
    case 'replayEnded':
      return phase.phase === 'replaying' ? { phase: 'connecting', abort: phase.abort, done: phase.done } : null
    case 'reopened':
      return phase.phase === 'connecting' || phase.phase === 'replaying' ? IDLE : null
    case 'begin':
      return phase.phase === 'idle' ? { phase: 'starting', prompts: 1, hold: null, failure: null } : null
    case 'join':
      return isTurn(phase) ? { ...phase, prompts: phase.prompts + 1 } : null
    case 'checkpointed':
      return phase.phase === 'starting' ? { ...phase, phase: 'prompting', checkpoint: event.checkpoint } : null
    case 'failure':
      return isTurn(phase) ? { ...phase, failure: event.text } : null
    case 'hold':
      return isTurn(phase) ? { ...phase, hold: phase.hold ?? event.reason } : null
    case 'endKept':
      return phase.phase === 'prompting' || phase.phase === 'cancelling' ? { ...phase, checkpoint: null } : null
    case 'cancelTimed':
      return phase.phase === 'prompting' ? { ...phase, phase: 'cancelling', timer: event.timer } : null
    case 'graceOver':
      return phase.phase === 'cancelling'
        ? { phase: 'prompting', prompts: phase.prompts, hold: phase.hold, failure: phase.failure, checkpoint: phase.checkpoint }
        : null
    case 'answered':
      if (!isTurn(phase)) return null
      return phase.prompts > 1 ? { ...phase, prompts: phase.prompts - 1 } : IDLE
  }
}

/**
 * One session's phase. Only `move` changes it; leaving `cancelling` stops its
 * timer, and whoever waits for the session to be idle is told when it is.
 */
export class LivePhase {
  private current: Phase = IDLE
  private idleWaiters: (() => void)[] = []

  /** `refused`: told of an event the phase could not take, before it is thrown to the caller. */
  constructor(private readonly refused: (error: IllegalTransition) => void) {}

  get now(): Phase {
    return this.current
  }

  /** The turn under way, if any. */
  get turn(): TurnPhase | null {
    return isTurn(this.current) ? this.current : null
  }

  /** A turn is under way (from its first prompt taking its checkpoint until its last prompt's answer). */
  get inTurn(): boolean {
    return isTurn(this.current)
  }

  /** The reopening under way, if any. */
  get reopening(): Reopening | null {
    return this.current.phase === 'connecting' || this.current.phase === 'replaying' ? this.current : null
  }

  /** The replay under way, if any. */
  get replay(): Replay | null {
    return this.current.phase === 'replaying' ? this.current.replay : null
  }

  /** Whether `event` may happen now. */
  allows(event: PhaseEvent): boolean {
    return transition(this.current, event) !== null
  }

  /** Takes `event`, and returns the phase left. A refused event is reported, then thrown; the phase stays. */
  move(event: PhaseEvent): Phase {
    const from = this.current
    let to: Phase
    try {
      to = next(from, event)
    } catch (error) {
      if (error instanceof IllegalTransition) this.refused(error)
      throw error
    }
    this.current = to
    if (from.phase === 'cancelling' && (to.phase !== 'cancelling' || to.timer !== from.timer)) clearTimeout(from.timer)
    if (to.phase === 'idle' && from.phase !== 'idle') {
      const waiters = this.idleWaiters
      this.idleWaiters = []
      for (const resolve of waiters) resolve()
    }
    return from
  }

  /** Resolves once the session is idle (at once when it is). */
  untilIdle(): Promise<void> {
    if (this.current.phase === 'idle') return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }
}
