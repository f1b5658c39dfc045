import type { HostEvent, HostTransport, WireResponse } from '../../shared/contract'
import { HostClient, installHost } from '../../renderer/src/host/client'

/**
 * A stand-in Host for component tests: answers each request with a handler
 * (or fails it with the handler's error), records every request, and pushes
 * event batches on demand.
 */
export class FakeHost implements HostTransport {
  readonly requests: { method: string; params: unknown }[] = []
  private readonly listeners = new Set<(events: HostEvent[]) => void>()

  constructor(private readonly handlers: Record<string, (params: any) => unknown>) {}

  async request(method: string, params: unknown): Promise<WireResponse> {
    this.requests.push({ method, params })
    const handler = this.handlers[method]
    if (!handler) return { ok: false, error: { message: `no fake for ${method}` } }
    try {
      return { ok: true, result: await handler(params) }
    } catch (error) {
      return { ok: false, error: { message: (error as Error).message } }
    }
  }

  onEvents(listener: (events: HostEvent[]) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  push(events: HostEvent[]): void {
    for (const listener of this.listeners) listener(events)
  }

  sent(method: string): unknown[] {
    return this.requests.filter((r) => r.method === method).map((r) => r.params)
  }

  install(): this {
    installHost(new HostClient(this))
    return this
  }
}
