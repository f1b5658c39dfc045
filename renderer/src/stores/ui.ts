import { defineStore } from 'pinia'
import { ref } from 'vue'

/**
 * Window-level UI state that several components share: the search palette,
 * the confirmations that are dialogs, the sidebar's agent filter, and short
 * notes to the user (toasts) that are not errors.
 */

export interface Toast {
  id: number
  text: string
  tone: 'info' | 'warn'
}

export type Confirmation =
  | { kind: 'delete-session'; sessionId: string }
  | { kind: 'remove-project'; projectId: string }
  /** A mode that lets the agent act without asking, chosen for the first time for its agent: the Host's words, and the choice to send again. */
  | { kind: 'skip-permissions'; sessionId: string; message: string; choice: { modeId: string } | { configId: string; value: string } }

const TOAST_MS = 8000

export const useUiStore = defineStore('ui', () => {
  const searchOpen = ref(false)
  const confirmation = ref<Confirmation | null>(null)
  /** Show only this agent's sessions in the sidebar ('' for all). */
  const agentFilter = ref('')
  const toasts = ref<Toast[]>([])
  /** A session or project to rename inline in the sidebar (set by a menu or F2). */
  const renaming = ref<{ kind: 'session' | 'project'; id: string } | null>(null)
  /** The project whose New session menu is to open (the new-session-picker shortcut); its button clears it. */
  const newSessionPicker = ref<string | null>(null)
  let nextToast = 1

  function toast(text: string, tone: Toast['tone'] = 'info'): void {
    const id = nextToast++
    toasts.value.push({ id, text, tone })
    setTimeout(() => dismissToast(id), TOAST_MS)
  }

  function dismissToast(id: number): void {
    toasts.value = toasts.value.filter((t) => t.id !== id)
  }

  return { searchOpen, confirmation, agentFilter, toasts, renaming, newSessionPicker, toast, dismissToast }
})
