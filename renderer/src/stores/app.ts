import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { AppInfo } from '../../../shared/domain'
import { host, messageOf } from '../host/client'
import { askFirstLoad } from '../ask-first-load'
import { aboutLostConnection, type ConnectionState } from '../host/transport'
import { useAgentsStore } from './agents'
import { useElicitationsStore } from './elicitations'
import { useInboxStore } from './inbox'
import { useMcpStore } from './mcp'
import { useNoticesStore } from './notices'
import { usePermissionsStore } from './permissions'
import { useProjectsStore } from './projects'
import { useSessionsStore } from './sessions'
import { useSettingsStore } from './settings'
import { useSpendStore } from './spend'

/**
 * The app as a whole: what the Host says about itself, the link to it, and
 * the first load of everything the sidebar shows (again after a reconnect).
 * Host events go to the stores through the event router (event-router.ts,
 * `listenToHost`), which the window wires above the stores.
 */
export const useAppStore = defineStore('app', () => {
  const info = ref<AppInfo | null>(null)
  /**
   * True once the first load has answered (or the Host refused part of it): empty states may show.
   * Not while the Host cannot be reached or refuses the page's token: "no projects yet" would be untrue.
   */
  const ready = ref(false)
  const connection = ref<ConnectionState>('connecting')
  const connectionDetail = ref('')
  let wasDisconnected = false

  /**
   * Everything the sidebar needs (first-load.ts, asked for by the page's first script if it did); again after a
   * reconnect, since events were missed meanwhile.
   * Each answer replaces what its store held (a session the Host no longer lists as busy is not shown busy).
   */
  async function load(): Promise<void> {
    let answered = false
    try {
      const asked = askFirstLoad(host())
      // A reload mid-turn still shows which sessions are running; after a restart, none is.
      const states = useSessionsStore().readStates(asked.then((answers) => answers[3]))
      states.catch(() => undefined)
      const [appInfo, projects, summary, , agents, agentStates, rules, elicitations, checks, mcp, inbox, settings] = await asked
      await useSettingsStore().load(settings)
      const firstTime = info.value === null
      info.value = appInfo
      useProjectsStore().setAll(projects, summary)
      useAgentsStore().setAll(agents, agentStates)
      useAgentsStore().setChecks(checks)
      await states
      usePermissionsStore().rules = rules
      useElicitationsStore().pending = elicitations
      useInboxStore().receive(inbox)
      // The sidebar counts the MCP servers from the start, not once the MCP page has been opened.
      useMcpStore().receive(mcp)
      if (firstTime) for (const warning of appInfo.warnings) useNoticesStore().report(warning)
      answered = true
    } catch (error) {
      // While the link is down the connection notice says so; a banner per request would only repeat it.
      if (connection.value === 'connected') useNoticesStore().report(messageOf(error))
    } finally {
      if (answered || connection.value === 'connected') ready.value = true
    }
  }

  function setConnection(state: ConnectionState, detail = ''): void {
    connection.value = state
    connectionDetail.value = detail
    if (state === 'reconnecting' || state === 'refused') wasDisconnected = true
    if (state === 'connected' && wasDisconnected) {
      wasDisconnected = false
      void resync()
    }
  }

  /**
   * The link is back (the Host restarted, or the same Host on a new socket or port): no event sequence
   * survives that, so everything the window shows is read again, as its first load did, plus what its panes
   * show (each kept thread and its session's state, pending asks and queue with it). The messages of requests
   * that failed because the link was down go: the banner showed that, and what is read now shows what
   * became of them.
   */
  async function resync(): Promise<void> {
    useNoticesStore().withdraw(aboutLostConnection)
    const sessions = useSessionsStore()
    await Promise.all([load(), sessions.reloadOpen()])
    useSpendStore().receiveChanged()
  }

  return { info, ready, connection, connectionDetail, load, resync, setConnection }
})
