import type { Directive } from 'vue'

/**
 * `v-grow-html`: an element's HTML, always the sanitised output of
 * markdown.ts (as `v-html`, which it replaces for markdown blocks). When the
 * new HTML is the old with plain text added at the end of its last text —
 * the paragraph or code block an answer is streaming into — that text is
 * appended to the text node already there, instead of the block being built
 * again: the browser then lays out and shapes the paragraph from what it
 * had (half the time for a paragraph growing to 44 KB, measured in Chromium),
 * and a reader's selection in it survives. Anything else (markup or an
 * entity in what was added, a change before the end) sets the HTML whole.
 * What is appended is text, never markup.
 *
 * A paragraph growing long is laid out in pieces while it grows: before text
 * is appended to a last text past `SETTLE_CHARS`, the lines above its last one
 * move into a paragraph of their own (`md-settled`, no margin below), which
 * the browser then lays out once and keeps; each later drawing lays out only
 * the lines since. Each piece ends where its line ended, so at the same width
 * the page shows the same lines (the browser breaks a line from its start
 * only). Each layout of one long paragraph left its line boxes and glyph runs
 * to Blink's collector, in proportion to its length, at every drawing. The
 * block is set whole again (one paragraph, which copying and another width
 * need) once it takes no text for `WHOLE_AFTER_MS`, or at once when its width
 * changes.
 */
export const vGrowHtml: Directive<HTMLElement, string> = {
  // Set before the element is put in the page: a row of the thread is measured as it mounts (ThreadView), and a
  // block filled only once mounted was measured empty (a one-line reply as 0 px, the list then drawing more rows
  // to fill the view with them).
  beforeMount(el, { value }) {
    el.innerHTML = value
  },
  updated(el, { value, oldValue }) {
    if (value === oldValue) return
    const grown = oldValue === undefined || oldValue === null ? null : grownText(el, oldValue, value)
    if (!grown) return setWhole(el, value)
    const pieces = growing.get(el)
    if (pieces) {
      pieces.html = value
      wholeLater(el, pieces)
    }
    if (grown.text.length > SETTLE_CHARS) settleLines(el, grown.text, value)
    grown.text.appendData(grown.added)
  },
  unmounted(el) {
    forget(el)
  }
}

/** A paragraph's last text longer than this has its lines but the last moved into a paragraph of their own before text is added. */
export const SETTLE_CHARS = 2_000
/** A block in pieces that takes no text for this long is set whole again. */
export const WHOLE_AFTER_MS = 1_000

/** A block laid out in pieces: its whole HTML, when it is set whole, and the width its pieces were cut at. */
interface Pieces {
  html: string
  timer: number
  paragraph: Element
  width: number
}
const growing = new WeakMap<Element, Pieces>()
const byParagraph = new WeakMap<Element, HTMLElement>()
let resizes: ResizeObserver | null = null

function forget(el: HTMLElement): void {
  const pieces = growing.get(el)
  if (!pieces) return
  window.clearTimeout(pieces.timer)
  resizes?.unobserve(pieces.paragraph)
  growing.delete(el)
}

function setWhole(el: HTMLElement, html: string): void {
  forget(el)
  el.innerHTML = html
}

/** Sets `el` whole once it took no text for `WHOLE_AFTER_MS`; not while the reader selects in it (that would lose the selection). */
function wholeLater(el: HTMLElement, pieces: Pieces): void {
  window.clearTimeout(pieces.timer)
  pieces.timer = window.setTimeout(() => {
    const selection = document.getSelection()
    if (selection?.rangeCount && selection.containsNode(el, true)) wholeLater(el, pieces)
    else setWhole(el, pieces.html)
  }, WHOLE_AFTER_MS)
}

