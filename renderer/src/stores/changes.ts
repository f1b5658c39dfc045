import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { ChangesResult, HunkRef, MergeResult, ReviewComment } from '../../../shared/workspace'
import { host, messageOf } from '../host/client'
import { useUiStore } from './ui'

/** `review`: since what was kept; a number: that checkpoint's turn (to where it ended, or now while it runs). */
export type ChangesScope = 'review' | number

/** What one session's Changes view shows while it is open: the Host's answer, and what became of the last change asked. */
export interface ChangesView {
  scope: ChangesScope
  /** The Host's last answer (`changes.list`), for the scope it names (`from`): may be another's than `scope` while that is asked. */
  result: ChangesResult | null
  /** A `changes.list` is on its way. */
  loading: boolean
  /** A change (keep, revert, rewind, commit, merge) is on its way: the buttons that ask another wait. */
  busy: boolean
  /** Why the last read or change failed, in the Host's words; cleared by the next. */
  error: string
  /** The checkpoint whose rewind is asked to be confirmed, if any. */
  confirmRewind: number | null
  commitMessage: string
  /** What the last merge into the base branch did. */
  merge: MergeResult | null
  /** After a merge: the offer to remove the worktree and its branch, and what came of it. */
  removal: { state: 'asking' | 'removing'; error: string } | null
  /** Notes on lines not sent yet: sent to the agent, or handed to another with the conversation ("Continue with…"). */
  comments: ReviewComment[]
}

/**
 * What a session changed in its files, as its Changes view asks the Host
 * (changes.*): the diff for a scope, keep and revert, rewind to a checkpoint,
 * and for a worktree session commit, merge back and remove the worktree.
 * Each open view has its state here, by session id (a session shows in at
 * most one pane); a failed request shows as the view's `error`, and after
 * every change the view is read again, whatever came of it.
 */
export const useChangesStore = defineStore('changes', () => {
  const ui = useUiStore()
  const views = ref<Record<string, ChangesView>>({})
  /** Counts the reads of each view: only the latest one's answer is shown (an earlier one, for another scope, may answer last). */
  const asked = new Map<string, number>()

  /** A fresh view of the session's changes (what an earlier one showed is gone), asking to confirm a rewind to `confirmRewind`. */
  function open(id: string, confirmRewind: number | null = null): ChangesView {
    views.value[id] = {
      scope: 'review',
      result: null,
      loading: false,
      busy: false,
      error: '',
      confirmRewind,
      commitMessage: '',
      merge: null,
      removal: null,
      comments: []
    }
    return views.value[id]
  }

  /** The view is gone (its panel closed): its answer, which may hold large files, goes with it, unless a newer view took its place. */
  function close(id: string, view: ChangesView): void {
    if (views.value[id] !== view) return
    delete views.value[id]
    asked.delete(id)
  }

  /** Reads the view's changes again, for its scope. */
  function refresh(id: string): Promise<void> {
    return read(id, true)
  }

  /** `clearError`: what the view said went wrong goes as the read starts (not after a change that failed: that stays said). */
  async function read(id: string, clearError: boolean): Promise<void> {
    const view = views.value[id]
    if (!view) return
    const ask = (asked.get(id) ?? 0) + 1
    asked.set(id, ask)
    const latest = (): boolean => asked.get(id) === ask
    view.loading = true
    if (clearError) view.error = ''
    try {
      const answer = await host().request('changes.list', { id, from: view.scope === 'review' ? undefined : view.scope })
      if (latest()) view.result = answer
    } catch (error) {
      if (latest()) view.error = messageOf(error)
    } finally {
      if (latest()) view.loading = false
    }
  }

  /** Keeps a file (or one hunk of it) as it is: it leaves what is shown as not yet kept. */
  function keep(id: string, path: string, hunk?: HunkRef): Promise<boolean> {
    return change(id, () => host().request('changes.keep', { id, path, hunk }))
  }

  /** Puts a file (or one hunk of it) back as it was when last kept. */
  function revert(id: string, path: string, hunk?: HunkRef): Promise<boolean> {
    return change(id, () => host().request('changes.revert', { id, path, hunk }))
  }

  function keepAll(id: string): Promise<boolean> {
    return change(id, () => host().request('changes.keepAll', { id }))
  }

  /** Restores the files to a checkpoint (those as they are now are checkpointed first, to undo): said in a toast. */
  function rewind(id: string, checkpoint: number): Promise<boolean> {
    return change(id, async (view) => {
      const done = await host().request('changes.rewind', { id, checkpoint })
      ui.toast(
        `${done.files.length} file${done.files.length === 1 ? '' : 's'} restored. Checkpoint ${done.undo.index} holds them as they were, to undo.`
      )
      view.confirmRewind = null
    })
  }

  /** Commits the worktree's changes with the view's message (`branch`: the worktree's, for the toast). */
  function commit(id: string, branch: string | undefined): Promise<boolean> {
    return change(id, async (view) => {
      const done = await host().request('changes.commit', { id, message: view.commitMessage })
      ui.toast(`Committed ${done.files} file${done.files === 1 ? '' : 's'} on ${branch ?? 'the branch'}.`)
      view.commitMessage = ''
    })
  }

  /** Merges the worktree's branch into its base; merged, the worktree and branch are offered to go (the user may keep them). */
  function mergeBack(id: string): Promise<boolean> {
    const view = views.value[id]
    if (view) view.removal = null
    return change(id, async (view) => {
      view.merge = await host().request('changes.merge', { id })
      if (view.merge.merged) view.removal = { state: 'asking', error: '' }
    })
  }

  /** Removes the worktree and its branch, as offered after a merge; refused, the offer stays with the Host's reason. */
  async function removeWorktree(id: string): Promise<void> {
    const view = views.value[id]
    if (!view?.removal) return
    view.removal = { state: 'removing', error: '' }
    try {
      const done = await host().request('changes.removeWorktree', { id })
      view.removal = null
      view.merge = null
      ui.toast(done.message)
    } catch (error) {
      view.removal = { state: 'asking', error: messageOf(error) }
    }
    await refresh(id)
  }

  /**
   * Runs a change with the view busy; false when the Host refused it: the view's error says why (the read that
   * follows keeps it, unless that read fails too). The view is read again after, either way.
   */
  async function change(id: string, run: (view: ChangesView) => Promise<unknown>): Promise<boolean> {
    const view = views.value[id]
    if (!view) return false
    view.busy = true
    view.error = ''
    let done = false
    try {
      await run(view)
      done = true
    } catch (error) {
      view.error = messageOf(error)
    } finally {
      view.busy = false
      await read(id, done)
    }
    return done
  }

  return { views, open, close, refresh, keep, revert, keepAll, rewind, commit, mergeBack, removeWorktree }
})
