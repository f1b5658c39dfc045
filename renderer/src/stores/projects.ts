import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { Project, SessionRecord } from '../../../shared/domain'
import { host } from '../host/client'

export interface AgentGroup {
  agentId: string
  sessions: SessionRecord[]
}

/** Projects and the list of their sessions (records only; live state and threads are in the sessions store). */
export const useProjectsStore = defineStore('projects', () => {
  const projects = ref<Project[]>([])
  const sessions = ref<SessionRecord[]>([])

  function setAll(projectList: Project[], sessionList: SessionRecord[]): void {
    projects.value = projectList
    sessions.value = sessionList
  }

  function projectById(id: string): Project | undefined {
    return projects.value.find((p) => p.id === id)
  }

  function sessionById(id: string): SessionRecord | undefined {
    return sessions.value.find((s) => s.id === id)
  }

  /** A project's sessions grouped by agent, newest first; the group with the newest session comes first. */
  function groupsOf(projectId: string): AgentGroup[] {
    const byAgent = new Map<string, SessionRecord[]>()
    const list = sessions.value.filter((s) => s.projectId === projectId).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
    for (const session of list) {
      const group = byAgent.get(session.agentId)
      if (group) group.push(session)
      else byAgent.set(session.agentId, [session])
    }
    return [...byAgent].map(([agentId, group]) => ({ agentId, sessions: group }))
  }

  /**
   * Adds a folder as a project (on the host of `agentId`, an agent over SSH, checked there);
   * throws the Host's message (e.g. the path must be absolute) for the form.
   */
  async function add(cwd: string, agentId?: string): Promise<Project> {
    const project = await host().request('projects.add', { cwd: cwd.trim(), ...(agentId ? { agentId } : {}) })
    upsertProject(project)
    return project
  }

  /** The native folder picker (Electron); null when the user cancelled. Throws the Host's message. */
  async function pickAndAdd(): Promise<Project | null> {
    const { path } = await host().request('projects.pickFolder', {})
    return path ? add(path) : null
  }

  /** Replaces a project's additional folders; throws the Host's message for the form. */
  async function setAdditionalDirectories(projectId: string, directories: string[]): Promise<void> {
    upsertProject(await host().request('projects.setAdditionalDirectories', { projectId, directories }))
  }

  /** Renames a project; throws the Host's message for the field. */
  async function rename(projectId: string, name: string): Promise<void> {
    upsertProject(await host().request('projects.rename', { projectId, name }))
  }

  /** Takes a project and its sessions out of Switchboard (transcripts kept); returns how many sessions went. */
  async function remove(projectId: string): Promise<number> {
    const { removedSessions } = await host().request('projects.remove', { projectId })
    projects.value = projects.value.filter((p) => p.id !== projectId)
    sessions.value = sessions.value.filter((s) => s.projectId !== projectId)
    return removedSessions
  }

  /** Moves a project to another place in the sidebar (at once; the Host's answer confirms or puts it back). */
  async function move(projectId: string, toIndex: number): Promise<void> {
    const from = projects.value.findIndex((p) => p.id === projectId)
    const to = Math.max(0, Math.min(projects.value.length - 1, toIndex))
    if (from < 0 || from === to) return
    const before = projects.value
    const next = [...before]
    const [moved] = next.splice(from, 1)
    next.splice(to, 0, moved)
    projects.value = next
    try {
      projects.value = await host().request('projects.reorder', { projectIds: next.map((p) => p.id) })
    } catch (error) {
      projects.value = before
      throw error
    }
  }

  /** Sessions the agent has for this project's folder, made in other clients. Returns how many came in. */
  async function importSessions(projectId: string, agentId: string): Promise<number> {
    const { imported } = await host().request('sessions.import', { projectId, agentId })
    for (const record of imported) upsertSession(record)
    return imported.length
  }

  function upsertProject(project: Project): void {
    const index = projects.value.findIndex((p) => p.id === project.id)
    if (index >= 0) projects.value[index] = project
    else projects.value.push(project)
  }

  /** A newer record replaces an older one: a snapshot's copy never rolls back what an event brought. */
  function upsertSession(record: SessionRecord): void {
    const index = sessions.value.findIndex((s) => s.id === record.id)
    if (index < 0) sessions.value.push(record)
    else if (record.updatedAt >= sessions.value[index].updatedAt) sessions.value[index] = record
  }

  function removeSession(id: string): void {
    sessions.value = sessions.value.filter((s) => s.id !== id)
  }

  return {
    projects,
    sessions,
    setAll,
    projectById,
    sessionById,
    groupsOf,
    add,
    pickAndAdd,
    setAdditionalDirectories,
    rename,
    remove,
    move,
    importSessions,
    upsertProject,
    upsertSession,
    removeSession
  }
})
