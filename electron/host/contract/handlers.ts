import type { CommandChange } from '../../../shared/confirmation'
import type { ParsedParams, RequestMethod, RequestResult } from '../../../shared/contract'

/** What a handler gets besides its params: the request's own way to confirm a change that would run a program. */
export interface RequestContext {
  /**
   * Resolves once the user confirmed `change` outside the page (confirmations.ts);
   * throws a HostError (`confirmation_required`, `confirmation_refused`) otherwise.
   * Called before anything is written, downloaded or started.
   */
  confirm(change: CommandChange): Promise<void>
}

/** How one contract request is answered. */
export type Handler<M extends RequestMethod> = (params: ParsedParams<M>, request: RequestContext) => Promise<RequestResult<M>>

/** Every request of one namespace (`sessions`, `agents`, ...): each service answers its whole slice. */
export type HandlerSlice<Namespace extends string> = { [M in Extract<RequestMethod, `${Namespace}.${string}`>]: Handler<M> }

export type Handlers = { [M in RequestMethod]: Handler<M> }
