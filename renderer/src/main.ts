import './zod-config'
import { createApp } from 'vue'
import { createPinia } from 'pinia'
import App from './App.vue'
import { HostClient, installHost } from './host/client'
import { connectTransport } from './host/transport'
import { useAppStore } from './stores/app'
import { useConfirmCodeStore } from './stores/confirm-code'
import { useNoticesStore } from './stores/notices'
import './styles.css'

const pinia = createPinia()
const app = createApp(App).use(pinia)
const appStore = useAppStore(pinia)
const notices = useNoticesStore(pinia)

const client = new HostClient(
  connectTransport({
    problem: (message) => notices.report(message),
    connection: (state, detail) => appStore.setConnection(state, detail)
  })
)
// Under `serve`, a change that would run a program waits for the code serve printed on its console: the window asks for it.
client.onConfirmationCode(useConfirmCodeStore(pinia).ask)
installHost(client)
app.config.errorHandler = (error, _instance, info) => {
  console.error(`Switchboard view error (${info})`, error)
  notices.report(`Something went wrong in the window (${info}): ${error instanceof Error ? error.message : String(error)}`)
}
app.mount('#app')
void appStore.start()
