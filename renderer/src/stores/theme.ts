import { defineStore } from 'pinia'
import { computed, ref, watch } from 'vue'
import { applyTheme, resolveTheme, type ThemeChoice } from '../theme'
import { useSettingsStore } from './settings'

/** The user's theme choice (System, Light, Dark; one of the settings the Host keeps), the OS preference, and the theme in effect on <html>. */
export const useThemeStore = defineStore('theme', () => {
  const settings = useSettingsStore()
  const query = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null
  const choice = computed<ThemeChoice>(() => settings.values.theme ?? 'system')
  const systemDark = ref(query?.matches ?? false)
  query?.addEventListener('change', (event) => (systemDark.value = event.matches))
  const theme = computed(() => resolveTheme(choice.value, systemDark.value))

  // No page where the Host draws the window's first screen (first-screen.ts): the window applies it as it starts.
  if (typeof document !== 'undefined') watch(theme, (value) => applyTheme(document.documentElement, value), { immediate: true })

  function choose(value: ThemeChoice): void {
    settings.change({ theme: value })
  }

  return { choice, systemDark, theme, choose }
})
