import { createHash } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { basename, join } from 'node:path'
import type { MergeResult, ProjectGitInfo, SessionWorktree, WorktreeInfo } from '../../../shared/workspace'
import { HostError } from '../contract/errors'
import { git, GitError, gitText } from './git'
import { workTreeAt } from './repo'
import { PRIVATE_FOLDER_MODE, privateFolder } from '../storage/private-files'

/**
 * A git worktree per session: a new branch checked out in its own folder
 * (under the data folder's `worktrees/`), so several agents on one project
 * never write into each other's files. Committing and merging back go through
 * the user's git, as the user would run them.
 */

export interface RepositoryAt {
  top: string
  /** The folder's path inside the repository ('' at the top). */
  prefix: string
  branch: string | null
  head: string
}

/** The repository a folder belongs to, or a `not_a_repository` error that says so. */
export async function repositoryAt(cwd: string): Promise<RepositoryAt> {
  const tree = await workTreeAt(cwd)
  if (!tree) {
    throw new HostError(
      'not_a_repository',
      `${cwd} is not a git repository, so a session there cannot have its own worktree. Run it in this folder, or run "git init" there and commit first.`
    )
  }
  const { top, prefix } = tree
  const head = await gitText(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd, okCodes: [0, 1] })
  if (!head)
    throw new HostError('not_a_repository', `The repository at ${top} has no commit yet; a worktree starts from one. Commit something first.`)
  const branch = await gitText(['symbolic-ref', '--short', '--quiet', 'HEAD'], { cwd, okCodes: [0, 1] })
  return { top, prefix, branch: branch || null, head }
}

export async function projectGitInfo(cwd: string, sessions: readonly { id: string; worktree?: SessionWorktree }[]): Promise<ProjectGitInfo> {
  let repo: RepositoryAt
  try {
    repo = await repositoryAt(cwd)
  } catch (error) {
    return { repository: false, branch: null, worktrees: [], reason: (error as Error).message }
  }
  const worktrees = await listWorktrees(repo.top)
  for (const tree of worktrees) tree.sessionId = sessions.find((s) => s.worktree?.path === tree.path)?.id
  return { repository: true, branch: repo.branch, worktrees }
}

