import { refuseLinkedMentions } from '../local-files/project-files'
import { refuseRemoteLinkedMentions } from '../ssh/remote-files'
import type { ContentBlock } from '@agentclientprotocol/sdk'
import type { Attachment } from '../../../shared/contract'
import type { UnseenTurn } from '../../../shared/domain'
import { contentToText, isSwitchboardNote, SWITCHBOARD_NOTE_META, turnUsageOf } from '../../../shared/thread'
import type { AgentConnection } from '../connection/connection'
import { authRequired } from '../agents/sign-in'
import type { AskBroker } from '../asks/broker'
import { describeError, failureText, HostError } from '../contract/errors'
import { Listeners } from '../contract/listeners'
import type { SessionConnector, SessionDeps } from './connector'
import { titleFrom, toContentBlock } from './session-parts'
import type { LiveSession } from './registry'
import { modeOptionOf } from './starting-mode'
import { confirmSkippingMode } from '../agents/skip-confirm'
import type { WorkspaceService } from '../workspace/service'
import type { HandOffSeeds } from './hand-off-seeds'

/**
 * What happens inside a live session: prompt turns, cancelling them (an agent
 * that ignores the cancel is stopped after a grace period), and the session's
 * settings (mode, configuration options, model).
 */

export interface TurnsDeps extends SessionDeps {
  broker: AskBroker
  connector: SessionConnector
  /** How long an agent may take to end a turn after session/cancel before it is stopped. */
  cancelGraceMs: number
  /** Takes the checkpoint of the session's files a turn starts with, and keeps them as the turn left them. */
  workspace: Pick<WorkspaceService, 'beforeTurn' | 'afterTurn'>
  /** A hand-off's conversation, which the session's next prompt carries. */
  seeds: Pick<HandOffSeeds, 'blocksFor' | 'wentWith'>
}

export class Turns {
  /**
   * Prompts under way, by their session, each from its request (one still being prepared has no turn yet) until its
   * end is written (its thread, its record, the queue told).
   */
  private readonly underWay = new Map<Promise<unknown>, string>()
  private closingDown = false

  constructor(private readonly deps: TurnsDeps) {}

  /** A prompt of the session is under way, from its request to its end (the idle stop waits for it). */
  hasPromptUnderWay(id: string): boolean {
    for (const session of this.underWay.values()) if (session === id) return true
    return false
  }

  /** Switchboard is closing: no prompt starts any more. */
  get closing(): boolean {
    return this.closingDown
  }

  /**
   * No prompt starts from now on; resolves once every prompt under way has
   * written its end. Those end when their agents are stopped, so the Host
   * stops the agents before it waits, and saves for the last time after.
   */
  close(): Promise<void> {
    this.closingDown = true
    return Promise.allSettled([...this.underWay.keys()]).then(() => undefined)
  }

  /** A turn is over (every prompt of it answered): `hold` says why the queue must wait, null when it goes on. */
  readonly over = new Listeners<[id: string, hold: string | null]>()
  /** How a turn ended, once it is over (the inbox lists it until a window shows the session). */
  readonly ended = new Listeners<[id: string, end: UnseenTurn]>()

  /**
   * Sends a prompt and waits for its answer. `midTurn`: handed to the turn that
   * runs, for an agent that takes prompts mid-turn (`promptQueueing`); the
   * session stays running until the last prompt is answered. `onStart` is
   * called once the prompt is in the thread (nothing before it can fail the
   * turn: what throws earlier sent nothing).
   */
  prompt(
    id: string,
    text: string,
    attachments: Attachment[] = [],
    options: { midTurn?: boolean; onStart?: () => void } = {}
  ): Promise<{ stopReason: string }> {
    if (this.closingDown) return Promise.reject(new Error('Switchboard is closing; the prompt was not sent'))
    // Kept before run's first await lets anything else in: until its turn begins, nothing else says the session is busy.
    const turn = this.run(id, text, attachments, options)
    this.underWay.set(turn, id)
    const gone = (): void => void this.underWay.delete(turn)
    turn.then(gone, gone)
    return turn
  }

