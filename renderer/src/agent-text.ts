/**
 * What agent text may cost, and what it may hide.
 *
 * **Cost.** Agent text reaches the window as markdown (messages, thoughts,
 * tool call content) and as plain strings (titles, plan entries, option
 * names). markdown-it, the sanitiser and the browser's layout all grow with
 * the text, and some shapes cost far more than their size: thousands of
 * unmatched `[` or `*`, quotes or lists nested thousands deep, a single line
 * of megabytes. `markdownVerdict` looks at a text cheaply (one pass over at
 * most `LIMITS.markdownChars` characters) and says why it should not be
 * rendered as markdown; such text is shown as plain text, in pieces of
 * `LIMITS.plainPiece` characters, the first few at once and the rest on
 * demand (PlainText.vue). Plain strings are cut to a length (`shortText`).
 *
 * **What it hides.** Invisible characters can make text read differently
 * from what it is: U+202E (right-to-left override) shows `report\u202Efdp.exe`
 * as "reportexe.pdf". Overrides and embeddings are shown as visible marks
 * wherever agent text appears (`revealText`); in paths and code every bidi
 * control and every invisible character is (`revealPath`). Each agent string
 * shown inline is also isolated (`<bdi>`), so what it holds cannot reorder
 * the text around it.
 */

export const LIMITS = {
  /** Longer text is not rendered as markdown (its HTML and its layout grow with it). */
  markdownChars: 100_000,
  /** Longer text cannot be shown as markdown even when asked ("Show as markdown anyway"). */
  markdownAnywayChars: 1_000_000,
  /** markdown-it's nesting limit (its default is 100); text that reaches it is shown as plain text. */
  nesting: 20,
  /** Brackets, emphasis and code delimiters in one paragraph beyond which markdown-it's cost climbs steeply. */
  delimitersPerParagraph: 1_000,
  /** Link brackets in one paragraph, likewise. */
  bracketsPerParagraph: 1_000,
  /** A render of a long text (over `slowRenderChars`) that took longer than this switches it to plain text. */
  slowRenderMs: 500,
  slowRenderChars: 16_000,
  /**
   * A text longer than `growingChars` that changes (a long block streaming in) is shown again at most every
   * `length / growingCharsPerMs` ms, at most `growingMaxWaitMs` apart: each showing lays out the whole growing
   * block again, and its garbage (the browser's line boxes and glyph runs, the string copies) grows with the text.
   * A text that stops changing for 100 ms (its stream ended or paused) is shown at once (MarkdownBlock.vue).
   */
  growingChars: 16_000,
  growingCharsPerMs: 200,
  growingMaxWaitMs: 500,
  /** Plain text is laid out in pieces of this many characters, each its own block (laying out one costs a few ms). */
  plainPiece: 8_000,
  /** Pieces shown before "Show all": about 200 lines of 80 characters. */
  plainPiecesShown: 2,
  /** Pieces "Show all" adds a frame (those out of view are not laid out: `content-visibility: auto`). */
  plainPiecesPerFrame: 4,
  /** A line of a diff is cut after this many characters (the whole file is one click away in its editor). */
  diffLineChars: 5_000,
  /** An inline string (a title, a plan entry, an option name) is cut after this many characters. */
  inlineChars: 600,
  /** A tooltip holds at most this many characters. */
  tooltipChars: 2_000
} as const

/** A size in characters as a person reads it: "812 characters", "48 KB", "5.0 MB" (one character taken as one byte). */
export function formatSize(chars: number): string {
  if (chars < 1_000) return `${chars} character${chars === 1 ? '' : 's'}`
  if (chars < 1_000_000) return `${Math.round(chars / 1_000)} KB`
  return `${(chars / 1_000_000).toFixed(1)} MB`
}

/**
 * Why `text` should be shown as plain text rather than markdown, or null when
 * markdown is fine. One pass, and none over text that is too long anyway.
 * Nesting is checked after parsing (`renderMarkdownBlocks` reports it).
 */
