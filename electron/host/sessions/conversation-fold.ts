import type { PlanEntry } from '@agentclientprotocol/sdk'
import { applyRecord } from '../../../shared/thread-fold'
import { createThread, type ThreadEntry, type ToolCallEntry } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import { entryLine } from './seed-lines'

/**
 * A conversation folded into the turns a seed tells (conversation-seed.ts), a
 * record at a time, letting go of what is told and can no longer change: a
 * long conversation's seed holds the turns that may still be sent (the newest
 * `keep` characters), a line's length for each one before them, and the tool
 * calls in short (the files they changed), never the whole transcript, its
 * records or its folded thread.
 *
 * The fold is the shared one (`applyRecord`), on a thread whose told entries
 * are taken out: what a later record can still change stays in it (the turn's
 * user message, stops, plans and tool calls of the open turn, its last entry)
 * or is reached by key (tool calls, subagents, messages between sessions, the
 * messages the agent named until the next prompt), and is read at the end. A
 * told line is let go once more than `keep` characters of told text follow it:
 * such a line can be in no seed (the newest turns kept whole fit in the
 * budget, and a turn cut keeps its last characters, fewer than the budget).
 */

export interface SeedImage {
  data: string
  mimeType: string
}

/** Characters of the first request quoted when a long conversation's start is left out. */
export const FIRST_REQUEST_CHARS = 2_000

/** A turn as the seed tells it: a user message (or what came before the first) and what followed, as markdown. */
export interface FoldedTurn {
  /** Characters of its markdown. */
  length: number
  /** Its markdown; when its start was let go, the end that is known (more than the budget's characters). */
  text: string
  /** Images of its prompt. */
  images: SeedImage[]
}

export interface FoldedConversation {
  turns: FoldedTurn[]
  /** The first turn's user message, its first FIRST_REQUEST_CHARS + 1 characters ('' when it had none). */
  firstUser: string
  /** The conversation's tool calls, in order (in short: paths, kind, status, title, command). */
  toolCalls: ToolCallEntry[]
  /** The latest plan. */
  plan?: { kind: 'plan'; id: string; entries: PlanEntry[] }
  /** Entries the conversation folds to. */
  entries: number
}

/** Entries kept in the thread after they are told: the open turn's walks (a plan's update, a turn's end) read them. */
const KEPT_KINDS = new Set<ThreadEntry['kind']>(['stop', 'plan', 'tool_call'])
/** Entries kept by key for good (a reset alone lets go of them, and the current view has none). */
const KEYED_KINDS = new Set<ThreadEntry['kind']>(['tool_call', 'subagent', 'session_message', 'compaction'])
/** The user message of a turn that ended, once told: the message itself, its whole text, is let go. */
const TOLD_USER: ThreadEntry = { kind: 'user', id: '', text: '' }
/** Untold entries of the open turn that make the thread take them out. */
const SETTLE_EVERY = 256

interface Piece {
  /** The user message (else a line said under the agent's name). */
  user?: true
  turn: Turn
  /** Told: its text (the user message trimmed, or the line). */
  text?: string
  /** Not told yet: read at the end. `pending`: a named message of the open turn, told once the turn ends. */
  entry?: ThreadEntry
  pending?: true
  /** Let go: its length (lines run together, `lines` of them, with the line breaks between), and the spaces it ends with. */
  length: number
  lines: number
  trailing: number
}

interface Turn {
  user: ThreadEntry | null
  pieces: Piece[]
  /** Entries other than the user message. */
  entries: number
  images: SeedImage[]
  letGo: boolean
}

