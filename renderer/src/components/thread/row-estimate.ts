import type { ThreadEntry, ToolCallEntry } from '../../../../shared/thread'
import { isCodeText } from './tool-text'

/**
 * A first guess of a thread row's height (px), which the list takes until the row is measured. A fling lands where no
 * row has been measured, and the list draws the rows its guesses put in the view: guessed too short, it draws more
 * rows than the view holds, measures them, and lets go of those then pushed out of it before the frame is painted. A
 * tool call was guessed at 80 px whatever it held, where a file's text or a diff is drawn 390–500 px high: a fling
 * through the long bench's conversation let go of a third of the rows it put in the page unpainted. Now a tool call's
 * guess follows what it shows (its boxes by their lines, as high as each grows), from the CSS of its parts
 * (ToolCallCard, DiffView, MarkdownBlock); only the first few thousand characters of a text are looked at (past them,
 * the box is at its cap). A message keeps its guess by length: guessed by its lines too (a one-line answer 22 px, not
 * 58), the open of 200 messages at their end read their rows after a change of the page 4 times, not 3 (e2e/thread).
 */
export function estimateRow(entry: ThreadEntry | undefined): number {
  if (!entry) return 40
  switch (entry.kind) {
    case 'user':
    case 'assistant':
      return 36 + Math.min(600, Math.ceil(entry.text.length / 90) * 22)
    case 'tool_call':
      return toolCallHeight(entry)
    case 'plan':
      return 40 + entry.entries.length * 24
    case 'stop':
    case 'permission':
    case 'thought':
      return 22
    default:
      return 40
  }
}

/** Characters of a text looked at: more than any box shows before its cap. */
const LOOKED_AT = 6_000
/** A line of prose (13.5–14 px text) and of code (12 px monospace at 1.45). */
const PROSE_LINE = 22
const CODE_LINE = 17.4
/** The gap between two blocks (a paragraph's margin, 0.7 em). */
const BLOCK_GAP = 12
/** Characters of prose on a line of the thread's width. */
const PROSE_CHARS = 95
/** A code block's frame: its head (language, Copy) and border; and its padding. */
const CODE_FRAME = 26
const CODE_PADDING = 20
/** A tool call's card without content: its padding, border and head. */
const CARD = 42
/** Each content item's gap above it. */
const ITEM_GAP = 6
/** The caps of a tool call's boxes: a file's text or output as code, a diff's lines, a terminal's rows. */
const CODE_MAX = 320
const DIFF_MAX = 420
const DIFF_HEAD = 32
const TERMINAL = 24 + 16 * CODE_LINE

/** Markdown's height by its lines: prose wrapped at the thread's width, fenced code a line each in its block. */
function markdownHeight(text: string): number {
  let height = 0
  let code = false
  for (const line of text.slice(0, LOOKED_AT).split('\n')) {
    if (/^ {0,3}(```|~~~)/.test(line)) {
      if (!code) height += CODE_FRAME + CODE_PADDING
      code = !code
    } else if (code) height += CODE_LINE
    else height += line.trim() ? Math.ceil(line.length / PROSE_CHARS) * PROSE_LINE : BLOCK_GAP
  }
  return height
}

function lines(text: string | null | undefined): number {
  if (!text) return 0
  let count = 1
  for (let at = text.indexOf('\n'); at >= 0 && at < LOOKED_AT; at = text.indexOf('\n', at + 1)) count++
  return count
}

/** By content list: a tool call's content is replaced whole when it changes (thread-updates.ts), never changed in place. */
const contentHeights = new WeakMap<ToolCallEntry['content'], number>()

function toolCallHeight(call: ToolCallEntry): number {
  let content = contentHeights.get(call.content)
  if (content === undefined) {
    content = 0
    for (const item of call.content) {
      content += ITEM_GAP
      if (item.type === 'diff') content += DIFF_HEAD + Math.min(DIFF_MAX, (lines(item.newText) + 1) * CODE_LINE)
      else if (item.type === 'terminal') content += TERMINAL
      else if (item.content.type !== 'text') content += 40
      else if (isCodeText(call.toolKind, item.content.text.slice(0, LOOKED_AT)))
        content += CODE_FRAME + Math.min(CODE_MAX, CODE_PADDING + lines(item.content.text) * CODE_LINE)
      else content += Math.min(600, markdownHeight(item.content.text))
    }
    contentHeights.set(call.content, content)
  }
  const raw = call.rawInput != null || call.rawOutput != null ? 26 : 0
  return CARD + (call.locations.length ? 22 : 0) + content + raw
}
