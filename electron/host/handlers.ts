import type { ParsedParams, RequestMethod, RequestResult } from '../../shared/contract'

/** How one contract request is answered. */
export type Handler<M extends RequestMethod> = (params: ParsedParams<M>) => Promise<RequestResult<M>>

/** Every request of one namespace (`sessions`, `agents`, ...): each service answers its whole slice. */
export type HandlerSlice<Namespace extends string> = { [M in Extract<RequestMethod, `${Namespace}.${string}`>]: Handler<M> }

export type Handlers = { [M in RequestMethod]: Handler<M> }
