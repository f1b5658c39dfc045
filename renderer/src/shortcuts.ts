import type { AppCommand } from '../../shared/app-commands'

/**
 * Every keyboard shortcut, in one list: the shortcut overlay (`?`) shows it,
 * and the window-wide key handler runs the ones that have a `command`. Keys
 * handled inside a component (the composer, a permission request) are listed
 * here too, so the overlay tells the whole story; add yours here.
 *
 * A key is written as in KeyboardEvent.key; `Mod` is ⌘ on macOS and Ctrl elsewhere.
 */

export interface Shortcut {
  id: string
  /** Alternatives; each is the keys pressed together, e.g. ['Mod', 'Shift', 'A']. */
  keys: string[][]
  description: string
  group: 'General' | 'Panes' | 'Sidebar' | 'Conversation' | 'Permission requests' | 'Inbox'
  /** Run by the window-wide handler. */
  command?: AppCommand
  /** Only when the focus is not in a text field (plain keys like `?` are text there). */
  outsideTextFields?: boolean
  /** The alternatives are the ends of a range (1 to 9), not a choice. */
  range?: boolean
}

export const shortcuts: Shortcut[] = [
  {
    id: 'shortcuts',
    keys: [['?'], ['Mod', '/']],
    description: 'Show keyboard shortcuts',
    group: 'General',
    command: 'shortcuts',
    outsideTextFields: true
  },
  { id: 'new-session', keys: [['Mod', 'N']], description: 'New session in the current project', group: 'General', command: 'new-session' },
  {
    id: 'new-session-picker',
    keys: [['Mod', 'Shift', 'N']],
    description: 'New session in the current project with…: choose the agent, preset and place',
    group: 'General',
    command: 'new-session-picker'
  },
  { id: 'agents', keys: [['Mod', 'Shift', 'A']], description: 'Agents', group: 'General', command: 'agents' },
  { id: 'inbox', keys: [['Mod', 'I']], description: 'Inbox: what waits on you, in every session', group: 'General', command: 'inbox' },
  { id: 'spend', keys: [['Mod', 'Shift', 'S']], description: 'Spend', group: 'General', command: 'spend' },
  {
    id: 'close-overlay',
    keys: [['Escape']],
    description: 'Close this list, a dialog, or the Agents or Spend page (the focus goes back)',
    group: 'General'
  },
  // Search, panes and the sidebar: handled in App.vue with pane-shortcuts.ts (by physical key); listed here for the overlay.
  { id: 'search', keys: [['Mod', 'K']], description: 'Search projects, titles and conversations', group: 'General' },
  { id: 'new-pane', keys: [['Mod', '\\']], description: 'Open a new pane beside the others', group: 'Panes' },
  {
    id: 'focus-pane',
    keys: [
      ['Mod', '1'],
      ['Mod', '4']
    ],
    range: true,
    description: 'Go to that pane',
    group: 'Panes'
  },
  {
    id: 'next-pane',
    keys: [
      ['Mod', 'Alt', '→'],
      ['Mod', 'Alt', '←']
    ],
    description: 'Next or previous pane',
    group: 'Panes'
  },
  { id: 'maximise-pane', keys: [['Mod', 'Shift', 'Enter']], description: 'Maximise the focused pane, or restore the split', group: 'Panes' },
  { id: 'close-pane', keys: [['Mod', 'Alt', 'W']], description: 'Close the focused pane', group: 'Panes' },
  {
    id: 'focus-sidebar',
    keys: [['Mod', 'Shift', 'E']],
    description: "Go to the sidebar, on the open conversation's row",
    group: 'Sidebar'
  },
  { id: 'sidebar-open', keys: [['Enter'], ['Mod', 'Enter']], description: 'Open the focused conversation here, or in a new pane', group: 'Sidebar' },
  { id: 'sidebar-rename', keys: [['F2']], description: 'Rename the focused conversation or project', group: 'Sidebar' },
  { id: 'sidebar-delete', keys: [['Delete']], description: 'Delete the focused conversation (asks first)', group: 'Sidebar' },
  { id: 'sidebar-menu', keys: [['Shift', 'F10']], description: 'More actions (also right-click)', group: 'Sidebar' },
  {
    id: 'sidebar-move',
    keys: [
      ['Alt', '↑'],
      ['Alt', '↓']
    ],
    description: 'Move the focused project up or down',
    group: 'Sidebar'
  },
  { id: 'send', keys: [['Enter']], description: 'Send the message', group: 'Conversation' },
  { id: 'newline', keys: [['Shift', 'Enter']], description: 'New line in the message', group: 'Conversation' },
  {
    id: 'cancel-turn',
    keys: [['Escape']],
    description: 'Cancel the running turn (in the thread, or in an empty message box)',
    group: 'Conversation'
  },
  {
    id: 'permission-pick',
    keys: [['1'], ['9']],
    range: true,
    description: 'Pick that option of the request (the focus in its pane, not in a text field)',
    group: 'Permission requests'
  },
  { id: 'permission-dismiss', keys: [['Escape']], description: 'Dismiss the request (the agent is told no)', group: 'Permission requests' },
  // Handled by the inbox itself (InboxDialog.vue); listed here for the overlay.
  {
    id: 'inbox-move',
    keys: [['↑'], ['↓']],
    description: 'Move through what waits',
    group: 'Inbox'
  },
  { id: 'inbox-act', keys: [['Enter']], description: 'Answer it (a question, a sign-in) or open its session', group: 'Inbox' },
  { id: 'inbox-pick', keys: [['1'], ['9']], range: true, description: 'Pick that option of a permission request', group: 'Inbox' },
  { id: 'inbox-dismiss', keys: [['Delete']], description: 'Dismiss it (a request is answered no)', group: 'Inbox' },
  { id: 'inbox-close', keys: [['Escape']], description: 'Close the inbox', group: 'Inbox' }
]