export class ConversationFold {
  private readonly thread = createThread()
  private turns: Turn[] = [{ user: null, pieces: [], entries: 0, images: [], letGo: false }]
  /** Entries of the open turn (thread.entries) already told. */
  private told = 0
  /** Entries taken out of the thread. */
  private takenOut = 0
  private readonly toolCalls: ToolCallEntry[] = []
  private lastPlan?: ThreadEntry
  private firstUser = ''
  private imagesOf: { entry: ThreadEntry; images: SeedImage[] } | null = null
  /** Told text not let go yet, in order: its characters from `head` on. */
  private queue: Piece[] = []
  private head = 0
  private queued = 0
  /**
   * Turns with text let go since their pieces were last joined: only theirs are joined again (joining is idempotent).
   * Joining every turn's at each trim of the queue made each a new array of pieces again and again, which outlived
   * the young generation and were promoted, then dropped: half the garbage a long conversation's fold left.
   */
  private touched = new Set<Turn>()
  private done = false

  constructor(
    private readonly agentName: string,
    /** Characters of told text after which a line is let go: at least the budget of the seed made from it. */
    private readonly keep: number,
    /** Only the entries before this one (a conversation up to a message). */
    private readonly beforeEntry?: number
  ) {}

  /** Entries folded so far. */
  get entries(): number {
    return this.takenOut + this.thread.entries.length
  }

  /** Folds a record; false once the fold has all it takes (`beforeEntry`): the rest need not be read. */
  add(record: TranscriptRecord): boolean {
    if (this.done || (this.beforeEntry !== undefined && this.entries >= this.beforeEntry)) return !(this.done = true)
    applyRecord(this.thread, record)
    if (record.t === 'prompt') {
      const user = this.thread.entries.at(-1)
      const images = record.content.flatMap((b) => (b.type === 'image' ? [{ data: b.data, mimeType: b.mimeType }] : []))
      if (user?.kind === 'user' && images.length) this.imagesOf = { entry: user, images }
    }
    // Past `beforeEntry` the entries the record made are left out: nothing is told or taken out after it.
    if (this.beforeEntry === undefined || this.entries <= this.beforeEntry) this.settle()
    return true
  }

  result(): FoldedConversation {
    const overflow = this.beforeEntry === undefined ? 0 : Math.max(0, this.entries - this.beforeEntry)
    const open = this.thread.entries.slice(0, this.thread.entries.length - overflow)
    this.tell(open, open.length)
    const plan = (open.findLast((e) => e.kind === 'plan') ?? this.lastPlan) as FoldedConversation['plan']
    const turns = this.turns.filter((t) => t.user || t.entries > 0).map((t) => this.render(t))
    // The first turn is what came before the first user message, when something did (it has no user message).
    const firstUser = this.turns[0].entries > 0 ? '' : this.firstUser || userText(this.turns[1]?.user)
    return { turns, firstUser: firstUser.slice(0, FIRST_REQUEST_CHARS + 1), toolCalls: this.toolCalls, plan, entries: this.entries - overflow }
  }

  private get openTurn(): Turn {
    return this.turns[this.turns.length - 1]
  }

  /** After a record: a new user message ends the turn before it; a long open turn has its told entries taken out. */
  private settle(): void {
    const entries = this.thread.entries
    const last = entries.at(-1)
    const turn = this.openTurn
    if (last?.kind === 'user' && last !== turn.user) {
      this.tell(entries, entries.length - 1)
      for (const piece of turn.pieces) if (piece.pending) this.settlePending(piece)
      for (const entry of entries.slice(0, -1)) if (entry.kind === 'plan') this.lastPlan = entry
      this.takenOut += entries.length - 1
      entries.splice(0, entries.length - 1)
      this.told = 0
      if (turn.letGo) turn.images = []
      // Its user message is told: its piece holds the text (until let go), and the turn needs only to know it had one.
      // One still named (a replay's, read at the end) stays with its piece.
      if (turn.user && turn.pieces.some((p) => p.user && !p.entry)) turn.user = TOLD_USER
      const images = this.imagesOf?.entry === last ? this.imagesOf.images : []
      this.imagesOf = null
      this.turns.push({ user: last, pieces: [], entries: 0, images, letGo: false })
      this.thread.terminals = {}
      this.letGo()
    } else if (entries.length - this.told > SETTLE_EVERY) {
      this.tell(entries, entries.length - 1)
      // Told entries no walk of the open turn reads are taken out (its user message stays first).
      const kept = entries.filter((e, i) => i >= this.told || (i === 0 && e.kind === 'user') || KEPT_KINDS.has(e.kind))
      this.takenOut += entries.length - kept.length
      this.told -= entries.length - kept.length
      entries.splice(0, entries.length, ...kept)
      this.thread.terminals = {}
      this.letGo()
    }
  }

