import { structuredPatch, type StructuredPatch } from 'diff'

/**
 * Isolation, checkpoints and review: what the Host tells the window about a
 * session's files. Plain data only.
 */

/** A session that works in its own git worktree, on its own branch. */
export interface SessionWorktree {
  /** The worktree's folder (the session's cwd is this, or the project's subfolder inside it). */
  path: string
  branch: string
  /** The branch the worktree was made from (merging goes back into it); null when the project was on a detached HEAD. */
  baseBranch: string | null
  /** The repository's top folder, where the project lives. */
  repo: string
  /** When the user removed the worktree and its branch after merging them (`changes.removeWorktree`): the session's folder is gone. */
  removedAt?: string
  /** Removed without being merged (a race's other racers, once one was kept): its work went with it. */
  discarded?: boolean
}

/** A snapshot of a session's files, taken when a turn starts or before a rewind. */
export interface CheckpointView {
  /** 1, 2, ... in the order taken. */
  index: number
  at: string
  /** `turn`: taken as turn `turn` started; `rewind`: the files as they were just before a rewind to `rewindTo` (so it can be undone). */
  label: 'turn' | 'rewind'
  turn?: number
  /** For a turn's checkpoint: the first line of that turn's prompt, when the transcript has it. */
  prompt?: string
  rewindTo?: number
  commit: string
  /** For a turn's checkpoint once that turn is over: the commit of the files as the turn left them. */
  ended?: string
}

export type FileChangeStatus = 'added' | 'modified' | 'deleted'

export interface FileChange {
  /** Relative to the session's folder, with `/`. */
  path: string
  status: FileChangeStatus
  /** Not text (or too large to show): kept or reverted as a whole file. */
  binary: boolean
  tooLarge: boolean
  /** The text before (null when added, binary or too large). */
  oldText: string | null
  /** The text now (null when deleted, binary, too large or refused). */
  newText: string | null
  /** Why neither text is shown: the file on disk has more than one name (a hard link, perhaps to a file outside the project). */
  refused?: string
}

export interface ChangesResult {
  /** False when there is nothing to compare yet (no checkpoint) or git is missing; `reason` says which. */
  available: boolean
  reason?: string
  /** Where the checkpoints live: the folder's own repository, or a shadow repository in the data folder. */
  kind?: 'git' | 'shadow'
  checkpoints: CheckpointView[]
  /** What the files are compared from: the reviewed state (`review`: what was kept so far) or a checkpoint's index. */
  from: 'review' | number
  /** What they are compared to: the files now, a later checkpoint, or (`turn-end`) the files as `from`'s turn left them. */
  to: 'present' | number | 'turn-end'
  files: FileChange[]
  /** More files changed than are listed. */
  truncated: boolean
  /** For a worktree session: its branch and the uncommitted files in it. */
  worktree?: SessionWorktree & {
    uncommitted: string[]
    /** Commit and merge run the repository's git hooks (the project's setting). */
    gitHooks: boolean
  }
}

/** A hunk named by its place and its header, so a stale view is refused instead of acting on other lines. */
export interface HunkRef {
  index: number
  header: string
}

export interface MergeResult {
  merged: boolean
  /** The branch merged into. */
  into: string | null
  /** When not merged: each conflicting file and git's sentence about it. */
  conflicts: { path: string; reason: string }[]
  message: string
}

export interface WorktreeInfo {
  path: string
  branch: string | null
  head: string
  /** The repository's main work tree (the project's own folder). */
  main: boolean
  /** The Switchboard session working in it, if any. */
  sessionId?: string
}

export interface ProjectGitInfo {
  repository: boolean
  /** The project folder's current branch (null when detached or not a repository). */
  branch: string | null
  worktrees: WorktreeInfo[]
  /** Why it is not a repository or git could not answer (git missing, ...). */
  reason?: string
}

/** A note on a line of a change, sent to the agent with the others as the next prompt. */
export interface ReviewComment {
  path: string
  /** The line's number in the file as it is now (`new`), or in the earlier text for a removed line (`old`). */
  line: number
  side: 'old' | 'new'
  /** The line itself, quoted in the prompt. */
  quote: string
  text: string
}

/** The prompt that carries review comments: each quoted with its file and line. */
export function reviewCommentsPrompt(comments: ReviewComment[]): string {
  const parts = comments.map((c) => {
    const where = `${c.path}, line ${c.line}${c.side === 'old' ? ' (a removed line)' : ''}:`
    return `${where}\n> ${c.quote.replace(/\n/g, '\n> ')}\n${c.text.trim()}`
  })
  return `Review comments on your changes (${comments.length}):\n\n${parts.join('\n\n')}`
}

/** Beyond this many edits jsdiff gives up (the window says so) rather than stall. */
const MAX_EDIT_LENGTH = 20_000

/**
 * A file's change as jsdiff hunks (three lines of context), or undefined when
 * the texts are too different to compare in reasonable time. The one place
 * hunks are computed: the window's diff view draws them and the Host keeps or
 * reverts them, so a hunk named by index and header is the same on both sides.
 */
export function filePatch(oldText: string, newText: string): StructuredPatch | undefined {
  return structuredPatch('a', 'b', oldText, newText, undefined, undefined, { context: 3, maxEditLength: MAX_EDIT_LENGTH })
}

/** The header a hunk is named by. */
export function hunkHeader(h: { oldStart: number; oldLines: number; newStart: number; newLines: number }): string {
  return `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`
}
