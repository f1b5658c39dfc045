import { RequestError } from '@agentclientprotocol/sdk'
import { agentFailure, type Asked } from '../agents/problems'
import { authRequired } from '../agents/sign-in'
import type { AgentSupervisor } from '../agents/supervisor'
import { describeError, HostError } from '../contract/errors'
import type { McpRunWatch } from '../mcp/run-watch'
import type { McpService } from '../mcp/service'
import { serversForAgent } from '../mcp/acp-servers'
import type { Records } from '../storage/records'
import { presetProfilesOf } from './preset-settings'
import { directoriesFor, sessionStateFrom, systemPromptFor } from './session-parts'
import { beginReplay, commitReplay, endReplay, replayQuiet } from './replay'
import { applyStartingMode } from './starting-mode'
import type { LiveSession, SessionRegistry } from './registry'

/**
 * Makes a past session live: its agent running and the session reopened in it,
 * through `session/resume` (no replay) or `session/load` (the agent replays it).
 * Concurrent requests for one session share one attempt; cancelling the
 * session while it runs cancels the request ($/cancel_request).
 */

/**
 * After `session/load` answers, replayed updates may still be coming (Gemini
 * CLI answers before it has streamed the history): the session is ready once
 * none has come for this long, or after REPLAY_MAX_MS in all. An agent that
 * replayed before it answered is given REPLAY_QUIET_MS; one that had replayed
 * nothing yet, LATE_REPLAY_QUIET_MS: on a loaded machine its replay could
 * begin more than 300 ms after its answer, and was then written after the
 * next prompt, as if the agent had said it again (session-lifecycle's late
 * replay, once in a loaded CI).
 */
const REPLAY_QUIET_MS = 300
const LATE_REPLAY_QUIET_MS = 1000
const REPLAY_MAX_MS = 15_000

export interface SessionDeps {
  records: Records
  registry: SessionRegistry
  supervisor: AgentSupervisor
  mcp: McpService
  /** Told when a session is linked to a run of its agent, with the servers given: which of them that run starts. */
  mcpRun?: McpRunWatch
}

export class SessionConnector {
  constructor(private readonly deps: SessionDeps) {}

  async ensureLive(id: string): Promise<LiveSession> {
    const { records, registry } = this.deps
    const record = records.session(id)
    const loaded = registry.get(id)
    // An agent being stopped takes no new work: the session is reopened on the agent started again.
    if (loaded?.connection?.isAlive && !loaded.connection.stopping) return loaded
    if (loaded && loaded.phase.now.phase !== 'idle') {
      // Another request is reopening it (its outcome is this one's too), or a turn whose agent is gone is writing its end.
      await (loaded.phase.reopening?.done ?? loaded.phase.untilIdle())
      return this.ensureLive(id)
    }
    const definition = records.agent(record.agentId)
    if (!record.acpSessionId) throw new Error('This session was never created by its agent and cannot be continued')
    const live = await registry.load(record)
    if (live.connection?.isAlive && !live.connection.stopping) return live
    if (live.phase.now.phase !== 'idle') return this.ensureLive(id)
    const abort = new AbortController()
    let attempt!: (reopening: Promise<void>) => void
    const done = new Promise<void>((resolve) => (attempt = resolve))
    live.phase.move({ type: 'connect', abort, done })
    attempt(this.reopen(live, definition.name, abort.signal))
    try {
      await done
    } finally {
      live.phase.move({ type: 'reopened' })
      registry.releaseIfUnused(live)
    }
    return live
  }

