import type { ContentBlock } from '@agentclientprotocol/sdk'
import type { Attachment } from '../../../shared/contract'
import { contentToText, isSwitchboardNote, SWITCHBOARD_NOTE_META, turnUsageOf } from '../../../shared/thread'
import type { AgentConnection } from '../agent/connection'
import { authRequired } from '../agents/sign-in'
import type { AskBroker } from '../asks/broker'
import { describeError } from '../errors'
import type { SessionConnector, SessionDeps } from './connector'
import { titleFrom, toContentBlock } from './records'
import type { LiveSession } from './registry'
import type { WorkspaceService } from '../workspace/service'

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
  /** Takes the checkpoint of the session's files a turn starts with. */
  workspace: Pick<WorkspaceService, 'beforeTurn'>
}

export class Turns {
  constructor(private readonly deps: TurnsDeps) {}

  async prompt(id: string, text: string, attachments: Attachment[] = []): Promise<{ stopReason: string }> {
    const { registry, records } = this.deps
    const live = await this.deps.connector.ensureLive(id)
    const connection = connectionOf(live)
    if (registry.stateOf(id).status === 'running' || live.inTurn) {
      throw new Error('A turn is already running in this session; wait for it to end or cancel it')
    }
    const note = live.record.rewindNote
    const content: ContentBlock[] = [
      ...(note ? [{ type: 'text' as const, text: note, _meta: SWITCHBOARD_NOTE_META }] : []),
      ...(text.trim() ? [{ type: 'text' as const, text }] : []),
      ...attachments.map((a) => toContentBlock(a, connection))
    ]
    live.inTurn = true
    // The files as the turn finds them, before the agent touches anything (what the turn changed is read against it).
    registry.append(live, await this.deps.workspace.beforeTurn(live.record))
    if (note) live.record.rewindNote = undefined
    registry.append(live, { t: 'prompt', at: new Date().toISOString(), content })
    if (live.record.titleSource === 'default') {
      live.record.title = titleFrom(text.trim() ? text : contentToText(content.filter((block) => !isSwitchboardNote(block))))
      live.record.titleSource = 'prompt'
      records.announce(live.record)
    }
    registry.setState(id, { status: 'running', error: undefined })
    const mark = connection.stderrMark()
    try {
      const response = await connection.acp.prompt({ sessionId: acpSessionIdOf(live), prompt: content })
      this.deps.supervisor.sessionStarted(live.record.agentId)
      const usage = turnUsageOf(response)
      registry.append(live, { t: 'stop', at: new Date().toISOString(), stopReason: response.stopReason, ...(usage ? { usage } : {}) })
      live.record.lastStopReason = response.stopReason
      registry.setState(id, { status: 'ready' })
      return { stopReason: response.stopReason }
    } catch (error) {
      await connection.settle()
      const alive = connection.isAlive
      const auth = authRequired(error, connection, mark)
      // Signed out (or the key refused) after the session started: said in the agent's state too, until a turn works.
      if (auth?.problem) this.deps.supervisor.sessionFailed(auth.problem)
      const message =
        auth?.message ??
        (alive
          ? `${connection.definition.name} failed the turn: ${describeError(error)}`
          : `${connection.exitMessage()}. The conversation so far is kept; send again to restart the agent and continue.`)
      registry.append(live, { t: 'error', at: new Date().toISOString(), message, endsTurn: true })
      // The state agrees with the thread: a failed turn leaves the session in error (a new prompt clears it).
      registry.setState(id, { status: alive ? 'error' : 'idle', error: message })
      throw auth ?? new Error(message)
    } finally {
      if (live.cancelTimer) clearTimeout(live.cancelTimer)
      live.cancelTimer = null
      live.record.updatedAt = new Date().toISOString()
      live.inTurn = false
      await records.saved(live.record)
      registry.releaseIfUnused(live)
    }
  }

  async cancel(id: string): Promise<void> {
    const { registry, broker } = this.deps
    const live = registry.get(id)
    live?.abortConnecting?.abort()
    // The broker settles the session's questions and reports its now empty list into the session's state.
    broker.cancelFor(id)
    const connection = live?.connection
    if (!live || !connection?.isAlive || !live.record.acpSessionId) return
    await connection.acp.cancel({ sessionId: live.record.acpSessionId })
    // An agent that ignores the cancel must not keep the session busy for ever.
    if (registry.stateOf(id).status === 'running' && !live.cancelTimer) {
      const graceMs = this.deps.cancelGraceMs
      live.cancelTimer = setTimeout(() => {
        live.cancelTimer = null
        if (registry.stateOf(id).status !== 'running' || live.connection !== connection || !connection.isAlive) return
        void connection.abandon(
          `${connection.definition.name} did not end the turn within ${graceMs / 1000} s of being asked to cancel, so it was stopped`
        )
      }, graceMs)
      live.cancelTimer.unref?.()
    }
  }

  async setMode(id: string, modeId: string): Promise<void> {
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
    await connection.acp.setMode({ sessionId: acpSessionIdOf(live), modeId })
    this.deps.registry.append(live, { t: 'session', at: new Date().toISOString(), modes: { ...modes, currentModeId: modeId } })
  }

  async setConfigOption(id: string, configId: string, value: string | boolean): Promise<void> {
    const live = await this.deps.connector.ensureLive(id)
    const connection = connectionOf(live)
    const option = live.thread.configOptions?.find((o) => o.id === configId)
    if (!option) throw new Error(`${connection.definition.name} has no configuration option '${configId}' for this session`)
    if (option.type === 'boolean' ? typeof value !== 'boolean' : typeof value !== 'string') {
      throw new Error(`Option '${option.name}' takes a ${option.type === 'boolean' ? 'true/false value' : 'choice from its list'}`)
    }
    const sessionId = acpSessionIdOf(live)
    const response = await connection.acp.setConfigOption(
      typeof value === 'boolean' ? { sessionId, configId, type: 'boolean', value } : { sessionId, configId, value }
    )
    this.deps.registry.append(live, { t: 'session', at: new Date().toISOString(), configOptions: response.configOptions })
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
