import { promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { CheckpointView } from '../../../shared/workspace'
import { confinePath, hardLinkRefusal, replaceFile } from '../local-files/fs-boundary'
import { commitTree, git, gitText, splitZ, type GitOptions } from './git'
import { locateWorkspace, readFiles, RepoLocks, scope, snapshotTree, treeOfIndex, type Workspace } from './repo'

/**
 * A checkpoint per turn: the session's files (tracked and untracked, not
 * ignored) written as a commit on a private ref,
 * `refs/switchboard/<session>/checkpoints/<n>`, when a turn starts and before
 * a rewind. Nothing of the user's (index, HEAD, branches, stash) is touched.
 * The review base, `refs/switchboard/<session>/review`, is the state the user
 * has kept so far; it starts at the session's first checkpoint. When a turn
 * ends, the files as it left them go on `refs/switchboard/<session>/turn-ends/<n>`
 * (n: the checkpoint it started with), so "this turn only" stops where the
 * turn stopped, whatever the user changed afterwards.
 */

export interface CheckpointsOptions {
  /** Shadow repositories for folders that are not git repositories. */
  shadowRoot: string
  /** Scratch space for temporary index files. */
  scratch: string
}

/** A file the snapshot holds: mode and blob, or absent. */
export interface TreeEntry {
  mode: string
  oid: string
}

export class Checkpoints {
  private readonly locks = new RepoLocks()
  private readonly workspaces = new Map<string, Promise<Workspace>>()
  /** Each session's last checkpoint per repository, as this Host wrote or listed it. */
  private readonly lasts = new Map<string, { index: number; commit: string | null; turns: number }>()

  constructor(private readonly options: CheckpointsOptions) {}

  /** The repository (own or shadow) that keeps checkpoints for a folder. */
  workspace(cwd: string): Promise<Workspace> {
    let found = this.workspaces.get(cwd)
    if (!found) {
      found = locateWorkspace(cwd, this.options.shadowRoot, this.options.scratch)
      this.workspaces.set(cwd, found)
      found.catch(() => this.workspaces.delete(cwd))
    }
    return found
  }

  /** Runs `work` alone on the folder's repository (a shadow's index and the refs have one writer at a time). */
  exclusive<T>(ws: Workspace, work: () => Promise<T>): Promise<T> {
    return this.locks.run(ws.run.gitDir ?? ws.top, work)
  }

  /** The files as they are now, as a tree (written as objects only). */
  present(ws: Workspace): Promise<string> {
    return this.exclusive(ws, () => this.presentLocked(ws))
  }

  /** `present`, for a caller that already holds the repository's lock. */
  presentLocked(ws: Workspace): Promise<string> {
    return snapshotTree(ws)
  }

  /** Takes a checkpoint; the first one of a session also becomes its review base. */
  async take(sessionId: string, cwd: string, label: 'turn' | 'rewind', number?: number): Promise<CheckpointView> {
    const ws = await this.workspace(cwd)
    return this.exclusive(ws, () => this.takeLocked(ws, sessionId, label, number))
  }

  /**
   * A turn's checkpoint, in two steps: resolves once the files are read (the
   * agent may change them from then on: the checkpoint holds them as they
   * were), with `written` settling once its tree, commit and ref are. The
   * repository stays locked until then, so nothing reads the checkpoints
   * (`list`, a rewind, the turn's end) before it is there.
   */
  async begin(sessionId: string, cwd: string): Promise<{ index: number; turn: number; written: Promise<CheckpointView> }> {
    const ws = await this.workspace(cwd)
    let filesRead: (next: NextCheckpoint) => void = () => undefined
    let notRead: (error: unknown) => void = () => undefined
    const read = new Promise<NextCheckpoint>((resolve, reject) => {
      filesRead = resolve
      notRead = reject
    })
    const written = this.exclusive(ws, async () => {
      let next: NextCheckpoint
      let run: GitOptions
      try {
        next = await this.next(ws, sessionId, 'turn')
        run = await readFiles(ws)
      } catch (error) {
        notRead(error)
        throw error
      }
      filesRead(next)
      // The caller goes on first (the prompt goes out): starting a git holds this thread while it forks, longer as the Host grows.
      await new Promise((resolve) => setImmediate(resolve))
      return this.write(ws, sessionId, next, await treeOfIndex(ws, run))
    })
    // The caller hears of a failure after the files were read through `written`; one before, through the answer.
    written.catch(() => undefined)
    const next = await read
    return { index: next.index, turn: next.turn, written }
  }

  private async takeLocked(ws: Workspace, sessionId: string, label: 'turn' | 'rewind', number?: number): Promise<CheckpointView> {
    const next = await this.next(ws, sessionId, label, number)
    return this.write(ws, sessionId, next, await this.presentLocked(ws))
  }

  /** The number, subject and parent of the session's next checkpoint (its last one is remembered, so only a session's first in this run lists them). */
  private async next(ws: Workspace, sessionId: string, label: 'turn' | 'rewind', number?: number): Promise<NextCheckpoint> {
    const key = lastKey(ws, sessionId)
    let last = this.lasts.get(key)
    if (!last) {
      const existing = await this.listIn(ws, sessionId)
      const newest = existing[existing.length - 1]
      last = { index: newest?.index ?? 0, commit: newest?.commit ?? null, turns: existing.filter((c) => c.label === 'turn').length }
    }
    const index = last.index + 1
    const turn = last.turns + 1
    const subject = label === 'turn' ? `turn ${number ?? turn}` : `rewind ${number ?? 0}`
    return { index, turn, label, subject, parent: last.commit, turns: last.turns + (label === 'turn' ? 1 : 0) }
  }

  /** The checkpoint's commit and ref (one `update-ref` that also sets the review base at a session's first; refused if the checkpoint's ref is there already). */
  private async write(ws: Workspace, sessionId: string, next: NextCheckpoint, tree: string): Promise<CheckpointView> {
    const key = lastKey(ws, sessionId)
    const { index, subject, parent } = next
    const commit = await commitTree(tree, parent ? [parent] : [], `${subject}\n\nSwitchboard checkpoint ${index} of session ${sessionId}`, ws.run)
    const input = `create ${checkpointRef(sessionId, index)} ${commit}\n` + (parent ? '' : `update ${reviewRef(sessionId)} ${commit}\n`)
    try {
      await git(['update-ref', '--stdin'], { ...ws.run, input })
    } catch (error) {
      // Someone else wrote checkpoints of this session (another Switchboard on the same data): listed again next time.
      this.lasts.delete(key)
      throw error
    }
    this.lasts.set(key, { index, commit, turns: next.turns })
    return parseCheckpoint(index, new Date().toISOString(), subject, commit)
  }

  /** Keeps the files as the turn that started with checkpoint `index` left them (the end of that turn's own changes). */
  async endTurn(sessionId: string, cwd: string, index: number): Promise<void> {
    const ws = await this.workspace(cwd)
    await this.exclusive(ws, async () => {
      const tree = await this.presentLocked(ws)
      const start = await gitText(['rev-parse', '--verify', checkpointRef(sessionId, index)], ws.run)
      const commit = await commitTree(tree, [start], `end of the turn of checkpoint ${index}`, ws.run)
      await git(['update-ref', turnEndRef(sessionId, index), commit], ws.run)
    })
  }

  /** The session's checkpoints (after any being written). */
  async list(sessionId: string, cwd: string): Promise<CheckpointView[]> {
    const ws = await this.workspace(cwd)
    return this.exclusive(ws, () => this.listIn(ws, sessionId))
  }

  private async listIn(ws: Workspace, sessionId: string): Promise<CheckpointView[]> {
    const out = await gitText(
      [
        'for-each-ref',
        '--format=%(refname)%09%(objectname)%09%(creatordate:iso-strict)%09%(contents:subject)',
        `refs/switchboard/${sessionId}/checkpoints/`,
        `refs/switchboard/${sessionId}/turn-ends/`
      ],
      ws.run
    )
    const views: CheckpointView[] = []
    const ends = new Map<number, string>()
    for (const line of out.split('\n')) {
      const [ref, commit, at, subject] = line.split('\t')
      const index = Number(ref?.slice(ref.lastIndexOf('/') + 1))
      if (!ref || !commit || !Number.isInteger(index)) continue
      if (ref.startsWith(turnEndRef(sessionId, ''))) ends.set(index, commit)
      else views.push(parseCheckpoint(index, at ?? '', subject ?? '', commit))
    }
    for (const view of views) {
      const ended = ends.get(view.index)
      if (ended && view.label === 'turn') view.ended = ended
    }
    return views.sort((a, b) => a.index - b.index)
  }

  /** The commit of the session's review base (null before its first checkpoint). */
  async reviewBase(ws: Workspace, sessionId: string): Promise<string | null> {
    const out = await gitText(['rev-parse', '--verify', '--quiet', `${reviewRef(sessionId)}^{commit}`], { ...ws.run, okCodes: [0, 1] })
    return out || null
  }

  async setReviewBase(ws: Workspace, sessionId: string, commit: string, previous: string): Promise<void> {
    await git(['update-ref', reviewRef(sessionId), commit, previous], ws.run)
  }

  /**
   * Puts the files back as they were at a checkpoint, after taking a checkpoint
   * of the present (so the rewind can itself be undone). Files added since are
   * removed; ignored files are left alone. Returns that checkpoint and the files restored.
   */
  async rewind(sessionId: string, cwd: string, index: number): Promise<{ target: CheckpointView; undo: CheckpointView; files: string[] }> {
    const ws = await this.workspace(cwd)
    return this.exclusive(ws, async () => {
      const target = (await this.listIn(ws, sessionId)).find((c) => c.index === index)
      if (!target) throw new Error(`This session has no checkpoint ${index}`)
      // Nothing is put back while a file it would write is a hard link: it may be a file outside under another name.
      const before = await changedPaths(ws, await this.presentLocked(ws), target.commit)
      await refuseHardLinks(
        ws,
        before.filter((c) => c.after).map((c) => c.path)
      )
      const undo = await this.takeLocked(ws, sessionId, 'rewind', index)
      const changed = await changedPaths(ws, undo.commit, target.commit)
      for (const { path, after } of changed) await writeEntryAt(ws, path, after)
      return { target, undo, files: changed.map((c) => relativeToFolder(ws, c.path)) }
    })
  }

  /** Removes the session's private refs (its checkpoints and review base); git collects their objects in time. */
  async forget(sessionId: string, cwd: string): Promise<void> {
    const ws = await this.workspace(cwd)
    await this.exclusive(ws, async () => {
      const refs = (await gitText(['for-each-ref', '--format=%(refname)', `refs/switchboard/${sessionId}/`], ws.run)).split('\n').filter(Boolean)
      this.lasts.delete(lastKey(ws, sessionId))
      if (refs.length === 0) return
      await git(['update-ref', '--stdin'], { ...ws.run, input: refs.map((r) => `delete ${r}\n`).join('') })
    })
  }
}

interface NextCheckpoint {
  index: number
  /** The turn number this checkpoint would be as a turn's. */
  turn: number
  label: 'turn' | 'rewind'
  subject: string
  parent: string | null
  /** The session's turn checkpoints once this one is written. */
  turns: number
}

function lastKey(ws: Workspace, sessionId: string): string {
  return `${ws.run.gitDir ?? ws.top}\0${sessionId}`
}

export function checkpointRef(sessionId: string, index: number): string {
  return `refs/switchboard/${sessionId}/checkpoints/${index}`
}

function turnEndRef(sessionId: string, index: number | ''): string {
  return `refs/switchboard/${sessionId}/turn-ends/${index}`
}

export function reviewRef(sessionId: string): string {
  return `refs/switchboard/${sessionId}/review`
}

function parseCheckpoint(index: number, at: string, subject: string, commit: string): CheckpointView {
  const [word, n] = subject.split(' ')
  const number = Number(n)
  if (word === 'rewind') return { index, at, label: 'rewind', rewindTo: Number.isInteger(number) ? number : undefined, commit }
  return { index, at, label: 'turn', turn: Number.isInteger(number) ? number : index, commit }
}

/** A path (from the work tree's top) that differs between two trees, with its mode and blob on each side (null where it is absent). */
export interface ChangedPath {
  path: string
  status: 'A' | 'M' | 'D'
  before: TreeEntry | null
  after: TreeEntry | null
}

/** The paths that differ between two trees or commits inside the session's folder, with both sides' blobs (one `diff-tree --raw`). */
export async function changedPaths(ws: Workspace, from: string, to: string): Promise<ChangedPath[]> {
  const out = await git(
    ['diff-tree', '-r', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', '--raw', '--full-index', from, to, '--', scope(ws)],
    ws.run
  )
  const parts = splitZ(out.stdout)
  const changes: ChangedPath[] = []
  // Each change is `:<old mode> <new mode> <old oid> <new oid> <status>` then its path.
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const [oldMode = '', newMode = '', oldOid = '', newOid = '', code = ''] = (parts[i] ?? '').slice(1).split(' ')
    const status = code === 'A' ? 'A' : code === 'D' ? 'D' : 'M'
    changes.push({
      path: parts[i + 1] ?? '',
      status,
      before: status === 'A' ? null : { mode: oldMode, oid: oldOid },
      after: status === 'D' ? null : { mode: newMode, oid: newOid }
    })
  }
  return changes
}

/** A path's mode and blob in a tree or commit (null when it is not there). */
export async function entryIn(ws: Workspace, treeish: string, path: string): Promise<TreeEntry | null> {
  const out = splitZ((await git(['ls-tree', '-z', treeish, '--', path], ws.run)).stdout)[0]
  if (!out) return null
  const [meta] = out.split('\t')
  const [mode, , oid] = (meta ?? '').split(' ')
  return mode && oid ? { mode, oid } : null
}

export async function readBlob(ws: Workspace, oid: string): Promise<Buffer> {
  return (await git(['cat-file', 'blob', oid], ws.run)).stdout
}

/** The session's folder-relative form of a path from the top. */
export function relativeToFolder(ws: Workspace, topPath: string): string {
  return ws.prefix && topPath.startsWith(ws.prefix) ? topPath.slice(ws.prefix.length) : topPath
}

/** The absolute path of a path from the top, checked to be inside the session's folder (through any links in between). */
export async function onDisk(ws: Workspace, topPath: string): Promise<string> {
  const lexical = join(ws.top, topPath)
  const parent = await confinePath(dirname(lexical), [ws.cwd])
  return join(parent, basename(lexical))
}

/** Makes the file on disk what it is in a tree (or removes it, and folders left empty, when the tree has none). */
export async function writeFromTree(ws: Workspace, treeish: string, topPath: string): Promise<void> {
  await writeEntryAt(ws, topPath, await entryIn(ws, treeish, topPath))
}

/** Makes the file on disk that blob with that mode, or removes it (and folders left empty) for null. */
async function writeEntryAt(ws: Workspace, topPath: string, entry: TreeEntry | null): Promise<void> {
  const file = await onDisk(ws, topPath)
  if (!entry) {
    await fs.rm(file, { force: true })
    await removeEmptyParents(dirname(file), ws.cwd)
    return
  }
  if (entry.mode === '160000') return // a submodule: its own repository's business
  await writeEntry(ws, file, entry)
}

async function writeEntry(ws: Workspace, file: string, entry: TreeEntry): Promise<void> {
  const data = await readBlob(ws, entry.oid)
  await fs.mkdir(dirname(file), { recursive: true })
  const current = await fs.lstat(file).catch(() => null)
  if (current?.isDirectory()) await fs.rm(file, { recursive: true, force: true })
  else if (current && (current.isSymbolicLink() || entry.mode === '120000')) await fs.rm(file, { force: true })
  if (entry.mode === '120000') {
    await fs.symlink(data.toString('utf8'), file)
    return
  }
  // Replaced, never written through: a hard link (refused first, or made in a race) is cut, what it leads to untouched.
  await replaceFile(file, data, entry.mode === '100755' ? 0o755 : 0o644)
}

/**
 * Refuses, naming them, the paths (from the top) whose file on disk has more
 * than one name: a hard link inside the folder may lead to a file outside it,
 * so it is neither restored nor read.
 */
export async function refuseHardLinks(ws: Workspace, topPaths: string[]): Promise<void> {
  const linked: string[] = []
  let links = 0
  for (const topPath of topPaths) {
    const stat = await fs.lstat(join(ws.top, topPath)).catch(() => null)
    if (stat?.isFile() && stat.nlink > 1) {
      linked.push(relativeToFolder(ws, topPath))
      links = Math.max(links, stat.nlink)
    }
  }
  if (linked.length === 0) return
  const more = linked.length > 1 ? ` (and ${linked.length - 1} more: ${linked.slice(1, 6).join(', ')}${linked.length > 6 ? ', …' : ''})` : ''
  throw new Error(hardLinkRefusal(linked[0] ?? '', links).message.replace(/^Refused: /, 'Nothing was changed: ') + more)
}

async function removeEmptyParents(folder: string, stopAt: string): Promise<void> {
  let current = folder
  while (current.startsWith(stopAt) && current !== stopAt) {
    const left = await fs.readdir(current).catch(() => null)
    if (!left || left.length > 0) return
    await fs.rmdir(current).catch(() => undefined)
    current = dirname(current)
  }
}
