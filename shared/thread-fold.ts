import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { contentToText, createThread, isSwitchboardNote, subagentThreads, type Thread } from './thread'
import { applyUpdate, localId, push, subagentOf, TURN_KEY } from './thread-updates'
import type { TranscriptRecord } from './transcript'

/**
 * Transcript records folded into a thread, in place, the one fold the Host
 * and the window share: a record at a time (`applyRecord`), named after its
 * seq (`applyRecordAt`, so entries keep their ids in any later fold), a run
 * of chunks at once (`applyRecordsAt`), or a transcript's tail (`foldTail`).
 */

/** A terminal's output kept in a thread, at most (the tail is what matters). */
const TERMINAL_VIEW_CHARS = 256 * 1024

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
      // (A thread that has not counted its turn's keys yet walks them all, once.)
      for (const key of thread.turnKeys ?? [...thread.keyed.keys()]) if (TURN_KEY.test(key)) thread.keyed.delete(key)
      thread.turnKeys = []
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
      if (record.handedTo) {
        push(thread, {
          kind: 'notice',
          id: localId(thread),
          severity: 'info',
          title: `Handed over from "${record.title}" with ${record.agent}`,
          description: `That conversation goes to ${record.handedTo} with your first message here: your prompts, the replies, tool calls in short, the plan, review notes not yet sent and the diff.`
        })
        return
      }
      push(thread, {
        kind: 'notice',
        id: localId(thread),
        severity: 'info',
        title: `Continued from "${record.title}"`,
        description: `${record.agent} could not reopen that conversation (${record.reason}). It is shown above, and is given to ${record.agent} as context with your next message.`
      })
      return
    case 'branch':
      foldBranch(thread, record)
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

/**
 * In the edited copy, where it leaves the original; in the original, the edited message names its copy (when that
 * message is in the thread: a tail without it says so at the end, and the fold with earlier records moves it there).
 */
function foldBranch(thread: Thread, record: Extract<TranscriptRecord, { t: 'branch' }>): void {
  const { title, message } = record
  if (record.from) {
    push(thread, { kind: 'branch', id: localId(thread), direction: 'from', sessionId: record.from, title, message })
    return
  }
  if (!record.to) return
  const edited = thread.entries.find((entry) => entry.kind === 'user' && entry.id === `r${record.seq}`)
  if (edited?.kind === 'user') (edited.edits ??= []).push({ sessionId: record.to, title })
  else push(thread, { kind: 'branch', id: localId(thread), direction: 'to', sessionId: record.to, title, message })
}

function rawText(raw: unknown): string {
  try {
    return JSON.stringify(raw, null, 2) ?? String(raw)
  } catch {
    return String(raw)
  }
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
