import { TextDecoder } from 'node:util'
import type * as v1 from '@agentclientprotocol/sdk'
import { contentToText } from '../../../shared/thread'
import type { TerminalPatch } from '../../../shared/transcript'
import { decodeBase64, isObject, toV1Commands, toV1ConfigOptions, toV1ToolContent, type Json } from './v2-forms'

/**
 * ACP protocol version 2 (the draft behind the SDK's `/experimental/v2` entry)
 * in the Host's own language, protocol version 1. Transcripts hold version 1
 * updates and the one fold (shared/thread.ts) reads them, so a session looks
 * the same whichever version its agent speaks. What has no version 1 form is
 * kept verbatim as `unsupported`, like the version 1 path keeps what it cannot
 * fold; nothing the agent sent is dropped without a trace, except the echo of
 * our own prompt (already in the transcript as the `prompt` record).
 *
 * Version 2 differs mostly in that entities are upserts: a `tool_call_update`
 * for an unknown id creates the call, fields are patches (`null` resets),
 * `tool_call_content_chunk` appends one content item, `agent_message` replaces
 * a message's content. One adapter per session keeps what it takes to turn
 * those into version 1's create/replace updates.
 */

/** What one version 2 `session/update` becomes. */
export type Adapted =
  | { kind: 'update'; update: v1.SessionUpdate }
  | { kind: 'unsupported'; raw: unknown; reason: string }
  /** An agent-owned terminal's command, output (appended, or replacing what was shown) and exit. */
  | ({ kind: 'terminal' } & TerminalPatch)
  /** The session's foreground state: how a version 2 turn ends (`idle`, with a stop reason). */
  | { kind: 'state'; state: string; stopReason?: string; error?: { code: number; message: string; data?: unknown } }

interface ToolCallState {
  kind: string
  content: v1.ToolCallContent[]
}

export class V2SessionAdapter {
  private readonly toolCalls = new Map<string, ToolCallState>()
  /** Text shown so far per message, keyed `kind:messageId` (a full upsert that extends it becomes a chunk). */
  private readonly messages = new Map<string, string>()
  /** User messages that are the echo of a prompt we sent. */
  private readonly ownMessages = new Set<string>()
  private readonly decoders = new Map<string, TextDecoder>()
  /** True while a prompt we sent is being inserted: the user message the agent echoes is ours. */
  promptPending = false

  /** The user message id a prompt was inserted as (the `session/prompt` answer): its echo is not shown twice. */
  noteOwnMessage(messageId: string): void {
    this.ownMessages.add(messageId)
  }

  /** The tool kind of a call seen before (permission rules are per kind). */
  toolKind(toolCallId: string): string | undefined {
    return this.toolCalls.get(toolCallId)?.kind
  }

  adapt(update: unknown): Adapted[] {
    if (!isObject(update) || typeof update.sessionUpdate !== 'string') {
      return [unsupported(update, 'not a session update (no sessionUpdate kind)')]
    }
    const kind = update.sessionUpdate
    switch (kind) {
      case 'user_message_chunk':
      case 'agent_message_chunk':
      case 'agent_thought_chunk':
        return this.chunk(update, kind)
      case 'user_message':
      case 'agent_message':
      case 'agent_thought':
        return this.message(update, kind)
      case 'tool_call_update':
        return this.toolCall(update)
      case 'tool_call_content_chunk':
        return this.toolContentChunk(update)
      case 'state_update':
        return [stateOf(update)]
      case 'terminal_update':
        return this.terminalUpdate(update)
      case 'terminal_output_chunk':
        return this.terminalChunk(update)
      case 'plan_update': {
        const plan = isObject(update.plan) ? update.plan : {}
        if (plan.type !== 'items' || !Array.isArray(plan.entries))
          return [unsupported(update, 'a plan_update this version of Switchboard cannot show (not a list of items)')]
        return [{ kind: 'update', update: { sessionUpdate: 'plan', entries: plan.entries as v1.PlanEntry[] } }]
      }
      case 'available_commands_update':
        if (!Array.isArray(update.availableCommands)) return [unsupported(update, 'available_commands_update without availableCommands')]
        return [{ kind: 'update', update: { sessionUpdate: 'available_commands_update', availableCommands: toV1Commands(update.availableCommands) } }]
      case 'config_option_update':
        if (!Array.isArray(update.configOptions)) return [unsupported(update, 'config_option_update without configOptions')]
        return [{ kind: 'update', update: { sessionUpdate: 'config_option_update', configOptions: toV1ConfigOptions(update.configOptions) } }]
      case 'session_info_update':
      case 'usage_update':
      case 'notice':
      case 'compaction_update':
      case 'compaction_summary_chunk':
        // The same shape in both versions.
        return [{ kind: 'update', update: update as v1.SessionUpdate }]
      default:
        return [unsupported(update, `an update kind this version of Switchboard does not know ('${kind}', ACP protocol version 2)`)]
    }
  }

