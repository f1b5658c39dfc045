import type { SessionUpdate } from '@agentclientprotocol/sdk'
import type { TerminalPatch } from '../../../shared/transcript'

/**
 * Checks a raw `session/update` before it is folded. The SDK would drop an
 * update it cannot parse; the Host keeps every one: a well-formed update is
 * folded, anything else is kept verbatim as an `unsupported` record and shown
 * as such. Checks cover the fields the fold reads, so a bad update can never
 * break the thread.
 */

export type CheckedNotification =
  | { sessionId: string; update: SessionUpdate }
  | { sessionId: string; unsupported: unknown; reason: string }
  /** An agent-owned terminal's command, output and exit (ACP v2 reports them as updates; see v2-adapter.ts). */
  | { sessionId: string; terminal: TerminalPatch }

type Json = Record<string, unknown>

export function checkNotification(params: unknown): CheckedNotification | null {
  if (!isObject(params) || typeof params.sessionId !== 'string') return null
  const update = params.update
  const reason = problemWith(update)
  return reason ? { sessionId: params.sessionId, unsupported: update, reason } : { sessionId: params.sessionId, update: update as SessionUpdate }
}

/** Why the update cannot be folded, or null when it can. */
function problemWith(update: unknown): string | null {
  if (!isObject(update) || typeof update.sessionUpdate !== 'string') return 'not a session update (no sessionUpdate kind)'
  const kind = update.sessionUpdate
  switch (kind) {
    case 'user_message_chunk':
    case 'agent_message_chunk':
    case 'agent_thought_chunk':
    case 'compaction_summary_chunk':
      return isContentBlock(update.content) ? null : `${kind} without a valid content block`
    case 'tool_call':
      return typeof update.toolCallId === 'string' && typeof update.title === 'string' && toolFieldsOk(update)
        ? null
        : 'tool_call without a toolCallId and title, or with malformed content'
    case 'tool_call_update':
      return typeof update.toolCallId === 'string' && toolFieldsOk(update) ? null : 'tool_call_update without a toolCallId, or with malformed content'
    case 'plan':
      return Array.isArray(update.entries) && update.entries.every((e) => isObject(e) && typeof e.content === 'string')
        ? null
        : 'plan without a list of entries'
    case 'available_commands_update':
      return Array.isArray(update.availableCommands) ? null : 'available_commands_update without availableCommands'
    case 'current_mode_update':
      return typeof update.currentModeId === 'string' ? null : 'current_mode_update without currentModeId'
    case 'config_option_update':
      return Array.isArray(update.configOptions) ? null : 'config_option_update without configOptions'
    case 'usage_update':
      return typeof update.used === 'number' && typeof update.size === 'number' ? null : 'usage_update without used and size'
    case 'notice':
      return typeof update.title === 'string' && typeof update.severity === 'string' ? null : 'notice without a title and severity'
    case 'session_info_update':
    case 'compaction_update':
      return null
    // Subagents (ACP's subagents: child sessions the agent owns) and the messages between sessions.
    case 'subagent_update':
      return typeof update.sessionId === 'string' && update.sessionId ? null : 'subagent_update without a sessionId'
    case 'session_message':
      return typeof update.messageId === 'string' &&
        (update.content == null || (Array.isArray(update.content) && update.content.every(isContentBlock)))
        ? null
        : 'session_message without a messageId, or with malformed content'
    case 'session_message_chunk':
      return typeof update.messageId === 'string' && isContentBlock(update.content)
        ? null
        : 'session_message_chunk without a messageId and a content block'
    default:
      return `an update kind this version of Switchboard does not know ('${kind}')`
  }
}

function toolFieldsOk(update: Json): boolean {
  const contentOk =
    update.content == null ||
    (Array.isArray(update.content) &&
      update.content.every(
        (c) =>
          isObject(c) &&
          ((c.type === 'content' && isContentBlock(c.content)) ||
            (c.type === 'diff' && typeof c.path === 'string' && typeof c.newText === 'string') ||
            (c.type === 'terminal' && typeof c.terminalId === 'string'))
      ))
  const locationsOk =
    update.locations == null || (Array.isArray(update.locations) && update.locations.every((l) => isObject(l) && typeof l.path === 'string'))
  return contentOk && locationsOk && (update.title == null || typeof update.title === 'string')
}

function isContentBlock(value: unknown): boolean {
  if (!isObject(value) || typeof value.type !== 'string') return false
  if (value.type === 'text') return typeof value.text === 'string'
  if (value.type === 'resource_link') return typeof value.uri === 'string' && typeof value.name === 'string'
  if (value.type === 'resource') return isObject(value.resource) && typeof value.resource.uri === 'string'
  return true
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
