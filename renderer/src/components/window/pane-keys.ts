import type { ComputedRef, InjectionKey } from 'vue'

/**
 * Whether the pane a component is in has the focus. With several sessions side
 * by side, only the focused pane's permission card takes keys and the focus.
 * Outside a pane (one session, tests) it counts as focused.
 */
export const paneFocusedKey: InjectionKey<ComputedRef<boolean>> = Symbol('paneFocused')

/** A pane's element and where the keyboard goes in it: its pending permission answer, else its composer, else the pane itself. */
export function paneFocusTarget(paneId: string): { pane: HTMLElement; target: HTMLElement } | null {
  const pane = document.querySelector<HTMLElement>(`[data-pane-id="${CSS.escape(paneId)}"]`)
  if (!pane) return null
  const target =
    pane.querySelector<HTMLElement>('[data-testid="permission"] button') ?? pane.querySelector<HTMLTextAreaElement>('textarea:not(:disabled)') ?? pane
  return { pane, target }
}