  /**
   * Hands a prompt to the running turn through the agent's steering
   * (`_session/steering`). Injected, it is in the thread as a prompt sent into
   * that turn; `promptRequired` (the turn had ended) sent nothing, and the
   * caller sends it as a prompt of its own.
   */
  async steer(id: string, text: string, attachments: Attachment[] = []): Promise<'injected' | 'promptRequired'> {
    const live = this.deps.registry.get(id)
    if (!live?.connection || !(this.deps.registry.stateOf(id).status === 'running' || live.phase.inTurn)) return 'promptRequired'
    const connection = connectionOf(live)
    const content: ContentBlock[] = [
      ...(text.trim() ? [{ type: 'text' as const, text }] : []),
      ...attachments.map((a) => toContentBlock(a, connection))
    ]
    const outcome = await connection.acp.steer({ sessionId: acpSessionIdOf(live), prompt: content })
    if (outcome === 'injected') this.deps.registry.append(live, { t: 'prompt', at: new Date().toISOString(), content, steered: true })
    return outcome
  }

  private async run(
    id: string,
    text: string,
    attachments: Attachment[],
    options: { midTurn?: boolean; onStart?: () => void }
  ): Promise<{ stopReason: string }> {
    const { registry, records } = this.deps
    const gone = records.session(id).worktree
    if (gone?.removedAt) {
      throw new Error(
        `This session's worktree and branch '${gone.branch}' were removed${gone.discarded ? ' unmerged' : ' after the merge'}; its conversation stays to read. Start a new session to go on.`
      )
    }
    const live = await this.deps.connector.ensureLive(id)
    const connection = connectionOf(live)
    const running = registry.stateOf(id).status === 'running' || live.phase.inTurn
    const joining = running && options.midTurn === true
    if (joining && !connection.capabilities.promptQueueing) {
      throw new Error(`${connection.definition.name} does not take prompts while a turn runs; the prompt waits for the turn to end`)
    }
    if (running && !joining) {
      throw new Error('A turn is already running in this session; wait for it to end or cancel it')
    }
    // A mention of a hard link (perhaps to a file outside the project) is not sent, here or on an SSH agent's host.
    if (connection.sshHost) await refuseRemoteLinkedMentions(connection.sshHost, attachments)
    else await refuseLinkedMentions(attachments)
    const note = joining ? undefined : live.record.rewindNote
    const seed = joining ? { blocks: [] } : await this.deps.seeds.blocksFor(live.record, connection)
    const content: ContentBlock[] = [
      ...(note ? [{ type: 'text' as const, text: note, _meta: SWITCHBOARD_NOTE_META }] : []),
      ...seed.blocks,
      ...(text.trim() ? [{ type: 'text' as const, text }] : []),
      ...attachments.map((a) => toContentBlock(a, connection))
    ]
    enterTurn(live, joining, connection.definition.name)
    if (!joining) {
      // The files as the turn finds them, before the agent touches anything (what the turn changed is read against it).
      const checkpoint = await this.deps.workspace.beforeTurn(live.record)
      live.phase.move({ type: 'checkpointed', checkpoint: checkpoint?.t === 'checkpoint' ? (checkpoint.index ?? null) : null })
      if (checkpoint) registry.append(live, checkpoint)
    }
    if (note) records.updateSessionSoon(id, { rewindNote: undefined })
    if (seed.budget !== undefined) await this.deps.seeds.wentWith(id, seed.budget)
    registry.append(live, { t: 'prompt', at: new Date().toISOString(), content })
    options.onStart?.()
    if (live.record.titleSource === 'default') {
      const title = titleFrom(text.trim() ? text : contentToText(content.filter((block) => !isSwitchboardNote(block))))
      records.updateSessionSoon(id, { title, titleSource: 'prompt' })
    }
    if (!joining) registry.setState(id, { status: 'running', error: undefined })
    const mark = connection.stderrMark()
    let end: UnseenTurn | null = null
    try {
      const response = await connection.acp.prompt({ sessionId: acpSessionIdOf(live), prompt: content })
      this.deps.supervisor.sessionStarted(live.record.agentId)
      // The agent said mid-turn that the turn failed, and answers it done (Codex 2.x; quirks.ts): it failed.
      const reported = turnOf(live).failure
      live.phase.move({ type: 'failure', text: null })
      if (reported !== null && response.stopReason === 'end_turn') throw new ReportedTurnFailure(reported)
      const last = turnOf(live).prompts === 1
      if (last) await this.keepTurnEnd(live)
      if (!NORMAL_STOPS.has(response.stopReason))
        live.phase.move({ type: 'hold', reason: holdReason(response.stopReason, connection.definition.name) })
      // A prompt the agent handed its turn on from (a later one was sent mid-turn) ends quietly: the turn goes on.
      if (last || response.stopReason !== 'end_turn') {
        const usage = turnUsageOf(response)
        const at = new Date().toISOString()
        registry.append(live, { t: 'stop', at, stopReason: response.stopReason, ...(usage ? { usage } : {}) })
        records.updateSessionSoon(id, { lastStopReason: response.stopReason })
        end = { at, stopReason: response.stopReason }
      }
      if (last) registry.setState(id, { status: 'ready' })
      return { stopReason: response.stopReason }
    } catch (error) {
      await connection.settle()
      const alive = connection.isAlive
      // Switchboard stopped the agent (closing, restarting it): the turn is interrupted, not failed, and nothing "exited".
      if (!alive && connection.state.status === 'stopped') {
        const name = connection.definition.name
        live.phase.move({ type: 'hold', reason: `${name} was stopped, so the queue waits.` })
        const last = turnOf(live).prompts === 1
        if (last) await this.keepTurnEnd(live)
        const at = new Date().toISOString()
        if (last) {
          registry.append(live, { t: 'stop', at, stopReason: 'cancelled', bySwitchboard: true })
          end = { at, stopReason: 'cancelled' }
          registry.setState(id, { status: 'idle', error: undefined })
        }
        throw new HostError('turn_failed', `The turn was interrupted: Switchboard stopped ${name}`)
      }
      const auth = authRequired(error, connection, mark)
      // Signed out (or the key refused) after the session started: said in the agent's state too, until a turn works.
      if (auth?.problem) this.deps.supervisor.sessionFailed(auth.problem)
      const message =
        auth?.message ??
        (alive
          ? `${connection.definition.name} failed the turn: ${describeError(error)}`
          : `${connection.exitMessage()}. The conversation so far is kept; send again to restart the agent and continue.`)
      live.phase.move({
        type: 'hold',
        reason: alive ? 'The last turn failed, so the queue waits.' : `${connection.definition.name} stopped, so the queue waits.`
      })
      const last = turnOf(live).prompts === 1
      if (last) await this.keepTurnEnd(live)
      const at = new Date().toISOString()
      const echo = error instanceof ReportedTurnFailure && error.echo.trim() ? { echo: error.echo } : {}
      registry.append(live, { t: 'error', at, message, endsTurn: last, ...echo })
      end = { at, error: message }
      // The state agrees with the thread: a failed turn leaves the session in error (a new prompt clears it).
      if (last) registry.setState(id, { status: alive ? 'error' : 'idle', error: message, errorInThread: true })
      throw auth ?? new HostError('turn_failed', message)
    } finally {
      // The last prompt's answer ends the turn (and its cancel's timer): the queue is told why it must wait, if it must.
      const hold = live.phase.turn?.hold ?? null
      live.phase.move({ type: 'answered' })
      const over = !live.phase.inTurn
      await records.updateSession(id, { updatedAt: new Date().toISOString() })
      if (over) {
        // Before the session may leave memory: how the turn ended is read from its thread.
        if (end) this.ended.tell(id, end)
        // What the user allowed in this turn is for this turn's commands only.
        this.deps.broker.turnEnded(id)
        registry.releaseIfUnused(live)
        this.over.tell(id, hold)
      }
    }
  }

