// The seed as it was built before the fold let go of what it had told (issue 40): the whole conversation folded, then
// told. Kept as the oracle the streaming fold must match, character for character (conversation-fold.test.ts).

import type { ContentBlock, PlanEntry } from '@agentclientprotocol/sdk'
import { createTwoFilesPatch } from 'diff'
import { applyRecord } from '../../shared/thread-fold'
import { createThread, type ThreadEntry, type ToolCallEntry } from '../../shared/thread'
import type { TranscriptRecord } from '../../shared/transcript'
import type { FileChange, ReviewComment } from '../../shared/workspace'

/**
 * A conversation as the first prompt of another session (a hand-off to
 * another agent, an edited message resent in a new session): the user's
 * prompts, the agent's replies, its tool calls in a line each (what was run,
 * read, changed), the latest plan, the review notes not yet sent and the diff
 * of the files, within a budget of characters. A long conversation keeps its
 * first request and its last turns; what was left out is said, to the agent in
 * the text and to the user in `notes`. Pure: the caller reads the transcript
 * and the files.
 */

/** Characters a seed holds at most, unless told otherwise (≈ 15 000 tokens). */
export const SEED_BUDGET = 60_000
/** The budget offered when an agent refused a seed as too long. */
export const SMALLER_SEED_BUDGET = 20_000
/** Below this a seed says too little to be worth sending. */
export const MIN_SEED_BUDGET = 4_000
/** Images of the conversation sent along at most (the newest), to an agent that takes images. */
export const MAX_SEED_IMAGES = 4

export interface SeedAbout {
  /** The conversation's title and the agent it was with. */
  title: string
  agentName: string
  cwd: string
  branch?: string
  /** What the agent is told first instead of the hand-off's own words (edit and resend says where the conversation was cut). */
  preface?: string
  /** Review notes the user wrote on the changes and had not sent yet. */
  reviewNotes?: readonly ReviewComment[]
  /** The files as they differ from the conversation's start (its first checkpoint), or why that is not known. */
  changes?: { files: readonly FileChange[]; truncated: boolean } | { unavailable: string }
}

export interface SeedOptions {
  /** Characters at most (SEED_BUDGET). */
  budget?: number
  /** The agent takes images: the conversation's newest ones go along as image blocks; else they are left out, said. */
  images: boolean
  /** Only the entries before this one (its index among the folded conversation's entries): a conversation up to a message. */
  beforeEntry?: number
}

export interface SeedImage {
  data: string
  mimeType: string
}

export interface ConversationSeed {
  /** Markdown, `chars` long, at most the budget. */
  text: string
  chars: number
  budget: number
  images: SeedImage[]
  /** What the user should know of what did not go: the part of a long conversation left out, images, a diff cut short. */
  notes: string[]
}

/** Builds the seed from a session's transcript (its current view: a superseded replay left out). */
export function conversationSeed(records: readonly TranscriptRecord[], about: SeedAbout, options: SeedOptions): ConversationSeed {
  const budget = Math.max(MIN_SEED_BUDGET, Math.floor(options.budget ?? SEED_BUDGET))
  const { entries, imagesOf } = foldConversation(records, options.beforeEntry)
  const turns = turnsOf(entries, about.agentName)
  const notes: string[] = []

  const fixed = [
    filesSection(entries),
    planSection(entries),
    clip(notesSection(about.reviewNotes ?? []), Math.floor(budget / 4), 'review notes', false)
  ].filter(Boolean)
  const diff = diffSection(about.changes)
  const frame = intro(about) + fixed.join('') + CUT_ROOM
  const room = Math.max(0, budget - frame.length)
  const conversationSize = turns.reduce((n, t) => n + t.text.length, 0)
  const diffRoom =
    diff.length + conversationSize <= room ? diff.length : Math.min(diff.length, Math.max(Math.floor(room * 0.4), room - conversationSize))
  const diffText = clip(diff, diffRoom, 'diff', true)
  if (diffText.length < diff.length) notes.push(`The diff was cut to ${fmt(diffText.length)} of its ${fmt(diff.length)} characters.`)
  const kept = keepLast(turns, room - diffText.length)
  const left = turns.length - kept.turns.length
  let cut = ''
  if (left > 0 || kept.trimmed) {
    const leftChars = conversationSize - kept.turns.reduce((n, t) => n + t.text.length, 0) + kept.trimmed
    const what = left > 0 ? `the first ${left} of ${turns.length} turns` : 'the start of the only turn'
    cut = `[Switchboard left out ${what} (${fmt(leftChars)} characters) to keep within ${fmt(budget)} characters; the first request is quoted, the rest is the newest part.]\n\n`
    notes.push(`Too long to send whole: ${what} (${fmt(leftChars)} characters) were left out, the newest part kept.`)
  }
  const first = left > 0 && turns[0] ? `### The first request\n\n${clip(turns[0].user, FIRST_REQUEST_CHARS, 'request', false)}\n\n` : ''

  const images = kept.turns.flatMap((t) => (t.userEntryId ? (imagesOf.get(t.userEntryId) ?? []) : []))
  const sent = options.images ? images.slice(-MAX_SEED_IMAGES) : []
  const leftOut = images.length - sent.length
  if (leftOut > 0) {
    notes.push(
      options.images
        ? `${plural(leftOut, 'older image')} left out: the newest ${MAX_SEED_IMAGES} go along.`
        : `${plural(leftOut, 'image')} of the conversation left out: the agent does not take images.`
    )
  }
  const conversation = `## The conversation\n\n${cut}${first}${kept.turns.map((t) => t.text).join('')}`
  const text = [intro(about), conversation, ...fixed, diffText].filter(Boolean).join('').trimEnd() + '\n'
  return { text: text.length > budget ? text.slice(0, budget) : text, chars: Math.min(text.length, budget), budget, images: sent, notes }
}

