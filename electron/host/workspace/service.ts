import { join } from 'node:path'
import type { SessionRecord } from '../../../shared/domain'
import type { TranscriptRecord } from '../../../shared/transcript'
import type { RaceFileStat } from '../../../shared/race'
import type { CheckpointView, FileChange, MergeResult, SessionWorktree } from '../../../shared/workspace'
import { describeError, HostError } from '../contract/errors'
import type { HandlerSlice } from '../contract/handlers'
import type { Records } from '../storage/records'
import { CheckpointPrompts } from '../storage/transcripts'
import { Checkpoints } from './checkpoints'
import { RepoLocks } from './repo'
import { diffStat } from './diff-stat'
import { git, gitText } from './git'
import { Review } from './review'
import { commitWorktree, createWorktree, defaultBranchName, mergeWorktree, projectGitInfo, removeWorktree, uncommitted } from './worktrees'

/**
 * The session's files: its isolation (a worktree of its own, or the project
 * folder), a checkpoint as each turn starts, the Changes view's keep and
 * revert, rewinding to a checkpoint, and for a worktree session committing and
 * merging back. Works the same for every agent: what a turn changed is read
 * from the files and git, never from the agent's tool calls. All of it runs
 * git on this computer: a project on another host (over SSH) has none of it.
 */

/** The one key worktrees are made and discarded under (WorkspaceService.worktreeLocks). */
const WORKTREES = 'worktrees'

export interface WorkspaceServiceOptions {
  records: Records
  dataDir: string
  /** Appends a record to a session's transcript (and its thread, and the window's), loaded or not. */
  append: (session: SessionRecord, record: TranscriptRecord) => Promise<void>
  /** The session's transcript file, what was written so far on disk (checkpoints are named by their turn's prompt). */
  transcriptOf: (sessionId: string) => Promise<string>
  /** A turn is running in the session (its files are not rewound under the agent's feet). */
  isRunning: (sessionId: string) => boolean
}

export class WorkspaceService {
  readonly checkpoints: Checkpoints
  private readonly review: Review
  private readonly prompts = new CheckpointPrompts()
  /** `git worktree add` and a refused session's `remove` one at a time: git's bookkeeping of worktrees is not for two at once (a race makes several). */
  private readonly worktreeLocks = new RepoLocks()

  constructor(private readonly options: WorkspaceServiceOptions) {
    const scratch = join(options.dataDir, 'tmp')
    this.checkpoints = new Checkpoints({ shadowRoot: join(options.dataDir, 'checkpoints'), scratch })
    this.review = new Review(this.checkpoints, scratch)
  }

  /** A new worktree on a new branch for a session about to be created; `branch` defaults to one named after the agent and session. */
  worktreeFor(projectCwd: string, agentName: string, sessionId: string, branch?: string) {
    const root = join(this.options.dataDir, 'worktrees')
    return this.worktreeLocks.run(WORKTREES, () => createWorktree(projectCwd, branch ?? defaultBranchName(agentName, sessionId), root))
  }

  /**
   * A checkpoint as a turn starts, as the transcript records it: its number, or why none was taken (the turn goes on either way);
   * none for a project on another host.
   */
  async beforeTurn(record: SessionRecord): Promise<TranscriptRecord | null> {
    if (this.hostOf(record)) return null
    const at = new Date().toISOString()
    try {
      // The turn waits for the files to be read; the checkpoint's commit is written beside the agent's start.
      const checkpoint = await this.checkpoints.begin(record.id, record.cwd)
      checkpoint.written
        .catch((error: unknown) =>
          this.options.append(record, {
            t: 'checkpoint',
            at: new Date().toISOString(),
            error: `Checkpoint ${checkpoint.index} could not be written: ${describeError(error)}`
          })
        )
        .catch(() => undefined)
      return { t: 'checkpoint', at, index: checkpoint.index, turn: checkpoint.turn }
    } catch (error) {
      return { t: 'checkpoint', at, error: `The files were not checkpointed before this turn: ${describeError(error)}` }
    }
  }