export async function listWorktrees(top: string): Promise<WorktreeInfo[]> {
  const out = await gitText(['worktree', 'list', '--porcelain'], { cwd: top })
  const trees: WorktreeInfo[] = []
  for (const block of out.split('\n\n')) {
    const fields = new Map(block.split('\n').map((line) => [line.split(' ')[0] ?? '', line.slice(line.indexOf(' ') + 1)] as const))
    const path = fields.get('worktree')
    if (!path) continue
    const branch = fields.get('branch')
    trees.push({ path, head: fields.get('HEAD') ?? '', branch: branch ? branch.replace(/^refs\/heads\//, '') : null, main: trees.length === 0 })
  }
  return trees
}

/** A branch name from a session's agent and id: `switchboard/claude-code-1a2b3c`. */
export function defaultBranchName(agentName: string, sessionId: string): string {
  const slug = agentName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 30)
  return `switchboard/${slug || 'agent'}-${sessionId.slice(0, 6)}`
}

/**
 * Characters git takes in a branch name but a reader cannot see, or sees other than they are: bidirectional
 * controls (a name that reads `main` and is not), zero-width and other format characters, spaces other than
 * the ASCII one git already refuses, and the Hangul fillers that draw as blanks.
 */
const UNSEEN = /[\p{Cf}\p{Cc}\p{Z}\u115F\u1160\u3164\uFFA0\u034F\u17B4\u17B5\u180B-\u180F\uFE00-\uFE0F]/u

/** Throws a sentence for a branch name git would take but that misleads: a `refs/` prefix, or a character not seen. */
export function checkBranchName(branch: string): void {
  const unseen = UNSEEN.exec(branch)
  if (unseen) {
    const code = `U+${(unseen[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
    throw new Error(
      `The branch name '${branch}' has a character that does not show or changes how the name reads (${code}); type the name with letters, digits, '-', '_', '.' and '/'.`
    )
  }
  if (/^refs\//i.test(branch) || /^(heads|remotes|tags)\//.test(branch)) {
    throw new Error(`The branch name '${branch}' starts like a full ref ('refs/…', 'heads/…'); give the branch's own name, without that prefix.`)
  }
}

/** Makes the worktree: checks the branch name, that it is new, and that nothing stands where the folder would go. */
export async function createWorktree(cwd: string, branch: string, worktreesRoot: string): Promise<{ worktree: SessionWorktree; cwd: string }> {
  const repo = await repositoryAt(cwd)
  checkBranchName(branch)
  const valid = await gitText(['check-ref-format', '--branch', branch], { cwd: repo.top, okCodes: [0, 1, 128] })
  if (!valid) throw new Error(`'${branch}' is not a valid branch name`)
  const exists = await git(['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], { cwd: repo.top, okCodes: [0, 1] })
  if (exists.code === 0) throw new HostError('branch_exists', `A branch named '${branch}' already exists in ${repo.top}; choose another name.`)
  const folder = join(
    worktreesRoot,
    `${basename(repo.top)}-${createHash('sha256').update(repo.top).digest('hex').slice(0, 8)}`,
    branch.replace(/[/\\]/g, '-')
  )
  const inTheWay = await fs.readdir(folder).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? null : []))
  if (inTheWay !== null) throw new HostError('worktree_in_the_way', `A folder is already at ${folder}; remove it or choose another branch name.`)
  await privateFolder(join(folder, '..'))
  await git(['worktree', 'add', '--quiet', '-b', branch, folder, repo.head], { cwd: repo.top })
  // The checkout's files keep git's modes (they are the user's project); its folder, in the data folder, is the user's alone.
  if (process.platform !== 'win32') await fs.chmod(folder, PRIVATE_FOLDER_MODE)
  const worktree: SessionWorktree = { path: folder, branch, baseBranch: repo.branch, repo: repo.top }
  return { worktree, cwd: repo.prefix ? join(folder, repo.prefix) : folder }
}

/** Files with uncommitted changes in a worktree (untracked ones included), as `git status` names them. */
export async function uncommitted(path: string): Promise<string[]> {
  // Not into submodules: their own configuration is not the one whose drivers git.ts switches off.
  const args = ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=all']
  const out = (await git(args, { cwd: path })).stdout.toString('utf8')
  return out
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.slice(3))
}

/** Removes a session's worktree; refuses (naming the files) when that would drop uncommitted work, unless told to discard it. */
export async function removeWorktree(worktree: SessionWorktree, discardChanges: boolean): Promise<string> {
  const present = await fs.stat(worktree.path).catch(() => null)
  if (!present) {
    await git(['worktree', 'prune'], { cwd: worktree.repo }).catch(() => undefined)
    return `Its worktree folder was already gone; branch '${worktree.branch}' is kept.`
  }
  const dirty = await uncommitted(worktree.path)
  if (dirty.length > 0 && !discardChanges) {
    const list = dirty.slice(0, 8).join(', ') + (dirty.length > 8 ? `, and ${dirty.length - 8} more` : '')
    throw new HostError(
      'worktree_dirty',
      `The worktree on '${worktree.branch}' has ${dirty.length} uncommitted change${dirty.length === 1 ? '' : 's'} (${list}). Commit or merge them first, or delete again choosing to discard them.`
    )
  }
  await git(['worktree', 'remove', ...(dirty.length > 0 ? ['--force'] : []), worktree.path], { cwd: worktree.repo, configFrom: worktree.path })
  return `Its worktree was removed; branch '${worktree.branch}' is kept${dirty.length > 0 ? ` (${dirty.length} uncommitted change${dirty.length === 1 ? '' : 's'} discarded)` : ''}.`
}

/**
 * Commits everything in the worktree (tracked and untracked, not ignored) on its branch, as the user. The repository's
 * hooks run only when the user turned them on for the project (`userHooks`); its filters never do.
 */
export async function commitWorktree(worktree: SessionWorktree, message: string, userHooks = false): Promise<{ commit: string; files: number }> {
  const dirty = await uncommitted(worktree.path)
  if (dirty.length === 0) throw new Error(`Nothing to commit on '${worktree.branch}'`)
  await git(['add', '-A'], { cwd: worktree.path })
  try {
    await git(['commit', '--quiet', ...(userHooks ? [] : ['--no-verify']), '-m', message], { cwd: worktree.path, userHooks })
  } catch (error) {
    if (error instanceof GitError && /Please tell me who you are|empty ident/i.test(error.stderr)) {
      throw new Error('git does not know who you are: set user.name and user.email (git config --global user.name "…") and commit again')
    }
    throw error
  }
  return { commit: await gitText(['rev-parse', 'HEAD'], { cwd: worktree.path }), files: dirty.length }
}

/**
 * Merges the session's branch into the branch it came from. The merge is
 * first computed without touching any folder (`git merge-tree`); conflicts are
 * reported file by file and nothing changes. A clean merge is made in the
 * folder where that branch is checked out (which must have no uncommitted
 * changes), or written straight to the branch when none has it checked out.
 */
export async function mergeWorktree(worktree: SessionWorktree, userHooks = false): Promise<MergeResult> {
  const into = worktree.baseBranch
  if (!into)
    return { merged: false, into: null, conflicts: [], message: 'The session started from a detached HEAD, so there is no branch to merge into.' }
  const pending = await uncommitted(worktree.path)
  if (pending.length > 0) {
    return {
      merged: false,
      into,
      conflicts: [],
      message: `Commit the session's ${pending.length} uncommitted change${pending.length === 1 ? '' : 's'} first.`
    }
  }
  const run = { cwd: worktree.repo }
  const result = await git(['merge-tree', '--write-tree', '--name-only', into, worktree.branch], { ...run, okCodes: [0, 1] })
  const [treeLine, ...rest] = result.stdout.toString('utf8').split('\n')
  if (result.code === 1) {
    const blank = rest.indexOf('')
    const paths = rest.slice(0, blank < 0 ? rest.length : blank).filter(Boolean)
    const messages = blank < 0 ? [] : rest.slice(blank + 1).filter(Boolean)
    const conflicts = paths.map((path) => ({
      path,
      reason: messages.find((m) => m.startsWith('CONFLICT') && m.includes(path)) ?? messages.find((m) => m.includes(path)) ?? 'conflict'
    }))
    return {
      merged: false,
      into,
      conflicts,
      message: `Merging '${worktree.branch}' into '${into}' conflicts in ${conflicts.length} file${conflicts.length === 1 ? '' : 's'}; nothing was changed.`
    }
  }
  const checkedOut = (await listWorktrees(worktree.repo)).find((t) => t.branch === into)
  if (checkedOut) {
    const dirty = await uncommitted(checkedOut.path)
    if (dirty.length > 0) {
      return {
        merged: false,
        into,
        conflicts: [],
        message: `'${into}' is checked out in ${checkedOut.path} with ${dirty.length} uncommitted change${dirty.length === 1 ? '' : 's'}; commit or stash them, then merge again.`
      }
    }
    await git(['merge', '--no-ff', '--no-edit', '--quiet', worktree.branch], { cwd: checkedOut.path, userHooks })
  } else {
    const tree = treeLine?.trim() ?? ''
    const base = await gitText(['rev-parse', `refs/heads/${into}`], run)
    // Written as the user (their git identity), as `git merge` would.
    const commit = await gitText(
      ['commit-tree', tree, '-p', base, '-p', worktree.branch, '-m', `Merge branch '${worktree.branch}' into ${into}`],
      run
    )
    await git(['update-ref', `refs/heads/${into}`, commit, base], run)
  }
  return { merged: true, into, conflicts: [], message: `Merged '${worktree.branch}' into '${into}'.` }
}