/**
 * The seed as prompt content: one embedded `resource` (markdown) where the
 * agent takes embedded context, else a text block marked as Switchboard's
 * note (the user's bubble leaves it out); its images after it.
 */
export function seedBlocks(
  seed: Pick<ConversationSeed, 'text' | 'images'>,
  accepts: { embeddedContext: boolean; image: boolean },
  uri: string
): ContentBlock[] {
  const meta = { switchboard: { note: true, seed: true } }
  const main: ContentBlock = accepts.embeddedContext
    ? { type: 'resource', resource: { uri, mimeType: 'text/markdown', text: seed.text }, _meta: meta }
    : { type: 'text', text: seed.text, _meta: meta }
  const images: ContentBlock[] = accepts.image ? seed.images.map((i) => ({ type: 'image', data: i.data, mimeType: i.mimeType, _meta: meta })) : []
  return [main, ...images]
}

/** Whether a failure reads as the prompt being too long for the agent or its model. */
export function tooLong(message: string): boolean {
  return /too long|too large|context (length|window)|maximum context|max(imum)?[_ ]tokens|token limit|exceeds? the (limit|maximum)|prompt is too/i.test(
    message
  )
}

const FIRST_REQUEST_CHARS = 2_000
/** Kept free for the note of what was cut and the first request. */
const CUT_ROOM = ' '.repeat(FIRST_REQUEST_CHARS + 400)

interface Turn {
  user: string
  userEntryId?: string
  text: string
}

function foldConversation(records: readonly TranscriptRecord[], beforeEntry: number | undefined) {
  const thread = createThread()
  const imagesOf = new Map<string, SeedImage[]>()
  for (const record of records) {
    if (beforeEntry !== undefined && thread.entries.length >= beforeEntry) break
    applyRecord(thread, record)
    if (record.t !== 'prompt') continue
    const user = thread.entries.at(-1)
    const images = record.content.flatMap((b) => (b.type === 'image' ? [{ data: b.data, mimeType: b.mimeType }] : []))
    if (user?.kind === 'user' && images.length) imagesOf.set(user.id, images)
  }
  const entries = beforeEntry === undefined ? thread.entries : thread.entries.slice(0, beforeEntry)
  return { entries, imagesOf }
}

