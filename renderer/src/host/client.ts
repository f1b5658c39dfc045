import type {
  HostEvent,
  HostEventName,
  HostEvents,
  HostTransport,
  RequestMethod,
  RequestParams,
  RequestResult
} from '../../../shared/contract'
import { connectTransport } from './transport'

/** A request the Host refused; `code` lets the view act on it (e.g. `auth_required`). */
export class HostRequestError extends Error {
  constructor(
    message: string,
    readonly code?: string
  ) {
    super(message)
  }
}

/** The typed contract client: the renderer's only way to the Host. */
export class HostClient {
  private readonly batchListeners = new Set<(events: HostEvent[]) => void>()

  constructor(private readonly transport: HostTransport) {
    transport.onEvents((events) => {
      for (const listener of this.batchListeners) listener(events)
    })
  }

  async request<M extends RequestMethod>(method: M, params: RequestParams<M>): Promise<RequestResult<M>> {
    const response = await this.transport.request(method, params)
    if (!response.ok) throw new HostRequestError(response.error.message, response.error.code)
    return response.result as RequestResult<M>
  }

  /** Every batch of events, as the host sent it: apply a batch in one go, render once. */
  onBatch(listener: (events: HostEvent[]) => void): () => void {
    this.batchListeners.add(listener)
    return () => this.batchListeners.delete(listener)
  }

  on<K extends HostEventName>(type: K, listener: (payload: HostEvents[K]) => void): () => void {
    return this.onBatch((events) => {
      for (const event of events) if (event.type === type) listener(event.payload as HostEvents[K])
    })
  }
}

let client: HostClient | null = null
let problemListener: (message: string) => void = (message) => console.error(message)

export function onTransportProblem(listener: (message: string) => void): void {
  problemListener = listener
}

export function hostClient(): HostClient {
  client ??= new HostClient(connectTransport((message) => problemListener(message)))
  return client
}
