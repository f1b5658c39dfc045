import { watch } from 'vue'
import type { ITheme, Terminal } from '@xterm/xterm'
import { useThemeStore } from '../stores/theme'

/**
 * Keeps a component's xterm.js terminal in the theme in effect. Its colours are read from the page's (`colours`), once
 * when it is made: when the theme changes they are read again, once the page has the new one (flush 'post'), or the
 * terminal keeps the old background inside its box's new one.
 */
export function followTheme(terminal: () => Terminal | null, colours: () => ITheme): void {
  const theme = useThemeStore()
  watch(
    () => theme.theme,
    () => {
      const current = terminal()
      if (current) current.options.theme = colours()
    },
    { flush: 'post' }
  )
}
