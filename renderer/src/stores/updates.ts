import { defineStore } from 'pinia'
import { computed, ref } from 'vue'
import type { UpdateState } from '../../../shared/updates'
import { host, HostRequestError, messageOf } from '../host/client'
import { useNoticesStore } from './notices'

/**
 * What the desktop app's updater is doing (`updates.changed`, shared/updates.ts), and the user's yes to an update
 * downloaded: "Restart to update" (the Host asks outside the window first when an agent is mid-turn) or "When I
 * quit". The notice can be put away until the updater has something new to say.
 */
export const useUpdatesStore = defineStore('updates', () => {
  const notices = useNoticesStore()
  const state = ref<UpdateState>({ status: 'off', reason: 'serve' })
  const hiddenFor = ref<string | null>(null)
  const installing = ref(false)

  /** One key per thing worth saying: a new version, a new failure, the yes given. */
  const key = computed(() => {
    const s = state.value
    if (s.status === 'ready') return `ready ${s.version} ${s.installOnQuit}`
    if (s.status === 'failed') return `failed ${s.version ?? ''} ${s.message}`
    if (s.status === 'downloading') return `downloading ${s.version}`
    return s.status
  })
  const shown = computed(() => ['downloading', 'ready', 'failed'].includes(state.value.status) && hiddenFor.value !== key.value)
  const percent = computed(() => {
    const s = state.value
    return s.status === 'downloading' && s.total > 0 ? Math.min(100, Math.floor((100 * s.transferred) / s.total)) : 0
  })

  async function load(): Promise<void> {
    try {
      state.value = await host().request('updates.get', {})
    } catch (error) {
      // A Host without updates (an older one) says so by refusing: nothing to show.
      console.warn(`Could not ask about updates: ${messageOf(error)}`)
    }
  }

  function receive(next: UpdateState): void {
    state.value = next
  }

  function hide(): void {
    hiddenFor.value = key.value
  }

  async function install(when: 'restart' | 'quit'): Promise<void> {
    if (installing.value) return
    installing.value = true
    try {
      await host().request('updates.install', { when })
    } catch (error) {
      // Cancelled in the dialog that named the turns under way: the update waits, nothing to report.
      if (!(error instanceof HostRequestError && error.code === 'confirmation_refused')) notices.report(messageOf(error))
    } finally {
      installing.value = false
    }
  }

  return { state, shown, percent, installing, load, receive, hide, install }
})
