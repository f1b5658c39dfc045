import type {
  AvailableCommand,
  ContentBlock,
  PlanEntry,
  SessionConfigOption,
  SessionModeState,
  SessionUpdate,
  ToolCallContent,
  ToolCallLocation
} from '@agentclientprotocol/sdk'
import type { SessionModelState, TranscriptRecord, TurnUsage } from './transcript'

/**
 * The thread model: transcript records folded into the entries a person reads.
 * Modelled on Zed's AcpThread: one object owns the entries and applies each
 * `session/update` to them; views only render entries. The Host and the
 * renderer run this same fold, so what is shown live, what is shown from disk
 * and what is shown after a `session/load` replay cannot drift apart.
 */

export type ThreadEntry =
  /** `checkpoint`: the files as they were just before this prompt's turn (a rewind point). */
  | { kind: 'user'; id: string; text: string; checkpoint?: number; steered?: boolean }
  | { kind: 'assistant'; id: string; text: string }
  | { kind: 'thought'; id: string; text: string }
  | ToolCallEntry
  | { kind: 'plan'; id: string; entries: PlanEntry[] }
  | { kind: 'notice'; id: string; severity: string; title: string; description?: string }
  | SubagentEntry
  /** A message between sessions (`session_message`): a subagent's report, or what one session sent another. */
  | { kind: 'session_message'; id: string; messageId: string; sender?: string; recipient?: string; text: string }
  /** The agent compacting the conversation's context (`compaction_update`, `compaction_summary_chunk`): one entry per compaction, patched in place. */
  | { kind: 'compaction'; id: string; compactionId: string; status: string; summary: string; error?: string }
  | { kind: 'stop'; id: string; stopReason: string; usage?: TurnUsage; bySwitchboard?: true }
  | { kind: 'error'; id: string; message: string }
  | { kind: 'unsupported'; id: string; reason: string; raw: string }
  | {
      kind: 'permission'
      id: string
      title: string
      answer: string
      allowed: boolean
      remembered: boolean
      /** The rule that answered, or that the user's "always" made: what it covers. */
      rule?: string
    }
  | {
      kind: 'elicitation'
      id: string
      message: string
      mode: 'form' | 'url'
      action: 'accept' | 'decline' | 'cancel'
      url?: string
      content?: Record<string, string | number | boolean | string[]>
    }

/**
 * A subagent: a child session the agent started and owns (`subagent_update`,
 * ACP's subagents), with its own thread, folded from its updates. Shown
 * under the tool call that launched it (`toolCallId`, from the launch's
 * `session_message`), or where it was announced.
 */
export interface SubagentEntry {
  kind: 'subagent'
  id: string
  /** The child's ACP session id. */
  sessionId: string
  title?: string
  description?: string
  /** Its work state as the agent last reported it (`running`, `idle`, `requires_action`, …). */
  state?: string
  toolCallId?: string
  thread: Thread
}

export interface ToolCallEntry {
  kind: 'tool_call'
  id: string
  toolCallId: string
  title: string
  toolKind: string
  /** The agent's own name for the tool, when it gives one (Claude Code: `_meta.claudeCode.toolName`). */
  toolName?: string
  status: string
  content: ToolCallContent[]
  locations: ToolCallLocation[]
  rawInput?: unknown
  rawOutput?: unknown
  /** The subagent this call launched (its child session id): shown nested under the call. */
  subagent?: string
}

export interface Thread {
  entries: ThreadEntry[]
  /** Session state the agent announced: modes, configuration options, models, commands, usage. */
  modes?: SessionModeState
  configOptions?: SessionConfigOption[]
  models?: SessionModelState
  commands?: AvailableCommand[]
  usage?: { used: number; size: number; cost?: { amount: number; currency: string } | null }
  /** Commands the agent ran through the client, by terminalId (tool calls show them). */
  terminals: Record<string, TerminalView>
  /** Entries addressable by messageId / toolCallId, keyed `kind:id`. */
  keyed: Map<string, ThreadEntry>
  /** Counter for ids of entries the agent gave no id (deterministic for both folds). */
  nextLocalId: number
  /**
   * The transcript seq of the record being folded, when the caller knows it
   * (applyRecordAt): entries the agent gave no id are then named after their
   * record, so folding earlier records in front does not rename the later ones.
   */
  recordSeq?: number
  recordLocal?: number
  /** The checkpoint taken for the turn whose prompt comes next. */
  pendingCheckpoint?: number
  /**
   * Tool calls whose permission request the user refused ('rejected') or that
   * were dismissed when the turn was cancelled ('cancelled'): they show so,
   * whatever status the agent reports for them afterwards.
   */
  refused?: Record<string, 'rejected' | 'cancelled'>
}