  /** Keeps the files as a turn left them, against the checkpoint it started with (best effort: without it, "this turn only" ends at the next checkpoint, or runs to now for the last turn). */
  async afterTurn(record: SessionRecord, checkpoint: number): Promise<void> {
    await this.checkpoints.endTurn(record.id, record.cwd, checkpoint).catch(() => undefined)
  }

  /** Restores the files to a checkpoint, records it, and leaves a note the next prompt carries to the agent. */
  async rewind(id: string, index: number): Promise<{ undo: CheckpointView; files: string[] }> {
    const { records, append } = this.options
    const record = records.session(id)
    if (this.options.isRunning(id)) throw new Error('A turn is running in this session; wait for it to end or cancel it, then rewind')
    const { target, undo, files } = await this.checkpoints.rewind(id, record.cwd, index)
    await append(record, { t: 'rewind', at: new Date().toISOString(), to: index, undo: undo.index, files })
    const when = target.label === 'turn' ? `as they were before turn ${target.turn ?? index}` : `as they were at checkpoint ${index}`
    const list = files.length ? ` Files restored: ${files.slice(0, 50).join(', ')}${files.length > 50 ? ', …' : ''}.` : ''
    const rewindNote = `[Switchboard] The user restored the files in ${record.cwd} ${when}; changes made after that point are undone.${list} Read files again before relying on what you remember of them.`
    await records.updateSession(id, { rewindNote })
    return { undo, files }
  }

  /** A worktree made for a session the agent then refused: removed with its branch (nothing was done in it). */
  async discardWorktree(worktree: SessionWorktree): Promise<void> {
    await this.worktreeLocks.run(WORKTREES, async () => {
      await git(['worktree', 'remove', '--force', worktree.path], { cwd: worktree.repo, configFrom: worktree.path }).catch(() => undefined)
      await git(['branch', '-D', worktree.branch], { cwd: worktree.repo }).catch(() => undefined)
    })
  }

  /** Takes the session's worktree away with the session, or says why not (uncommitted work, unless discarded). */
  async removeWorktreeOf(record: SessionRecord, discardChanges: boolean): Promise<string | undefined> {
    const { worktree } = record
    if (!worktree) return undefined
    const sharing = this.options.records.data.sessions.filter((s) => s.id !== record.id && s.worktree?.path === worktree.path)
    if (sharing.length > 0) return `Its worktree is kept: ${sharing.length} other session${sharing.length === 1 ? ' works' : 's work'} in it.`
    return removeWorktree(worktree, discardChanges)
  }

  /**
   * After a merge, the session's worktree and branch go: refused while a turn runs, while the worktree holds
   * uncommitted work (named), while another session works in it, or while the branch has commits its base does not.
   * The session stays, to read; it is marked as having no folder any more.
   */
  async removeMerged(id: string): Promise<{ message: string }> {
    const { records } = this.options
    const record = records.session(id)
    const { worktree } = record
    if (!worktree) throw new Error(`'${record.title}' works in the project folder, not in a worktree of its own`)
    if (worktree.removedAt) throw new Error(`The worktree of '${record.title}' was already removed`)
    if (this.options.isRunning(id)) throw new Error('A turn is running in this session; wait for it to end or cancel it, then remove its worktree')
    const base = worktree.baseBranch
    if (!base) throw new Error('The session started from a detached HEAD: there is no branch its work was merged into, so its branch is kept')
    const merged = await git(['merge-base', '--is-ancestor', `refs/heads/${worktree.branch}`, `refs/heads/${base}`], {
      cwd: worktree.repo,
      okCodes: [0, 1]
    })
    if (merged.code !== 0) {
      throw new Error(`'${worktree.branch}' has commits that '${base}' does not have: merge it first. Nothing was removed.`)
    }
    const sharing = records.data.sessions.filter((s) => s.id !== record.id && s.worktree?.path === worktree.path && !s.worktree.removedAt)
    if (sharing.length > 0) {
      throw new Error(`${sharing.length} other session${sharing.length === 1 ? ' works' : 's work'} in this worktree (a fork); nothing was removed.`)
    }
    const dirty = await uncommitted(worktree.path).catch(() => [])
    if (dirty.length > 0) {
      const list = dirty.slice(0, 8).join(', ') + (dirty.length > 8 ? `, and ${dirty.length - 8} more` : '')
      throw new HostError(
        'worktree_dirty',
        `The worktree on '${worktree.branch}' has ${dirty.length} uncommitted change${dirty.length === 1 ? '' : 's'} (${list}): commit and merge them, or revert them, first. Nothing was removed.`
      )
    }
    await removeWorktree(worktree, false)
    await git(['branch', '-D', worktree.branch], { cwd: worktree.repo })
    await records.updateSession(id, { worktree: { ...worktree, removedAt: new Date().toISOString() } })
    return { message: `The worktree and branch '${worktree.branch}' were removed; '${base}' has their commits.` }
  }

