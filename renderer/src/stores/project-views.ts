import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { ProjectGitInfo } from '../../../shared/workspace'
import { host } from '../host/client'
import { useProjectsStore } from './projects'

/**
 * What the sidebar shows of each project beyond its data: folded or not, what
 * is said under it, its git information, the choices of the next session's
 * place. The sidebar is virtualised, so a project scrolled out of view is
 * unmounted; coming back it shows as it was left (the thread keeps what the
 * reader opened the same way, view-state.ts).
 */
export interface ProjectView {
  collapsed: boolean
  /** What went wrong that is not the agent's (a worktree refused, the folder gone). */
  error: string
  /** A result to say (an import's); it goes by itself after a while (`noteTimer`). */
  note: string
  noteTimer: ReturnType<typeof setTimeout> | undefined
  git: ProjectGitInfo | null
  gitAsked: boolean
  isolation: 'folder' | 'worktree'
  branch: string
  /** The agent whose "not installed" line the user put away (it comes back for another agent). */
  installHintDismissed: string
  /** The panel opened from the project's menu under its row ('' for none): its worktrees, or its extra folders. */
  panel: '' | 'worktrees' | 'folders'
}

export const useProjectViewsStore = defineStore('project-views', () => {
  const projects = useProjectsStore()
  const views = ref<Record<string, ProjectView>>({})

  /** A project's view (made the first time it is asked for). */
  function of(projectId: string): ProjectView {
    if (!views.value[projectId]) {
      views.value[projectId] = {
        collapsed: false,
        error: '',
        note: '',
        noteTimer: undefined,
        git: null,
        gitAsked: false,
        isolation: 'folder',
        branch: '',
        installHintDismissed: '',
        panel: ''
      }
    }
    return views.value[projectId]
  }

  /** Whether a project's sessions are folded away (the sidebar's rows leave them out). */
  function isCollapsed(projectId: string): boolean {
    return views.value[projectId]?.collapsed ?? false
  }

  /**
   * Whether the project's folder is a git repository, and its worktrees (`git`): asked when the user first reaches the
   * project, and again after a change to them. Unknown (null) when the Host could not say.
   */
  async function readGit(projectId: string): Promise<void> {
    const view = of(projectId)
    view.gitAsked = true
    try {
      view.git = await host().request('worktrees.list', { projectId })
      // A worktree names its session by id: those not in the sidebar's pages are asked for, for their titles.
      const owners = view.git.worktrees.flatMap((w) => (w.sessionId ? [w.sessionId] : []))
      if (owners.length) void projects.fetchSessions(owners).catch(() => undefined)
    } catch {
      view.git = null
    }
  }

  return { views, of, isCollapsed, readGit }
})
