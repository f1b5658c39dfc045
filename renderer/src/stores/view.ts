import { defineStore } from 'pinia'
import { ref } from 'vue'

export type Page = 'sessions' | 'agents' | 'mcp' | 'spend'

/**
 * Which page the main area shows (conversations, the Agents, MCP or Spend page), and the
 * shortcut overlay. Opening, starting or forking a session goes back to the conversations
 * (the sessions store says so: it calls show).
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

  return { page, agentId, shortcutsOpen, activity, show, showAgent }
})