export interface TerminalView {
  command: string
  output: string
  exitStatus?: { exitCode?: number | null; signal?: string | null }
}

/** A terminal's output kept in a thread, at most (the tail is what matters). */
const TERMINAL_VIEW_CHARS = 256 * 1024

export function createThread(): Thread {
  return { entries: [], keyed: new Map(), nextLocalId: 0, terminals: {} }
}

/** Folds one transcript record into the thread, in place. */
export function applyRecord(thread: Thread, record: TranscriptRecord): void {
  switch (record.t) {
    case 'header':
      return
    case 'reset':
      thread.entries.splice(0, thread.entries.length)
      thread.keyed.clear()
      return
    case 'prompt': {
      const checkpoint = thread.pendingCheckpoint
      thread.pendingCheckpoint = undefined
      // A new turn: a messageId of an earlier one no longer joins its message (an agent restarted counts from 1 again).
      for (const key of thread.keyed.keys()) if (/^(user|assistant|thought):/.test(key)) thread.keyed.delete(key)
      // What Switchboard told the agent on the user's behalf (a rewind, an earlier conversation) is said by its notice, not in the bubble.
      const said = record.content.filter((block) => !isSwitchboardNote(block))
      push(thread, {
        kind: 'user',
        id: localId(thread),
        text: contentToText(said),
        ...(checkpoint ? { checkpoint } : {}),
        ...(record.steered ? { steered: true } : {})
      })
      return
    }
    case 'context':
      push(thread, {
        kind: 'notice',
        id: localId(thread),
        severity: 'info',
        title: `Continued from "${record.title}"`,
        description: `${record.agent} could not reopen that conversation (${record.reason}). It is shown above, and is given to ${record.agent} as context with your next message.`
      })
      return
    case 'reconnected':
      push(thread, {
        kind: 'notice',
        id: localId(thread),
        severity: 'warning',
        title: `Reconnected to ${record.agent}`,
        description: `${record.lost.replace(/[.\s]+$/, '')}. Switchboard connected again and reopened this conversation; what the agent was doing when the connection was lost did not finish.`
      })
      return
    case 'checkpoint':
      thread.pendingCheckpoint = record.index
      if (record.error) {
        push(thread, { kind: 'notice', id: localId(thread), severity: 'warning', title: 'No checkpoint for this turn', description: record.error })
      }
      return
    case 'rewind': {
      const shown = record.files.slice(0, 10).join(', ') + (record.files.length > 10 ? `, and ${record.files.length - 10} more` : '')
      push(thread, {
        kind: 'notice',
        id: localId(thread),
        severity: 'info',
        title: `Files restored to checkpoint ${record.to}`,
        description: `${record.files.length} file${record.files.length === 1 ? '' : 's'} restored${shown ? `: ${shown}` : ''}. Checkpoint ${record.undo} holds them as they were before, to undo this.`
      })
      return
    }
    case 'update':
      if (record.child) applyUpdate(subagentOf(thread, record.child).thread, record.update)
      else applyUpdate(thread, record.update)
      return
    case 'stop':
      // The protocol: a client marks the turn's unfinished tool calls cancelled when it cancels. A call still
      // pending when a turn ends otherwise never ran (its permission was refused and the agent said no more).
      endUnfinishedToolCalls(thread, 'cancelled', record.stopReason === 'cancelled' ? ['pending', 'in_progress'] : ['pending'])
      push(thread, {
        kind: 'stop',
        id: localId(thread),
        stopReason: record.stopReason,
        ...(record.usage ? { usage: record.usage } : {}),
        ...(record.bySwitchboard ? { bySwitchboard: true as const } : {})
      })
      return
    case 'error':
      if (record.endsTurn) {
        // The turn is over: nothing of it is still waiting or running, and what it streamed of its failure is said once.
        endUnfinishedToolCalls(thread, 'failed')
        dropEchoedError(thread, record.message, record.echo)
      }
      push(thread, { kind: 'error', id: localId(thread), message: record.message })
      return
    case 'terminal': {
      const terminal = (thread.terminals[record.terminalId] ??= { command: record.command ?? '', output: '' })
      if (record.command) terminal.command = record.command
      if (record.replace) terminal.output = (record.data ?? '').slice(-TERMINAL_VIEW_CHARS)
      else if (record.data) terminal.output = (terminal.output + record.data).slice(-TERMINAL_VIEW_CHARS)
      if (record.exitStatus) terminal.exitStatus = record.exitStatus
      return
    }
    case 'permission':
      if (record.toolCallId && !record.optionKind?.startsWith('allow')) {
        const refused = record.optionId === null ? 'cancelled' : 'rejected'
        // The call may be a subagent's (its permission is asked through this session).
        for (const owner of [thread, ...subagentThreads(thread)]) {
          ;(owner.refused ??= {})[record.toolCallId] = refused
          const call = owner.keyed.get(`tool_call:${record.toolCallId}`)
          if (call?.kind === 'tool_call' && call.status === 'failed') call.status = refused
        }
      }
      push(thread, {
        kind: 'permission',
        id: localId(thread),
        title: record.title,
        answer: record.optionName ?? 'Dismissed',
        allowed: record.optionKind?.startsWith('allow') ?? false,
        remembered: record.remembered,
        ...(record.rule ? { rule: record.rule } : {})
      })
      return
    case 'elicitation':
      push(thread, {
        kind: 'elicitation',
        id: localId(thread),
        message: record.message,
        mode: record.mode,
        action: record.action,
        url: record.url,
        content: record.content
      })
      return
    case 'unsupported':
      push(thread, { kind: 'unsupported', id: localId(thread), reason: record.reason, raw: rawText(record.raw) })
      return
    case 'session':
      if (record.modes) thread.modes = record.modes
      if (record.configOptions) thread.configOptions = record.configOptions
      if (record.models) thread.models = record.models
      return
  }
}

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
function subagentOf(thread: Thread, sessionId: string): SubagentEntry {
  const key = `subagent:${sessionId}`
  const existing = thread.keyed.get(key)
  if (existing?.kind === 'subagent') return existing
  push(thread, { kind: 'subagent', id: key, sessionId, thread: createThread() }, key)
  return thread.keyed.get(key) as SubagentEntry
}

