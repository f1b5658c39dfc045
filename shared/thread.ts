import type {
  AvailableCommand,
  ContentBlock,
  PlanEntry,
  SessionConfigOption,
  SessionModeState,
  ToolCallContent,
  ToolCallLocation
} from '@agentclientprotocol/sdk'
import type { SessionModelState, TurnUsage } from './transcript'

/**
 * The thread model: transcript records folded into the entries a person reads.
 * Modelled on Zed's AcpThread: one object owns the entries and applies each
 * `session/update` to them; views only render entries. The Host and the
 * renderer run this same fold, so what is shown live, what is shown from disk
 * and what is shown after a `session/load` replay cannot drift apart.
 *
 * This file holds the model and what reads it; the fold itself is
 * thread-fold.ts (transcript records) and thread-updates.ts (an ACP update).
 */

export type ThreadEntry =
  /**
   * `checkpoint`: the files as they were just before this prompt's turn (a rewind point); `edits`: the sessions that
   * continue from before this message with it edited ("Edit and resend").
   */
  | { kind: 'user'; id: string; text: string; checkpoint?: number; steered?: boolean; edits?: { sessionId: string; title: string }[] }
  /** Where this conversation and an edited copy part: `from` (this one is the copy) or `to` (an edit of a message not shown). */
  | { kind: 'branch'; id: string; direction: 'from' | 'to'; sessionId: string; title: string; message: number }
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
  /**
   * The keys of this turn's messages (user, assistant, thought), let go of at the next prompt: kept apart so that a
   * prompt does not walk every key of a long conversation (its tool calls stay keyed).
   */
  turnKeys?: string[]
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

export function createThread(): Thread {
  return { entries: [], keyed: new Map(), nextLocalId: 0, terminals: {} }
}

/** The threads of the subagents a thread holds (of the one child session `sessionId`, when given). */
export function subagentThreads(thread: Thread, sessionId?: string): Thread[] {
  const threads: Thread[] = []
  for (const entry of thread.keyed.values())
    if (entry.kind === 'subagent' && (!sessionId || entry.sessionId === sessionId)) threads.push(entry.thread)
  return threads
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

/** A block Switchboard adds to a prompt for the agent (marked in its `_meta`: a note, a hand-off's conversation), not typed by the user. */
export const SWITCHBOARD_NOTE_META = { switchboard: { note: true } }

export function isSwitchboardNote(block: ContentBlock): boolean {
  const meta = (block as { _meta?: { switchboard?: { note?: unknown } } | null })._meta
  return meta?.switchboard?.note === true
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

/** The agent's own name for a tool, from a tool call's or permission request's `_meta` (Claude Code: `claudeCode.toolName`). */
export function toolNameOf(meta: unknown): string | undefined {
  const name = (meta as { claudeCode?: { toolName?: unknown } } | null | undefined)?.claudeCode?.toolName
  return typeof name === 'string' && name.trim() ? name.trim() : undefined
}