export function isMac(platform = typeof navigator === 'undefined' ? '' : navigator.platform): boolean {
  return /Mac|iPhone|iPad/.test(platform)
}

/** How a key is shown: ⌘/Ctrl for Mod, arrows and names for the rest. */
export function keyLabel(key: string, mac = isMac()): string {
  switch (key) {
    case 'Mod':
      return mac ? '⌘' : 'Ctrl'
    case 'Shift':
      return mac ? '⇧' : 'Shift'
    case 'Alt':
      return mac ? '⌥' : 'Alt'
    case 'Escape':
      return 'Esc'
    default:
      return key
  }
}

interface KeyPress {
  key: string
  ctrlKey: boolean
  metaKey: boolean
  shiftKey: boolean
  altKey: boolean
}

/** Whether a key press is this combination (exactly these modifiers; `?` implies the Shift it needs). */
export function matches(event: KeyPress, combo: string[], mac = isMac()): boolean {
  const mod = combo.includes('Mod')
  const shift = combo.includes('Shift')
  const alt = combo.includes('Alt')
  const key = combo.find((k) => !['Mod', 'Shift', 'Alt'].includes(k))
  if (!key) return false
  const modPressed = mac ? event.metaKey : event.ctrlKey
  const otherPressed = mac ? event.ctrlKey : event.metaKey
  if (modPressed !== mod || otherPressed || event.altKey !== alt) return false
  // A printable symbol carries its own Shift (`?` is Shift+/ on many layouts): only letters check it.
  if (/^[a-z]$/i.test(key)) return event.shiftKey === shift && event.key.toLowerCase() === key.toLowerCase()
  if (shift && !event.shiftKey) return false
  return event.key === key
}

/** The command a key press runs, if any. */
export function commandFor(event: KeyPress, inTextField: boolean, list: Shortcut[] = shortcuts, mac = isMac()): AppCommand | null {
  for (const shortcut of list) {
    if (!shortcut.command) continue
    for (const combo of shortcut.keys) {
      if (shortcut.outsideTextFields && inTextField && !combo.includes('Mod')) continue
      if (matches(event, combo, mac)) return shortcut.command
    }
  }
  return null
}

/** A text field, where plain keys are typing. */
export function isTextField(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null
  if (!element || typeof element.tagName !== 'string') return false
  if (element.isContentEditable) return true
  if (element.tagName === 'TEXTAREA' || element.tagName === 'SELECT') return true
  if (element.tagName !== 'INPUT') return false
  const type = (element as HTMLInputElement).type
  return !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(type)
}
