import './zod-config'
import { createApp } from 'vue'
import { createPinia } from 'pinia'
import { restCaret } from './caret-rest'
import { fetchPartsWhenIdle, whenIdleAfterFrame } from './lazy'
import { warmTimeFormats } from './time'
import App from './App.vue'
import { listenToHost } from './event-router'
import type { EarlyLink } from './host/early-link'
import { HostClient, installHost } from './host/client'
import { connectTransport } from './host/transport'
import { useAppStore } from './stores/app'
import { useConfirmCodeStore } from './stores/confirm-code'
import { useNoticesStore } from './stores/notices'

/**
 * The window: its transport takes over the link the page's first script opened (`early`; what came on it is
 * read again in a microtask), and the window mounts. When the first load has `answered`, it is in the stores
 * before the mount (the first frame shows the rows, over the Host's drawing), and the Host's events are kept
 * until the window listens; else the window mounts at once, listens, and the app store loads, as a window always did.
 * Either way the window's own listeners (desktop.ts, from App's setup) hear each batch before the stores' router.
 * The text caret rests after a few quiet seconds (caret-rest.ts). Once started, the parts most windows show soon
 * (a session's view, the diff) are fetched when the browser is first idle (lazy.ts), and the date formatters a
 * session's row shows on hover are made (time.ts).
 */
function started(): void {
  fetchPartsWhenIdle()
  whenIdleAfterFrame(warmTimeFormats)
}

export function openWindow(early: EarlyLink, answered: boolean): void {
  restCaret()
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
  if (answered) {
    // The first load is in the stores before the mount; the Host's events wait until the window listens (desktop.ts
    // sees each before the stores apply it, as it must), then go to the stores.
    client.holdEvents()
    void appStore.load().finally(() => {
      app.mount('#app')
      listenToHost()
      started()
    })
  } else {
    app.mount('#app')
    listenToHost()
    void appStore.load().finally(started)
  }
}
