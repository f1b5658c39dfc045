import { defineStore } from 'pinia'
import { ref } from 'vue'
import { useSessionsStore } from './sessions'

export type Page = 'sessions' | 'agents' | 'mcp'

/**
 * Which page the main area shows (conversations, the Agents page or the MCP page), and the
 * shortcut overlay. Opening or starting a session goes back to the conversations.
 */
export const useViewStore = defineStore('view', () => {
  const page = ref<Page>('sessions')
  /** The agent the Agents page shows. */
  const agentId = ref<string | null>(null)
  const shortcutsOpen = ref(false)
  /** A long operation started from a menu or a shortcut (no button of its own shows its progress). */
  const activity = ref<string | null>(null)

  function show(next: Page): void {
    page.value = next
  }

  function showAgent(id: string | null): void {
    agentId.value = id
    page.value = 'agents'
  }

  useSessionsStore().$onAction(({ name }) => {
    if (name === 'open' || name === 'create' || name === 'fork') page.value = 'sessions'
  })

  return { page, agentId, shortcutsOpen, activity, show, showAgent }
})