/** Moves the lines of `text`'s paragraph above the line `text` ends in into a paragraph of their own, before it. */
function settleLines(el: HTMLElement, text: Text, html: string): void {
  const paragraph = text.parentElement
  if (!paragraph || paragraph.tagName !== 'P') return
  const selection = document.getSelection()
  if (selection?.rangeCount && selection.containsNode(paragraph, true)) return
  const start = lastLineStart(text)
  if (start < SETTLE_CHARS / 2) return
  const range = document.createRange()
  range.setStart(paragraph, 0)
  range.setEnd(text, start)
  const settled = paragraph.cloneNode(false) as Element
  settled.classList.add('md-settled')
  settled.append(range.extractContents())
  paragraph.before(settled)
  if (growing.has(el)) return
  const added: Pieces = { html, timer: 0, paragraph, width: paragraph.getBoundingClientRect().width }
  growing.set(el, added)
  byParagraph.set(paragraph, el)
  resizes ??= new ResizeObserver((entries) => {
    for (const entry of entries) {
      const owner = byParagraph.get(entry.target)
      const state = owner && growing.get(owner)
      if (owner && state && Math.abs(entry.target.getBoundingClientRect().width - state.width) > 0.5) setWhole(owner, state.html)
    }
  })
  resizes.observe(paragraph)
  wholeLater(el, added)
}

/**
 * Where in `text` its last line starts (0 when not found, or it holds all of it): the first character whose box is on
 * the line of the last one, looked for by halves. A character in a fallback font (an emoji) may sit a little higher or
 * lower on its line: boxes less than half a line apart are on the same line.
 */
function lastLineStart(text: Text): number {
  const range = document.createRange()
  const box = (i: number): DOMRect | undefined => {
    range.setStart(text, i)
    range.setEnd(text, i + 1)
    return range.getClientRects()[0]
  }
  const last = box(text.length - 1)
  if (!last || last.height === 0) return 0
  const onLast = (i: number): boolean => {
    const b = box(i)
    return !!b && b.top > last.top - last.height / 2
  }
  let low = 0
  let high = text.length - 1
  while (low < high) {
    const middle = (low + high) >> 1
    if (onLast(middle)) high = middle
    else low = middle + 1
  }
  // A line starts there: the character before is on a line above, and no surrogate pair is cut.
  const code = text.data.charCodeAt(low)
  if (low === 0 || !onLast(low) || onLast(low - 1) || (code >= 0xdc00 && code <= 0xdfff)) return 0
  const before = box(low - 1)
  return before && before.top < last.top - last.height / 2 ? low : 0
}

/** The text node `after` adds text to at the end of `el`'s last text, and the text, when that is all that changed; null when it is not. */
export function grownText(el: Element, before: string, after: string): { text: Text; added: string } | null {
  if (after.length <= before.length) return null
  const most = before.length
  let start = 0
  while (start < most && before.charCodeAt(start) === after.charCodeAt(start)) start++
  let end = 0
  while (end < most - start && before.charCodeAt(most - 1 - end) === after.charCodeAt(after.length - 1 - end)) end++
  // Only added, nothing changed; right after text (not a tag's end), and followed only by closing tags.
  if (start + end !== most || start === 0 || before.charCodeAt(start - 1) === 62) return null
  const added = after.slice(start, after.length - end)
  if (/[<>&]/.test(added)) return null
  const rest = before.slice(start)
  if (!/^(?:<\/[a-z][a-z0-9]*>\s*)*$/i.test(rest)) return null
  // Down through the elements those tags close, past the white space between them, to the text they end with.
  let node: Node = el
  for (let level = (rest.match(/<\//g) ?? []).length; level > 0; level--) {
    let child = node.lastChild
    while (child && child.nodeType === Node.TEXT_NODE && !(child as Text).data.trim()) child = child.previousSibling
    if (!child || child.nodeType !== Node.ELEMENT_NODE) return null
    node = child
  }
  const text = node.lastChild
  if (!text || text.nodeType !== Node.TEXT_NODE) return null
  return { text: text as Text, added }
}
