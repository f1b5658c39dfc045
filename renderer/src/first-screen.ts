import { createSSRApp, h } from 'vue'
import { renderToString } from 'vue/server-renderer'
import { createPinia } from 'pinia'
import type { FirstScreenRenderer } from '../../shared/contract'
import WindowFrame from './components/window/WindowFrame.vue'
import { LIST_HEIGHT } from './components/sidebar/list-height'
import { HostClient, installHost } from './host/client'
import { useAppStore } from './stores/app'

/**
 * The window's first screen drawn in the Host's process (built for Node: `npm run build`'s second step,
 * vite.first-screen.config.ts), before the window's code has run in the page: the window's frame and
 * sidebar, with the window's own components, their stores filled by the window's own first load
 * (first-load.ts) from the Host's answers. The page's first script puts it in place (main.ts); the window
 * then mounts over it with the same answers. Nothing here may need a page: there is none.
 */
export const renderFirstScreen: FirstScreenRenderer = async ({ request, height }) => {
  // Each render has its own client over the Host's own requests; the stores reach it through host().
  installHost(new HostClient({ request, onEvents: () => () => undefined }))
  const pinia = createPinia()
  await useAppStore(pinia).load()
  const app = createSSRApp({ render: () => h(WindowFrame) }).use(pinia)
  app.provide(LIST_HEIGHT, height)
  // The page's CSP takes no style attribute from markup: the styles the components set (the list's rows'
  // places) travel as data-first-style, which the page's first script sets through each element's style, as
  // Vue sets them in the window. (Vue escapes every quote in what it renders: ` style="` starts an attribute.)
  return (await renderToString(app)).replace(/ style="([^"]*)"/g, ' data-first-style="$1"')
}
