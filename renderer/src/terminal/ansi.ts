/**
 * Terminal output made safe for the window's strict style policy. xterm.js
 * shows 24-bit colours through inline `style` attributes, which the CSP
 * (`style-src 'self'`) refuses; its 16- and 256-colour palettes are classes.
 * So 24-bit colours (`38;2;r;g;b`, `48;2;…`, also with colons) become the
 * nearest of the 256, and everything else passes untouched.
 */

const CUBE = [0, 95, 135, 175, 215, 255]

function nearestCube(value: number): number {
  let best = 0
  for (let i = 1; i < CUBE.length; i++) if (Math.abs(CUBE[i] - value) < Math.abs(CUBE[best] - value)) best = i
  return best
}

/** The xterm 256-colour index nearest to an RGB colour (the 6×6×6 cube or the grey ramp). */
export function rgbTo256(r: number, g: number, b: number): number {
  const [ri, gi, bi] = [r, g, b].map((v) => nearestCube(Math.max(0, Math.min(255, v))))
  const cubeIndex = 16 + 36 * ri + 6 * gi + bi
  const cubeDistance = (CUBE[ri] - r) ** 2 + (CUBE[gi] - g) ** 2 + (CUBE[bi] - b) ** 2
  const grey = Math.round((r + g + b) / 3)
  const greyStep = Math.max(0, Math.min(23, Math.round((grey - 8) / 10)))
  const greyValue = 8 + greyStep * 10
  const greyDistance = (greyValue - r) ** 2 + (greyValue - g) ** 2 + (greyValue - b) ** 2
  return greyDistance < cubeDistance ? 232 + greyStep : cubeIndex
}

function rewriteParams(params: string): string {
  const parts = params.split(';')
  const out: string[] = []
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]
    // Colon form: 38:2:r:g:b or 38:2::r:g:b (with an empty colour-space id).
    const colon = /^([34]8):2:(?:\d*:)?(\d+):(\d+):(\d+)$/.exec(part)
    if (colon) {
      out.push(`${colon[1]};5;${rgbTo256(Number(colon[2]), Number(colon[3]), Number(colon[4]))}`)
      continue
    }
    if ((part === '38' || part === '48') && parts[i + 1] === '2' && i + 4 < parts.length) {
      out.push(`${part};5;${rgbTo256(Number(parts[i + 2]), Number(parts[i + 3]), Number(parts[i + 4]))}`)
      i += 4
      continue
    }
    out.push(part)
  }
  return out.join(';')
}

export function paletteOnly(text: string): string {
  return text.replace(/\x1b\[([0-9;:]*)m/g, (whole, params: string) => (params.includes('2') ? `\x1b[${rewriteParams(params)}m` : whole))
}

/** Where an escape sequence cut off at the end of `text` starts (text.length when there is none). */
export function completeLength(text: string): number {
  const match = /\x1b(?:\[[0-9;:?]*)?$/.exec(text)
  return match ? match.index : text.length
}

/** Output as plain text: escape sequences removed (for copying). */
export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;:?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g, '')
}

/**
 * Characters a terminal draws one cell wide whatever its Unicode version: printable ASCII and Latin (not the soft
 * hyphen), arrows, box drawing, blocks and geometric shapes, the bullet, the ellipsis and the check marks test runners
 * print. Anything else may be wide, zero-width or a control, which only xterm itself lays out.
 */
const NARROW = /^[\x20-\x7e\xa0-\xac\xae-\u02ff\u2022\u2026\u2190-\u21ff\u2500-\u25ff\u2713\u2714\u2717\u2718]*$/

/**
 * How many rows `text` fills in a terminal `cols` wide (at most `max`), when that can be told without laying it out:
 * lines of one-cell characters in colour (`\x1b[…m`), wrapped at the width. Undefined for anything else (the cursor
 * moved, a carriage return or a tab, a character that may be wide): xterm's own layout tells then.
 */
export function plainRows(text: string, cols: number, max: number): number | undefined {
  if (!Number.isInteger(cols) || cols < 1) return undefined
  const lines = text.replace(/\x1b\[[0-9;:]*m/g, '').split(/\r?\n/)
  let rows = 0
  for (const [index, line] of lines.entries()) {
    if (!NARROW.test(line)) return undefined
    // The last line, empty, holds the cursor at its start: no row of its own.
    if (line.length === 0 && index === lines.length - 1 && index > 0) break
    rows += Math.max(1, Math.ceil(line.length / cols))
    if (rows >= max) return max
  }
  return Math.max(1, rows)
}
