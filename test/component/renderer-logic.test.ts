import { describe, expect, it } from 'vitest'
import { applyCompletion, fileUri, matchCommands, mentionsInText, triggerAt } from '../../renderer/src/composer/completion'
import { buildDiff, splitRows } from '../../renderer/src/diff-model'
import { completeLength, paletteOnly, rgbTo256, stripAnsi } from '../../renderer/src/terminal/ansi'

describe('composer completion', () => {
  it('finds a command trigger only at the start, and a file trigger after a space or at the start', () => {
    expect(triggerAt('/te', 3)).toEqual({ kind: 'command', start: 0, query: 'te' })
    expect(triggerAt('/test now', 9)).toBeNull()
    expect(triggerAt('see @src/a', 10)).toEqual({ kind: 'file', start: 4, query: 'src/a' })
    expect(triggerAt('@', 1)).toEqual({ kind: 'file', start: 0, query: '' })
    expect(triggerAt('me@example.com', 14)).toBeNull()
    // Only the text before the caret counts.
    expect(triggerAt('see @src/a and more', 10)).toEqual({ kind: 'file', start: 4, query: 'src/a' })
  })

  it('replaces the trigger with the choice and a space, keeping what follows', () => {
    expect(applyCompletion('/te', 3, { kind: 'command', start: 0, query: 'te' }, '/test')).toEqual({ text: '/test ', caret: 6 })
    expect(applyCompletion('see @sr and more', 7, { kind: 'file', start: 4, query: 'sr' }, '@src/a.ts')).toEqual({
      text: 'see @src/a.ts and more',
      caret: 14
    })
  })

  it('orders commands that start with the query before those that contain it', () => {
    const commands = [
      { name: 'retest', description: '' },
      { name: 'test', description: '' },
      { name: 'review', description: '' }
    ]
    expect(matchCommands(commands, 'te').map((c) => c.name)).toEqual(['test', 'retest'])
  })

  it('makes file URIs from POSIX and Windows paths', () => {
    expect(fileUri('/home/me/my app/a#b.ts')).toBe('file:///home/me/my%20app/a%23b.ts')
    expect(fileUri('C:\\Users\\me\\app.ts')).toBe('file:///C:/Users/me/app.ts')
  })

  it('keeps only mentions still written in the text, once each', () => {
    const a = { relative: 'src/a.ts', path: '/p/src/a.ts' }
    const b = { relative: 'b.ts', path: '/p/b.ts' }
    expect(mentionsInText('look at @src/a.ts, then @src/a.ts', [a, b, a])).toEqual([a])
    expect(mentionsInText('look at @src/a.tsx', [a])).toEqual([])
  })
})

describe('diff model', () => {
  it('numbers lines, pairs changed lines and marks the changed words', () => {
    const model = buildDiff('one\nconst x = 1\nthree\n', 'one\nconst x = 2\nthree\nfour\n')
    expect([model.added, model.removed]).toEqual([2, 1])
    const lines = model.hunks[0].lines
    expect(lines.map((l) => [l.kind, l.oldNo ?? null, l.newNo ?? null, l.text])).toEqual([
      ['context', 1, 1, 'one'],
      ['del', 2, null, 'const x = 1'],
      ['add', null, 2, 'const x = 2'],
      ['context', 3, 3, 'three'],
      ['add', null, 4, 'four']
    ])
    expect(lines[1].words?.filter((w) => w.changed).map((w) => w.text)).toEqual(['1'])
    expect(splitRows(model.hunks[0]).map((r) => [r.left?.text ?? null, r.right?.text ?? null])).toEqual([
      ['one', 'one'],
      ['const x = 1', 'const x = 2'],
      ['three', 'three'],
      [null, 'four']
    ])
  })

  it('treats a missing old text as a new file and separates distant changes into hunks', () => {
    expect(buildDiff(null, 'a\nb\n')).toMatchObject({ added: 2, removed: 0 })
    const before = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n')
    const after = before.replace('line 2\n', 'line two\n').replace('line 27', 'line twenty-seven')
    expect(buildDiff(before, after).hunks).toHaveLength(2)
    expect(buildDiff('same\n', 'same\n').hunks).toEqual([])
  })
})

describe('terminal output', () => {
  it('turns 24-bit colours into the nearest of the 256 and leaves the rest', () => {
    expect(rgbTo256(255, 0, 0)).toBe(196)
    expect(rgbTo256(128, 128, 128)).toBe(244)
    expect(paletteOnly('\x1b[38;2;255;0;0mred\x1b[0m')).toBe('\x1b[38;5;196mred\x1b[0m')
    expect(paletteOnly('\x1b[1;48;2;0;0;0;32mx')).toBe('\x1b[1;48;5;16;32mx')
    expect(paletteOnly('\x1b[38:2::255:0:0mx')).toBe('\x1b[38;5;196mx')
    expect(paletteOnly('\x1b[32mgreen\x1b[0m \x1b[2K')).toBe('\x1b[32mgreen\x1b[0m \x1b[2K')
  })

  it('finds an escape sequence cut at the end of a chunk', () => {
    expect(completeLength('ok\x1b[3')).toBe(2)
    expect(completeLength('ok\x1b')).toBe(2)
    expect(completeLength('ok\x1b[31m')).toBe(7)
  })

  it('strips escape sequences for copying', () => {
    expect(stripAnsi('\x1b[1;32mPASS\x1b[0m \x1b]8;;https://x\x07link\x1b]8;;\x07')).toBe('PASS link')
  })
})
