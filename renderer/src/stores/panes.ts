import { defineStore } from 'pinia'
import { computed, ref, watch } from 'vue'
import { MAX_PANES, type PaneLayout } from '../../../shared/settings'
import { useSettingsStore } from './settings'

/**
 * The main area's layout: side-by-side panes, each holding one session (of
 * any agent and project) or nothing yet. One pane has the focus: the sidebar
 * and search open sessions there. One may be maximised (the others stay
 * mounted and keep streaming, just hidden). A session shows in at most one
 * pane: opening it again focuses the pane that has it. The layout is one of
 * the settings the Host keeps, so a reload, a restart or another window starts
 * from it; while open, each window arranges its own panes (another window's
 * layout is not forced on this one).
 */

export interface Pane {
  id: string
  sessionId: string | null
}

export { MAX_PANES } from '../../../shared/settings'

let counter = 0
function newPane(sessionId: string | null = null): Pane {
  return { id: `pane-${Date.now().toString(36)}-${counter++}`, sessionId }
}

export const usePanesStore = defineStore('panes', () => {
  const panes = ref<Pane[]>([newPane()])
  const focusedId = ref(panes.value[0].id)
  const maximisedId = ref<string | null>(null)

  const focused = computed<Pane>(() => panes.value.find((p) => p.id === focusedId.value) ?? panes.value[0])
  const focusedIndex = computed(() => panes.value.indexOf(focused.value))
  const canSplit = computed(() => panes.value.length < MAX_PANES)

  function paneOf(sessionId: string): Pane | undefined {
    return panes.value.find((p) => p.sessionId === sessionId)
  }

  function focus(paneId: string): void {
    if (!panes.value.some((p) => p.id === paneId)) return
    focusedId.value = paneId
    // Moving to another pane while one is maximised shows that one instead.
    if (maximisedId.value && maximisedId.value !== paneId) maximisedId.value = paneId
  }

  /** 0-based; false when there is no such pane. */
  function focusIndex(index: number): boolean {
    const pane = panes.value[index]
    if (!pane) return false
    focus(pane.id)
    return true
  }

  function focusNext(step: 1 | -1): void {
    const count = panes.value.length
    focusIndex((focusedIndex.value + step + count) % count)
  }

  /** Shows a session: where it already is, else in the focused pane. */
  function show(sessionId: string): Pane {
    const existing = paneOf(sessionId)
    if (existing) {
      focus(existing.id)
      return existing
    }
    focused.value.sessionId = sessionId
    return focused.value
  }

  /**
   * A new pane beside the focused one, holding the session (or nothing yet),
   * and focused. When the panes are all taken, the session replaces the
   * focused pane's and false is returned.
   */
  function split(sessionId: string | null = null): boolean {
    if (sessionId) {
      const existing = paneOf(sessionId)
      if (existing) {
        focus(existing.id)
        return true
      }
    }
    if (!canSplit.value) {
      if (sessionId) show(sessionId)
      return false
    }
    const pane = newPane(sessionId)
    panes.value.splice(focusedIndex.value + 1, 0, pane)
    maximisedId.value = null
    focusedId.value = pane.id
    return true
  }

  /** Closes a pane; the last one only empties. The focus goes to its neighbour. */
  function close(paneId: string = focused.value.id): void {
    const index = panes.value.findIndex((p) => p.id === paneId)
    if (index < 0) return
    if (maximisedId.value === paneId) maximisedId.value = null
    if (panes.value.length === 1) {
      panes.value[0].sessionId = null
      return
    }
    panes.value.splice(index, 1)
    if (focusedId.value === paneId) focusedId.value = panes.value[Math.min(index, panes.value.length - 1)].id
  }

  function toggleMaximise(paneId: string = focused.value.id): void {
    if (panes.value.length < 2) {
      maximisedId.value = null
      return
    }
    maximisedId.value = maximisedId.value === paneId ? null : paneId
    focus(paneId)
  }

  /**
   * A session that is gone: its pane shows `instead` (the session it was made
   * from), unless another pane already does; else it is left empty, and its
   * empty state says what to do next. Returns the pane that now shows `instead`.
   */
  function removeSession(sessionId: string, instead?: string | null): Pane | undefined {
    const pane = paneOf(sessionId)
    if (!pane) return undefined
    const next = instead && !paneOf(instead) ? instead : null
    pane.sessionId = next
    return next ? pane : undefined
  }

  /** After the session list is known: panes of sessions that no longer exist are emptied. */
  function keepOnly(sessionIds: Set<string>): void {
    for (const pane of panes.value) if (pane.sessionId && !sessionIds.has(pane.sessionId)) pane.sessionId = null
  }

  /** The layout as kept (the settings' `panes`). */
  function layout(): PaneLayout {
    return { panes: panes.value.map((p) => ({ ...p })), focused: focusedId.value, maximised: maximisedId.value }
  }

  /** Puts a kept layout back (the sessions are opened by the caller once the session list is known). */
  function restore(saved: PaneLayout | undefined): void {
    if (!saved) return
    const list = saved.panes.slice(0, MAX_PANES).map((p) => ({ id: p.id, sessionId: p.sessionId }))
    panes.value = list
    focusedId.value = list.some((p) => p.id === saved.focused) ? saved.focused : list[0].id
    maximisedId.value = list.some((p) => p.id === saved.maximised) ? saved.maximised : null
  }

  function sameAs(saved: PaneLayout | undefined): boolean {
    return saved !== undefined && JSON.stringify(layout()) === JSON.stringify(saved)
  }

  const settings = useSettingsStore()
  watch(
    [panes, focusedId, maximisedId],
    () => {
      if (!sameAs(settings.values.panes)) settings.change({ panes: layout() })
    },
    { deep: true }
  )

  return {
    panes,
    focusedId,
    maximisedId,
    focused,
    focusedIndex,
    canSplit,
    paneOf,
    focus,
    focusIndex,
    focusNext,
    show,
    split,
    close,
    toggleMaximise,
    removeSession,
    keepOnly,
    restore,
    sameAs
  }
})
