import type { HostEvent, WireResponse } from '../../../shared/contract'
import type { ConfirmCommand } from '../contract/confirmations'
import type { Host } from '../host'

/**
 * The Host as a transport sees it, whether it is open already or still
 * opening the data folder (the desktop app loads its window meanwhile,
 * main.ts): a request waits for it and is handed to it in the order it came;
 * events are listened to once it is open; a Host that could not open answers
 * every request with the reason. Both transports (ipc-bridge.ts,
 * ws-server.ts) go through here.
 */
export interface OpeningHost {
  handle(method: unknown, params: unknown, via?: { confirmCommand?: ConfirmCommand }): Promise<WireResponse>
  /** Listens to the Host's event batches once it is open; the function returned stops, whether it has opened or not. */
  subscribe(listener: (events: HostEvent[]) => void): () => void
}

export function openingHost(host: Host | Promise<Host>): OpeningHost {
  const ready = Promise.resolve(host)
  return {
    handle: (method, params, via) =>
      ready.then(
        (opened) => opened.handle(method, params, via),
        (error: Error): WireResponse => ({ ok: false, error: { message: `Switchboard could not open its data folder: ${error.message}` } })
      ),
    subscribe(listener) {
      let stopped = false
      let unsubscribe = (): void => undefined
      void ready.then(
        (opened) => {
          if (!stopped) unsubscribe = opened.events.subscribe(listener)
        },
        () => undefined
      )
      return () => {
        stopped = true
        unsubscribe()
      }
    }
  }
}
