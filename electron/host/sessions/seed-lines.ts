import type { ToolCallEntry, ThreadEntry } from '../../../shared/thread'

/** The line a seed gives each entry of a conversation (none for most), and the short forms it is told in. */

export function entryLine(entry: ThreadEntry): string | null {
  switch (entry.kind) {
    case 'assistant':
      return entry.text.trim() ? `${entry.text.trim()}\n` : null
    case 'tool_call':
      return `- ${toolSummary(entry)}`
    case 'subagent':
      return `- Subagent: ${entry.title ?? entry.description ?? entry.sessionId}`
    case 'session_message':
      return `- Message${entry.sender ? ` from ${entry.sender}` : ''}: ${oneLine(entry.text, 300)}`
    case 'error':
      return `- Error: ${oneLine(entry.message, 300)}`
    case 'stop':
      return entry.stopReason === 'end_turn' ? null : `- (The turn ended: ${entry.stopReason})`
    default:
      return null
  }
}

/** One line for a tool call: what was run, read or changed, and how it ended when not well. */
export function toolSummary(call: ToolCallEntry): string {
  const paths = pathsOf(call)
  const where = paths.length ? paths.map((p) => `\`${p}\``).join(', ') : oneLine(call.title, 200)
  const command = commandOf(call)
  let what: string
  switch (call.toolKind) {
    case 'execute':
      what = `Ran \`${oneLine(command ?? call.title, 200)}\``
      break
    case 'read':
      what = `Read ${where}`
      break
    case 'edit':
      what = `Edited ${where}`
      break
    case 'delete':
      what = `Deleted ${where}`
      break
    case 'move':
      what = `Moved ${where}`
      break
    case 'search':
      what = `Searched: ${oneLine(call.title, 200)}`
      break
    case 'fetch':
      what = `Fetched: ${oneLine(call.title, 200)}`
      break
    default:
      what = oneLine(call.title, 200) || 'A tool call'
  }
  const ended = call.status === 'completed' ? '' : ` (${call.status})`
  return `${what}${ended}`
}

export function pathsOf(call: ToolCallEntry): string[] {
  const paths = [...call.locations.map((l) => l.path), ...call.content.flatMap((c) => (c.type === 'diff' ? [c.path] : []))]
  return [...new Set(paths)].slice(0, 8)
}

function commandOf(call: ToolCallEntry): string | undefined {
  const input = call.rawInput as { command?: unknown; cmd?: unknown } | null | undefined
  const command = input?.command ?? input?.cmd
  if (typeof command === 'string') return command
  if (Array.isArray(command) && command.every((c) => typeof c === 'string')) return command.join(' ')
  return undefined
}

export function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}
