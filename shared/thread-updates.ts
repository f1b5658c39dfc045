import type { ContentBlock, SessionUpdate, ToolCallContent, ToolCallLocation } from '@agentclientprotocol/sdk'
import { contentToText, createThread, toolNameOf, type SubagentEntry, type Thread, type ThreadEntry, type ToolCallEntry } from './thread'

/**
 * One ACP `session/update` folded into a thread, in place: message and
 * thought chunks joined into their entries, tool calls and their updates,
 * plans, modes, commands, config options, subagents, inter-session messages,
 * compactions, informational notices. Also the two ways an entry is added
 * (`push`, named by `localId`) that the record fold (thread-fold.ts) shares.
 */

export function applyUpdate(thread: Thread, update: SessionUpdate): void {
  // Subagents and inter-session messages (SDK 2.4's unstable types): read by their fields.
  const loose = update as unknown as Record<string, unknown> & { sessionUpdate: string }
  switch (loose.sessionUpdate) {
    case 'subagent_update':
      applySubagentUpdate(thread, loose)
      return
    case 'session_message':
    case 'session_message_chunk':
      applySessionMessage(thread, loose)
      return
  }
  switch (update.sessionUpdate) {
    case 'user_message_chunk':
      appendChunk(thread, 'user', update.messageId, contentToText([update.content]))
      return
    case 'agent_message_chunk': {
      const informational = informationalLevel(update._meta)
      if (informational) {
        pushInformational(thread, informational, contentToText([update.content]))
        return
      }
      appendChunk(thread, 'assistant', update.messageId, contentToText([update.content]))
      return
    }
    case 'agent_thought_chunk':
      appendChunk(thread, 'thought', update.messageId, contentToText([update.content]))
      return
    case 'tool_call':
    case 'tool_call_update': {
      // Keyed by toolCallId: a re-announced call or an update merges into its card;
      // an update for a call never announced still gets one.
      const existing = thread.keyed.get(`tool_call:${update.toolCallId}`)
      if (existing && existing.kind === 'tool_call') Object.assign(existing, toolCallFields(update))
      else pushToolCall(thread, update)
      const call = thread.keyed.get(`tool_call:${update.toolCallId}`)
      if (call?.kind === 'tool_call') call.status = shownStatus(thread, call.toolCallId, call.status, update._meta)
      return
    }
    case 'plan': {
      // A plan is replaced whole; the plans of one turn update one checklist.
      const current = lastOfKindInTurn(thread, 'plan')
      if (current && current.kind === 'plan') current.entries = update.entries
      else push(thread, { kind: 'plan', id: localId(thread), entries: update.entries })
      return
    }
    case 'session_info_update':
      // A title is the session record's (the Host keeps it with its source), not the thread's.
      return
    case 'notice':
      push(thread, {
        kind: 'notice',
        id: localId(thread),
        severity: update.severity,
        title: update.title,
        description: update.description ?? undefined
      })
      return
    case 'current_mode_update':
      if (thread.modes) thread.modes.currentModeId = update.currentModeId
      else thread.modes = { currentModeId: update.currentModeId, availableModes: [] }
      return
    case 'config_option_update':
      thread.configOptions = update.configOptions
      return
    case 'available_commands_update':
      thread.commands = update.availableCommands
      return
    case 'usage_update':
      // An update without a cost (sent while a turn runs) keeps the last one known.
      thread.usage = { used: update.used, size: update.size, cost: update.cost ?? thread.usage?.cost }
      return
    case 'compaction_update': {
      const entry = compactionEntry(thread, update.compactionId)
      if (typeof update.status === 'string') entry.status = update.status
      // Patch semantics: omitted keeps, null (or an empty summary) clears, a value replaces.
      if (update.summary !== undefined) entry.summary = update.summary ? contentToText(update.summary) : ''
      if (update.error !== undefined) {
        if (update.error) entry.error = update.error
        else delete entry.error
      }
      return
    }
    case 'compaction_summary_chunk': {
      compactionEntry(thread, update.compactionId).summary += contentToText([update.content])
      return
    }
    default:
      return
  }
}

/** The subagent entry for a child session: the first word of it fixes its place in the thread. */
export function subagentOf(thread: Thread, sessionId: string): SubagentEntry {
  const key = `subagent:${sessionId}`
  const existing = thread.keyed.get(key)
  if (existing?.kind === 'subagent') return existing
  push(thread, { kind: 'subagent', id: key, sessionId, thread: createThread() }, key)
  return thread.keyed.get(key) as SubagentEntry
}