/** The threads of the subagents a thread holds (of the one child session `sessionId`, when given). */
export function subagentThreads(thread: Thread, sessionId?: string): Thread[] {
  const threads: Thread[] = []
  for (const entry of thread.keyed.values())
    if (entry.kind === 'subagent' && (!sessionId || entry.sessionId === sessionId)) threads.push(entry.thread)
  return threads
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

/**
 * The session's mode selector: the agent's `modes`, unless it also offers a
 * configuration option of category `mode` (config options supersede modes:
 * offering both would show two Mode selectors for one setting).
 */
export function modesShown(thread: Pick<Thread, 'modes' | 'configOptions'>): SessionModeState | undefined {
  if (thread.configOptions?.some((o) => o.category === 'mode')) return undefined
  return thread.modes?.availableModes.length ? thread.modes : undefined
}

/** The older `models` selector, unless the agent offers the model as a configuration option of category `model`. */
export function modelsShown(thread: Pick<Thread, 'models' | 'configOptions'>): SessionModelState | undefined {
  if (thread.configOptions?.some((o) => o.category === 'model')) return undefined
  return thread.models
}

/** The tokens a prompt response counted, when it carries a well-formed `usage` (an unstable part of ACP). */
export function turnUsageOf(response: unknown): TurnUsage | undefined {
  const usage = (response as { usage?: unknown } | null)?.usage
  if (!usage || typeof usage !== 'object') return undefined
  const u = usage as Record<string, unknown>
  const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined)
  const input = count(u.inputTokens)
  const output = count(u.outputTokens)
  if (input === undefined || output === undefined) return undefined
  const optional = (['thoughtTokens', 'cachedReadTokens', 'cachedWriteTokens'] as const).flatMap((k) => {
    const v = count(u[k])
    return v === undefined ? [] : [[k, v] as const]
  })
  return { totalTokens: count(u.totalTokens) ?? input + output, inputTokens: input, outputTokens: output, ...Object.fromEntries(optional) }
}