  /** The files as the turn left them, kept before its end is announced (a revert the user makes after seeing it is not the turn's). */
  private async keepTurnEnd(live: LiveSession): Promise<void> {
    const left = live.phase.move({ type: 'endKept' })
    const checkpoint = 'checkpoint' in left ? left.checkpoint : null
    if (checkpoint !== null) await this.deps.workspace.afterTurn(live.record, checkpoint)
  }

  async cancel(id: string): Promise<void> {
    const { registry, broker } = this.deps
    const live = registry.get(id)
    live?.phase.reopening?.abort.abort()
    const connection = live?.connection
    const acpSessionId = live?.record.acpSessionId
    const running = connection?.isAlive && acpSessionId ? connection : null
    try {
      // session/cancel goes first, then the pending permission requests are answered `cancelled` (the protocol's
      // order): an agent that read the answers first could take them for the user's and end the turn as done.
      if (running && acpSessionId) await running.acp.cancel({ sessionId: acpSessionId })
    } finally {
      // The broker settles the session's questions and reports its now empty list into the session's state.
      broker.cancelFor(id)
    }
    if (!live || !running) return
    // An agent that ignores the cancel must not keep the session busy for ever (a turn already cancelling is timed).
    if (registry.stateOf(id).status === 'running' && live.phase.now.phase === 'prompting') {
      const graceMs = this.deps.cancelGraceMs
      const timer = setTimeout(() => {
        try {
          live.phase.move({ type: 'graceOver' })
        } catch {
          return // Reported as the phase's error (the turn had ended without stopping this timer).
        }
        if (registry.stateOf(id).status !== 'running' || live.connection !== running || !running.isAlive) return
        void running.abandon(`${running.definition.name} did not end the turn within ${graceMs / 1000} s of being asked to cancel, so it was stopped`)
      }, graceMs)
      timer.unref?.()
      live.phase.move({ type: 'cancelTimed', timer })
    }
  }

