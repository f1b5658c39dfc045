import { defineStore } from 'pinia'
import { markRaw } from 'vue'
import type { Attachment, HostEvent } from '../../../shared/contract'
import type {
  AgentDefinition,
  AgentRuntimeState,
  AppInfo,
  PermissionRule,
  Project,
  SessionRecord,
  SessionState
} from '../../../shared/domain'
import { applyRecord, createThread, type Thread } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import { hostClient, onTransportProblem } from '../host/client'

/**
 * What the user sees: projects, agents, sessions, and the threads of the
 * sessions opened. Threads are folded with the same `applyRecord` the Host
 * uses; live records are applied only from the snapshot's `nextSeq` on, so a
 * session opened while it streams shows each record exactly once.
 */

export interface OpenThread {
  thread: Thread
  nextSeq: number
  skippedLines: number
}

interface State {
  info: AppInfo | null
  projects: Project[]
  agents: AgentDefinition[]
  agentStates: Record<string, AgentRuntimeState>
  sessions: SessionRecord[]
  sessionStates: Record<string, SessionState>
  permissionRules: PermissionRule[]
  threads: Record<string, OpenThread>
  openId: string | null
  errors: string[]
  ready: boolean
}

/** Live records that arrive while a session's snapshot is on its way. */
const buffered = new Map<string, { seq: number; records: TranscriptRecord[] }[]>()

