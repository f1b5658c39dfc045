import { defineStore } from 'pinia'
import { computed, ref, watch } from 'vue'
import type { InboxItem } from '../../../shared/inbox'
import { host, messageOf } from '../host/client'
import { LOST_CONNECTION } from '../host/transport'
import { useNoticesStore } from './notices'
import { usePanesStore } from './panes'
import { useViewStore } from './view'

/**
 * The inbox as the Host keeps it (`inbox.changed`): what waits on the user in
 * every session. The window tells the Host which sessions it shows while it
 * has the focus (`inbox.seen`): their finished and failed turns are seen, and
 * are not counted meanwhile (no count that comes and goes as a turn ends in
 * front of the user). Items being answered are hidden at once, so a second
 * key press cannot answer twice.
 */
export const useInboxStore = defineStore('inbox', () => {
  const panes = usePanesStore()
  const view = useViewStore()
  const notices = useNoticesStore()

  const items = ref<InboxItem[]>([])
  const open = ref(false)
  /** The item to select when the inbox opens (a notification's), else the first. */
  const selectId = ref<string | null>(null)
  /** The window has the focus and is not hidden (kept by the desktop wiring). */
  const windowFocused = ref(true)
  /** Answered or dismissed here, until the Host's list no longer has them. */
  const settling = ref<string[]>([])

  /** The sessions this window shows while the user looks at it: the conversations' panes (the maximised one only), not under the inbox. */
  const looking = computed<string[]>(() => {
    if (!windowFocused.value || open.value || view.page !== 'sessions') return []
    const shown = panes.maximisedId ? panes.panes.filter((p) => p.id === panes.maximisedId) : panes.panes
    return shown.flatMap((p) => (p.sessionId ? [p.sessionId] : []))
  })

  /** A turn's end in a session the user is looking at: seen as it is shown. */
  const inSight = (item: InboxItem): boolean => isTurnEnd(item) && item.session !== undefined && looking.value.includes(item.session.id)

  /** What waits, less what is being answered and the turns the user is looking at. */
  const waiting = computed(() => items.value.filter((i) => !settling.value.includes(i.id) && !inSight(i)))
  const count = computed(() => waiting.value.length)

  function receive(list: InboxItem[]): void {
    items.value = list
    const ids = new Set(list.map((i) => i.id))
    settling.value = settling.value.filter((id) => ids.has(id))
  }

  /** Runs an answer with the item hidden meanwhile; shown again if the Host refused it (the banner says why). */
  async function settle(itemId: string, run: () => Promise<unknown>): Promise<void> {
    if (hidden(itemId)) return
    hide(itemId)
    try {
      await run()
    } catch (error) {
      unhide(itemId)
      notices.report(messageOf(error))
    }
  }

  /** Answered by a card of its own (a question's form, a sign-in, a permission's options): hidden until the Host's list says so too. */
  function hide(itemId: string): void {
    if (!hidden(itemId)) settling.value = [...settling.value, itemId]
  }

  /** The answer was refused: the item waits again. */
  function unhide(itemId: string): void {
    settling.value = settling.value.filter((id) => id !== itemId)
  }

  /** Being answered or dismissed here: not shown. */
  function hidden(itemId: string): boolean {
    return settling.value.includes(itemId)
  }

  /** The item of a session's permission request, if the inbox has it. */
  function permissionItemId(sessionId: string, requestId: string): string | null {
    const item = items.value.find((i) => i.kind === 'permission' && i.session?.id === sessionId && i.permission.requestId === requestId)
    return item?.id ?? null
  }

  function dismiss(itemId: string): Promise<void> {
    return settle(itemId, () => host().request('inbox.dismiss', { itemId }))
  }

  function show(itemId: string | null = null): void {
    selectId.value = itemId
    open.value = true
  }

  // The turns that ended in the sessions the user looks at are seen.
  let asking = ''
  watch(
    () => items.value.filter(inSight).map((i) => i.session?.id ?? ''),
    (sessionIds) => {
      const key = sessionIds.join(',')
      if (!sessionIds.length || key === asking || !document.hasFocus()) return
      asking = key
      void host()
        .request('inbox.seen', { sessionIds })
        .catch((error: unknown) => {
          // A lost connection is said already; the list that comes back with it asks again.
          if (!(error instanceof Error && error.message === LOST_CONNECTION)) console.error('Could not tell the Host what was seen', error)
        })
        .finally(() => {
          if (asking === key) asking = ''
        })
    }
  )

  return { items, open, selectId, windowFocused, waiting, count, receive, settle, hide, unhide, hidden, permissionItemId, dismiss, show }
})

/** A turn's end: read, not answered. */
export function isTurnEnd(item: InboxItem): boolean {
  return item.kind === 'error' || item.kind === 'finished'
}
