import type { HostEvent } from '../../../shared/contract'
import type { PendingPermission, PermissionOptionView } from '../../../shared/domain'
import type { HostLink } from './link'

/**
 * How a headless run answers what its agent asks permission for (`--allow`):
 * `ask` on a terminal (the saved "always" rules answer what they cover
 * first, as in the window), `never` (every request denied, the rules too set
 * aside for the turn: `sessions.prompt`'s `rulesApply: false`), or `rules`
 * (the rules answer what they cover, in the Host; every other request is denied). Nothing is ever allowed that the
 * user did not allow: a denial picks the agent's "reject once" option (never
 * an "always", which would save a rule), or dismisses the request when the
 * agent offers none.
 */
export type AllowPolicy = 'ask' | 'never' | 'rules'

export const ALLOW_POLICIES: readonly AllowPolicy[] = ['ask', 'never', 'rules']

/** Asks the user to pick one of the options on the terminal; null: denied. */
export type AskUser = (permission: PendingPermission) => Promise<PermissionOptionView | null>

export interface PermissionAnswerer {
  /** Whether any request was denied, by the policy or by the user on the terminal. */
  readonly denied: boolean
  stop(): void
}

export function answerPermissions(
  link: HostLink,
  sessionId: string,
  policy: AllowPolicy,
  options: { ask?: AskUser; note: (line: string) => void }
): PermissionAnswerer {
  const seen = new Set<string>()
  let denied = false
  // One question at a time on the terminal: an agent may ask several at once.
  let asking: Promise<void> = Promise.resolve()
  const respond = (permission: PendingPermission, option: PermissionOptionView | null): void => {
    link
      .request('sessions.respondPermission', { id: sessionId, requestId: permission.requestId, optionId: option?.optionId ?? null })
      // Answered meanwhile in the window, or the turn ended: nothing waits for this answer any more.
      .catch((error: Error) => options.note(`switchboard: could not answer "${permission.title}": ${error.message}`))
  }
  const unsubscribe = link.subscribe((events: HostEvent[]) => {
    for (const event of events) {
      if (event.type !== 'session.state' || event.payload.id !== sessionId) continue
      for (const permission of event.payload.permissions ?? []) {
        if (seen.has(permission.requestId)) continue
        seen.add(permission.requestId)
        if (policy === 'ask' && options.ask) {
          const ask = options.ask
          asking = asking.then(async () => {
            const answer = await ask(permission)
            if (!answer?.kind.startsWith('allow')) denied = true
            respond(permission, answer)
          })
          continue
        }
        denied = true
        options.note(`switchboard: denied "${permission.title}" (--allow ${policy})`)
        respond(permission, denial(permission.options))
      }
    }
  })
  return {
    get denied() {
      return denied
    },
    stop: unsubscribe
  }
}

/** The option that denies this once, or null (the request dismissed) when the agent offers none. */
export function denial(options: PermissionOptionView[]): PermissionOptionView | null {
  return options.find((option) => option.kind === 'reject_once') ?? null
}
