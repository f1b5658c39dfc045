import type { SessionUpdate } from '@agentclientprotocol/sdk'
import type { TranscriptRecord } from '../../../shared/transcript'

/**
 * What a headless run shows of its transcript as records arrive. Plain: the
 * agent's reply on stdout, and what it did (tool calls, permissions, errors)
 * as lines on stderr, so `switchboard run … > reply.md` keeps only the reply.
 * `--json`: every record as one line of JSON on stdout, as the transcript
 * file holds it (shared/transcript.ts), its seq added.
 */
export interface RunOutput {
  record(seq: number, record: TranscriptRecord): void
  /** The turn is over: a reply that did not end its line gets one. */
  end(): void
}

export interface Streams {
  out: (text: string) => void
  err: (text: string) => void
}

export function jsonOutput(streams: Streams): RunOutput {
  return {
    record: (seq, record) => streams.out(`${JSON.stringify({ seq, ...record })}\n`),
    end: () => undefined
  }
}

export function plainOutput(streams: Streams): RunOutput {
  // What stdout ends with: a new message of the agent's starts a paragraph of its own.
  let ending: 'nothing' | 'open' | 'line' = 'nothing'
  let message: string | null | undefined
  const titles = new Map<string, string>()
  const say = (text: string, messageId: string | null): void => {
    if (text === '') return
    if (ending !== 'nothing' && messageId !== message) streams.out(ending === 'open' ? '\n\n' : '\n')
    message = messageId
    streams.out(text)
    ending = text.endsWith('\n') ? 'line' : 'open'
  }
  const note = (line: string): void => streams.err(`${line}\n`)
  return {
    record(_seq, record) {
      if (record.t === 'update' && !record.child) {
        const { update } = record
        if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') say(update.content.text, update.messageId ?? null)
        if (update.sessionUpdate === 'tool_call') titles.set(update.toolCallId, update.title)
        if (update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update') message = undefined
        const step = stepLine(update, titles)
        if (step) note(step)
      } else if (record.t === 'permission') {
        const answer = record.optionId === null ? 'dismissed' : (record.optionName ?? record.optionId)
        note(`  permission: ${record.title}: ${answer}${record.remembered ? ` (${record.rule ?? 'a saved rule'})` : ''}`)
      } else if (record.t === 'error') {
        note(`  error: ${record.message}`)
      } else if (record.t === 'terminal' && record.exitStatus) {
        note(`  command ${record.command ?? record.terminalId} exited with ${record.exitStatus.exitCode ?? record.exitStatus.signal ?? 'nothing'}`)
      }
    },
    end() {
      if (ending === 'open') streams.out('\n')
      ending = 'nothing'
    }
  }
}

/** A line on stderr for a step the agent took: a tool call started, or one that failed. */
function stepLine(update: SessionUpdate, titles: Map<string, string>): string | null {
  if (update.sessionUpdate === 'tool_call') return `  tool: ${update.title}`
  if (update.sessionUpdate === 'tool_call_update' && update.status === 'failed')
    return `  tool failed: ${update.title ?? titles.get(update.toolCallId) ?? update.toolCallId}`
  return null
}
