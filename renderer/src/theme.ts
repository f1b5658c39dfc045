/**
 * Light and dark: follows the OS (prefers-color-scheme) unless the user picked
 * one. The choice is the renderer's own (localStorage); the resolved theme is
 * set as `data-theme` on <html>, which styles.css keys its colours on.
 */

export type ThemeChoice = 'system' | 'light' | 'dark'
export type Theme = 'light' | 'dark'

export const THEME_STORAGE_KEY = 'switchboard.theme'
export const themeChoices: { value: ThemeChoice; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' }
]

export function readThemeChoice(storage: Pick<Storage, 'getItem'> | undefined): ThemeChoice {
  let stored: string | null = null
  try {
    stored = storage?.getItem(THEME_STORAGE_KEY) ?? null
  } catch {
    // storage refused (private mode, a sandboxed page): follow the system
  }
  return stored === 'light' || stored === 'dark' ? stored : 'system'
}

export function writeThemeChoice(storage: Pick<Storage, 'setItem' | 'removeItem'> | undefined, choice: ThemeChoice): void {
  try {
    if (choice === 'system') storage?.removeItem(THEME_STORAGE_KEY)
    else storage?.setItem(THEME_STORAGE_KEY, choice)
  } catch {
    // not kept; the choice still applies to this window
  }
}

export function resolveTheme(choice: ThemeChoice, systemDark: boolean): Theme {
  return choice === 'system' ? (systemDark ? 'dark' : 'light') : choice
}

export function applyTheme(root: HTMLElement, theme: Theme): void {
  root.dataset.theme = theme
}