  /** A mode that skips permissions is refused until the user has confirmed such modes for the agent once (`confirmSkip`). */
  async setMode(id: string, modeId: string, confirmSkip?: boolean): Promise<void> {
    const live = await this.deps.connector.ensureLive(id)
    const connection = connectionOf(live)
    const modes = live.thread.modes
    if (!modes?.availableModes.some((m) => m.id === modeId)) {
      throw new Error(
        modes?.availableModes.length
          ? `Mode '${modeId}' is not one this agent offers (${modes.availableModes.map((m) => m.id).join(', ')})`
          : `${connection.definition.name} does not offer modes for this session`
      )
    }
    await confirmSkippingMode(this.deps.records, this.deps.records.agent(live.record.agentId), modeId, confirmSkip)
    await connection.acp.setMode({ sessionId: acpSessionIdOf(live), modeId })
    this.deps.registry.append(live, { t: 'session', at: new Date().toISOString(), modes: { ...modes, currentModeId: modeId } })
    await this.chosen(live, modeId)
  }

  async setConfigOption(id: string, configId: string, value: string | boolean, confirmSkip?: boolean): Promise<void> {
    const live = await this.deps.connector.ensureLive(id)
    const connection = connectionOf(live)
    const option = live.thread.configOptions?.find((o) => o.id === configId)
    if (!option) throw new Error(`${connection.definition.name} has no configuration option '${configId}' for this session`)
    if (option.type === 'boolean' ? typeof value !== 'boolean' : typeof value !== 'string') {
      throw new Error(`Option '${option.name}' takes a ${option.type === 'boolean' ? 'true/false value' : 'choice from its list'}`)
    }
    const isMode = option === modeOptionOf(live.thread.configOptions) && typeof value === 'string'
    if (isMode) await confirmSkippingMode(this.deps.records, this.deps.records.agent(live.record.agentId), value, confirmSkip)
    const sessionId = acpSessionIdOf(live)
    const response = await connection.acp.setConfigOption(
      typeof value === 'boolean' ? { sessionId, configId, type: 'boolean', value } : { sessionId, configId, value }
    )
    this.deps.registry.append(live, { t: 'session', at: new Date().toISOString(), configOptions: response.configOptions })
    if (isMode) await this.chosen(live, value)
  }