/** A turn per user message (what came before the first one is a turn of its own), as markdown. */
function turnsOf(entries: readonly ThreadEntry[], agentName: string): Turn[] {
  const turns: Turn[] = []
  let current: { user: string; userEntryId?: string; lines: string[] } | null = null
  const flush = (): void => {
    if (!current) return
    const said = current.lines.join('\n').trim()
    const user = current.userEntryId ? `### User\n\n${current.user}\n\n` : ''
    turns.push({ user: current.user, userEntryId: current.userEntryId, text: `${user}${said ? `### ${agentName}\n\n${said}\n\n` : ''}` })
  }
  for (const entry of entries) {
    if (entry.kind === 'user') {
      flush()
      current = { user: entry.text.trim() || '(no text)', userEntryId: entry.id, lines: [] }
      continue
    }
    current ??= { user: '', lines: [] }
    const line = entryLine(entry)
    if (line) current.lines.push(line)
  }
  flush()
  return turns
}

function entryLine(entry: ThreadEntry): string | null {
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

function pathsOf(call: ToolCallEntry): string[] {
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

/** Which files the conversation's tool calls changed, once each. */
function filesSection(entries: readonly ThreadEntry[]): string {
  const changed = new Set<string>()
  for (const e of entries) {
    if (e.kind !== 'tool_call' || e.status === 'failed') continue
    if (['edit', 'delete', 'move'].includes(e.toolKind) || e.content.some((c) => c.type === 'diff')) for (const p of pathsOf(e)) changed.add(p)
  }
  if (!changed.size) return ''
  const list = [...changed]
  const shown = list.slice(0, 50).map((p) => `- \`${p}\``)
  if (list.length > 50) shown.push(`- and ${list.length - 50} more`)
  return `## Files the conversation changed\n\n${shown.join('\n')}\n\n`
}

function planSection(entries: readonly ThreadEntry[]): string {
  const plan = entries.findLast((e): e is { kind: 'plan'; id: string; entries: PlanEntry[] } => e.kind === 'plan')
  if (!plan?.entries.length) return ''
  const mark = (s: string): string => (s === 'completed' ? 'x' : s === 'in_progress' ? '~' : ' ')
  return `## The latest plan\n\n${plan.entries.map((p) => `- [${mark(p.status)}] ${oneLine(p.content, 300)}`).join('\n')}\n\n`
}

function notesSection(notes: readonly ReviewComment[]): string {
  if (!notes.length) return ''
  const parts = notes.map(
    (c) => `- \`${c.path}\`, line ${c.line}${c.side === 'old' ? ' (a removed line)' : ''}: ${c.text.trim()}\n  > ${oneLine(c.quote, 300)}`
  )
  return `## Review notes the user wrote and had not sent yet\n\n${parts.join('\n')}\n\n`
}

function diffSection(changes: SeedAbout['changes']): string {
  if (!changes) return ''
  if ('unavailable' in changes) return `## The files\n\nThe diff is not known: ${changes.unavailable}\n\n`
  if (!changes.files.length) return '## The files\n\nNo file differs from how they were when the conversation began.\n\n'
  const parts = changes.files.map((f) => {
    if (f.refused) return `${f.path}: not shown (${f.refused})\n`
    if (f.binary || f.tooLarge) return `${f.path}: ${f.status} (${f.binary ? 'binary' : 'too large to show'})\n`
    return createTwoFilesPatch(`a/${f.path}`, `b/${f.path}`, f.oldText ?? '', f.newText ?? '', undefined, undefined, { context: 3 })
      .split('\n')
      .slice(1)
      .join('\n')
  })
  const more = changes.truncated ? '\n(More files changed than are listed.)\n' : ''
  return `## The diff of the files since the conversation began\n\n\`\`\`diff\n${parts.join('\n').replace(/```/g, '``\u200b`')}\n\`\`\`\n${more}\n`
}

function intro(about: SeedAbout): string {
  if (about.preface) return `${about.preface}\n\n`
  const where = `${about.cwd}${about.branch ? `, branch \`${about.branch}\`` : ''}`
  return (
    `# A conversation handed over to you\n\n` +
    `[Switchboard] The user continues here a conversation they had with ${about.agentName} ("${oneLine(about.title, 120)}") in this same folder (${where}). ` +
    `Below: their prompts, ${about.agentName}'s replies, its tool calls in short, and where there are some the latest plan, review notes not yet sent and the diff of the files since it began. ` +
    `The files are as that conversation left them: read them again before relying on this. The user's message to you comes after it.\n\n`
  )
}

/** The newest turns that fit; when even the newest does not, its end. */
function keepLast(turns: Turn[], room: number): { turns: Turn[]; trimmed: number } {
  const kept: Turn[] = []
  let used = 0
  for (const turn of [...turns].reverse()) {
    if (used + turn.text.length <= room) {
      kept.unshift(turn)
      used += turn.text.length
      continue
    }
    if (!kept.length && room > 0) {
      const tail = turn.text.slice(turn.text.length - room + 20)
      kept.unshift({ ...turn, text: `…${tail}` })
      return { turns: kept, trimmed: turn.text.length - tail.length }
    }
    break
  }
  return { turns: kept, trimmed: 0 }
}

function clip(text: string, max: number, what: string, fenced: boolean): string {
  if (text.length <= max) return text
  const note = `\n[… the rest of the ${what} left out]\n${fenced ? '```\n' : ''}\n`
  return max > note.length ? text.slice(0, max - note.length) + note : ''
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

function fmt(n: number): string {
  return n.toLocaleString('en-US')
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}