/** `subagent_update`: a child session announced, or its title, description or work state changed (omitted keeps, null clears). */
function applySubagentUpdate(thread: Thread, update: Record<string, unknown>): void {
  if (typeof update.sessionId !== 'string') return
  const entry = subagentOf(thread, update.sessionId)
  const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value : undefined)
  if (update.title !== undefined) entry.title = text(update.title)
  if (update.description !== undefined) entry.description = text(update.description)
  if (update.state !== undefined) {
    const state = (update.state as { state?: unknown } | null)?.state
    entry.state = typeof state === 'string' ? state : undefined
  }
}

/**
 * `session_message` (an upsert) and `session_message_chunk`: a message between
 * sessions. One that launched a subagent from a tool call (its messageId is
 * the call's id, sent to the child) links the two: the call shows the
 * subagent. Any other is an entry of its own (a subagent's report, the
 * instructions a child received).
 */
function applySessionMessage(thread: Thread, update: Record<string, unknown>): void {
  if (typeof update.messageId !== 'string') return
  const messageId = update.messageId
  const recipient = typeof update.recipientSessionId === 'string' ? update.recipientSessionId : undefined
  const call = thread.keyed.get(`tool_call:${messageId}`)
  if (call?.kind === 'tool_call' && recipient && recipient !== call.subagent) {
    const child = subagentOf(thread, recipient)
    call.subagent = child.sessionId
    child.toolCallId = call.toolCallId
    return
  }
  const key = `session_message:${messageId}`
  let entry = thread.keyed.get(key)
  if (entry?.kind !== 'session_message') {
    push(thread, { kind: 'session_message', id: key, messageId, text: '' }, key)
    entry = thread.keyed.get(key)
  }
  if (entry?.kind !== 'session_message') return
  if (typeof update.senderSessionId === 'string') entry.sender = update.senderSessionId
  if (recipient) entry.recipient = recipient
  if (update.sessionUpdate === 'session_message_chunk') {
    const block = update.content as ContentBlock | undefined
    if (block && typeof block === 'object') entry.text += contentToText([block])
  } else if (update.content !== undefined) {
    entry.text = Array.isArray(update.content) ? contentToText(update.content as ContentBlock[]) : ''
  }
}

/** The compaction entry for `compactionId`: the first update for it fixes its place in the thread. */
function compactionEntry(thread: Thread, compactionId: string): Extract<ThreadEntry, { kind: 'compaction' }> {
  const key = `compaction:${compactionId}`
  const existing = thread.keyed.get(key)
  if (existing?.kind === 'compaction') return existing
  push(thread, { kind: 'compaction', id: key, compactionId, status: 'in_progress', summary: '' }, key)
  return thread.keyed.get(key) as Extract<ThreadEntry, { kind: 'compaction' }>
}

/**
 * Claude Code's informational chunks (`_meta.claudeCode.kind: "informational"`,
 * sent as an agent message to a client that takes no notices): a notice from
 * the agent, not words of its reply. Its level, or null for a chunk of the reply.
 */
function informationalLevel(meta: unknown): string | null {
  const claude = (meta as { claudeCode?: { kind?: unknown; level?: unknown } } | null | undefined)?.claudeCode
  if (claude?.kind !== 'informational') return null
  return typeof claude.level === 'string' && claude.level ? claude.level : 'info'
}

/** An informational chunk as a notice: "**Warning:** text" becomes a warning titled by its first line. */
function pushInformational(thread: Thread, level: string, text: string): void {
  const body = text.replace(/^\s*\*\*[^*\n]{1,40}:\*\*\s*/, '').trim()
  const [first = '', ...rest] = body.split('\n')
  const short = first.length <= 160
  push(thread, {
    kind: 'notice',
    id: localId(thread),
    severity: level === 'warning' || level === 'error' ? level : 'info',
    title: short && first ? first : level === 'warning' ? 'Warning from the agent' : 'Notice from the agent',
    ...(short ? (rest.join('\n').trim() ? { description: rest.join('\n').trim() } : {}) : { description: body })
  })
}

/**
 * The status a tool call shows. A call the user refused or dismissed shows as
 * rejected or cancelled even when the agent ends it `failed`; so does one the
 * agent marks as never run for that reason (Claude Code:
 * `_meta.claudeCode.nonExecutionKind`).
 */
