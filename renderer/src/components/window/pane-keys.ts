import type { ComputedRef, InjectionKey } from 'vue'

/**
 * Whether the pane a component is in has the focus. With several sessions side
 * by side, only the focused pane's permission card takes keys and the focus.
 * Outside a pane (one session, tests) it counts as focused.
 */
export const paneFocusedKey: InjectionKey<ComputedRef<boolean>> = Symbol('paneFocused')

/** Where a permission card takes the focus: its safe option ("Allow once", else "Reject once"), else the card itself. */
export const PERMISSION_FOCUS = '[data-testid="permission"][data-first-focus], [data-testid="permission"] [data-first-focus]'

/** A pane's element and where the keyboard goes in it: its pending permission's safe answer, else its composer, else the pane itself. */
export function paneFocusTarget(paneId: string): { pane: HTMLElement; target: HTMLElement } | null {
  const pane = document.querySelector<HTMLElement>(`[data-pane-id="${CSS.escape(paneId)}"]`)
  if (!pane) return null
  const target = pane.querySelector<HTMLElement>(PERMISSION_FOCUS) ?? pane.querySelector<HTMLTextAreaElement>('textarea:not(:disabled)') ?? pane
  return { pane, target }
}

/**
 * Gives `target` the focus for a card that came unasked (a permission request,
 * an agent's question), unless the user is writing in a field outside `card`
 * (one that holds text): taken mid-word, the next keys would be lost, and a
 * digit typed as text would answer a permission. The card is one Tab or click
 * away, and takes the focus from an empty field (a prompt just sent).
 */
export function focusUnlessWriting(target: HTMLElement | null | undefined, card: Element | null): void {
  if (!target || writingOutside(card)) return
  target.focus()
}

function writingOutside(card: Element | null): boolean {
  const active = document.activeElement
  if (!(active instanceof HTMLElement) || card?.contains(active)) return false
  if (active.isContentEditable) return (active.textContent ?? '') !== ''
  const textField =
    active instanceof HTMLTextAreaElement || (active instanceof HTMLInputElement && /^(text|search|url|email|tel)?$/.test(active.type))
  return textField && (active as HTMLInputElement | HTMLTextAreaElement).value !== ''
}
