import { randomUUID } from 'node:crypto'
import type { CreateTerminalRequest, PermissionOption, RequestPermissionRequest } from '@agentclientprotocol/sdk'
import { commandLineOf } from '../../../shared/confirmation'
import type { ToolCallEntry } from '../../../shared/thread'

/**
 * What lets a command an agent sends through `terminal/create` run. ACP's
 * `terminal/create` names no tool call: an agent that asks first (a
 * permission request for a tool call that runs a command, then
 * `terminal/create` with that command) is answered by the user's answer to
 * that request, kept for its session until the agent uses it once or the
 * turn ends. The command must be the one the request showed, exactly: the
 * same shell line, or the same program and arguments. Anything else is
 * asked on its own (terminalAsk) before it starts.
 */

export type Decision = 'allow' | 'reject'

/** One command as compared: a shell line (`line:`) or a program and its arguments (`argv:`). */
export type CommandKey = string

/** How many answers a session keeps waiting for their command (the oldest go first). */
const KEPT_PER_SESSION = 20

/** The command a `terminal/create` runs: with no args, a shell line; else the program and its arguments. */
export function terminalCommandKey(request: Pick<CreateTerminalRequest, 'command' | 'args'>): CommandKey {
  const args = request.args ?? []
  return args.length === 0 ? `line:${request.command}` : `argv:${JSON.stringify([request.command, ...args])}`
}

/** The command line as shown to the user: exact, arguments quoted as a POSIX shell reads them. */
export function terminalCommandLine(request: Pick<CreateTerminalRequest, 'command' | 'args'>): string {
  const args = request.args ?? []
  return args.length === 0 ? request.command : commandLineOf(request.command, args)
}

/**
 * The command a permission request is about, as the card showed it: the
 * tool's input `command` (a line, or a list of arguments), else the title of
 * a tool call that runs one (`execute`). None for other requests.
 */
export function requestCommandKey(toolCall: RequestPermissionRequest['toolCall'], announced: ToolCallEntry | undefined): CommandKey | undefined {
  for (const raw of [toolCall.rawInput, announced?.rawInput]) {
    if (typeof raw !== 'object' || raw === null) continue
    const command = (raw as { command?: unknown }).command
    if (typeof command === 'string' && command.trim()) return `line:${command}`
    if (Array.isArray(command) && command.length > 0 && command.every((a) => typeof a === 'string')) return `argv:${JSON.stringify(command)}`
  }
  const kind = toolCall.kind ?? announced?.toolKind
  const title = toolCall.title ?? announced?.title
  return kind === 'execute' && title?.trim() ? `line:${title}` : undefined
}

/** The decision an option carries out (allow or reject, once or always); none for others (a mode switch). */
export function decisionOf(option: PermissionOption | undefined): Decision | null {
  if (option?.kind === 'allow_once' || option?.kind === 'allow_always') return 'allow'
  if (option?.kind === 'reject_once' || option?.kind === 'reject_always') return 'reject'
  return null
}

/** The user's answers to requests that named a command, by session, each used once. */
export class CommandApprovals {
  private readonly bySession = new Map<string, { key: CommandKey; decision: Decision }[]>()

  note(sessionId: string, key: CommandKey, decision: Decision): void {
    const kept = this.bySession.get(sessionId) ?? []
    kept.push({ key, decision })
    this.bySession.set(sessionId, kept.slice(-KEPT_PER_SESSION))
  }

  /** The latest answer for exactly this command in the session, taken (it answers one `terminal/create`). */
  take(sessionId: string, key: CommandKey): Decision | null {
    const kept = this.bySession.get(sessionId)
    if (!kept) return null
    const index = kept.map((a) => a.key).lastIndexOf(key)
    if (index < 0) return null
    const [{ decision }] = kept.splice(index, 1)
    if (kept.length === 0) this.bySession.delete(sessionId)
    return decision
  }

  /** The session's turn ended (or was cancelled, or the session closed): answers not used by then are void. */
  forget(sessionId: string): void {
    this.bySession.delete(sessionId)
  }
}

/** Option ids of the question asked for a command nothing approved. */
export const TERMINAL_OPTIONS = { allow: 'allow', always: 'allow-always', reject: 'reject' } as const

/**
 * The question asked before running a command nothing approved, as a
 * permission request of the session's own (its tool call id is ours): the
 * exact command and the folder it would run in. "Always allow" remembers
 * that command for the agent in the project (permission-rules.ts), so it
 * runs without asking next time.
 */
export function terminalAsk(sessionId: string, request: CreateTerminalRequest, cwd: string, defaultCwd: string): RequestPermissionRequest {
  const line = terminalCommandLine(request)
  const args = request.args ?? []
  return {
    sessionId,
    toolCall: {
      toolCallId: `switchboard-terminal-${randomUUID()}`,
      title: `Run the command ${line}${cwd === defaultCwd ? '' : ` in ${cwd}`}`,
      kind: 'execute',
      status: 'pending',
      rawInput: { command: args.length === 0 ? request.command : [request.command, ...args], cwd }
    },
    options: [
      { optionId: TERMINAL_OPTIONS.allow, name: 'Allow once', kind: 'allow_once' },
      { optionId: TERMINAL_OPTIONS.always, name: 'Always allow', kind: 'allow_always' },
      { optionId: TERMINAL_OPTIONS.reject, name: 'Reject', kind: 'reject_once' }
    ]
  }
}