  private async reopen(live: LiveSession, agentName: string, signal: AbortSignal): Promise<void> {
    const { records, registry, supervisor, mcp } = this.deps
    const { record } = live
    const id = record.id
    registry.setState(id, { status: 'starting', error: undefined, reopenFailed: undefined })
    /** The request that reopens it, once sent: a failure of that request (not of starting the agent) keeps the view and offers a new session. */
    let attempt: 'session/resume' | 'session/load' | null = null
    const definition = records.agent(record.agentId)
    const asked: Asked = {}
    try {
      const prepared = await mcp.prepareForProject(record.projectId, presetProfilesOf(record, records))
      const connection = await supervisor.ensure(definition)
      asked.connection = connection
      asked.mark = connection.stderrMark()
      const servers = serversForAgent(prepared, connection.capabilities, agentName)
      const { loadSession, session: can } = connection.capabilities
      // Resume keeps the local view and needs no replay; an imported session has no local view yet, so it loads.
      const useResume = can.resume && (live.thread.entries.length > 0 || !loadSession)
      if (!useResume && !loadSession) {
        const reason = `${agentName} cannot reopen past sessions (it announces neither loadSession nor session/resume). Start a new session instead.`
        registry.setState(id, { status: 'idle', continueBlockedReason: reason })
        throw new Error(reason)
      }
      registry.attach(live, connection)
      const params = {
        sessionId: record.acpSessionId ?? '',
        cwd: record.cwd,
        mcpServers: servers.mcpServers,
        ...directoriesFor(connection, record.additionalDirectories ?? []),
        // The same instructions it was created with, as the protocol asks.
        ...systemPromptFor(connection, record.systemPrompt)
      }
      // Cancelling while this runs sends $/cancel_request for it.
      const options = { cancellationSignal: signal }
      let answer: unknown
      attempt = useResume ? 'session/resume' : 'session/load'
      if (useResume) {
        answer = await connection.acp.resumeSession(params, options)
      } else {
        // A view Switchboard recorded is kept (the replay is not written); an imported session takes the replay,
        // only once it comes and only when the load succeeds.
        beginReplay(live.phase, live.thread.entries.length > 0)
        answer = await connection.acp.loadSession(params, options)
        const replayedFirst = commitReplay(live.phase, (record) => registry.append(live, record))
        await replayQuiet(live.phase, replayedFirst ? REPLAY_QUIET_MS : LATE_REPLAY_QUIET_MS, REPLAY_MAX_MS, signal)
        endReplay(live.phase)
      }
      supervisor.sessionStarted(definition.id)
      const state = sessionStateFrom(answer)
      if (state) registry.append(live, state)
      await applyStartingMode(live, connection, { records, registry })
      registry.setState(id, {
        status: 'ready',
        error: undefined,
        continueBlockedReason: undefined,
        reopenFailed: undefined,
        mcp: { servers: servers.given, leftOut: servers.leftOut }
      })
      await this.deps.mcpRun?.attached(id, servers.given, connection, definition, record.cwd, asked.mark)
    } catch (error) {
      endReplay(live.phase)
      if (live.connection) registry.detach(live)
      if (signal.aborted) {
        registry.setState(id, { status: 'idle', error: undefined })
        throw new Error('Reopening the session was cancelled')
      }
      if (registry.stateOf(id).status !== 'idle') {
        const needsSignIn = error instanceof RequestError && error.code === -32000
        if (!attempt || needsSignIn) {
          // The agent could not start, or asks for a sign-in: the agent's problem, said with what to do.
          await asked.connection?.settle()
          const failure =
            (needsSignIn && asked.connection && authRequired(error, asked.connection, asked.mark)) || agentFailure(definition, error, asked)
          if (failure instanceof HostError && failure.problem) supervisor.sessionFailed(failure.problem)
          registry.setState(id, { status: 'error', error: describeError(failure) })
          throw failure
        }
        // The view stays as it was; the user may continue in a new session given this conversation as context.
        const reason = describeError(error).replace(/[.\s]+$/, '')
        const message = `${agentName} could not reopen this conversation (${attempt}: ${reason}). Everything shown here is kept; you can continue it in a new session that is given this conversation as context.`
        registry.setState(id, { status: 'error', error: message, reopenFailed: reason })
        throw new HostError('reopen_failed', message)
      }
      throw error
    }
  }
}
