import { promises as fs } from 'node:fs'

/**
 * Reads the end of an agent's stderr log for the Agents page: the last
 * `maxBytes`, starting at a whole line, with terminal escape sequences (colours,
 * cursor movement) removed so it reads as plain text.
 */

export const LOG_TAIL_BYTES = 64 * 1024

export async function readLogTail(path: string, maxBytes = LOG_TAIL_BYTES): Promise<{ text: string; truncated: boolean }> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(path, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { text: '', truncated: false }
    throw error
  }
  try {
    const { size } = await handle.stat()
    const start = Math.max(0, size - maxBytes)
    const buffer = Buffer.alloc(size - start)
    await handle.read(buffer, 0, buffer.length, start)
    let text = buffer.toString('utf8')
    if (start > 0) {
      // The cut may fall inside a line (or a character): start at the next whole line.
      const newline = text.indexOf('\n')
      text = newline >= 0 ? text.slice(newline + 1) : text
    }
    return { text: stripTerminalEscapes(text), truncated: start > 0 }
  } finally {
    await handle.close()
  }
}

// CSI sequences (ESC [ ... final byte), OSC sequences (ESC ] ... BEL or ESC \), and other two-byte escapes.
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g

export function stripTerminalEscapes(text: string): string {
  // A carriage return without a newline redraws the line (progress bars): keep what was drawn last.
  return text
    .replace(ESCAPES, '')
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => (line.includes('\r') ? (line.split('\r').filter(Boolean).pop() ?? '') : line))
    .join('\n')
}
