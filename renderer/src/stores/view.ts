import { defineStore } from 'pinia'
import { ref } from 'vue'

export type Page = 'sessions' | 'agents' | 'mcp' | 'spend' | 'race'

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

  /**
   * What had the focus when a page was opened over the conversations (the
   * sidebar's button, the composer): the page gives it back as it closes
   * (page-focus.ts). Not reactive: read only then.
   */
  let opener: HTMLElement | null = null

  function show(next: Page): void {
    if (next !== page.value && next !== 'sessions') noteOpener()
    page.value = next
  }

  function showAgent(id: string | null): void {
    agentId.value = id
    show('agents')
  }

  function noteOpener(): void {
    if (typeof document === 'undefined') return
    const active = document.activeElement
    if (!(active instanceof HTMLElement) || active === document.body) return
    // A control of the page being left for another is no place to come back to: the first opener stays.
    if (page.value !== 'sessions' && document.getElementById('main')?.contains(active)) return
    opener = active
  }

  /** The opener, once: a closed page gives the focus back to it. */
  function takeOpener(): HTMLElement | null {
    const taken = opener
    opener = null
    return taken
  }

  return { page, agentId, shortcutsOpen, activity, show, showAgent, takeOpener }
})