/** A text block Switchboard adds to a prompt for the agent (marked in its `_meta`), not typed by the user. */
export const SWITCHBOARD_NOTE_META = { switchboard: { note: true } }

export function isSwitchboardNote(block: ContentBlock): boolean {
  const meta = (block as { _meta?: { switchboard?: { note?: unknown } } | null })._meta
  return block.type === 'text' && meta?.switchboard?.note === true
}

/**
 * An earlier conversation as text for an agent that has never seen it (a new
 * session continuing one its agent could not reopen): who said what, tool
 * calls by title; the newest `maxChars` at most.
 */
export function conversationAsContext(entries: ThreadEntry[], maxChars = 60_000): string {
  const lines: string[] = []
  for (const entry of entries) {
    if (entry.kind === 'user') lines.push(`User: ${entry.text}`)
    else if (entry.kind === 'assistant') lines.push(`Assistant: ${entry.text}`)
    else if (entry.kind === 'tool_call') lines.push(`[Tool call: ${entry.title} (${entry.status})]`)
    else if (entry.kind === 'error') lines.push(`[Error: ${entry.message}]`)
  }
  const text = lines.join('\n\n')
  return text.length > maxChars ? `[… earlier part left out …]\n\n${text.slice(text.length - maxChars)}` : text
}

/** Readable text for content blocks; non-text blocks become short placeholders. */
export function contentToText(blocks: ContentBlock[]): string {
  return (
    blocks
      .map((block) => {
        switch (block.type) {
          case 'text':
            return block.text
          case 'resource_link':
            return `[${block.title ?? block.name}](${block.uri})`
          case 'resource':
            // An attached file: named, not pasted into the message.
            return `[${block.resource.uri.split('/').pop() || block.resource.uri}](${block.resource.uri})`
          case 'image':
            return '[image]'
          case 'audio':
            return '[audio]'
          default:
            return ''
        }
      })
      // One chunk is one block; a prompt with attachments lists them on their own lines.
      .join(blocks.length > 1 ? '\n' : '')
  )
}