  /**
   * A tool call as version 2 reports it (an upsert): the first time an id is
   * seen it becomes version 1's `tool_call`, later a `tool_call_update`.
   * Permission requests carry one too (their `subject`).
   */
  toolCall(update: Json): Adapted[] {
    const toolCallId = update.toolCallId
    if (typeof toolCallId !== 'string') return [unsupported(update, 'tool_call_update without a toolCallId')]
    const known = this.toolCalls.get(toolCallId)
    const state: ToolCallState = known ?? { kind: 'other', content: [] }
    const out: Adapted[] = []
    const fields: Partial<v1.ToolCall> = {}
    if ('title' in update && typeof update.title === 'string') fields.title = update.title
    if ('name' in update && (typeof update.name === 'string' || update.name === null)) fields.name = update.name
    // null resets to the protocol's default; absent leaves the value as it is.
    if ('kind' in update) fields.kind = (typeof update.kind === 'string' ? update.kind : 'other') as v1.ToolKind
    if ('status' in update) fields.status = (typeof update.status === 'string' ? update.status : 'pending') as v1.ToolCallStatus
    if ('content' in update) {
      if (update.content != null && !Array.isArray(update.content)) return [unsupported(update, 'tool_call_update with malformed content')]
      const content: v1.ToolCallContent[] = []
      for (const item of (update.content as unknown[] | null) ?? []) {
        const converted = toV1ToolContent(item)
        if (converted) content.push(...converted)
        else out.push(unsupported(item, 'tool call content this version of Switchboard cannot show (ACP protocol version 2)'))
      }
      fields.content = content
    }
    if ('locations' in update) {
      if (update.locations != null && !Array.isArray(update.locations)) return [unsupported(update, 'tool_call_update with malformed locations')]
      fields.locations = ((update.locations as unknown[] | null) ?? [])
        .filter(isObject)
        .map((l) => ({ path: String(l.path), ...(typeof l.line === 'number' ? { line: l.line } : {}) }))
    }
    if ('rawInput' in update) fields.rawInput = update.rawInput
    if ('rawOutput' in update) fields.rawOutput = update.rawOutput
    if (fields.kind) state.kind = fields.kind
    if (fields.content) state.content = fields.content
    this.toolCalls.set(toolCallId, state)
    const title = fields.title ?? (typeof fields.name === 'string' ? fields.name : undefined)
    const converted: v1.SessionUpdate =
      !known && title !== undefined
        ? { sessionUpdate: 'tool_call', toolCallId, ...fields, title }
        : { sessionUpdate: 'tool_call_update', toolCallId, ...fields }
    return [{ kind: 'update', update: converted }, ...out]
  }

  private toolContentChunk(update: Json): Adapted[] {
    const toolCallId = update.toolCallId
    if (typeof toolCallId !== 'string') return [unsupported(update, 'tool_call_content_chunk without a toolCallId')]
    const converted = toV1ToolContent(update.content)
    if (!converted) return [unsupported(update, 'tool call content this version of Switchboard cannot show (ACP protocol version 2)')]
    const state = this.toolCalls.get(toolCallId) ?? { kind: 'other', content: [] }
    state.content = [...state.content, ...converted]
    this.toolCalls.set(toolCallId, state)
    // Version 1 replaces a call's content whole: send all of it.
    return [{ kind: 'update', update: { sessionUpdate: 'tool_call_update', toolCallId, content: state.content } }]
  }

  private chunk(update: Json, kind: 'user_message_chunk' | 'agent_message_chunk' | 'agent_thought_chunk'): Adapted[] {
    const messageId = typeof update.messageId === 'string' ? update.messageId : undefined
    if (kind === 'user_message_chunk' && this.isOwnEcho(messageId)) return []
    if (!isObject(update.content)) return [unsupported(update, `${kind} without a valid content block`)]
    if (messageId) {
      const key = `${kind}:${messageId}`
      this.messages.set(key, (this.messages.get(key) ?? '') + contentToText([update.content as v1.ContentBlock]))
    }
    return [{ kind: 'update', update: update as v1.SessionUpdate }]
  }

  /** A full message upsert: new content, or content extending what was shown, becomes a chunk; a real rewrite cannot be shown. */
  private message(update: Json, kind: 'user_message' | 'agent_message' | 'agent_thought'): Adapted[] {
    const chunkKind = `${kind}_chunk` as 'user_message_chunk' | 'agent_message_chunk' | 'agent_thought_chunk'
    const messageId = update.messageId
    if (typeof messageId !== 'string') return [unsupported(update, `${kind} without a messageId`)]
    if (kind === 'user_message' && this.isOwnEcho(messageId)) return []
    if (!('content' in update)) return [] // only metadata changed
    const blocks = update.content == null ? [] : update.content
    if (!Array.isArray(blocks) || !blocks.every(isObject)) return [unsupported(update, `${kind} with malformed content`)]
    const key = `${chunkKind}:${messageId}`
    const shown = this.messages.get(key) ?? ''
    const text = contentToText(blocks as v1.ContentBlock[])
    if (!this.messages.has(key)) {
      this.messages.set(key, text)
      return (blocks as v1.ContentBlock[]).map((content, i) => ({
        kind: 'update' as const,
        // Blocks of one message are lines of it (as the fold shows a prompt's blocks).
        update: {
          sessionUpdate: chunkKind,
          messageId,
          content: i > 0 && content.type === 'text' ? { ...content, text: `\n${content.text}` } : content
        }
      }))
    }
    if (text === shown) return []
    if (text.startsWith(shown)) {
      this.messages.set(key, text)
      return [{ kind: 'update', update: { sessionUpdate: chunkKind, messageId, content: { type: 'text', text: text.slice(shown.length) } } }]
    }
    return [unsupported(update, `${kind} rewrote a message already shown; the first version stays on screen`)]
  }