export function markdownVerdict(text: string): string | null {
  if (text.length > LIMITS.markdownChars)
    return `it is ${formatSize(text.length)} long (markdown is rendered up to ${formatSize(LIMITS.markdownChars)})`
  let brackets = 0
  let delimiters = 0
  /** The fence (``` or ~~~) of the code block the line is in: code is not parsed for links or emphasis. */
  let fence: string | null = null
  for (let start = 0; start < text.length;) {
    const newline = text.indexOf('\n', start)
    const end = newline < 0 ? text.length : newline
    let first = start
    while (first < end && (text.charCodeAt(first) === 32 || text.charCodeAt(first) === 9 || text.charCodeAt(first) === 13)) first++
    const marker = text.startsWith('```', first) ? '```' : text.startsWith('~~~', first) ? '~~~' : null
    if (fence) {
      if (marker === fence) fence = null
    } else if (marker) {
      fence = marker
    } else if (first === end) {
      // A blank line ends a paragraph: counts are per paragraph (or list item, or heading), where markdown-it's costs multiply.
      brackets = delimiters = 0
    } else {
      if (/^(?:[-*+]|\d{1,9}[.)])[ \t]|^#{1,6}[ \t]/.test(text.slice(first, first + 12))) brackets = delimiters = 0
      for (let i = first; i < end; i++) {
        const c = text.charCodeAt(i)
        if (c === 91) {
          // [
          if (++brackets > LIMITS.bracketsPerParagraph)
            return `a paragraph holds more than ${LIMITS.bracketsPerParagraph.toLocaleString('en-US')} “[”`
        } else if (c === 42 || c === 95 || c === 126 || c === 96) {
          // * _ ~ ` (a list marker at the start of a line is not emphasis)
          if (i === first && c === 42 && text.charCodeAt(i + 1) === 32) continue
          if (++delimiters > LIMITS.delimitersPerParagraph)
            return `a paragraph holds more than ${LIMITS.delimitersPerParagraph.toLocaleString('en-US')} emphasis or code marks`
        }
      }
    }
    start = end + 1
  }
  return null
}

interface Hidden {
  /** A short name shown in place of the character: RLO, ZWSP, … */
  mark: string
  /** What it is, for a tooltip. */
  name: string
}

const BIDI: Record<number, Hidden> = {
  0x061c: { mark: 'ALM', name: 'ARABIC LETTER MARK' },
  0x200e: { mark: 'LRM', name: 'LEFT-TO-RIGHT MARK' },
  0x200f: { mark: 'RLM', name: 'RIGHT-TO-LEFT MARK' },
  0x202a: { mark: 'LRE', name: 'LEFT-TO-RIGHT EMBEDDING' },
  0x202b: { mark: 'RLE', name: 'RIGHT-TO-LEFT EMBEDDING' },
  0x202c: { mark: 'PDF', name: 'POP DIRECTIONAL FORMATTING' },
  0x202d: { mark: 'LRO', name: 'LEFT-TO-RIGHT OVERRIDE' },
  0x202e: { mark: 'RLO', name: 'RIGHT-TO-LEFT OVERRIDE' },
  0x2066: { mark: 'LRI', name: 'LEFT-TO-RIGHT ISOLATE' },
  0x2067: { mark: 'RLI', name: 'RIGHT-TO-LEFT ISOLATE' },
  0x2068: { mark: 'FSI', name: 'FIRST STRONG ISOLATE' },
  0x2069: { mark: 'PDI', name: 'POP DIRECTIONAL ISOLATE' }
}

