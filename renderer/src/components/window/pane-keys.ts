import type { ComputedRef, InjectionKey } from 'vue'

/**
 * Whether the pane a component is in has the focus. With several sessions side
 * by side, only the focused pane's permission card takes keys and the focus.
 * Outside a pane (one session, tests) it counts as focused.
 */
export const paneFocusedKey: InjectionKey<ComputedRef<boolean>> = Symbol('paneFocused')
