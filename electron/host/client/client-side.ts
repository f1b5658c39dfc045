import {
  RequestError,
  type CreateTerminalRequest,
  type ReadTextFileRequest,
  type TerminalExitStatus,
  type WriteTextFileRequest
} from '@agentclientprotocol/sdk'
import { commandOf } from '../../../shared/transport'
import type { ClientHandlers } from '../connection/client-handlers'
import { readsMissingFileAsEmpty } from '../connection/quirks'
import type { AskBroker } from '../asks/broker'
import { TERMINAL_OPTIONS, terminalAsk, terminalCommandKey, terminalCommandLine } from '../asks/command-approvals'
import { ElicitationError } from '../asks/elicitation'
import { confinePath, PathRefusedError, readTextFile, writeTextFile } from '../local-files/fs-boundary'
import type { LiveSession, SessionRegistry } from '../sessions/registry'
import { confineRemote, readRemoteTextFile, writeRemoteTextFile } from '../ssh/remote-files'
import type { Terminals } from './terminals'
import { subagentThreads, type Thread } from '../../../shared/thread'

/**
 * The client side of ACP: what the Host answers when an agent calls back into
 * it. Session updates go to the registry; files are read and written, and
 * commands run, only inside the session's folders (on the agent's host, for
 * an agent over SSH: ssh/remote-files.ts); a command runs only once the user
 * allowed it (asks/command-approvals.ts); questions for the user go to the
 * broker. An agent reaches only its own sessions and terminals.
 */

export interface ClientSideOptions {
  registry: SessionRegistry
  broker: AskBroker
  terminals: Terminals
}

