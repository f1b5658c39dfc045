import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { HostEvent } from '../../../shared/contract'
import type { AppInfo } from '../../../shared/domain'
import { host, messageOf } from '../host/client'
import { runAppCommand } from '../commands'
import type { ConnectionState } from '../host/transport'
import { useAgentsStore } from './agents'
import { useElicitationsStore } from './elicitations'
import { usePermissionsStore } from './permissions'
import { useProjectsStore } from './projects'
import { useSessionsStore } from './sessions'

/**
 * The app as a whole: what the Host says about itself, the link to it, the
 * error banner, and the one place Host events are routed to the other stores.
 * A batch is applied in one synchronous pass, so it costs one render.
 */
export const useAppStore = defineStore('app', () => {
  const info = ref<AppInfo | null>(null)
  /** True once the first load has answered (or failed): empty states may show. */
  const ready = ref(false)
  const errors = ref<string[]>([])
  const connection = ref<ConnectionState>('connecting')
  const connectionDetail = ref('')
  let wasDisconnected = false

  async function start(): Promise<void> {
    host().onBatch((events) => dispatch(events))
    await load()
  }

  /** Everything the sidebar needs; again after a reconnect, since events were missed meanwhile. */
  async function load(): Promise<void> {
    const client = host()
    try {
      const [appInfo, projects, sessions, sessionStates, agents, agentStates, rules, elicitations] = await Promise.all([
        client.request('app.info', {}),
        client.request('projects.list', {}),
        client.request('sessions.list', {}),
        client.request('sessions.states', {}),
        client.request('agents.list', {}),
        client.request('agents.states', {}),
        client.request('permissions.list', {}),
        client.request('elicitations.list', {})
      ])
      const firstTime = info.value === null
      info.value = appInfo
      useProjectsStore().setAll(projects, sessions)
      useAgentsStore().setAll(agents, agentStates)
      // A reload mid-turn still shows which sessions are running.
      for (const state of sessionStates) useSessionsStore().receiveState(state)
      usePermissionsStore().rules = rules
      useElicitationsStore().pending = elicitations
      if (firstTime) for (const warning of appInfo.warnings) report(warning)
    } catch (error) {
      // While the link is down the connection notice says so; a banner per request would only repeat it.
      if (connection.value === 'connected') report(messageOf(error))
    } finally {
      ready.value = true
    }
  }

  function dispatch(events: HostEvent[]): void {
    const projects = useProjectsStore()
    const agents = useAgentsStore()
    const sessions = useSessionsStore()
    for (const event of events) {
      try {
        switch (event.type) {
          case 'session.records':
            sessions.receiveRecords(event.payload.id, event.payload.seq, event.payload.records)
            break
          case 'session.state':
            sessions.receiveState(event.payload)
            break
          case 'session.record':
            projects.upsertSession(event.payload)
            break
          case 'session.removed':
            projects.removeSession(event.payload.id)
            sessions.forget(event.payload.id)
            break
          case 'agent.state':
            agents.receiveState(event.payload)
            break
          case 'projects.changed':
            projects.projects = event.payload
            break
          case 'permissions.changed':
            usePermissionsStore().rules = event.payload
            break
          case 'elicitations.changed':
            useElicitationsStore().pending = event.payload
            break
          case 'agents.changed':
            agents.receiveDefinitions(event.payload)
            break
          case 'app.command':
            runAppCommand(event.payload.command)
            break
        }
      } catch (error) {
        console.error('Could not apply an event from the host', event, error)
        report(`Could not apply an update from the host (${event.type}): ${messageOf(error)}`)
      }
    }
  }

  function setConnection(state: ConnectionState, detail = ''): void {
    connection.value = state
    connectionDetail.value = detail
    if (state === 'reconnecting') wasDisconnected = true
    if (state === 'connected' && wasDisconnected) {
      wasDisconnected = false
      void load()
      useSessionsStore().reloadThreads()
    }
  }

  function report(message: string): void {
    if (!errors.value.includes(message)) errors.value.push(message)
  }

  function dismiss(index: number): void {
    errors.value.splice(index, 1)
  }

  function dismissAll(): void {
    errors.value = []
  }

  /** Runs a request whose failure the user must see, without throwing into the view. */
  async function attempt<T>(run: () => Promise<T>): Promise<T | undefined> {
    try {
      return await run()
    } catch (error) {
      report(messageOf(error))
      return undefined
    }
  }

  return { info, ready, errors, connection, connectionDetail, start, load, dispatch, setConnection, report, dismiss, dismissAll, attempt }
})
