import { defineStore } from 'pinia'
import { computed, ref, watch } from 'vue'
import { applyTheme, readThemeChoice, resolveTheme, writeThemeChoice, type ThemeChoice } from '../theme'

/** The user's theme choice (System, Light, Dark), the OS preference, and the theme in effect on <html>. */
export const useThemeStore = defineStore('theme', () => {
  const storage = typeof localStorage === 'undefined' ? undefined : localStorage
  const query = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null
  const choice = ref<ThemeChoice>(readThemeChoice(storage))
  const systemDark = ref(query?.matches ?? false)
  query?.addEventListener('change', (event) => (systemDark.value = event.matches))
  const theme = computed(() => resolveTheme(choice.value, systemDark.value))

  watch(theme, (value) => applyTheme(document.documentElement, value), { immediate: true })

  function choose(value: ThemeChoice): void {
    choice.value = value
    writeThemeChoice(storage, value)
  }

  return { choice, systemDark, theme, choose }
})
