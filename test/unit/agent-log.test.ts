import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readLogTail, stripTerminalEscapes } from '../../electron/host/connection/agent-log'
import { removeDir, tempDir } from '../helpers'

let dir: string
beforeEach(async () => {
  dir = await tempDir('agent-log')
})
afterEach(() => removeDir(dir))

describe('an agent’s log, as the Agents page shows it', () => {
  it('is empty before the agent ever ran', async () => {
    expect(await readLogTail(join(dir, 'missing.log'))).toEqual({ text: '', truncated: false })
  })

  it('keeps the last part of a long log, from a whole line on', async () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(20)}`)
    await writeFile(join(dir, 'a.log'), lines.join('\n') + '\n')
    const tail = await readLogTail(join(dir, 'a.log'), 300)
    expect(tail.truncated).toBe(true)
    expect(tail.text.startsWith('line ')).toBe(true)
    expect(tail.text.endsWith('line 99 ' + 'x'.repeat(20) + '\n')).toBe(true)
    expect(tail.text.length).toBeLessThanOrEqual(300)
    expect(await readLogTail(join(dir, 'a.log'))).toEqual({ text: lines.join('\n') + '\n', truncated: false })
  })

  it('reads as plain text: colours, cursor moves and titles removed; a redrawn line shows what was drawn last', () => {
    expect(stripTerminalEscapes('\u001b[1;31merror\u001b[0m: bad\r\n')).toBe('error: bad\n')
    expect(stripTerminalEscapes('\u001b]0;title\u0007ok\u001b[2K\u001b[1G')).toBe('ok')
    expect(stripTerminalEscapes('downloading 10%\rdownloading 50%\rdownloading 100%\ndone')).toBe('downloading 100%\ndone')
  })
})
