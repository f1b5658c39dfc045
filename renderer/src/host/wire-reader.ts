import { joinWire, wireFrameCount, wireHeader, type WirePieces } from '../../../shared/wire-pieces'

/** One text frame read: a whole message (parsed, not checked yet), or what was wrong with it; null: a piece, more to come. */
export type WireRead = { kind: 'message'; message: unknown } | { kind: 'not-json'; start: string } | { kind: 'broken'; error: unknown }

/**
 * Reads the Host's text frames into messages: a frame is a message of its own, or the header or a piece of
 * one sent in pieces (`shared/wire-pieces.ts`). Shared by the page's first script (early-link.ts), which
 * reads the first answers before the window's code has arrived, and the window's transport, which goes on
 * from where it stopped. Nothing here is checked against the wire schema: the transport does that.
 */
export class WireReader {
  /** A long message arriving in pieces: its header and the frames received so far. */
  private pieces: { header: WirePieces; total: number; received: string[] } | null = null

  read(data: string): WireRead | null {
    if (this.pieces) {
      const pieces = this.pieces
      pieces.received.push(data)
      if (pieces.received.length < pieces.total) return null
      this.pieces = null
      try {
        return { kind: 'message', message: joinWire(pieces.header, pieces.received) }
      } catch (error) {
        return { kind: 'broken', error }
      }
    }
    const header = wireHeader(data)
    if (header) {
      this.pieces = { header, total: wireFrameCount(header), received: [] }
      return null
    }
    try {
      return { kind: 'message', message: JSON.parse(data) as unknown }
    } catch {
      return { kind: 'not-json', start: data.slice(0, 200) }
    }
  }

  /** The connection closed: a message half received is dropped. */
  reset(): void {
    this.pieces = null
  }
}