  /** Makes the pieces of the open turn's entries from `told` up to `end`. */
  private tell(entries: ThreadEntry[], end: number): void {
    const turn = this.openTurn
    for (let i = this.told; i < end; i++) {
      const entry = entries[i]
      if (entry === turn.user) {
        const live = this.named(entry)
        const text = live ? undefined : userText(entry)
        if (text !== undefined && turn === this.turns[1]) this.firstUser = text.slice(0, FIRST_REQUEST_CHARS + 1)
        this.piece(turn, { user: true, turn, ...(live ? { entry, pending: true as const } : { text }), length: 0, lines: 0, trailing: 0 })
        continue
      }
      turn.entries++
      if (entry.kind === 'tool_call') {
        this.toolCalls.push(entry)
        inShort(entry)
      }
      if (entry.kind === 'subagent') entry.thread = createThread()
      if (KEYED_KINDS.has(entry.kind)) {
        if (hasLine(entry)) turn.pieces.push({ turn, entry, length: 0, lines: 0, trailing: 0 })
        continue
      }
      if (this.named(entry)) {
        this.piece(turn, { turn, entry, pending: true, length: 0, lines: 0, trailing: 0 })
        continue
      }
      const line = entryLine(entry)
      if (line !== null) this.piece(turn, { turn, text: line, length: 0, lines: 0, trailing: 0 })
    }
    this.told = Math.max(this.told, end)
  }

  private piece(turn: Turn, piece: Piece): void {
    turn.pieces.push(piece)
    this.queue.push(piece)
    this.queued += piece.text?.length ?? 0
  }

  /** A named message of a turn that ended: told now, or (still named: a replay's) read at the end. */
  private settlePending(piece: Piece): void {
    const entry = piece.entry
    piece.pending = undefined
    if (!entry || this.named(entry)) return
    piece.entry = undefined
    const text = piece.user ? userText(entry) : (entryLine(entry) ?? undefined)
    piece.text = text
    if (text !== undefined && piece.user && piece.turn === this.turns[1]) this.firstUser = text.slice(0, FIRST_REQUEST_CHARS + 1)
    this.queued += text?.length ?? 0
  }

  /** Lets go of told text followed by more than `keep` characters of told text. */
  private letGo(): void {
    while (this.head < this.queue.length) {
      const piece = this.queue[this.head]
      if (piece.pending) break
      if (piece.text !== undefined) {
        if (this.queued - piece.text.length <= this.keep) break
        this.queued -= piece.text.length
        piece.length = piece.text.length
        piece.lines = piece.user ? 0 : 1
        piece.trailing = piece.text.length - piece.text.trimEnd().length
        piece.text = undefined
        piece.turn.letGo = true
        this.touched.add(piece.turn)
        if (piece.turn !== this.openTurn) piece.turn.images = []
      }
      this.head++
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
      for (const turn of this.touched) turn.pieces = joinLetGo(turn.pieces)
      this.touched.clear()
    }
  }

  /** An entry the agent named (a messageId) that a later record may still add to. */
  private named(entry: ThreadEntry): boolean {
    if (entry.kind !== 'user' && entry.kind !== 'assistant' && entry.kind !== 'thought') return false
    const keyed = this.thread.keyed
    if (keyed.get(entry.id) === entry) return true
    const tilde = entry.id.lastIndexOf('~')
    return tilde >= 0 && keyed.get(entry.id.slice(0, tilde)) === entry
  }

