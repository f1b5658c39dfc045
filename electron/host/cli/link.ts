import type { HostEvent, RequestMethod, RequestParams, RequestResults, WireError, WireResponse } from '../../../shared/contract'

/**
 * The command's way to the Host on a data folder: through the Host that runs
 * there already (the app, or `serve`), found by its door (web/door.ts), or a
 * Host opened in this process when none runs. Never two writers on one data
 * folder: opening takes the folder's lock, which refuses while another
 * Switchboard holds it.
 */
export interface HostLink {
  /** Says which Host answers, for messages: 'the running Switchboard' or 'this command'. */
  readonly via: 'running' | 'in-process'
  request<M extends RequestMethod>(method: M, params: RequestParams<M> & { confirmationCode?: string }): Promise<RequestResults[M]>
  subscribe(listener: (events: HostEvent[]) => void): () => void
  close(): Promise<void>
}

/** A request the Host refused, with its code (`confirmation_required`, `not_found`…) for the command to act on. */
export class HostRefusal extends Error {
  constructor(readonly error: WireError) {
    super(error.message)
  }
}

export function answerOf<M extends RequestMethod>(method: M, response: WireResponse): RequestResults[M] {
  if (!response.ok) throw new HostRefusal(response.error)
  return response.result as RequestResults[M]
}