const INVISIBLE: Record<number, Hidden> = {
  0x00ad: { mark: 'SHY', name: 'SOFT HYPHEN' },
  0x034f: { mark: 'CGJ', name: 'COMBINING GRAPHEME JOINER' },
  0x115f: { mark: 'HCF', name: 'HANGUL CHOSEONG FILLER' },
  0x1160: { mark: 'HJF', name: 'HANGUL JUNGSEONG FILLER' },
  0x180e: { mark: 'MVS', name: 'MONGOLIAN VOWEL SEPARATOR' },
  0x200b: { mark: 'ZWSP', name: 'ZERO WIDTH SPACE' },
  0x200c: { mark: 'ZWNJ', name: 'ZERO WIDTH NON-JOINER' },
  0x200d: { mark: 'ZWJ', name: 'ZERO WIDTH JOINER' },
  0x2060: { mark: 'WJ', name: 'WORD JOINER' },
  0x2061: { mark: 'U+2061', name: 'FUNCTION APPLICATION' },
  0x2062: { mark: 'U+2062', name: 'INVISIBLE TIMES' },
  0x2063: { mark: 'U+2063', name: 'INVISIBLE SEPARATOR' },
  0x2064: { mark: 'U+2064', name: 'INVISIBLE PLUS' },
  0x3164: { mark: 'HF', name: 'HANGUL FILLER' },
  0xfeff: { mark: 'BOM', name: 'ZERO WIDTH NO-BREAK SPACE' },
  0xffa0: { mark: 'HWHF', name: 'HALFWIDTH HANGUL FILLER' }
}

/** Embeddings and overrides: they can reverse the letters after them (“txt.exe” reads “exe.txt”). Shown in all agent text. */
const DECEPTIVE = /[\u202A-\u202E]/g
/** Every bidi control and every invisible character, and the tag characters (U+E0000–E007F) that spell hidden text: shown in paths and code. */
const HIDDEN = /[\u00AD\u034F\u061C\u115F\u1160\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\u3164\uFEFF\uFFA0]|\uDB40[\uDC00-\uDC7F]/g

export type Scope = 'text' | 'path'

function pattern(scope: Scope): RegExp {
  const re = scope === 'path' ? HIDDEN : DECEPTIVE
  re.lastIndex = 0
  return re
}

function describe(char: string): Hidden {
  const code = char.codePointAt(0) ?? 0
  const known = BIDI[code] ?? INVISIBLE[code]
  if (known) return known
  const hex = code.toString(16).toUpperCase()
  // A tag character mirrors an ASCII one (U+E0041 is a hidden “A”).
  if (code >= 0xe0000 && code <= 0xe007f) {
    const ascii = code - 0xe0000
    return { mark: `U+${hex}`, name: ascii >= 0x20 && ascii < 0x7f ? `TAG ${JSON.stringify(String.fromCharCode(ascii))}` : 'TAG' }
  }
  return { mark: `U+${hex}`, name: 'INVISIBLE CHARACTER' }
}

/** A piece of agent text: plain characters, or one hidden character shown by its mark. */
export type Segment = { text: string; hidden?: undefined } | { text: string; hidden: Hidden & { code: string } }

/** `text` split around the characters `scope` shows visibly. */
export function segments(text: string, scope: Scope): Segment[] {
  const re = pattern(scope)
  const out: Segment[] = []
  let last = 0
  for (let match = re.exec(text); match; match = re.exec(text)) {
    if (match.index > last) out.push({ text: text.slice(last, match.index) })
    const hidden = describe(match[0])
    out.push({ text: match[0], hidden: { ...hidden, code: `U+${(match[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}` } })
    last = match.index + match[0].length
  }
  if (last < text.length) out.push({ text: text.slice(last) })
  return out
}

/** `text` with the characters `scope` shows visibly written as ⟨RLO⟩, ⟨ZWSP⟩, …: for tooltips and plain strings. */
export function revealText(text: string, scope: Scope = 'text'): string {
  return text.replace(pattern(scope), (char) => `⟨${describe(char).mark}⟩`)
}

/** A path or file name with every bidi control and invisible character shown. */
export function revealPath(path: string): string {
  return revealText(path, 'path')
}

/** What a tooltip says of the hidden characters in `text` (empty when there are none). */
export function hiddenWarning(text: string, scope: Scope): string {
  const found = new Map<string, string>()
  for (const segment of segments(text, scope)) {
    if (segment.hidden && found.size < 5) found.set(segment.hidden.code, `${segment.hidden.code} ${segment.hidden.name}`)
  }
  if (found.size === 0) return ''
  return `Contains invisible characters that can change how it reads, shown as ⟨…⟩: ${[...found.values()].join(', ')}`
}

