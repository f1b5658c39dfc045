import type { ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import WebSocket from 'ws'
import type { HostEvent, WireServerMessage } from '../shared/contract'
import { joinWire, wireFrameCount, wireHeader, type WirePieces } from '../shared/wire-pieces'
import { until } from './lib'

/**
 * A client of a spawned `serve.js`: the address it prints once it serves, its WebSocket (driven as the renderer
 * drives it) and the codes it prints on its console to confirm a change that runs a program.
 */

/** The address a spawned serve.js prints once it serves (stdout piped); rejects if it exits first. */
export function servedUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^Open (http\S+)/.exec(line)
      if (m) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`serve.js exited with ${code}`)))
  })
}

export class WsClient {
  private nextId = 1
  private readonly pending = new Map<number, (m: WireServerMessage) => void>()
  readonly events: HostEvent[][] = []
  constructor(
    private readonly ws: WebSocket,
    onEvents: (events: HostEvent[]) => void
  ) {
    let pieces: { header: WirePieces; received: string[] } | null = null
    ws.on('message', (data) => {
      // A long message arrives in pieces (shared/wire-pieces.ts).
      const text = data.toString()
      let message: WireServerMessage
      if (pieces) {
        pieces.received.push(text)
        if (pieces.received.length < wireFrameCount(pieces.header)) return
        message = joinWire(pieces.header, pieces.received) as WireServerMessage
        pieces = null
      } else {
        const header = wireHeader(text)
        if (header) {
          pieces = { header, received: [] }
          return
        }
        message = JSON.parse(text) as WireServerMessage
      }
      if (message.kind === 'events') onEvents(message.events)
      else this.pending.get(message.id)?.(message)
    })
  }
  static async connect(url: string, onEvents: (events: HostEvent[]) => void): Promise<WsClient> {
    const page = new URL(url)
    const token = new URLSearchParams(page.hash.slice(1)).get('token')
    const ws = new WebSocket(`ws://${page.host}/ws?token=${token}`)
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
    return new WsClient(ws, onEvents)
  }
  request<T>(method: string, params: unknown): Promise<T> {
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, (m) => {
        this.pending.delete(id)
        if (m.kind === 'response' && m.ok) resolve(m.result as T)
        else if (m.kind === 'response' && !m.ok) reject(Object.assign(new Error(m.error.message), { code: m.error.code }))
        else reject(new Error('bad response'))
      })
      this.ws.send(JSON.stringify({ kind: 'request', id, method, params }))
    })
  }
  close(): void {
    this.ws.close()
  }
}

/**
 * The codes a spawned serve.js prints on its console to confirm a change that
 * runs a program (console-codes.ts), as a user would read them there.
 */
export function consoleCodes(child: ChildProcess): { confirmed<T>(client: WsClient, method: string, params: object): Promise<T> } {
  const codes: string[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const m = /type this code in the page: (\S+)/.exec(line)
    if (m) codes.push(m[1])
  })
  return {
    /** Sends the request; asked for a code, types the one serve printed for it and sends it again. */
    async confirmed<T>(client: WsClient, method: string, params: object): Promise<T> {
      const seen = codes.length
      try {
        return await client.request<T>(method, params)
      } catch (error) {
        if ((error as { code?: string }).code !== 'confirmation_required') throw error
        await until(() => codes.length > seen, 'serve.js to print the confirmation code')
        return client.request<T>(method, { ...params, confirmationCode: codes[codes.length - 1] })
      }
    }
  }
}