function rawText(raw: unknown): string {
  try {
    return JSON.stringify(raw, null, 2) ?? String(raw)
  } catch {
    return String(raw)
  }
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

/**
 * An agent that streams its failure as text and then fails the turn with the
 * same words (Claude Code: "API Error: 500 …" as a message, then an internal
 * error carrying it) would show it twice: the error entry says it once. So
 * does one whose failure the Host read from the text it streamed (`echo`,
 * Codex 2.x: an HTTP error body): that text ends the last reply, and is taken
 * off it.
 */
function dropEchoedError(thread: Thread, message: string, echo?: string): void {
  const last = thread.entries[thread.entries.length - 1]
  if (last?.kind !== 'assistant') return
  const echoed = echo?.trim()
  if (echoed && last.text.trimEnd().endsWith(echoed)) {
    // What the reply said before the failure stays.
    last.text = last.text.trimEnd().slice(0, -echoed.length).trimEnd()
    if (last.text.trim()) return
  } else {
    const said = last.text.trim()
    if (said.length < 8 || !message.includes(said)) return
  }
  thread.entries.pop()
  for (const [key, entry] of thread.keyed) if (entry === last) thread.keyed.delete(key)
}

/** The tool calls of the last turn still in one of `unfinished` when it ended. */
function endUnfinishedToolCalls(thread: Thread, status: 'cancelled' | 'failed', unfinished = ['pending', 'in_progress']): void {
  for (let i = thread.entries.length - 1; i >= 0; i--) {
    const entry = thread.entries[i]
    if (!entry || entry.kind === 'user') return
    if (entry.kind === 'tool_call' && unfinished.includes(entry.status)) entry.status = status
  }
}

function push(thread: Thread, entry: ThreadEntry, key?: string): void {
  thread.entries.push(entry)
  if (key) thread.keyed.set(key, thread.entries[thread.entries.length - 1])
}

function localId(thread: Thread): string {
  if (thread.recordSeq === undefined) return `e${thread.nextLocalId++}`
  const n = thread.recordLocal ?? 0
  thread.recordLocal = n + 1
  return n === 0 ? `r${thread.recordSeq}` : `r${thread.recordSeq}.${n}`
}

/** applyRecord for a record whose transcript seq is known: its entries get ids that stay the same in any later fold. */
export function applyRecordAt(thread: Thread, record: TranscriptRecord, seq: number): void {
  thread.recordSeq = seq
  thread.recordLocal = 0
  try {
    applyRecord(thread, record)
  } finally {
    thread.recordSeq = undefined
  }
}

/**
 * `applyRecordAt` for consecutive records, the first at `seq`: a run of
 * chunks of one message (or thought) is appended to its entry at once, as
 * one text, which folds to the same thread as appending them one by one
 * (the entry, if the run makes one, is named after the run's first record).
 * On a reactive thread (the window's) that is one change of the entry's text
 * for the run, not one per chunk.
 */
export function applyRecordsAt(thread: Thread, records: TranscriptRecord[], seq: number): void {
  for (let i = 0; i < records.length;) {
    const record = records[i]
    let end = i + 1
    while (end < records.length && sameRun(record, records[end])) end++
    if (end - i === 1) applyRecordAt(thread, record, seq + i)
    else {
      const first = record as ChunkRecord
      const text = records
        .slice(i, end)
        .map((r) => contentToText([(r as ChunkRecord).update.content]))
        .join('')
      const joined: ChunkRecord = { ...first, update: { ...first.update, content: { type: 'text', text } } }
      applyRecordAt(thread, joined, seq + i)
    }
    i = end
  }
}

type ChunkRecord = Extract<TranscriptRecord, { t: 'update' }> & {
  update: Extract<SessionUpdate, { sessionUpdate: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk' }>
}

/** A text chunk's record (of a message or thought) that joins `next` into one append. */
function sameRun(record: TranscriptRecord, next: TranscriptRecord): boolean {
  if (record.t !== 'update' || next.t !== 'update') return false
  const a = record.update
  const b = next.update
  return (
    (a.sessionUpdate === 'agent_message_chunk' || a.sessionUpdate === 'agent_thought_chunk' || a.sessionUpdate === 'user_message_chunk') &&
    b.sessionUpdate === a.sessionUpdate &&
    a.content.type === 'text' &&
    b.content.type === 'text' &&
    (a.messageId ?? null) === (b.messageId ?? null)
  )
}

/** Records a conversation opens with: the window shows this tail of a transcript, and a continued session folds the same. */
export const TAIL_RECORDS = 400

/**
 * Folds records that end just before `nextSeq` (a transcript's tail). Entries
 * are named after their records' seqs, counted back from the end, so when
 * earlier records are folded in front later, the entries already shown keep
 * their ids.
 */
export function foldTail(records: TranscriptRecord[], nextSeq: number): Thread {
  const thread = createThread()
  applyRecordsAt(thread, records, nextSeq - records.length)
  return thread
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

/** The agent's own name for a tool, from a tool call's or permission request's `_meta` (Claude Code: `claudeCode.toolName`). */
export function toolNameOf(meta: unknown): string | undefined {
  const name = (meta as { claudeCode?: { toolName?: unknown } } | null | undefined)?.claudeCode?.toolName
  return typeof name === 'string' && name.trim() ? name.trim() : undefined
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
