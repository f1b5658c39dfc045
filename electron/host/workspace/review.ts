import { randomUUID } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { applyPatch, reversePatch, type StructuredPatch } from 'diff'
import type { ChangesResult, FileChange, HunkRef } from '../../../shared/workspace'
import { filePatch, hunkHeader } from '../../../shared/workspace'
import { describeError, HostError } from '../contract/errors'
import { hardLinkRefusal, readTextFile, replaceFile } from '../local-files/fs-boundary'
import {
  changedPaths,
  entryIn,
  refuseHardLinks,
  type ChangedPath,
  onDisk,
  readBlob,
  relativeToFolder,
  writeFromTree,
  type Checkpoints
} from './checkpoints'
import { commitTree, git, gitText } from './git'
import type { Workspace } from './repo'
import { privateFolder } from '../storage/private-files'

/**
 * The Changes view's work: what changed since the review base (or between two
 * checkpoints), whoever wrote it, read from the file system and git; keeping
 * a file or a hunk moves it into the review base, reverting puts the file on
 * disk back to the review base's text.
 */

/** Files listed at most in one answer. */
const MAX_FILES = 300
/** Larger files are kept or reverted whole, without a text diff. */
const MAX_TEXT_BYTES = 512 * 1024

export interface ChangesQuery {
  sessionId: string
  cwd: string
  /** A checkpoint's index to compare from; else the review base. */
  from?: number
  /** A later checkpoint's index to compare to, or the files now; else, from a turn's checkpoint, the files as that turn left them (now while it runs). */
  to?: number | 'present'
}

export class Review {
  constructor(
    private readonly checkpoints: Checkpoints,
    private readonly scratch: string
  ) {}

  /** What changed; when there is nothing to compare (no checkpoint yet, git missing) it says why instead of failing. */
  async changes(query: ChangesQuery): Promise<ChangesResult> {
    const from: ChangesResult['from'] = query.from ?? 'review'
    let to: ChangesResult['to'] = query.to ?? 'present'
    const now = query.to === undefined || query.to === 'present'
    const unavailable: ChangesResult = { available: false, checkpoints: [], from, to, files: [], truncated: false }
    try {
      const { checkpoints } = this
      const ws = await checkpoints.workspace(query.cwd)
      const list = await checkpoints.list(query.sessionId, query.cwd)
      const base = from === 'review' ? await checkpoints.reviewBase(ws, query.sessionId) : commitOf(list, from)
      if (!base) {
        return { ...unavailable, kind: ws.kind, checkpoints: list, reason: 'No checkpoint yet: the first one is taken when the first turn starts.' }
      }
      // A turn's own changes end where the turn ended: what the user reverted or kept afterwards is not the turn's.
      // A turn whose end was not kept (the Host stopped before it saved it) ended no later than the next checkpoint
      // was taken; only the last turn with nothing after it (perhaps running) runs to now.
      const turnOf = query.to === undefined && typeof from === 'number' ? list.find((c) => c.index === from) : undefined
      const ended = turnOf?.label === 'turn' ? (turnOf.ended ?? list.find((c) => c.index > turnOf.index)?.commit) : undefined
      if (ended) to = 'turn-end'
      const target = ended ?? (now ? await checkpoints.present(ws) : commitOf(list, to as number))
      const changed = await changedPaths(ws, base, target)
      const files: FileChange[] = []
      for (const change of changed.slice(0, MAX_FILES)) files.push(await fileChange(ws, change, to === 'present'))
      return { available: true, kind: ws.kind, checkpoints: list, from, to, files, truncated: changed.length > MAX_FILES }
    } catch (error) {
      return { ...unavailable, reason: describeError(error) }
    }
  }

  /** Keeps every change at once: the files as they are now become the review base (one snapshot, whatever their number). */
  async keepAll(sessionId: string, cwd: string): Promise<void> {
    const ws = await this.checkpoints.workspace(cwd)
    await this.checkpoints.exclusive(ws, async () => {
      const base = await this.requireBase(ws, sessionId)
      const present = await this.checkpoints.presentLocked(ws)
      await this.checkpoints.setReviewBase(ws, sessionId, await commitTree(present, [base], 'review: kept all', ws.run), base)
    })
  }

  /**
   * What a commit holds is kept: its tree becomes the review base (a worktree's Commit takes every file, so what it
   * committed no longer shows as not yet kept; a merge needs a clean worktree, so its branch's head is the files).
   * Nothing to do before the session's first checkpoint.
   */
  async keepCommitted(sessionId: string, cwd: string, commit: string): Promise<void> {
    const ws = await this.checkpoints.workspace(cwd)
    await this.checkpoints.exclusive(ws, async () => {
      const base = await this.checkpoints.reviewBase(ws, sessionId)
      if (!base) return
      const tree = await gitText(['rev-parse', '--verify', `${commit}^{tree}`], ws.run)
      await this.checkpoints.setReviewBase(ws, sessionId, await commitTree(tree, [base], 'review: committed', ws.run), base)
    })
  }

  /** Moves a file's change (or one hunk of it) into the review base: it no longer shows as a change. */
  async keep(sessionId: string, cwd: string, path: string, hunk?: HunkRef): Promise<void> {
    const ws = await this.checkpoints.workspace(cwd)
    await this.checkpoints.exclusive(ws, async () => {
      const base = await this.requireBase(ws, sessionId)
      const topPath = ws.prefix + path
      let next: { mode: string; oid: string } | null
      if (hunk) {
        const { baseText, patch } = await this.hunkContext(ws, base, topPath)
        const chosen = pick(patch, hunk, path)
        const kept = applyPatch(baseText, { ...patch, hunks: [chosen] })
        if (kept === false) throw new HostError('review_stale', `That change to ${path} no longer applies; the view has been refreshed.`)
        const oid = await gitText(['hash-object', '-w', '--no-filters', '--stdin'], { ...ws.run, input: kept })
        const mode = (await entryIn(ws, base, topPath))?.mode ?? (await modeOnDisk(ws, topPath))
        next = { mode, oid }
      } else {
        const present = await this.checkpoints.presentLocked(ws)
        next = await entryIn(ws, present, topPath)
      }
      const commit = await this.withEntry(ws, base, topPath, next)
      await this.checkpoints.setReviewBase(ws, sessionId, commit, base)
    })
  }