  /** The files now against the session's first checkpoint (all the conversation changed): a hand-off's diff. */
  async sinceStart(record: SessionRecord): Promise<{ files: FileChange[]; truncated: boolean } | { unavailable: string }> {
    const host = this.hostOf(record)
    if (host) return { unavailable: `its files are on ${host}, and git is run on this computer` }
    if (record.worktree?.removedAt) return { unavailable: `its worktree was removed after the merge` }
    const result = await this.review.changes({ sessionId: record.id, cwd: record.cwd, from: 1, to: 'present' })
    return result.available ? { files: result.files, truncated: result.truncated } : { unavailable: result.reason ?? 'no checkpoint was taken' }
  }

  /** The session's files now against a commit (a race's base), file by file with line counts. */
  diffStat(record: SessionRecord, base: string): Promise<RaceFileStat[]> {
    return diffStat(this.checkpoints, record.cwd, base)
  }

  /**
   * A race's "Keep this one": what the session left uncommitted in its worktree is committed on its branch, then the
   * branch is merged as the Changes view merges it (conflicts said file by file, nothing changed then).
   */
  async commitAndMerge(id: string, message: string): Promise<{ merge: MergeResult; committed: number }> {
    const record = this.options.records.session(id)
    const { worktree } = record
    if (!worktree || worktree.removedAt) throw new Error(`'${record.title}' has no worktree of its own to merge`)
    if (this.options.isRunning(id)) throw new Error(`A turn is running in '${record.title}'; wait for it to end or cancel it, then keep it`)
    const hooks = this.userHooks(record)
    let committed = 0
    if ((await uncommitted(worktree.path)).length > 0) {
      const done = await commitWorktree(worktree, message, hooks)
      committed = done.files
      await this.review.keepCommitted(id, record.cwd, done.commit).catch(() => undefined)
    }
    const merge = await mergeWorktree(worktree, hooks)
    if (merge.merged) {
      const head = await gitText(['rev-parse', 'HEAD'], { cwd: worktree.path })
      await this.review.keepCommitted(id, record.cwd, head).catch(() => undefined)
    }
    return { merge, committed }
  }

  /** A session's worktree and branch removed though not merged (a race's other racers, once the user confirmed losing them). */
  async discardUnmerged(id: string): Promise<void> {
    const { records } = this.options
    const record = records.session(id)
    const { worktree } = record
    if (!worktree || worktree.removedAt) return
    if (this.options.isRunning(id)) throw new Error(`A turn is running in '${record.title}'; cancel it first`)
    const sharing = records.data.sessions.filter((s) => s.id !== id && s.worktree?.path === worktree.path && !s.worktree.removedAt)
    if (sharing.length > 0) throw new Error(`${sharing.length} other session${sharing.length === 1 ? ' works' : 's work'} in its worktree (a fork)`)
    await this.discardWorktree(worktree)
    await records.updateSession(id, { worktree: { ...worktree, removedAt: new Date().toISOString(), discarded: true } })
  }

  /** Forgets a deleted session's checkpoints (best effort: a folder gone or git missing leaves nothing to forget). */
  async forget(record: SessionRecord): Promise<void> {
    // A worktree's refs live in its repository, which outlives the worktree's folder.
    await this.checkpoints.forget(record.id, record.worktree?.repo ?? record.cwd).catch(() => undefined)
  }

