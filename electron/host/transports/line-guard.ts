import { Transform, type TransformCallback } from 'node:stream'

/**
 * Stands between an agent's stdout and the ACP reader. It passes on the lines
 * that can be JSON-RPC messages (they start with `{`, after blanks) and
 * drops the rest without keeping them: an agent that prints garbage, or a
 * garbage line that never ends, costs no memory and gets no answers. A
 * message line longer than `maxLineBytes` is not buffered either: the stream
 * stops there and `onOverflow` is told, so the caller can stop the agent
 * with a clear message (dropping it instead could leave a request waiting
 * forever for the answer it carried).
 */
export interface LineGuardOptions {
  maxLineBytes: number
  /** A line that is not a message, cut to its first bytes (for the log); `bytes` is its whole length. */
  onIgnored(preview: string, bytes: number): void
  onOverflow(bytes: number): void
}

const PREVIEW_BYTES = 300

export class LineGuard extends Transform {
  /** Pieces of the message line being collected. */
  private pieces: Buffer[] = []
  private bytes = 0
  /** What the current line is, once its first non-blank byte has been seen. */
  private kind: 'unknown' | 'message' | 'ignored' = 'unknown'
  private preview: Buffer[] = []
  private previewBytes = 0
  private overflowed = false

  constructor(private readonly options: LineGuardOptions) {
    super()
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.overflowed) {
      callback()
      return
    }
    let start = 0
    while (start <= chunk.length) {
      const newline = chunk.indexOf(0x0a, start)
      const end = newline === -1 ? chunk.length : newline
      if (end > start) this.collect(chunk.subarray(start, end))
      if (this.overflowed) break
      if (newline === -1) break
      this.endLine()
      start = newline + 1
    }
    // One chunk per turn of the event loop: an agent writing as fast as it can must leave room
    // for everything else the Host does (the pipe fills meanwhile, which slows the agent down).
    setImmediate(callback)
  }

  override _flush(callback: TransformCallback): void {
    if (!this.overflowed && (this.bytes > 0 || this.kind !== 'unknown')) this.endLine()
    callback()
  }

  private collect(piece: Buffer): void {
    if (this.kind === 'unknown') {
      let i = 0
      while (i < piece.length && isBlank(piece[i])) i++
      if (i < piece.length) this.kind = piece[i] === 0x7b /* { */ ? 'message' : 'ignored'
    }
    this.bytes += piece.length
    if (this.kind === 'ignored' || this.kind === 'unknown') {
      if (this.previewBytes < PREVIEW_BYTES) {
        const part = piece.subarray(0, PREVIEW_BYTES - this.previewBytes)
        this.preview.push(Buffer.from(part))
        this.previewBytes += part.length
      }
      return
    }
    if (this.bytes > this.options.maxLineBytes) {
      this.overflowed = true
      this.pieces = []
      this.options.onOverflow(this.bytes)
      return
    }
    this.pieces.push(Buffer.from(piece))
  }

  private endLine(): void {
    if (this.kind === 'message') {
      this.pieces.push(NEWLINE)
      this.push(Buffer.concat(this.pieces))
    } else if (this.kind === 'ignored') {
      this.options.onIgnored(Buffer.concat(this.preview).toString('utf8').trim(), this.bytes)
    }
    this.pieces = []
    this.preview = []
    this.previewBytes = 0
    this.bytes = 0
    this.kind = 'unknown'
  }
}

const NEWLINE = Buffer.from('\n')

function isBlank(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d
}
