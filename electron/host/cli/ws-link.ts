import WebSocket from 'ws'
import type { HostEvent, WireResponse, WireServerMessage } from '../../../shared/contract'
import { joinWire, wireFrameCount, wireHeader, type WirePieces } from '../../../shared/wire-pieces'
import type { Door } from '../web/door'
import { CliError, EXIT } from './exit-codes'
import { answerOf, type HostLink } from './link'

/**
 * The running Host, reached over its loopback WebSocket (web/ws-server.ts)
 * with the port and token of its door: the same envelope a page sends and
 * reads, long messages joined from their pieces (shared/wire-pieces.ts).
 */
export async function connectDoor(door: Door, dataDir: string): Promise<HostLink> {
  const origin = `http://127.0.0.1:${door.port}`
  const socket = new WebSocket(`ws://127.0.0.1:${door.port}/ws?token=${encodeURIComponent(door.token)}`, { origin })
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', (error) =>
      reject(
        new CliError(
          `A Switchboard (process ${door.pid}) runs on ${dataDir} but did not let this command in at port ${door.port} (${error.message}). ` +
            'Close it and try again, or use another data folder (--data-dir).',
          EXIT.unavailable
        )
      )
    )
  })
  const waiting = new Map<number, { resolve: (response: WireResponse) => void }>()
  const listeners = new Set<(events: HostEvent[]) => void>()
  let nextId = 1
  let pieces: { header: WirePieces; total: number; frames: string[] } | null = null
  let closedBy: string | null = null

  const take = (message: WireServerMessage): void => {
    if (message.kind === 'events') for (const listener of listeners) listener(message.events)
    else waiting.get(message.id)?.resolve(message)
    if (message.kind === 'response') waiting.delete(message.id)
  }
  socket.on('message', (data: WebSocket.RawData) => {
    const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8')
    if (pieces) {
      pieces.frames.push(text)
      if (pieces.frames.length < pieces.total) return
      const whole = joinWire(pieces.header, pieces.frames) as WireServerMessage
      pieces = null
      take(whole)
      return
    }
    const header = wireHeader(text)
    if (header) pieces = { header, total: wireFrameCount(header), frames: [] }
    else take(JSON.parse(text) as WireServerMessage)
  })
  socket.on('close', (code, reason) => {
    closedBy ??= `the running Switchboard closed the connection (${code}${reason.length ? `: ${reason.toString()}` : ''})`
    for (const { resolve } of waiting.values()) resolve({ ok: false, error: { message: `No answer: ${closedBy}` } })
    waiting.clear()
  })
  socket.on('error', () => undefined)

  return {
    via: 'running',
    request(method, params) {
      if (closedBy) return Promise.reject(new CliError(`No answer: ${closedBy}`, EXIT.unavailable))
      const id = nextId++
      return new Promise<WireResponse>((resolve) => {
        waiting.set(id, { resolve })
        socket.send(JSON.stringify({ kind: 'request', id, method, params }))
      }).then((response) => answerOf(method, response))
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async close() {
      closedBy = 'this command closed it'
      if (socket.readyState === WebSocket.CLOSED) return
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve())
        socket.close()
      })
    }
  }
}