  /** The turn's markdown as `turnsOf` wrote it: its length, and its text from the last piece let go on. */
  private render(turn: Turn): FoldedTurn {
    const parts: { text?: string; length: number }[] = []
    const user = turn.pieces.find((p) => p.user)
    if (turn.user) {
      const text = user ? textOf(user) : userText(turn.user)
      parts.push(text === undefined ? { length: 12 + (user?.length ?? 0) } : { text: `### User\n\n${text}\n\n`, length: 12 + text.length })
    }
    const lines: { text?: string; length: number; lines: number; trailing: number }[] = []
    for (const piece of turn.pieces) {
      if (piece.user) continue
      const text = textOf(piece)
      if (text === undefined && piece.lines === 0) continue
      lines.push(text === undefined ? piece : { text, length: text.length, lines: 1, trailing: 0 })
    }
    if (lines.length) {
      parts.push({ text: `### ${this.agentName}\n\n`, length: this.agentName.length + 6 })
      lines.forEach((line, i) => {
        const last = i === lines.length - 1
        if (line.text === undefined) parts.push({ length: line.length - (last ? line.trailing : 0) })
        else {
          const text = last ? line.text.trimEnd() : line.text
          parts.push({ text, length: text.length })
        }
        if (!last) parts.push({ text: '\n', length: 1 })
      })
      parts.push({ text: '\n\n', length: 2 })
    }
    const from = parts.findLastIndex((p) => p.text === undefined) + 1
    return {
      length: parts.reduce((n, p) => n + p.length, 0),
      text: parts
        .slice(from)
        .map((p) => p.text)
        .join(''),
      images: turn.images
    }
  }
}

/** Folds a conversation read a record at a time (a transcript's current view as `currentViewOf` gives it). */
export async function foldConversation(
  records: AsyncIterable<TranscriptRecord> | Iterable<TranscriptRecord>,
  agentName: string,
  keep: number,
  beforeEntry?: number
): Promise<FoldedConversation> {
  const fold = new ConversationFold(agentName, keep, beforeEntry)
  for await (const record of records) if (!fold.add(record)) break
  return fold.result()
}

function userText(entry: ThreadEntry | null | undefined): string {
  return entry?.kind === 'user' ? entry.text.trim() || '(no text)' : ''
}

/** A piece's text as it stands (undefined once let go, or a line that says nothing). */
function textOf(piece: Piece): string | undefined {
  if (piece.text !== undefined) return piece.text
  if (!piece.entry) return undefined
  return piece.user ? userText(piece.entry) : (entryLine(piece.entry) ?? undefined)
}

function hasLine(entry: ThreadEntry): boolean {
  return entry.kind === 'tool_call' || entry.kind === 'subagent' || entry.kind === 'session_message'
}

/** Lines let go one after another, run together: one piece of their length (the line breaks between them counted). */
function joinLetGo(pieces: Piece[]): Piece[] {
  const joined: Piece[] = []
  for (const piece of pieces) {
    const before = joined.at(-1)
    const letGo = piece.text === undefined && !piece.entry && !piece.user
    if (letGo && before && before.text === undefined && !before.entry && !before.user && before.lines > 0) {
      before.length += 1 + piece.length
      before.lines += piece.lines
      before.trailing = piece.trailing
    } else joined.push(piece)
  }
  return joined
}

/** A tool call in short: what its line and the files it changed read (its diffs' texts, output and input go). */
function inShort(call: ToolCallEntry): void {
  call.content = call.content.flatMap((c) => (c.type === 'diff' ? [{ type: 'diff', path: c.path, newText: '' }] : []))
  const input = call.rawInput as { command?: unknown; cmd?: unknown } | null | undefined
  call.rawInput = input && typeof input === 'object' ? { command: input.command, cmd: input.cmd } : undefined
  call.rawOutput = undefined
}