/** The HTML marks of a markdown renderer: `html` is already escaped text; the hidden characters in it become marked spans. */
export function markHiddenHtml(html: string, scope: Scope): string {
  return html.replace(pattern(scope), (char) => {
    const hidden = describe(char)
    const code = `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
    return `<span class="hidden-char" data-char="${code.slice(2)}" title="${code} ${hidden.name}: an invisible character that can change how the text reads">${hidden.mark}</span>`
  })
}

/** The text of an element whose hidden characters are shown as marks, with each mark put back as the character it stands for (what Copy copies). */
export function textWithHidden(element: Element): string {
  const copy = element.cloneNode(true) as Element
  for (const mark of copy.querySelectorAll('.hidden-char[data-char]')) {
    const code = Number.parseInt(mark.getAttribute('data-char') ?? '', 16)
    mark.replaceWith(Number.isFinite(code) ? String.fromCodePoint(code) : '')
  }
  return copy.textContent ?? ''
}

/** A string cut to `max` characters (never inside a surrogate pair), and how many were left out. */
export function shortText(text: string, max: number = LIMITS.inlineChars): { text: string; cut: number } {
  if (text.length <= max) return { text, cut: 0 }
  let end = max
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return { text: text.slice(0, end), cut: text.length - end }
}

/** A tooltip for an agent string: at most `LIMITS.tooltipChars`, hidden characters shown. */
export function tooltip(text: string, scope: Scope = 'text'): string {
  const { text: short, cut } = shortText(text, LIMITS.tooltipChars)
  return revealText(short, scope) + (cut ? `… (${formatSize(cut)} more)` : '')
}

/**
 * Plain text in pieces of about `LIMITS.plainPiece` characters, each ending at
 * a line break where one is near, so that each is laid out on its own (one
 * huge block costs the browser far more than many small ones). Only the
 * first `max` pieces are cut: the cost follows what is shown, not the text.
 */
export function plainPieces(text: string, max = Infinity, piece: number = LIMITS.plainPiece): string[] {
  const pieces: string[] = []
  let start = 0
  while (start < text.length && pieces.length < max) {
    let end = Math.min(text.length, start + piece)
    if (end < text.length) {
      // A line break in the second half of the piece, looked for there only.
      const from = start + Math.floor(piece / 2)
      const newline = text.slice(from, end).lastIndexOf('\n')
      if (newline >= 0) end = from + newline + 1
      else if (text.charCodeAt(end - 1) >= 0xd800 && text.charCodeAt(end - 1) <= 0xdbff) end--
    }
    pieces.push(text.slice(start, end))
    start = end
  }
  return pieces
}

/** A text cut into pieces (`grownPieces`). */
export interface PlainCut {
  text: string
  pieces: string[]
  /** Changes whenever the text was cut anew rather than grown: with a piece's index and length, it names that piece's content. */
  generation: number
}

/**
 * `plainPieces` for a text that grows at its end (a reply streaming in):
 * `before` is the last cut. When `text` starts with its text, its pieces but
 * the last keep their bounds and only the rest is cut: a frame costs what came
 * in, not the whole text, and a kept piece has the same index, length and
 * `generation` (what the page memoises it by). Every piece is a slice of
 * `text` itself, so no earlier version of a growing text is kept alive by its
 * pieces. Any other text is cut anew, in a new generation.
 */
export function grownPieces(before: PlainCut | null, text: string, max = Infinity, piece: number = LIMITS.plainPiece): PlainCut {
  // Compared as strings (memcmp in V8), not with `startsWith` (character by character, ten times slower on megabytes).
  if (!before || text.length < before.text.length || text.slice(0, before.text.length) !== before.text) {
    return { text, pieces: plainPieces(text, max, piece), generation: (before?.generation ?? 0) + 1 }
  }
  // A piece's end depends only on the characters from its start to one piece on: every piece but the last was cut from text that is unchanged.
  const pieces: string[] = []
  let start = 0
  for (const kept of before.pieces.slice(0, Math.min(before.pieces.length - 1, max))) {
    pieces.push(text.slice(start, start + kept.length))
    start += kept.length
  }
  if (pieces.length < max) pieces.push(...plainPieces(text.slice(start), max - pieces.length, piece))
  return { text, pieces, generation: before.generation }
}
