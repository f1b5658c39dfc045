import { nextTick, ref, watch, type Ref } from 'vue'
import { messageOf } from '../../host/client'
import { useUiStore } from '../../stores/ui'

/**
 * Renaming in place (a project's name, a session's title): while `active`,
 * the draft starts from the current name with the input focused and selected;
 * saving trims it, refuses an empty one with `emptyMessage`, and ends by
 * giving the focus back to `returnFocus`. Esc ends without saving.
 */
export function useInlineRename(options: {
  active: Ref<boolean>
  current: () => string
  emptyMessage: string
  save: (name: string) => Promise<unknown>
  returnFocus: Ref<HTMLElement | null>
}) {
  const ui = useUiStore()
  const draft = ref('')
  const error = ref('')
  const input = ref<HTMLInputElement | null>(null)
  let saving = false

  watch(
    options.active,
    async (now) => {
      if (!now) return
      draft.value = options.current()
      error.value = ''
      await nextTick()
      input.value?.focus()
      input.value?.select()
    },
    { immediate: true }
  )

  async function end(): Promise<void> {
    ui.renaming = null
    await nextTick()
    options.returnFocus.value?.focus()
  }

  async function save(): Promise<void> {
    if (!options.active.value || saving) return
    const name = draft.value.trim()
    if (name === options.current()) return end()
    if (!name) {
      error.value = options.emptyMessage
      return
    }
    saving = true
    try {
      await options.save(name)
      await end()
    } catch (e) {
      error.value = messageOf(e)
    } finally {
      saving = false
    }
  }

  return { draft, error, input, save, end }
}
