import { defineStore } from 'pinia'
import { computed, ref, toRaw } from 'vue'
import type { Project, SessionRecord } from '../../../shared/domain'
import { groupKey, newerFirst, newestGroupFirst, NEXT_PAGE, type SessionGroupCount, type SessionGroupPage } from '../../../shared/session-listing'
import { host } from '../host/client'

/** A project's sessions with one agent, as the sidebar lists them. */
export interface AgentGroup {
  agentId: string
  /** How many the group has in all (the Host's count). */
  count: number
  /** The newest of them this window has loaded, newest first. */
  sessions: SessionRecord[]
}

/** What the window holds of a group: its count and the ids of its newest sessions loaded so far, newest first. */
interface LoadedGroup {
  projectId: string
  agentId: string
  count: number
  ids: string[]
}

/**
 * Projects and their sessions' records (live state and threads are in the
 * sessions store). The window never holds every session: per project and
 * agent it has the newest page and the group's count (`sessions.summary`),
 * more pages on demand (`loadMore`), and any other record it needs by id
 * (`fetchSessions`: a pane's session, a busy one, a worktree's). Events keep
 * the pages and counts right: a record changed moves in its group (or into
 * the loaded page when it now sorts within it), a removed one goes, and
 * `sessions.count` gives a group's count after an addition or removal.
 */
