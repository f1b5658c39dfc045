/**
 * JSON with comments and trailing commas, as VS Code and Zed write their
 * settings (plain JSON parses the same). Comments and trailing commas outside
 * strings are removed, keeping every line break so JSON.parse's positions still
 * point at the right line; then JSON.parse reads the rest.
 */
export function parseJsonc(text: string): unknown {
  return JSON.parse(stripJsonc(text.replace(/^\uFEFF/, '')))
}

export function stripJsonc(text: string): string {
  let out = ''
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === '"') {
      const end = endOfString(text, i)
      out += text.slice(i, end)
      i = end
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      const comment = text.slice(i, end < 0 ? text.length : end + 2)
      out += comment.replace(/[^\n]/g, ' ')
      i += comment.length
    } else if (c === ',') {
      // A comma followed (past blanks and comments) by } or ] is a trailing comma.
      const next = text[nextSignificant(text, i + 1)]
      out += next === '}' || next === ']' ? ' ' : c
      i++
    } else {
      out += c
      i++
    }
  }
  return out
}

/** Index just past the closing quote of the string starting at `start`. */
function endOfString(text: string, start: number): number {
  let i = start + 1
  while (i < text.length) {
    if (text[i] === '\\') i += 2
    else if (text[i] === '"') return i + 1
    else i++
  }
  return text.length
}

/** Index of the next character that is neither blank nor inside a comment. */
function nextSignificant(text: string, from: number): number {
  let i = from
  while (i < text.length) {
    if (/\s/.test(text[i])) i++
    else if (text[i] === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++
    } else if (text[i] === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      i = end < 0 ? text.length : end + 2
    } else return i
  }
  return text.length
}
