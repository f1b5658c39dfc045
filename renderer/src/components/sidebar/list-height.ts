import type { InjectionKey } from 'vue'

/**
 * How high the sidebar's list is drawn where it cannot measure itself: in the Host, which draws the window's
 * first screen before the window's code runs (first-screen.ts). In the window the list measures itself.
 */
export const LIST_HEIGHT: InjectionKey<number> = Symbol('the sidebar list height')
