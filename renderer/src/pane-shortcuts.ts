/**
 * The shortcuts for search, panes and the sidebar: the global handler in App.vue matches
 * key presses against this list (by physical key where layouts differ); the
 * shortcut overlay lists them through `shortcuts.ts`. Chosen not to clash with
 * what the browser, Electron's default menu or text editing already use:
 * Ctrl/Cmd+W, +T, +N, +Tab stay the browser's and window's, Ctrl/Cmd+Shift+M is
 * the MCP page, Ctrl/Cmd+0 is the menu's Actual Size (so the sidebar is
 * Ctrl/Cmd+Shift+E, as the Explorer in VS Code), and AltGr combinations (Ctrl+Alt on Windows) that type
 * characters are never taken.
 */

export type ShortcutId =
  | 'search'
  | 'new-pane'
  | 'close-pane'
  | 'maximise-pane'
  | 'next-pane'
  | 'previous-pane'
  | 'focus-pane-1'
  | 'focus-pane-2'
  | 'focus-pane-3'
  | 'focus-pane-4'
  | 'focus-sidebar'

export interface Shortcut {
  id: ShortcutId
  /** How to show it: `Mod` is Ctrl, or ⌘ on macOS (see `keyLabel`). */
  keys: string
  description: string
  group: 'General' | 'Panes' | 'Sidebar'
  /** `key` (KeyboardEvent.key, compared case-insensitively) or `code` (physical key), with modifiers. */
  mod: boolean
  shift: boolean
  alt: boolean
  key?: string
  code?: string
}

const paneFocus = (n: 1 | 2 | 3 | 4): Shortcut => ({
  id: `focus-pane-${n}`,
  keys: `Mod+${n}`,
  description: `Go to pane ${n}`,
  group: 'Panes',
  mod: true,
  shift: false,
  alt: false,
  code: `Digit${n}`
})

export const shortcuts: Shortcut[] = [
  {
    id: 'search',
    keys: 'Mod+K',
    description: 'Search projects, titles and conversations',
    group: 'General',
    mod: true,
    shift: false,
    alt: false,
    key: 'k'
  },
  {
    id: 'new-pane',
    keys: 'Mod+\\',
    description: 'Open a new pane beside the others',
    group: 'Panes',
    mod: true,
    shift: false,
    alt: false,
    code: 'Backslash'
  },
  { id: 'close-pane', keys: 'Mod+Alt+W', description: 'Close the focused pane', group: 'Panes', mod: true, shift: false, alt: true, code: 'KeyW' },
  {
    id: 'maximise-pane',
    keys: 'Mod+Shift+Enter',
    description: 'Maximise the focused pane, or restore the split',
    group: 'Panes',
    mod: true,
    shift: true,
    alt: false,
    key: 'Enter'
  },
  { id: 'next-pane', keys: 'Mod+Alt+→', description: 'Next pane', group: 'Panes', mod: true, shift: false, alt: true, key: 'ArrowRight' },
  { id: 'previous-pane', keys: 'Mod+Alt+←', description: 'Previous pane', group: 'Panes', mod: true, shift: false, alt: true, key: 'ArrowLeft' },
  {
    id: 'focus-sidebar',
    keys: 'Mod+Shift+E',
    description: "Go to the sidebar, on the open conversation's row",
    group: 'Sidebar',
    mod: true,
    shift: true,
    alt: false,
    code: 'KeyE'
  },
  paneFocus(1),
  paneFocus(2),
  paneFocus(3),
  paneFocus(4)
]

export function isMac(): boolean {
  return typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent)
}

/** `Mod+Alt+W` as this platform writes it. */
export function keyLabel(keys: string, mac = isMac()): string {
  return mac
    ? keys
        .replace(/Mod\+/g, '⌘')
        .replace(/Alt\+/g, '⌥')
        .replace(/Shift\+/g, '⇧')
    : keys.replace(/Mod\+/g, 'Ctrl+')
}

/** The shortcut a key press is, if any. */
export function matchShortcut(event: KeyboardEvent, mac = isMac()): Shortcut | undefined {
  if (event.isComposing || event.repeat) return undefined
  // AltGr (Ctrl+Alt on Windows and Linux layouts) types characters: never a shortcut.
  if (event.getModifierState?.('AltGraph')) return undefined
  const mod = mac ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey
  return shortcuts.find(
    (s) =>
      s.mod === mod &&
      s.shift === event.shiftKey &&
      s.alt === event.altKey &&
      (s.code ? s.code === event.code : s.key?.toLowerCase() === event.key.toLowerCase())
  )
}

export function shortcutFor(id: ShortcutId): Shortcut {
  const shortcut = shortcuts.find((s) => s.id === id)
  if (!shortcut) throw new Error(`No shortcut '${id}'`)
  return shortcut
}
