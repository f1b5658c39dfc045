// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest'
import { Terminal } from '@xterm/xterm'
import { plainRows } from '../../renderer/src/terminal/ansi'

/**
 * A command's output box is drawn at its height at once where the rows its output fills can be told before xterm lays
 * it out (TerminalOutput.vue; e2e/lazy-parts sees the boxes keep one height). Told here against xterm's own layout of
 * the same text, as TerminalOutput writes it (line breaks as CR LF), at the width and row limit of the box.
 */
async function xtermRows(text: string, cols: number, max: number): Promise<number> {
  const terminal = new Terminal({ cols, rows: 1, convertEol: true, scrollback: 5000, allowProposedApi: false })
  await new Promise<void>((resolve) => terminal.write(text, resolve))
  const buffer = terminal.buffer.active
  const used = buffer.baseY + buffer.cursorY + (buffer.cursorX > 0 ? 1 : 0)
  terminal.dispose()
  return Math.max(1, Math.min(max, used))
}

const GREEN = '\x1b[1;32m'
const RESET = '\x1b[0m'

describe('the rows a command output fills', () => {
  it.each([
    ['one line', 'build ok'],
    ['three lines', 'one\ntwo\nthree'],
    ['carriage return and line feed', 'one\r\ntwo\r\nthree'],
    ['coloured', `${GREEN}PASS${RESET} src/a.test.ts\n\x1b[31mFAIL\x1b[0m src/b.test.ts\n\x1b[38;5;208morange\x1b[0m`],
    ['empty lines between', 'a\n\n\nb'],
    ['an empty last line', 'a\nb\n'],
    ['nothing', ''],
    ['a line as wide as the box', 'x'.repeat(80)],
    ['a line one wider than the box', 'x'.repeat(81)],
    ['a line three times as wide and one more', 'y'.repeat(241) + '\nshort'],
    ['two wide lines exactly at the width', `${'a'.repeat(160)}\n${'b'.repeat(80)}\nc`],
    ['more lines than the box shows', Array.from({ length: 40 }, (_, i) => String(i + 1)).join('\n')],
    ['wrapped lines reaching the limit', Array.from({ length: 6 }, () => 'z'.repeat(230)).join('\n')],
    ['marks, arrows and boxes', '✓ passes → next\n✗ fails\n┌──┐\n│██│\n└──┘ • done…\nnaïve café ñ']
  ])('%s: as many as xterm lays out', async (_name, text) => {
    const rows = plainRows(text, 80, 16)
    expect(rows).toBe(await xtermRows(text, 80, 16))
  })

  it.each([
    ['a progress bar redrawn with carriage returns', '10%\r50%\r100%'],
    ['the cursor moved up', 'one\ntwo\x1b[1Athree'],
    ['a line erased', 'one\x1b[2Ktwo'],
    ['a tab', 'name\tsize'],
    ['wide characters', '漢字 and ｗｉｄｅ'],
    ['an emoji', 'done 🎉'],
    ['a combining accent', 'e\u0301'],
    ['a backspace', 'ab\bc'],
    ['a title (OSC)', '\x1b]0;title\x07text']
  ])('%s: not told (xterm lays it out)', (_name, text) => {
    expect(plainRows(text, 80, 16)).toBeUndefined()
  })

  it('tells nothing for a box of no width', () => {
    expect(plainRows('text', 0, 16)).toBeUndefined()
    expect(plainRows('text', Number.NaN, 16)).toBeUndefined()
  })
})
