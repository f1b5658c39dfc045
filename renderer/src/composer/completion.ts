import type { AvailableCommand } from '@agentclientprotocol/sdk'

/**
 * What the composer offers to complete while the user types: the agent's
 * slash commands (from `available_commands_update`) when the message starts
 * with `/`, and the project's files after an `@`. Pure functions; the
 * composer does the asking and the showing.
 */

export type Trigger = { kind: 'command'; start: number; query: string } | { kind: 'file'; start: number; query: string }

/** The completion the text before the caret asks for, if any. */
export function triggerAt(text: string, caret: number): Trigger | null {
  const before = text.slice(0, caret)
  const command = /^\/(\S*)$/.exec(before)
  if (command) return { kind: 'command', start: 0, query: command[1] }
  const mention = /(^|\s)@([^\s@]*)$/.exec(before)
  if (mention) return { kind: 'file', start: before.length - mention[2].length - 1, query: mention[2] }
  return null
}

/** The commands whose name starts with the query, then those that contain it. */
export function matchCommands(commands: AvailableCommand[], query: string, limit = 8): AvailableCommand[] {
  const q = query.toLowerCase()
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(q))
  const contains = commands.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q))
  return [...starts, ...contains].slice(0, limit)
}

/** The text with the trigger (from its start to the caret) replaced by `insert` and a space; and where the caret goes. */
export function applyCompletion(text: string, caret: number, trigger: Trigger, insert: string): { text: string; caret: number } {
  const after = text.slice(caret)
  const spaced = after.startsWith(' ') ? insert : `${insert} `
  const next = text.slice(0, trigger.start) + spaced + after
  return { text: next, caret: trigger.start + spaced.length + (after.startsWith(' ') ? 1 : 0) }
}

/** A `file://` URI for an absolute path (POSIX or Windows). */
export function fileUri(path: string): string {
  const normal = path.replace(/\\/g, '/')
  const drive = /^[A-Za-z]:/.test(normal)
  const encoded = normal
    .split('/')
    .map((segment, i) => (drive && i === 0 ? segment : encodeURIComponent(segment)))
    .join('/')
  return drive ? `file:///${encoded}` : `file://${encoded}`
}

/** A file mentioned in a draft: `@relative` in the text, sent as a resource link to `path`. */
export interface Mention {
  relative: string
  path: string
}

/** The mentions whose `@relative` is still in the text (the user may have deleted some), once each. */
export function mentionsInText(text: string, mentions: Mention[]): Mention[] {
  const seen = new Set<string>()
  return mentions.filter((m) => {
    if (seen.has(m.path)) return false
    const pattern = new RegExp(`(^|\\s)@${m.relative.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=$|\\s|[.,;:!?)])`)
    if (!pattern.test(text)) return false
    seen.add(m.path)
    return true
  })
}
