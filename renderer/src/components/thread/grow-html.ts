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
 */
export const vGrowHtml: Directive<HTMLElement, string> = {
  mounted(el, { value }) {
    el.innerHTML = value
  },
  updated(el, { value, oldValue }) {
    if (value === oldValue) return
    if (oldValue === undefined || oldValue === null || !appendText(el, oldValue, value)) el.innerHTML = value
  }
}

/** Appends to `el`'s last text what `after` adds to `before` at its end, when that is all that changed; false when it is not. */
export function appendText(el: Element, before: string, after: string): boolean {
  if (after.length <= before.length) return false
  const most = before.length
  let start = 0
  while (start < most && before.charCodeAt(start) === after.charCodeAt(start)) start++
  let end = 0
  while (end < most - start && before.charCodeAt(most - 1 - end) === after.charCodeAt(after.length - 1 - end)) end++
  // Only added, nothing changed; right after text (not a tag's end), and followed only by closing tags.
  if (start + end !== most || start === 0 || before.charCodeAt(start - 1) === 62) return false
  const added = after.slice(start, after.length - end)
  if (/[<>&]/.test(added)) return false
  const rest = before.slice(start)
  if (!/^(?:<\/[a-z][a-z0-9]*>\s*)*$/i.test(rest)) return false
  // Down through the elements those tags close, past the white space between them, to the text they end with.
  let node: Node = el
  for (let level = (rest.match(/<\//g) ?? []).length; level > 0; level--) {
    let child = node.lastChild
    while (child && child.nodeType === Node.TEXT_NODE && !(child as Text).data.trim()) child = child.previousSibling
    if (!child || child.nodeType !== Node.ELEMENT_NODE) return false
    node = child
  }
  const text = node.lastChild
  if (!text || text.nodeType !== Node.TEXT_NODE) return false
  ;(text as Text).appendData(added)
  return true
}