  private isOwnEcho(messageId: string | undefined): boolean {
    if (messageId && this.ownMessages.has(messageId)) return true
    if (!this.promptPending) return false
    if (messageId) this.ownMessages.add(messageId)
    return true
  }

  private terminalUpdate(update: Json): Adapted[] {
    const terminalId = update.terminalId
    if (typeof terminalId !== 'string') return [unsupported(update, 'terminal_update without a terminalId')]
    const out: Adapted & { kind: 'terminal' } = { kind: 'terminal', terminalId }
    if (typeof update.command === 'string') out.command = update.command
    if (isObject(update.output) && typeof update.output.data === 'string') {
      // A snapshot replaces the output; chunks after it continue from a fresh decoder.
      this.decoders.delete(terminalId)
      out.data = decodeBase64(update.output.data)
      out.replace = true
    } else if (update.output === null) {
      out.data = ''
      out.replace = true
    }
    if (isObject(update.exitStatus)) {
      out.exitStatus = {
        exitCode: typeof update.exitStatus.exitCode === 'number' ? update.exitStatus.exitCode : null,
        signal: typeof update.exitStatus.signal === 'string' ? update.exitStatus.signal : null
      }
    }
    return [out]
  }

  private terminalChunk(update: Json): Adapted[] {
    const terminalId = update.terminalId
    if (typeof terminalId !== 'string' || typeof update.data !== 'string')
      return [unsupported(update, 'terminal_output_chunk without a terminalId and data')]
    let decoder = this.decoders.get(terminalId)
    if (!decoder) this.decoders.set(terminalId, (decoder = new TextDecoder('utf-8')))
    // Bytes of one character may be split between chunks: decode as a stream.
    return [{ kind: 'terminal', terminalId, data: decoder.decode(Buffer.from(update.data, 'base64'), { stream: true }) }]
  }
}

/** A version 2 `state_update`. */
function stateOf(update: Json): Adapted {
  const state = typeof update.state === 'string' ? update.state : 'unknown'
  const out: Adapted & { kind: 'state' } = { kind: 'state', state }
  if (typeof update.stopReason === 'string') out.stopReason = update.stopReason
  if (isObject(update.error) && typeof update.error.message === 'string') {
    out.error = { code: typeof update.error.code === 'number' ? update.error.code : -32603, message: update.error.message, data: update.error.data }
  }
  return out
}

/**
 * A version 2 permission request as version 1's: the subject becomes the tool
 * call (a command subject, an `execute` call running it), with the request's
 * own title, which version 2 keeps apart from the call's.
 */
export function toV1PermissionRequest(params: Json, adapter: V2SessionAdapter): v1.RequestPermissionRequest {
  const subject = isObject(params.subject) ? params.subject : {}
  const title = typeof params.title === 'string' ? params.title : undefined
  const options = (Array.isArray(params.options) ? params.options : []) as v1.PermissionOption[]
  let toolCall: v1.ToolCallUpdate
  if (subject.type === 'tool_call' && isObject(subject.toolCall) && typeof subject.toolCall.toolCallId === 'string') {
    const id = subject.toolCall.toolCallId
    const kind = typeof subject.toolCall.kind === 'string' ? subject.toolCall.kind : (adapter.toolKind(id) ?? 'other')
    toolCall = {
      toolCallId: id,
      kind: kind as v1.ToolKind,
      title: title ?? (typeof subject.toolCall.title === 'string' ? subject.toolCall.title : null)
    }
  } else if (subject.type === 'command' && typeof subject.command === 'string') {
    toolCall = {
      toolCallId: typeof subject.toolCallId === 'string' ? subject.toolCallId : `command:${subject.command}`,
      kind: 'execute',
      title: title ?? `Run ${subject.command}`,
      rawInput: { command: subject.command, cwd: subject.cwd }
    }
  } else {
    toolCall = { toolCallId: 'permission', kind: 'other', title: title ?? null }
  }
  const description = typeof params.description === 'string' && params.description ? params.description : undefined
  if (description && toolCall.title) toolCall.title = `${toolCall.title} — ${description}`
  return { sessionId: String(params.sessionId), toolCall, options }
}

function unsupported(raw: unknown, reason: string): Adapted {
  return { kind: 'unsupported', raw, reason }
}
