import type { Terminal } from '@xterm/xterm'

/**
 * Opens an xterm.js terminal in `element` without inline styles. xterm.js
 * writes its theme and cell sizes into `<style>` elements, which the window's
 * CSP (`style-src 'self'`, no 'unsafe-inline') refuses, with an error each
 * time. While `open()` runs (it makes all of them, synchronously) those
 * elements are made as inert `<xterm-style>` holders instead, and their text
 * is mirrored into constructed style sheets adopted by the document (CSSOM,
 * which the CSP allows). Returns the undo, to call when the terminal goes.
 */
export function openXterm(terminal: Terminal, element: HTMLElement): () => void {
  const doc = element.ownerDocument
  const create = doc.createElement
  doc.createElement = function createElement(this: Document, tag: string, options?: ElementCreationOptions): HTMLElement {
    return create.call(doc, tag.toLowerCase() === 'style' ? 'xterm-style' : tag, options)
  } as typeof doc.createElement
  try {
    terminal.open(element)
  } finally {
    delete (doc as { createElement?: unknown }).createElement
  }

  const sheets = new Map<Element, { sheet: CSSStyleSheet; text: string | null }>()
  const sync = (): void => {
    for (const [holder, mirror] of sheets) {
      const text = holder.textContent ?? ''
      if (text === mirror.text) continue
      mirror.text = text
      try {
        mirror.sheet.replaceSync(text)
      } catch {
        // a sheet the browser cannot parse stays as it was
      }
    }
  }
  const observer = new MutationObserver(sync)
  for (const holder of element.querySelectorAll('xterm-style')) {
    sheets.set(holder, { sheet: new CSSStyleSheet(), text: null })
    observer.observe(holder, { childList: true, characterData: true, subtree: true })
  }
  const own = [...sheets.values()].map((m) => m.sheet)
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, ...own]
  sync()
  return () => {
    observer.disconnect()
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((sheet) => !own.includes(sheet))
    sheets.clear()
  }
}
