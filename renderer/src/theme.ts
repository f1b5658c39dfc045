/**
 * Light and dark: follows the OS (prefers-color-scheme) unless the user picked
 * one. The choice is one of the user's settings, kept by the Host
 * (stores/settings.ts); the resolved theme is set as `data-theme` on <html>,
 * which styles.css keys its colours on.
 */

import type { ThemeChoice } from '../../shared/settings'

export type { ThemeChoice } from '../../shared/settings'
export type Theme = 'light' | 'dark'

export const themeChoices: { value: ThemeChoice; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' }
]

export function resolveTheme(choice: ThemeChoice, systemDark: boolean): Theme {
  return choice === 'system' ? (systemDark ? 'dark' : 'light') : choice
}

export function applyTheme(root: HTMLElement, theme: Theme): void {
  root.dataset.theme = theme
}