export const useWorkspace = defineStore('workspace', {
  state: (): State => ({
    info: null,
    projects: [],
    agents: [],
    agentStates: {},
    sessions: [],
    sessionStates: {},
    permissionRules: [],
    threads: {},
    openId: null,
    errors: [],
    ready: false
  }),

  getters: {
    openSession(state): SessionRecord | null {
      return state.sessions.find((s) => s.id === state.openId) ?? null
    },
    agentName(state) {
      return (agentId: string) => state.agents.find((a) => a.id === agentId)?.name ?? agentId
    },
    stateOf(state) {
      return (id: string): SessionState => state.sessionStates[id] ?? { id, status: 'idle' }
    },
    /**
     * Why an agent cannot do an optional session method, once its capabilities are known
     * (undefined while it can, or before it has started: the Host then answers).
     */
    unsupported(state) {
      return (agentId: string, method: 'list' | 'fork' | 'close' | 'delete'): string | undefined => {
        const capabilities = state.agentStates[agentId]?.capabilities
        if (!capabilities || capabilities.session[method]) return undefined
        const name = state.agents.find((a) => a.id === agentId)?.name ?? agentId
        return `${name} does not support session/${method}`
      }
    }
  },

  actions: {
    async init(): Promise<void> {
      const host = hostClient()
      onTransportProblem((message) => this.report(message))
      host.onBatch((events) => this.apply(events))
      try {
        const [info, projects, agents, agentStates, sessions, permissionRules] = await Promise.all([
          host.request('app.info', {}),
          host.request('projects.list', {}),
          host.request('agents.list', {}),
          host.request('agents.states', {}),
          host.request('sessions.list', {}),
          host.request('permissions.list', {})
        ])
        this.permissionRules = permissionRules
        this.info = info
        this.projects = projects
        this.agents = agents
        this.agentStates = Object.fromEntries(agentStates.map((s) => [s.agentId, s]))
        this.sessions = sessions
        for (const warning of info.warnings) this.report(warning)
      } catch (error) {
        this.report((error as Error).message)
      } finally {
        this.ready = true
      }
    },

    apply(events: HostEvent[]): void {
      for (const event of events) {
        switch (event.type) {
          case 'session.records':
            this.applyRecords(event.payload.id, event.payload.seq, event.payload.records)
            break
          case 'session.state':
            this.sessionStates[event.payload.id] = event.payload
            break
          case 'session.record':
            this.upsertSession(event.payload)
            break
          case 'session.removed':
            this.removeSession(event.payload.id)
            break
          case 'agent.state':
            this.agentStates[event.payload.agentId] = event.payload
            break
          case 'projects.changed':
            this.projects = event.payload
            break
          case 'permissions.changed':
            this.permissionRules = event.payload
            break
        }
      }
    },

    applyRecords(id: string, seq: number, records: TranscriptRecord[]): void {
      const pending = buffered.get(id)
      if (pending) {
        pending.push({ seq, records })
        return
      }
      const open = this.threads[id]
      if (!open) return
      for (let i = 0; i < records.length; i++) {
        if (seq + i < open.nextSeq) continue
        applyRecord(open.thread, records[i])
        open.nextSeq = seq + i + 1
      }
    },

    upsertSession(record: SessionRecord): void {
      const index = this.sessions.findIndex((s) => s.id === record.id)
      if (index >= 0) this.sessions[index] = record
      else this.sessions.unshift(record)
    },

    removeSession(id: string): void {
      this.sessions = this.sessions.filter((s) => s.id !== id)
      delete this.threads[id]
      delete this.sessionStates[id]
      if (this.openId === id) this.openId = null
    },

    /** Sessions the agent has for this project's folder, made in other clients. Returns how many came in. */
    async importSessions(projectId: string, agentId: string): Promise<number> {
      const { imported } = await hostClient().request('sessions.import', { projectId, agentId })
      for (const record of imported) this.upsertSession(record)
      return imported.length
    },

    async forkSession(id: string): Promise<void> {
      await this.attempt(async () => {
        const record = await hostClient().request('sessions.fork', { id })
        this.upsertSession(record)
        await this.openSessionById(record.id)
      })
    },

    async closeSession(id: string): Promise<void> {
      await this.attempt(() => hostClient().request('sessions.close', { id }))
    },

    async deleteSession(id: string, keepTranscript: boolean): Promise<void> {
      await this.attempt(async () => {
        const result = await hostClient().request('sessions.delete', { id, keepTranscript })
        this.removeSession(id)
        if (result.note) this.report(result.note)
      })
    },

    async openSessionById(id: string): Promise<void> {
      this.openId = id
      if (this.threads[id]) return
      buffered.set(id, [])
      try {
        const snapshot = await hostClient().request('sessions.open', { id })
        const thread = createThread()
        thread.keyed = markRaw(thread.keyed)
        for (const record of snapshot.records) applyRecord(thread, record)
        this.threads[id] = { thread, nextSeq: snapshot.nextSeq, skippedLines: snapshot.skippedLines }
        this.sessionStates[id] = snapshot.state
        this.upsertSession(snapshot.record)
        if (snapshot.skippedLines > 0) {
          this.report(`${snapshot.skippedLines} damaged line(s) of this conversation's transcript could not be read and were skipped.`)
        }
      } catch (error) {
        this.report((error as Error).message)
      } finally {
        const pending = buffered.get(id) ?? []
        buffered.delete(id)
        for (const batch of pending) this.applyRecords(id, batch.seq, batch.records)
      }
    },

    async addProject(cwd: string): Promise<Project> {
      const project = await hostClient().request('projects.add', { cwd })
      if (!this.projects.some((p) => p.id === project.id)) this.projects.push(project)
      return project
    },

    /** Replaces a project's additional folders; throws the host's message (the form shows it). */
    async setAdditionalDirectories(projectId: string, directories: string[]): Promise<void> {
      const project = await hostClient().request('projects.setAdditionalDirectories', { projectId, directories })
      const index = this.projects.findIndex((p) => p.id === project.id)
      if (index >= 0) this.projects[index] = project
    },

    async pickProjectFolder(): Promise<void> {
      try {
        const { path } = await hostClient().request('projects.pickFolder', {})
        if (path) await this.addProject(path)
      } catch (error) {
        this.report((error as Error).message)
      }
    },

    async newSession(projectId: string, agentId: string): Promise<void> {
      const record = await hostClient().request('sessions.new', { projectId, agentId })
      this.upsertSession(record)
      await this.openSessionById(record.id)
    },

    async continueSession(id: string): Promise<void> {
      try {
        this.sessionStates[id] = await hostClient().request('sessions.continue', { id })
      } catch (error) {
        this.report((error as Error).message)
      }
    },

    async send(id: string, text: string, attachments: Attachment[] = []): Promise<void> {
      try {
        await hostClient().request('sessions.prompt', { id, text, attachments })
      } catch (error) {
        // The thread shows the failure too; the banner makes sure it is seen.
        this.report((error as Error).message)
      }
    },

    async cancel(id: string): Promise<void> {
      try {
        await hostClient().request('sessions.cancel', { id })
      } catch (error) {
        this.report((error as Error).message)
      }
    },

    async respondPermission(id: string, requestId: string, optionId: string | null): Promise<void> {
      try {
        await hostClient().request('sessions.respondPermission', { id, requestId, optionId })
      } catch (error) {
        this.report((error as Error).message)
      }
    },

    /** Signs in to an agent; throws the host's message for the form to show. */
    async authenticate(agentId: string, methodId: string, values: Record<string, string> = {}): Promise<void> {
      await hostClient().request('agents.authenticate', { agentId, methodId, values })
    },

    async revokePermission(ruleId: string): Promise<void> {
      await this.attempt(() => hostClient().request('permissions.revoke', { ruleId }))
    },

    async setMode(id: string, modeId: string): Promise<void> {
      await this.attempt(() => hostClient().request('sessions.setMode', { id, modeId }))
    },

    async setConfigOption(id: string, configId: string, value: string | boolean): Promise<void> {
      await this.attempt(() => hostClient().request('sessions.setConfigOption', { id, configId, value }))
    },

    async setModel(id: string, modelId: string): Promise<void> {
      await this.attempt(() => hostClient().request('sessions.setModel', { id, modelId }))
    },

    /** Runs a request whose failure the user must see, without throwing into the view. */
    async attempt(run: () => Promise<unknown>): Promise<void> {
      try {
        await run()
      } catch (error) {
        this.report((error as Error).message)
      }
    },

    report(message: string): void {
      if (!this.errors.includes(message)) this.errors.push(message)
    },

    dismissError(index: number): void {
      this.errors.splice(index, 1)
    }
  }
})