  /** Puts a file (or one hunk of it) back as the review base has it. */
  async revert(sessionId: string, cwd: string, path: string, hunk?: HunkRef): Promise<void> {
    const ws = await this.checkpoints.workspace(cwd)
    await this.checkpoints.exclusive(ws, async () => {
      const base = await this.requireBase(ws, sessionId)
      const topPath = ws.prefix + path
      if (!hunk) {
        await refuseHardLinks(ws, [topPath])
        await writeFromTree(ws, base, topPath)
        return
      }
      const { presentText, patch } = await this.hunkContext(ws, base, topPath)
      const chosen = pick(patch, hunk, path)
      const reverted = applyPatch(presentText, reversePatch({ ...patch, hunks: [chosen] }))
      if (reverted === false) throw new HostError('review_stale', `That change to ${path} no longer applies; the view has been refreshed.`)
      // Replaced, never written through (a file with more than one name is refused).
      await replaceFile(await onDisk(ws, topPath), reverted)
    })
  }

  private async requireBase(ws: Workspace, sessionId: string): Promise<string> {
    const base = await this.checkpoints.reviewBase(ws, sessionId)
    if (!base) throw new Error('This session has no checkpoint yet, so there is nothing to review')
    return base
  }

  private async hunkContext(
    ws: Workspace,
    base: string,
    topPath: string
  ): Promise<{ baseText: string; presentText: string; patch: StructuredPatch }> {
    const entry = await entryIn(ws, base, topPath)
    const baseText = entry ? (await readBlob(ws, entry.oid)).toString('utf8') : ''
    // A file with more than one name (a hard link, perhaps to a file outside) is refused, not read.
    const presentText = await readTextFile(await onDisk(ws, topPath)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return ''
      throw error
    })
    const patch = filePatch(baseText, presentText)
    if (!patch) throw new Error(`${relativeToFolder(ws, topPath)} changed too much to take apart by hunk; keep or revert the whole file`)
    return { baseText, presentText, patch }
  }

  /** A commit like `base` with one path changed (or removed). */
  private async withEntry(ws: Workspace, base: string, topPath: string, entry: { mode: string; oid: string } | null): Promise<string> {
    await privateFolder(this.scratch)
    const index = join(this.scratch, `review-${randomUUID()}`)
    try {
      const run = { ...ws.run, indexFile: index }
      await git(['read-tree', base], run)
      if (entry) await git(['update-index', '--add', '--cacheinfo', `${entry.mode},${entry.oid},${topPath}`], run)
      else await git(['update-index', '--force-remove', '--', topPath], run)
      const tree = await gitText(['write-tree'], run)
      return await commitTree(tree, [base], 'review: kept', ws.run)
    } finally {
      await fs.rm(index, { force: true })
    }
  }
}

function commitOf(list: { index: number; commit: string }[], index: number): string {
  const found = list.find((c) => c.index === index)
  if (!found) throw new Error(`This session has no checkpoint ${index}`)
  return found.commit
}

function pick(patch: StructuredPatch, hunk: HunkRef, path: string): StructuredPatch['hunks'][number] {
  const chosen = patch.hunks[hunk.index]
  if (!chosen || hunkHeader(chosen) !== hunk.header) {
    throw new HostError('review_stale', `${path} changed since it was shown; look at it again before keeping or reverting a part of it.`)
  }
  return chosen
}

async function modeOnDisk(ws: Workspace, topPath: string): Promise<string> {
  const stat = await fs.stat(await onDisk(ws, topPath)).catch(() => null)
  return stat && stat.mode & 0o111 ? '100755' : '100644'
}

/** A change as the view shows it; `present`: its new side is the file on disk, which is not shown when it has more than one name. */
async function fileChange(ws: Workspace, change: ChangedPath, present: boolean): Promise<FileChange> {
  const status = change.status === 'A' ? 'added' : change.status === 'D' ? 'deleted' : 'modified'
  if (present && change.after) {
    // A hard link in the folder may be a file outside it: its text (taken into the snapshot through the link) is not shown.
    const stat = await fs.lstat(join(ws.top, change.path)).catch(() => null)
    if (stat?.isFile() && stat.nlink > 1) {
      const path = relativeToFolder(ws, change.path)
      return { path, status, binary: false, tooLarge: false, oldText: null, newText: null, refused: hardLinkRefusal(path, stat.nlink).message }
    }
  }
  const oldData = change.before ? await readBlob(ws, change.before.oid) : null
  const newData = change.after ? await readBlob(ws, change.after.oid) : null
  const tooLarge = (oldData?.length ?? 0) > MAX_TEXT_BYTES || (newData?.length ?? 0) > MAX_TEXT_BYTES
  const binary = !tooLarge && ((oldData !== null && isBinary(oldData)) || (newData !== null && isBinary(newData)))
  const text = (data: Buffer | null): string | null => (data === null || binary || tooLarge ? null : data.toString('utf8'))
  return { path: relativeToFolder(ws, change.path), status, binary, tooLarge, oldText: text(oldData), newText: text(newData) }
}

function isBinary(data: Buffer): boolean {
  return data.subarray(0, 8000).includes(0)
}