function shownStatus(thread: Thread, toolCallId: string, status: string, meta: unknown): string {
  if (status === 'completed') return status
  const refused = thread.refused?.[toolCallId]
  if (refused && status !== 'pending' && status !== 'in_progress') return refused
  const kind = (meta as { claudeCode?: { nonExecutionKind?: unknown } } | null | undefined)?.claudeCode?.nonExecutionKind
  if (typeof kind !== 'string' || status !== 'failed') return status
  if (kind === 'interrupted' || kind === 'cancelled') return 'cancelled'
  if (kind === 'user-rejected' || kind === 'permission-rule' || kind.startsWith('automode')) return 'rejected'
  return status
}

function appendChunk(thread: Thread, kind: 'user' | 'assistant' | 'thought', messageId: string | null | undefined, text: string): void {
  if (messageId) {
    const key = `${kind}:${messageId}`
    const existing = thread.keyed.get(key)
    if (existing && existing.kind === kind) {
      existing.text += text
      return
    }
    // The id an earlier turn's message already has (the same messageId again) is not taken twice: this one is named after its record.
    const id = thread.entries.some((entry) => entry.id === key) ? `${key}~${localId(thread)}` : key
    push(thread, { kind, id, text }, key)
    return
  }
  const last = thread.entries[thread.entries.length - 1]
  // A chunk without an id goes on a message that had none; after one that had an id, it starts a message of its own.
  if (last && last.kind === kind && !last.id.startsWith(`${kind}:`)) {
    last.text += text
    return
  }
  push(thread, { kind, id: localId(thread), text })
}

function lastOfKindInTurn(thread: Thread, kind: ThreadEntry['kind']): ThreadEntry | undefined {
  for (let i = thread.entries.length - 1; i >= 0; i--) {
    const entry = thread.entries[i]
    if (entry.kind === kind) return entry
    if (entry.kind === 'user' || entry.kind === 'stop') return undefined
  }
  return undefined
}

function pushToolCall(
  thread: Thread,
  update: { toolCallId: string; title?: string | null; kind?: string | null; status?: string | null } & Parameters<typeof toolCallFields>[0]
): void {
  const entry: ToolCallEntry = {
    kind: 'tool_call',
    id: `tool_call:${update.toolCallId}`,
    toolCallId: update.toolCallId,
    title: update.title ?? 'Tool call',
    toolKind: update.kind ?? 'other',
    ...(toolNameOf(update._meta) ? { toolName: toolNameOf(update._meta) } : {}),
    status: update.status ?? 'pending',
    content: update.content ?? [],
    locations: update.locations ?? [],
    rawInput: update.rawInput,
    rawOutput: update.rawOutput
  }
  push(thread, entry, entry.id)
}

function toolCallFields(update: {
  _meta?: unknown
  title?: string | null
  kind?: string | null
  status?: string | null
  content?: ToolCallContent[] | null
  locations?: ToolCallLocation[] | null
  rawInput?: unknown
  rawOutput?: unknown
}): Partial<ToolCallEntry> {
  const fields: Partial<ToolCallEntry> = {}
  if (update.title != null) fields.title = update.title
  if (update.kind != null) fields.toolKind = update.kind
  const toolName = toolNameOf(update._meta)
  if (toolName) fields.toolName = toolName
  if (update.status != null) fields.status = update.status
  if (update.content != null) fields.content = update.content
  if (update.locations != null) fields.locations = update.locations
  if (update.rawInput !== undefined) fields.rawInput = update.rawInput
  if (update.rawOutput !== undefined) fields.rawOutput = update.rawOutput
  return fields
}

export function push(thread: Thread, entry: ThreadEntry, key?: string): void {
  thread.entries.push(entry)
  if (!key) return
  thread.keyed.set(key, thread.entries[thread.entries.length - 1])
  if (thread.turnKeys && TURN_KEY.test(key)) thread.turnKeys.push(key)
}

/** The keys a new turn lets go of: a messageId of an earlier turn no longer joins its message. */
export const TURN_KEY = /^(user|assistant|thought):/

export function localId(thread: Thread): string {
  if (thread.recordSeq === undefined) return `e${thread.nextLocalId++}`
  const n = thread.recordLocal ?? 0
  thread.recordLocal = n + 1
  return n === 0 ? `r${thread.recordSeq}` : `r${thread.recordSeq}.${n}`
}