  /** The user turned the repository's hooks on for the session's project (`projects.setGitHooks`). */
  private userHooks(record: SessionRecord): boolean {
    return this.options.records.findProject(record.projectId)?.gitHooks === true
  }

  /** The host a session's project is on, when it is not this computer. */
  private hostOf(record: SessionRecord): string | undefined {
    return this.options.records.findProject(record.projectId)?.sshHost
  }

  handlers(): HandlerSlice<'changes'> & HandlerSlice<'worktrees'> {
    const { records } = this.options
    /** The session, when its files are on this computer. */
    const local = (id: string): SessionRecord => {
      const record = records.session(id)
      const host = this.hostOf(record)
      if (host) throw new Error(`The Changes view reads files with git on this computer; '${record.title}' works on ${host}`)
      return record
    }
    const worktreeOf = (id: string) => {
      const record = records.session(id)
      if (!record.worktree) throw new Error(`'${record.title}' works in the project folder, not in a worktree of its own`)
      return record.worktree
    }
    return {
      'changes.list': async ({ id, from, to }) => {
        const record = local(id)
        if (record.worktree?.removedAt) {
          const { branch, baseBranch, discarded } = record.worktree
          const reason = discarded
            ? `Its worktree and branch '${branch}' were removed unmerged, when another session of its race was kept.`
            : `Its worktree and branch '${branch}' were removed after the merge into '${baseBranch ?? '—'}'.`
          return { available: false, reason, checkpoints: [], from: from ?? 'review', to: to ?? 'present', files: [], truncated: false }
        }
        const result = await this.review.changes({ sessionId: id, cwd: record.cwd, from, to })
        // Each turn's checkpoint is named by what was asked (best effort: an unreadable transcript names none).
        const prompts = await this.prompts.of(await this.options.transcriptOf(id)).catch(() => new Map<number, string>())
        for (const checkpoint of result.checkpoints) {
          const prompt = checkpoint.label === 'turn' ? prompts.get(checkpoint.index) : undefined
          if (prompt) checkpoint.prompt = prompt
        }
        if (!record.worktree) return result
        const gitHooks = this.userHooks(record)
        return { ...result, worktree: { ...record.worktree, uncommitted: await uncommitted(record.worktree.path).catch(() => []), gitHooks } }
      },
      'changes.keep': async ({ id, path, hunk }) => {
        await this.review.keep(id, local(id).cwd, path, hunk)
        return {}
      },
      'changes.keepAll': async ({ id }) => {
        await this.review.keepAll(id, local(id).cwd)
        return {}
      },
      'changes.revert': async ({ id, path, hunk }) => {
        await this.review.revert(id, local(id).cwd, path, hunk)
        return {}
      },
      'changes.rewind': ({ id, checkpoint }) => this.rewind(local(id).id, checkpoint),
      'changes.commit': async ({ id, message }) => {
        const done = await commitWorktree(worktreeOf(id), message, this.userHooks(records.session(id)))
        // What is committed is kept: no longer "not yet kept", no Revert on it.
        await this.review.keepCommitted(id, records.session(id).cwd, done.commit).catch(() => undefined)
        return done
      },
      'changes.merge': async ({ id }) => {
        const worktree = worktreeOf(id)
        const result = await mergeWorktree(worktree, this.userHooks(records.session(id)))
        // A merge needs a clean worktree: its branch's head is the files, all of them now kept (a commit made outside included).
        if (result.merged) {
          const head = await gitText(['rev-parse', 'HEAD'], { cwd: worktree.path })
          await this.review.keepCommitted(id, records.session(id).cwd, head).catch(() => undefined)
        }
        return result
      },
      'changes.removeWorktree': ({ id }) => this.removeMerged(id),
      'worktrees.list': async ({ projectId }) => {
        const { cwd, sshHost } = records.project(projectId)
        // The new-session form offers a worktree only in a repository on this computer.
        if (sshHost) return { repository: false, branch: null, worktrees: [], reason: `the project is on ${sshHost}: worktrees are made here` }
        return projectGitInfo(cwd, records.data.sessions)
      }
    }
  }
}