  /** The mode the user put the session in: set again when it is reopened. */
  private async chosen(live: LiveSession, modeId: string): Promise<void> {
    if (live.record.chosenMode === modeId) return
    await this.deps.records.updateSession(live.record.id, { chosenMode: modeId })
  }

  /** `session/set_model`, for agents that announce models the older way (not as a config option). */
  async setModel(id: string, modelId: string): Promise<void> {
    const live = await this.deps.connector.ensureLive(id)
    const connection = connectionOf(live)
    const models = live.thread.models
    if (!models?.availableModels.some((m) => m.modelId === modelId)) {
      throw new Error(`${connection.definition.name} does not offer the model '${modelId}' for this session`)
    }
    await connection.acp.setModel({ sessionId: acpSessionIdOf(live), modelId })
    this.deps.registry.append(live, { t: 'session', at: new Date().toISOString(), models: { ...models, currentModelId: modelId } })
  }
}

/** A turn the agent answered as done after saying it failed: `echo` is what it streamed of the failure (its reason). */
class ReportedTurnFailure extends Error {
  constructor(readonly echo: string) {
    super(failureText(echo) || 'it gave no reason')
  }
}

/** Stop reasons after which the queue goes on: the agent finished, or stopped at a limit of its own. */
const NORMAL_STOPS = new Set(['end_turn', 'max_tokens', 'max_turn_requests'])

/** Why the queue waits after a turn that stopped this way. */
function holdReason(stopReason: string, agentName: string): string {
  if (stopReason === 'cancelled') return 'The turn was cancelled, so the queue waits.'
  if (stopReason === 'refusal') return `${agentName} refused the last prompt, so the queue waits.`
  return `The turn stopped (${stopReason}), so the queue waits.`
}

/**
 * A prompt starts the turn, or joins it. Whether it could was decided before the mentions were checked: a turn that
 * ended meanwhile (or one that began, or a reopening) is said as such here, and nothing is sent.
 */
function enterTurn(live: LiveSession, joining: boolean, agentName: string): void {
  const event = { type: joining ? 'join' : 'begin' } as const
  if (live.phase.allows(event)) {
    live.phase.move(event)
    return
  }
  if (joining) throw new Error('The turn ended before the prompt could join it; send it again')
  if (live.phase.inTurn) throw new Error('A turn is already running in this session; wait for it to end or cancel it')
  throw new Error(`${agentName} is being reconnected to this session; send again once it is`)
}

/** The turn a prompt of which is under way (one is: the caller's). */
function turnOf(live: LiveSession) {
  const turn = live.phase.turn
  if (!turn) throw new Error(`The turn of '${live.record.title}' ended while one of its prompts was under way`)
  return turn
}

/** A live session's connection (ensureLive has just made sure there is one). */
function connectionOf(live: LiveSession): AgentConnection {
  if (!live.connection) throw new Error(`The agent of '${live.record.title}' stopped; send again to restart it`)
  return live.connection
}

/** The agent's id for a live session (a session is live only once its agent created it). */
function acpSessionIdOf(live: LiveSession): string {
  if (!live.record.acpSessionId) throw new Error('This session was never created by its agent')
  return live.record.acpSessionId
}
