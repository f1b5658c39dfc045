import type { PermissionOptionView } from '../../shared/domain'

/**
 * A permission request's options in the order the card and the inbox show
 * them (and number them 1 to 9): allowing once first, then the lasting
 * allow, then rejecting once and for good, whatever order the agent sent
 * them in. Kinds the protocol does not name come last, in the agent's order.
 */
const ORDER = ['allow_once', 'allow_always', 'reject_once', 'reject_always']

export function orderedOptions(options: PermissionOptionView[]): PermissionOptionView[] {
  const rank = (option: PermissionOptionView): number => {
    const at = ORDER.indexOf(option.kind)
    return at === -1 ? ORDER.length : at
  }
  // Array.prototype.sort is stable: options of one kind keep the agent's order.
  return [...options].sort((a, b) => rank(a) - rank(b))
}

/**
 * The option that takes the focus when a request comes: allowing once, else
 * rejecting once; never an "always" (a stray Enter must not make a rule).
 * None of those offered: nothing is focused but the card itself.
 */
export function focusedOption(options: PermissionOptionView[]): PermissionOptionView | undefined {
  return options.find((o) => o.kind === 'allow_once') ?? options.find((o) => o.kind === 'reject_once')
}
