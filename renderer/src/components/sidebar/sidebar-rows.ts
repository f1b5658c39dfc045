import type { Project, SessionRecord } from '../../../../shared/domain'
import { FIRST_PAGE, newerFirst } from '../../../../shared/session-listing'
import type { AgentGroup } from '../../stores/projects'

/**
 * The sidebar as one list of rows, which it virtualises: each project (its
 * head and controls), then per agent a heading, the sessions loaded (or, for
 * a group whose first page is not loaded yet, a pending row for each of its
 * sessions) and a "Show N more" row when the group has more. Each row knows its project's
 * place (for dragging projects) and whether it is the project's last.
 */
export type SidebarRow =
  | (RowBase & { kind: 'project'; project: Project })
  | (RowBase & { kind: 'agent'; agentId: string })
  | (RowBase & { kind: 'session'; session: SessionRecord })
  | (RowBase & { kind: 'more'; agentId: string; hidden: number; count: number })
  /** A session of a group whose first page the window has not loaded yet: it is asked for once the row is in view. */
  | (RowBase & { kind: 'pending'; agentId: string })

interface RowBase {
  key: string
  projectId: string
  projectIndex: number
  /** The last row of its project (the project's block ends under it). */
  last: boolean
}

export interface SidebarRowsInput {
  projects: Project[]
  groupsOf: (projectId: string) => AgentGroup[]
  collapsed: (projectId: string) => boolean
  /** Only this agent's sessions ('' for all). */
  agentFilter: string
  /** Sessions listed whatever page they are in: open in a pane, or busy. */
  pinned: SessionRecord[]
  /**
   * Row key → place, from the rows as they were when the user's pointer or focus came onto the list: while it is
   * there the groups and sessions keep that order (a session's new turn would move it up under the pointer), and
   * a row that was not there yet goes after the row it follows now. Projects keep the user's own order anyway.
   */
  held?: ReadonlyMap<string, number>
}

export function sidebarRows(input: SidebarRowsInput): SidebarRow[] {
  const rows: SidebarRow[] = []
  // Each row's common fields are written out, not spread from one object: V8 builds `{ ...base, kind, … }` some
  // fifty times slower here (3 ms for the 550 rows of 50 projects, against 0.06), and the list is worked out
  // again whenever a project, group or pinned session changes, and twice in the Host's drawing of the first screen.
  input.projects.forEach((project, projectIndex) => {
    const projectId = project.id
    rows.push({ projectId, projectIndex, last: false, kind: 'project', key: `project:${projectId}`, project })
    if (!input.collapsed(projectId)) {
      const groups = input.groupsOf(projectId)
      for (const group of input.held ? holdOrder(groups, (g) => `agent:${projectId}:${g.agentId}`, input.held) : groups) {
        if (input.agentFilter && group.agentId !== input.agentFilter) continue
        const agentId = group.agentId
        const loaded = new Set(group.sessions.map((s) => s.id))
        const pinned = input.pinned.filter((s) => s.projectId === projectId && s.agentId === agentId && !loaded.has(s.id))
        const fresh = pinned.length ? [...group.sessions, ...pinned].sort(newerFirst) : group.sessions
        const sessions = input.held ? holdOrder(fresh, (s) => `session:${s.id}`, input.held) : fresh
        const groupKey = `${projectId}:${agentId}`
        rows.push({ projectId, projectIndex, last: false, kind: 'agent', key: `agent:${groupKey}`, agentId })
        for (const session of sessions) rows.push({ projectId, projectIndex, last: false, kind: 'session', key: `session:${session.id}`, session })
        // Not loaded yet (the first load stopped before this group): a row per session its first page will bring.
        const pending = group.sessions.length === 0 ? Math.max(0, Math.min(group.count - sessions.length, FIRST_PAGE)) : 0
        for (let i = 0; i < pending; i++)
          rows.push({ projectId, projectIndex, last: false, kind: 'pending', key: `pending:${groupKey}:${i}`, agentId })
        const hidden = group.count - sessions.length - pending
        if (hidden > 0)
          rows.push({ projectId, projectIndex, last: false, kind: 'more', key: `more:${groupKey}`, agentId, hidden, count: group.count })
      }
    }
    rows[rows.length - 1].last = true
  })
  return rows
}

/**
 * `items` in the order `held` gives their keys; an item it does not know keeps its place after the item it
 * follows in `items` (or first, when it is first there). Stable, and `items` itself is left as it was.
 */
export function holdOrder<T>(items: readonly T[], keyOf: (item: T) => string, held: ReadonlyMap<string, number>): T[] {
  let before = -1
  const placed = items.map((item, index) => {
    const rank = held.get(keyOf(item))
    // A new item goes just after the one it follows: a fraction past its rank, in the order the new ones came.
    if (rank !== undefined) before = rank
    return { item, rank: rank ?? before + (index + 1) / (items.length + 1), index }
  })
  placed.sort((a, b) => a.rank - b.rank || a.index - b.index)
  return placed.map((p) => p.item)
}
