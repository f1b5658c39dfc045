import './zod-config'
import { createApp } from 'vue'
import { createPinia } from 'pinia'
import App from './App.vue'
import type { EarlyLink } from './host/early-link'
import { HostClient, installHost } from './host/client'
import { connectTransport } from './host/transport'
import { useAppStore } from './stores/app'
import { useConfirmCodeStore } from './stores/confirm-code'
import { useNoticesStore } from './stores/notices'

/**
 * The window: its transport takes over the link the page's first script opened (`early`), the app store
 * starts (listening to the Host's events, then applying the first load), and the window is mounted: after the
 * first load is in its stores when it has already `answered` (so its first frame shows the rows), else at once.
 * All of it in one go: the link's transport reads again what came before in a microtask, once the app store
 * listens.
 */
export function openWindow(early: EarlyLink, answered: boolean): void {
  const pinia = createPinia()
  const app = createApp(App).use(pinia)
  const appStore = useAppStore(pinia)
  const notices = useNoticesStore(pinia)
  const client = new HostClient(
    connectTransport(
      {
        problem: (message) => notices.report(message),
        connection: (state, detail) => appStore.setConnection(state, detail)
      },
      early
    )
  )
  // Under `serve`, a change that would run a program waits for the code serve printed on its console: the window asks for it.
  client.onConfirmationCode(useConfirmCodeStore(pinia).ask)
  installHost(client)
  app.config.errorHandler = (error, _instance, info) => {
    console.error(`Switchboard view error (${info})`, error)
    notices.report(`Something went wrong in the window (${info}): ${error instanceof Error ? error.message : String(error)}`)
  }
  const started = appStore.start()
  if (answered) void started.finally(() => app.mount('#app'))
  else app.mount('#app')
}
