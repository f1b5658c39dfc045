import type { HostEvent, HostEventName, HostEvents, HostTransport, RequestMethod, RequestParams, RequestResult } from '../../../shared/contract'
import type { AgentProblem } from '../../../shared/domain'
import type { HostErrorCode } from '../../../shared/errors'

/**
 * A request the Host refused, with its message; `code` lets a view act on it
 * (e.g. `auth_required`), and `problem` says what went wrong with an agent, in parts.
 */
export class HostRequestError extends Error {
  constructor(
    message: string,
    readonly method: RequestMethod,
    readonly code?: HostErrorCode,
    readonly problem?: AgentProblem
  ) {
    super(message)
    this.name = 'HostRequestError'
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

  /** Resolves with the method's result; rejects with the Host's own message when it refuses. */
  async request<M extends RequestMethod>(method: M, params: RequestParams<M>): Promise<RequestResult<M>> {
    const response = await this.transport.request(method, params)
    if (!response.ok) throw new HostRequestError(response.error.message, method, response.error.code, response.error.problem)
    return response.result as RequestResult<M>
  }

  /** Every batch of events as the Host sent it: applying a batch in one go renders once. */
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

let installed: HostClient | null = null

/** Called once at start-up (main.ts) with the transport it picked. */
export function installHost(client: HostClient): void {
  installed = client
}

export function host(): HostClient {
  if (!installed) throw new Error('The Switchboard host client is not installed yet')
  return installed
}

/** The message to show for a failed request. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