export function clientSide({ registry, broker, terminals }: ClientSideOptions): ClientHandlers {
  /** The terminal, if it belongs to that session: an agent cannot touch another session's commands. */
  const ownTerminal = (agentId: string, params: { sessionId: string; terminalId: string }): string => {
    const live = registry.forAgentRequest(agentId, params.sessionId)
    if (!terminals.isOwnedBy(params.terminalId, live.record.id)) {
      throw new RequestError(-32002, `Unknown terminal '${params.terminalId}' for this session`)
    }
    return params.terminalId
  }

  /** A path the agent named, inside the session's folders; a refusal is also shown in the thread. */
  const confine = async (live: LiveSession, path: string, verb: 'read' | 'write' | 'run a command in'): Promise<string> => {
    const remote = live.connection?.sshHost
    try {
      return remote ? await confineRemote(remote, path, rootsOf(live)) : await confinePath(path, rootsOf(live))
    } catch (error) {
      if (!(error instanceof PathRefusedError)) throw error
      // Outside the project, or not a path Switchboard takes at all (relative, a URI, a device…): the reason says which.
      const what = error.outside ? 'a path outside the project' : 'a path Switchboard cannot use'
      registry.append(live, { t: 'error', at: new Date().toISOString(), message: `The agent asked to ${verb} ${what}. ${error.message}` })
      throw new RequestError(-32602, error.message)
    }
  }

  /**
   * Resolves once the command may run: the user allowed exactly this command
   * in the permission request the agent made for it this turn (that answer
   * is used up; a request still pending is waited for), or else allows it now, asked in the thread and the inbox
   * (where an "always" rule may answer at once). Throws, with nothing run,
   * when it is rejected or the question is cancelled.
   */
  const approveCommand = async (live: LiveSession, params: CreateTerminalRequest, cwd: string, signal: AbortSignal): Promise<void> => {
    const line = terminalCommandLine(params)
    const key = terminalCommandKey(params)
    await broker.commandAsked(live.record.id, key)
    const earlier = broker.takeCommandAnswer(live.record.id, key)
    if (earlier === 'allow') return
    if (earlier === 'reject') throw new RequestError(-32001, `The user rejected running this command, so it was not run: ${line}`, { command: line })
    const response = await broker.askPermission(live.record, terminalAsk(params.sessionId, params, cwd, live.record.cwd), signal, {
      folders: rootsOf(live),
      announced: () => undefined,
      forTerminal: true
    })
    const outcome = response.outcome
    if (outcome.outcome === 'selected' && (outcome.optionId === TERMINAL_OPTIONS.allow || outcome.optionId === TERMINAL_OPTIONS.always)) return
    if (outcome.outcome === 'cancelled')
      throw RequestError.requestCancelled({ command: line }, `the question to run this command was cancelled, so it was not run: ${line}`)
    throw new RequestError(-32001, `The user rejected running this command, so it was not run: ${line}`, { command: line })
  }

  const handlers: ClientHandlers = {
    sessionUpdate: (agentId, checked) => {
      const live = registry.deliver(agentId, checked)
      // Claude Code may ask before it announces the call, and only the announcement names the tool.
      const update = 'update' in checked ? checked.update : null
      if (live && (update?.sessionUpdate === 'tool_call' || update?.sessionUpdate === 'tool_call_update')) {
        broker.toolCallChanged(live.record.id, update.toolCallId)
      }
    },
    readTextFile: async (agentId, params: ReadTextFileRequest) => {
      const live = registry.forAgentRequest(agentId, params.sessionId)
      const path = await confine(live, params.path, 'read')
      const remote = live.connection?.sshHost
      try {
        return {
          content: remote ? await readRemoteTextFile(remote, path, params.line, params.limit) : await readTextFile(path, params.line, params.limit)
        }
      } catch (error) {
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
        if (missing && readsMissingFileAsEmpty(live.connection?.state.agentInfo?.name)) return { content: '' }
        throw fileError(error, params.path)
      }
    },
    writeTextFile: async (agentId, params: WriteTextFileRequest) => {
      const live = registry.forAgentRequest(agentId, params.sessionId)
      const path = await confine(live, params.path, 'write')
      const remote = live.connection?.sshHost
      try {
        await (remote ? writeRemoteTextFile(remote, path, params.content) : writeTextFile(path, params.content))
      } catch (error) {
        throw fileError(error, params.path)
      }
    },
    createTerminal: async (agentId, params, signal) => {
      const live = registry.forAgentRequest(agentId, params.sessionId)
      const cwd = params.cwd ? await confine(live, params.cwd, 'run a command in') : live.record.cwd
      await approveCommand(live, params, cwd, signal)
      const command = [params.command, ...(params.args ?? [])].join(' ')
      const at = (): string => new Date().toISOString()
      const events = {
        onOutput: (id: string, data: string) => registry.append(live, { t: 'terminal', at: at(), terminalId: id, data }),
        onExit: (id: string, exitStatus: TerminalExitStatus) => registry.append(live, { t: 'terminal', at: at(), terminalId: id, exitStatus })
      }
      // The variables of the agent as it runs (not its secrets): a command it runs sees what the agent was set up with.
      const terminalId = terminals.create(
        live.record.id,
        params,
        cwd,
        events,
        (live.connection && commandOf(live.connection.definition.transport)?.env) ?? undefined,
        live.connection?.sshHost
      )
      registry.append(live, { t: 'terminal', at: at(), terminalId, command })
      return { terminalId }
    },
    terminalOutput: async (agentId, params) => terminals.output(ownTerminal(agentId, params)),
    waitForTerminalExit: async (agentId, params) => terminals.waitForExit(ownTerminal(agentId, params)),
    killTerminal: async (agentId, params) => terminals.kill(ownTerminal(agentId, params)),
    releaseTerminal: async (agentId, params) => terminals.release(ownTerminal(agentId, params)),
    elicit: async (agentId, params, signal) => {
      const scope = params as { sessionId?: string | null }
      const live = scope.sessionId ? registry.forAgentRequest(agentId, scope.sessionId) : null
      try {
        return await broker.elicit(agentId, live?.record.id ?? null, params, signal)
      } catch (error) {
        if (error instanceof ElicitationError) throw new RequestError(-32602, error.message)
        throw error
      }
    },
    requestPermission: (agentId, params, signal) => {
      const live = registry.forAgentRequest(agentId, params.sessionId)
      // A permission for a tool call never announced (Gemini CLI asks first and announces after): the call is
      // shown from the request, so it can end as the turn does (e.g. cancelled) rather than not exist at all.
      const { toolCall } = params
      // A subagent's request is asked through its parent session; its tool call is in the subagent's thread.
      const child = params.sessionId !== live.record.acpSessionId ? params.sessionId : undefined
      const owner = (): Thread => (child ? (subagentThreads(live.thread, child)[0] ?? live.thread) : live.thread)
      if (!owner().keyed.has(`tool_call:${toolCall.toolCallId}`)) {
        registry.append(live, {
          t: 'update',
          at: new Date().toISOString(),
          ...(child ? { child } : {}),
          update: {
            sessionUpdate: 'tool_call',
            toolCallId: toolCall.toolCallId,
            title: toolCall.title ?? 'Tool call',
            kind: toolCall.kind ?? 'other',
            status: toolCall.status ?? 'pending',
            ...(toolCall.content ? { content: toolCall.content } : {}),
            ...(toolCall.locations ? { locations: toolCall.locations } : {}),
            ...(toolCall.rawInput !== undefined ? { rawInput: toolCall.rawInput } : {}),
            _meta: { switchboard: { fromPermissionRequest: true } }
          }
        })
      }
      return broker.askPermission(live.record, params, signal, {
        folders: rootsOf(live),
        announced: () => {
          const announced = owner().keyed.get(`tool_call:${toolCall.toolCallId}`)
          return announced?.kind === 'tool_call' ? announced : undefined
        }
      })
    }
  }
  return handlers
}

/**
 * Where the agent may read, write and run commands: the session's cwd, plus its
 * additional folders when the agent was told about them.
 */
function rootsOf(live: LiveSession): string[] {
  const extra = live.connection?.capabilities.session.additionalDirectories ? (live.record.additionalDirectories ?? []) : []
  return [live.record.cwd, ...extra]
}

function fileError(error: unknown, path: string): RequestError {
  if (error instanceof PathRefusedError) return new RequestError(-32602, error.message)
  const code = (error as NodeJS.ErrnoException).code
  // The protocol's own code and wording (agents such as Gemini CLI read "Resource not found" as
  // "does not exist yet" before creating a file), with the errno for those that look for it.
  if (code === 'ENOENT') return new RequestError(-32002, `Resource not found: ${path} (ENOENT: no such file or directory)`, { uri: path })
  if (code === 'EISDIR') return new RequestError(-32602, `Is a folder, not a file: ${path}`)
  if (code === 'EACCES' || code === 'EPERM') return new RequestError(-32603, `Permission denied: ${path}`)
  return new RequestError(-32603, `${(error as Error).message}`)
}
