import type { HostEvent, WireResponse } from '../shared/contract'
import type { BridgeState, BridgeTransport } from '../shared/contract'

/**
 * The window's side of its port to the Host (the preload's transport,
 * preload.ts): requests go out with an id and are answered by id, event
 * batches come in. No Electron import: the preload hands it each port as the
 * main process sends one, and says when the Host went away
 * (test/shell/desktop-shell.test.ts drives it over a relayed port).
 *
 * Until the first port arrives (the Host still opening) requests wait here,
 * in their order. When the Host goes away, what is pending is answered with
 * the reason (the Host that would have answered is gone), requests made
 * meanwhile wait for the next port, and listeners hear `reconnecting`, then
 * `connected` when the new port arrives.
 */

/** A web `MessagePort`'s shape (the preload's), as far as it is used. */
export interface WebPort {
  postMessage(message: unknown): void
  onmessage: ((event: { data: unknown }) => void) | null
  close(): void
}

export const HOST_RESTARTING = 'The Switchboard host stopped; it is starting again'

export class PortClient implements BridgeTransport {
  private port: WebPort | null = null
  private nextId = 1
  private readonly pending = new Map<number, (response: WireResponse) => void>()
  private waiting: { method: string; params: unknown; resolve: (response: WireResponse) => void }[] = []
  private readonly eventListeners = new Set<(events: HostEvent[]) => void>()
  private readonly connectionListeners = new Set<(state: BridgeState, detail?: string) => void>()
  private down: string | null = null

  request(method: string, params: unknown): Promise<WireResponse> {
    return new Promise((resolve) => {
      if (this.port) this.send(this.port, method, params, resolve)
      else this.waiting.push({ method, params, resolve })
    })
  }

  onEvents(listener: (events: HostEvent[]) => void): () => void {
    this.eventListeners.add(listener)
    return () => void this.eventListeners.delete(listener)
  }

  onConnection(listener: (state: BridgeState, detail?: string) => void): () => void {
    this.connectionListeners.add(listener)
    return () => void this.connectionListeners.delete(listener)
  }

  /** A port to a Host (the first, or one to a Host started again): it replaces the one before. */
  usePort(port: WebPort): void {
    const replaced = this.port
    if (replaced) {
      replaced.onmessage = null
      replaced.close()
      this.failPending(this.down ?? HOST_RESTARTING)
    }
    this.port = port
    port.onmessage = (event) => this.receive(event.data)
    for (const { method, params, resolve } of this.waiting.splice(0)) this.send(port, method, params, resolve)
    if (this.down !== null || replaced) {
      this.down = null
      for (const listener of this.connectionListeners) listener('connected')
    }
  }

  /** The Host went away (`reason`, a sentence): pending requests are answered with it, new ones wait for the next port. */
  hostDown(reason: string): void {
    this.down = reason
    this.port?.close()
    this.port = null
    this.failPending(reason)
    for (const listener of this.connectionListeners) listener('reconnecting', reason)
  }

  private send(port: WebPort, method: string, params: unknown, resolve: (response: WireResponse) => void): void {
    const id = this.nextId++
    this.pending.set(id, resolve)
    try {
      port.postMessage({ kind: 'request', id, method, params })
    } catch (error) {
      this.pending.delete(id)
      resolve({ ok: false, error: { message: `Could not send ${method} to the Switchboard host: ${(error as Error).message}` } })
    }
  }

  private failPending(reason: string): void {
    for (const resolve of this.pending.values()) resolve({ ok: false, error: { message: reason } })
    this.pending.clear()
  }

  /** The transport (renderer/src/host/transport.ts) checks each message's envelope; here only its kind and id are read. */
  private receive(data: unknown): void {
    if (typeof data !== 'object' || data === null) return
    const message = data as { kind?: unknown; id?: unknown; events?: unknown }
    if (message.kind === 'events') {
      for (const listener of this.eventListeners) listener(message.events as HostEvent[])
      return
    }
    if (message.kind !== 'response' || typeof message.id !== 'number') return
    const resolve = this.pending.get(message.id)
    this.pending.delete(message.id)
    const { kind: _kind, id: _id, ...response } = message as Record<string, unknown>
    resolve?.(response as unknown as WireResponse)
  }
}
