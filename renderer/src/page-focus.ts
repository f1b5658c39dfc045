import { nextTick, onMounted, onUnmounted, type Ref } from 'vue'
import { useViewStore } from './stores/view'

/**
 * A page of the main area (Agents, MCP servers, Spend) takes the focus as it
 * opens: its heading (`tabindex="-1"`), so a screen reader says which page it
 * is and the next Tab goes on into it, not back into the sidebar. Closed back
 * to the conversations (Esc, its ✕), it gives the focus back to what had it
 * when the page was opened (the view store notes it: the sidebar's button, the
 * composer), when the focus would otherwise fall to the page's body.
 */
export function usePageFocus(heading: Ref<HTMLElement | null>): void {
  const view = useViewStore()
  onMounted(() => heading.value?.focus())
  onUnmounted(async () => {
    // Another page in its place: that page has the focus, and the opener waits for it to close.
    if (view.page !== 'sessions') return
    const opener = view.takeOpener()
    // Once the conversations are shown again (a hidden composer takes no focus).
    await nextTick()
    const active = document.activeElement
    if (active && active !== document.body) return
    if (opener?.isConnected) opener.focus()
  })
}