export const useProjectsStore = defineStore('projects', () => {
  const projects = ref<Project[]>([])
  /** Every session record this window knows, by id: the loaded pages and those fetched one by one. */
  const known = ref<Record<string, SessionRecord>>({})
  const groups = ref<Record<string, LoadedGroup>>({})
  /** A page of each group on its way (one at a time). */
  const loadingMore = ref<Record<string, boolean>>({})

  /** The first load (again after a reconnect): projects, and each group's count and newest page. */
  function setAll(projectList: Project[], summary: SessionGroupPage[]): void {
    projects.value = projectList
    const before = groups.value
    const next: Record<string, LoadedGroup> = {}
    const records = { ...known.value }
    for (const page of summary) {
      const key = groupKey(page.projectId, page.agentId)
      next[key] = { projectId: page.projectId, agentId: page.agentId, count: page.count, ids: page.sessions.map((s) => s.id) }
      for (const record of page.sessions) records[record.id] = newer(records[record.id], record)
    }
    known.value = records
    groups.value = next
    // After a reconnect, a group the user had opened further shows as much again.
    for (const [key, group] of Object.entries(next)) {
      const shown = before[key]?.ids.length ?? 0
      if (shown > group.ids.length && group.count > group.ids.length)
        void loadMore(group.projectId, group.agentId, Math.min(500, shown - group.ids.length))
    }
  }

  function projectById(id: string): Project | undefined {
    return projects.value.find((p) => p.id === id)
  }

  function sessionById(id: string): SessionRecord | undefined {
    return known.value[id]
  }

  /** Every project's groups, worked out in one pass over the groups (the sidebar asks for each project's in turn). */
  const groupsByProject = computed(() => {
    const byProject = new Map<string, AgentGroup[]>()
    for (const g of Object.values(groups.value)) {
      if (g.count === 0 && g.ids.length === 0) continue
      const group = { agentId: g.agentId, count: Math.max(g.count, g.ids.length), sessions: g.ids.map((id) => known.value[id]).filter(Boolean) }
      const list = byProject.get(g.projectId)
      if (list) list.push(group)
      else byProject.set(g.projectId, [group])
    }
    for (const list of byProject.values()) list.sort((a, b) => newestGroupFirst(a.sessions[0], b.sessions[0]))
    return byProject
  })

  /** A project's groups of one agent's sessions, the group with the newest session first. */
  function groupsOf(projectId: string): AgentGroup[] {
    return groupsByProject.value.get(projectId) ?? []
  }

  /** How many sessions a project has (all agents), or an agent has (all projects). */
  function countOf(where: { projectId?: string; agentId?: string }): number {
    let count = 0
    for (const g of Object.values(groups.value)) {
      if ((!where.projectId || g.projectId === where.projectId) && (!where.agentId || g.agentId === where.agentId)) count += g.count
    }
    return count
  }

  /** The agents that have sessions in any project. */
  const agentIdsWithSessions = computed(() => new Set(Object.values(groups.value).flatMap((g) => (g.count > 0 ? [g.agentId] : []))))

  /** The next page of a group (`limit`: how many); returns when it is in. */
  async function loadMore(projectId: string, agentId: string, limit: number = NEXT_PAGE): Promise<void> {
    const key = groupKey(projectId, agentId)
    if (loadingMore.value[key]) return
    loadingMore.value[key] = true
    try {
      const group = groups.value[key]
      const last = group?.ids.length ? known.value[group.ids[group.ids.length - 1]] : undefined
      const before = last ? { updatedAt: last.updatedAt, id: last.id } : undefined
      const page = await host().request('sessions.page', { projectId, agentId, before, limit })
      const target = groupOf(projectId, agentId)
      target.count = page.count
      // The page continues the loaded ones: each record joins them (a newer copy from an event is kept).
      place(page.sessions, true)
    } finally {
      delete loadingMore.value[key]
    }
  }

  /** Ids asked for in this tick (one `sessions.get` for all of them), and that request. */
  const wanted = new Set<string>()
  let nextBatch: Promise<void> | null = null
  /** Ids whose request is under way: a caller meanwhile waits for it instead of asking again. */
  const asking = new Map<string, Promise<void>>()

  /** Records by id that this window does not have yet (asked together within a tick); resolves with those that exist. */
  async function fetchSessions(ids: Iterable<string>): Promise<SessionRecord[]> {
    const list = [...ids]
    const answers = new Set<Promise<void>>()
    for (const id of list) {
      if (known.value[id]) continue
      let answer = asking.get(id)
      if (!answer) {
        wanted.add(id)
        answer = nextBatch ??= Promise.resolve().then(async () => {
          nextBatch = null
          const asked = [...wanted]
          wanted.clear()
          try {
            for (let i = 0; i < asked.length; i += 1000) {
              place(await host().request('sessions.get', { ids: asked.slice(i, i + 1000) }), false)
            }
          } finally {
            for (const one of asked) asking.delete(one)
          }
        })
        asking.set(id, answer)
      }
      answers.add(answer)
    }
    await Promise.all(answers)
    return list.flatMap((id) => known.value[id] ?? [])
  }

  /** One record by id, asked of the Host when this window does not have it; undefined when there is no such session. */
  async function ensureSession(id: string): Promise<SessionRecord | undefined> {
    return known.value[id] ?? (await fetchSessions([id]))[0]
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

  /** Whether the Changes view's commit and merge run the repository's git hooks (turning it on is confirmed outside the page). */
  async function setGitHooks(projectId: string, enabled: boolean): Promise<void> {
    upsertProject(await host().request('projects.setGitHooks', { projectId, enabled }))
  }

  /** The project's system prompt (sent in its new sessions' session/new, before a preset's own); throws the Host's message for the form. */
  async function setSystemPrompt(projectId: string, systemPrompt: string): Promise<void> {
    upsertProject(await host().request('projects.setSystemPrompt', { projectId, systemPrompt }))
  }

  /** Renames a project; throws the Host's message for the field. */
  async function rename(projectId: string, name: string): Promise<void> {
    upsertProject(await host().request('projects.rename', { projectId, name }))
  }

  /** Takes a project and its sessions out of Switchboard (transcripts kept); returns how many sessions went. */
  async function remove(projectId: string): Promise<number> {
    const { removedSessions } = await host().request('projects.remove', { projectId })
    projects.value = projects.value.filter((p) => p.id !== projectId)
    for (const [key, group] of Object.entries(groups.value)) if (group.projectId === projectId) delete groups.value[key]
    for (const record of Object.values(known.value)) if (record.projectId === projectId) delete known.value[record.id]
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
    place(imported, false)
    return imported.length
  }

  function upsertProject(project: Project): void {
    const index = projects.value.findIndex((p) => p.id === project.id)
    if (index >= 0) projects.value[index] = project
    else projects.value.push(project)
  }

  /**
   * A record from an event, an answer or a snapshot. A newer record replaces
   * an older one (a snapshot's copy never rolls back what an event brought).
   * In its group it stays among the loaded ones if it was (moved to its new
   * place), and joins them when it sorts within them or the group is loaded
   * whole; else it is one of the group's "more".
   */
  function upsertSession(record: SessionRecord): void {
    place([record], false)
  }

  /** Puts records in the window (newer copies win) and in their groups' loaded ids; the ids are worked on raw and set once. */
  function place(records: SessionRecord[], continuesPage: boolean): void {
    const touched = new Map<LoadedGroup, string[]>()
    const raw = toRaw(known.value)
    for (const record of records) {
      const current = newer(raw[record.id], record)
      known.value[record.id] = current
      const group = groupOf(current.projectId, current.agentId)
      const ids = touched.get(group) ?? [...toRaw(group.ids)]
      touched.set(group, ids)
      const at = ids.indexOf(current.id)
      if (at >= 0) ids.splice(at, 1)
      const last = ids.length ? raw[ids[ids.length - 1]] : undefined
      const joins = at >= 0 || continuesPage || ids.length >= group.count || (last !== undefined && newerFirst(current, last) < 0)
      if (joins) ids.splice(insertionPoint(ids, current, raw), 0, current.id)
    }
    for (const [group, ids] of touched) group.ids = ids
  }

  /** A group's count after an addition or removal (the `sessions.count` event). */
  function receiveCount(count: SessionGroupCount): void {
    const key = groupKey(count.projectId, count.agentId)
    if (count.count === 0) delete groups.value[key]
    else groupOf(count.projectId, count.agentId).count = count.count
  }

  /** A session that is gone: out of its group (its count goes down by one until the Host's count says). */
  function removeSession(id: string): void {
    const record = known.value[id]
    delete known.value[id]
    if (!record) return
    const key = groupKey(record.projectId, record.agentId)
    const group = groups.value[key]
    if (!group) return
    const at = group.ids.indexOf(id)
    if (at >= 0) group.ids.splice(at, 1)
    group.count = Math.max(0, group.count - 1)
    if (group.count === 0 && group.ids.length === 0) delete groups.value[key]
  }

  function groupOf(projectId: string, agentId: string): LoadedGroup {
    const key = groupKey(projectId, agentId)
    if (!groups.value[key]) groups.value[key] = { projectId, agentId, count: 0, ids: [] }
    // The reactive copy (the object assigned is not): changes to it show.
    return groups.value[key]
  }

  return {
    projects,
    setAll,
    projectById,
    sessionById,
    groupsOf,
    countOf,
    agentIdsWithSessions,
    loadMore,
    loadingMore,
    fetchSessions,
    ensureSession,
    add,
    pickAndAdd,
    setAdditionalDirectories,
    setGitHooks,
    setSystemPrompt,
    rename,
    remove,
    move,
    importSessions,
    upsertProject,
    upsertSession,
    receiveCount,
    removeSession
  }
})

/** Where a record goes among ids sorted newest first (a binary search). */
function insertionPoint(ids: string[], record: SessionRecord, known: Record<string, SessionRecord>): number {
  let low = 0
  let high = ids.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (newerFirst(known[ids[mid]], record) < 0) low = mid + 1
    else high = mid
  }
  return low
}

/** The newer of two copies of a record (by `updatedAt`; the later one on a tie). */
function newer(current: SessionRecord | undefined, incoming: SessionRecord): SessionRecord {
  return current && incoming.updatedAt < current.updatedAt ? current : incoming
}
