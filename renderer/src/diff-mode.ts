import { ref, watch } from 'vue'

/** How diffs are shown, for every diff at once, remembered in this window's storage. */
export type DiffMode = 'unified' | 'split'

const STORAGE_KEY = 'switchboard.diffMode'

function stored(): DiffMode {
  try {
    return globalThis.localStorage?.getItem(STORAGE_KEY) === 'split' ? 'split' : 'unified'
  } catch {
    return 'unified'
  }
}

export const diffMode = ref<DiffMode>(stored())

watch(diffMode, (mode) => {
  try {
    globalThis.localStorage?.setItem(STORAGE_KEY, mode)
  } catch {
    // storage unavailable: the choice lasts for this window
  }
})
