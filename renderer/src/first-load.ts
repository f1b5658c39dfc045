import type { RequestMethod, RequestParams, RequestResult } from '../../shared/contract'
import { FIRST_PAGE, FIRST_RECORDS } from '../../shared/session-listing'

/**
 * What the window asks the Host for before it shows anything: everything the
 * sidebar needs (the app store applies it), and again after a reconnect. The
 * page's first script (main.ts) sends these very requests, with the first
 * screen it asks the Host to draw from their answers (`app.firstScreen`),
 * before the window's code has arrived (early-link.ts; ask-first-load.ts
 * takes the answers); this module is small and imports no code but the
 * listing's two numbers, so that script stays small.
 */
export const FIRST_LOAD = [
  firstRequest('app.info', {}),
  firstRequest('projects.list', {}),
  // Not every session: each group's count, and the newest per agent of the first projects only (the sidebar
  // asks for the others' as they scroll into view, and for more as a group is opened further).
  firstRequest('sessions.summary', { limit: FIRST_PAGE, records: FIRST_RECORDS }),
  firstRequest('sessions.states', {}),
  firstRequest('agents.list', {}),
  firstRequest('agents.states', {}),
  firstRequest('permissions.list', {}),
  firstRequest('elicitations.list', {}),
  firstRequest('agents.checks', {}),
  firstRequest('mcp.list', {}),
  firstRequest('inbox.list', {}),
  firstRequest('settings.get', {})
] as const

/** A request of the first load, its parameters checked against its method's. */
function firstRequest<M extends RequestMethod>(method: M, params: RequestParams<M> & Record<string, unknown>): readonly [M, RequestParams<M>] {
  return [method, params] as const
}

type ResultsOf<T extends readonly (readonly [RequestMethod, unknown])[]> = {
  -readonly [K in keyof T]: T[K] extends readonly [infer M extends RequestMethod, unknown] ? RequestResult<M> : never
}

/** The first load's results, in the order of `FIRST_LOAD`. */
export type FirstLoad = ResultsOf<typeof FIRST_LOAD>
