import { createHash, randomUUID } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { basename, dirname, isAbsolute, join } from 'node:path'
import { DriverCache } from './driver-cache'
import { git, gitText, type GitOptions } from './git'
import { makeFilePrivate, privateFolder, writePrivateFile } from '../storage/private-files'

/**
 * Where a session's folder keeps its checkpoints: the folder's own git
 * repository when it is one (objects in its store, private refs under
 * `refs/switchboard/`, the user's index, HEAD, branches and stash never
 * touched), else a shadow repository in the data folder whose work tree is the
 * folder (so no `.git` ever appears in it).
 */
export interface Workspace {
  kind: 'git' | 'shadow'
  /** The session's folder. */
  cwd: string
  /** The work tree's top (the repository's; for a shadow, the folder itself). */
  top: string
  /** The folder's path inside the work tree, with a trailing slash ('' at the top). */
  prefix: string
  /** How git is run against it (a shadow names its git dir and work tree). */
  run: GitOptions
  /** The index snapshots are taken through: Switchboard's own for a repository, the shadow's for a shadow. */
  index: string
  /** The repository's own index, copied into `index` before the first snapshot (never written). */
  seedIndex?: string
}

/** A snapshot that takes longer is given up (the turn goes on without its checkpoint, and says so): a home folder as a project must not hold a prompt for minutes. */
const SNAPSHOT_TIMEOUT_MS = 30_000

/** The drivers each repository's configuration defines, while its files are unchanged. */
const drivers = new DriverCache()

/**
 * How Switchboard's own index is written (never the user's: `ws.index` is in the data folder): without the SHA-1
 * over the whole file at each write (git 2.40 or newer; an older git ignores the key and writes it as before).
 */
const OWN_INDEX = ['index.skipHash=true']

const SHADOW_EXCLUDES = ['node_modules/', '.venv/', '__pycache__/', 'target/', 'dist/', 'build/', '.DS_Store'].join('\n') + '\n'

/** The git work tree a folder is in: its top, the folder's prefix in it, and its index file; null when it is in none. */
export async function workTreeAt(cwd: string): Promise<{ top: string; prefix: string; index: string } | null> {
  const result = await git(['rev-parse', '--show-toplevel', '--show-prefix', '--git-path', 'index'], { cwd, okCodes: [0, 128] })
  if (result.code !== 0) return null
  const [top = cwd, prefix = '', index = ''] = result.stdout.toString('utf8').split('\n')
  return { top, prefix, index: isAbsolute(index) ? index : join(cwd, index) }
}

export async function locateWorkspace(cwd: string, shadowRoot: string, scratch: string): Promise<Workspace> {
  const tree = await workTreeAt(cwd)
  if (tree) {
    const index = join(scratch, `index-${createHash('sha256').update(tree.top).digest('hex').slice(0, 16)}`)
    return { kind: 'git', cwd, top: tree.top, prefix: tree.prefix, run: { cwd: tree.top }, index, seedIndex: tree.index }
  }
  const gitDir = join(shadowRoot, `${basename(cwd).replace(/[^\w.-]/g, '_')}-${createHash('sha256').update(cwd).digest('hex').slice(0, 12)}.git`)
  await ensureShadow(gitDir, cwd)
  return { kind: 'shadow', cwd, top: cwd, prefix: '', run: { cwd, gitDir, workTree: cwd }, index: join(gitDir, 'index') }
}

async function ensureShadow(gitDir: string, cwd: string): Promise<void> {
  if (await exists(join(gitDir, 'HEAD'))) {
    // One made by an older version: from now on git keeps what it writes there private too.
    await git(['config', 'core.sharedRepository', '0600'], { cwd, gitDir })
    return
  }
  await privateFolder(gitDir)
  // In the private data folder: git makes what it writes there the user's alone (0600 files, 0700 folders), whatever the umask; no template (no sample hooks).
  await git(['init', '--bare', '--quiet', '--template=', '--shared=0600', gitDir], { cwd })
  // The folder's own .gitignore files apply; these heavy folders are left out even where nothing ignores them.
  await privateFolder(join(gitDir, 'info'))
  await writePrivateFile(join(gitDir, 'info', 'exclude'), SHADOW_EXCLUDES)
  await writePrivateFile(join(gitDir, 'switchboard-folder'), cwd + '\n')
}

/** The pathspec that keeps a command inside the session's folder (git runs at the work tree's top). */
export function scope(ws: Workspace): string {
  return ws.prefix || '.'
}

/**
 * The folder as it is now, as a git tree: tracked and untracked files, not
 * ignored ones. Uses an index of Switchboard's own per work tree (in the data
 * folder), first copied from the repository's index with its timestamps, so
 * unchanged files are recognised by their stat data as `git status` does, and
 * git's own racy-timestamp care applies. Only objects are written to the
 * repository; the user's index is never written. Callers hold the repository's lock.
 */
export async function snapshotTree(ws: Workspace): Promise<string> {
  return treeOfIndex(ws, await readFiles(ws))
}

/**
 * The first half of `snapshotTree`: the folder's files read into Switchboard's
 * index for it (their contents written as objects). From here the snapshot no
 * longer depends on the files: what changes them afterwards is not in it.
 * Returns how git is run for the second half (`treeOfIndex`).
 */
export async function readFiles(ws: Workspace): Promise<GitOptions> {
  if (ws.seedIndex && !(await exists(ws.index))) {
    await privateFolder(dirname(ws.index))
    await copyWithTimes(ws.seedIndex, ws.index)
  }
  const plain = { ...ws.run, indexFile: ws.index }
  // The drivers the configuration defines, for both commands (listed again only when a configuration file changed).
  const run = { ...plain, drivers: await drivers.overrides(plain), settings: OWN_INDEX }
  await git(['add', '-A', '--ignore-errors', '--', scope(ws)], { ...run, okCodes: [0, 1], timeoutMs: SNAPSHOT_TIMEOUT_MS })
  return run
}

/** The second half of `snapshotTree`: the index `readFiles` filled, as a tree (it reads no file's contents). */
export async function treeOfIndex(ws: Workspace, run: GitOptions): Promise<string> {
  const tree = await gitText(['write-tree'], run)
  // git writes an index as the repository's settings and the umask say; this one is Switchboard's, in its private data folder.
  await makeFilePrivate(ws.index)
  return tree
}

async function exists(path: string): Promise<boolean> {
  return fs.access(path).then(
    () => true,
    () => false
  )
}

/** A copy that keeps the original's times (git decides which entries to re-read by comparing them with the index file's own). */
async function copyWithTimes(from: string, to: string): Promise<void> {
  const temporary = `${to}.${randomUUID()}`
  try {
    await fs.copyFile(from, temporary)
    await makeFilePrivate(temporary)
    const stat = await fs.stat(from)
    await fs.utimes(temporary, stat.atime, stat.mtime)
    await fs.rename(temporary, to)
  } catch (error) {
    await fs.rm(temporary, { force: true })
    // A repository with nothing staged yet has no index: the first snapshot reads every file.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** One per repository at a time: a shadow's index, and ref updates, are not for two writers. */
export class RepoLocks {
  private readonly tails = new Map<string, Promise<unknown>>()

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    const next = previous.then(work, work)
    const settled = next.catch(() => undefined)
    this.tails.set(key, settled)
    void settled.then(() => {
      if (this.tails.get(key) === settled) this.tails.delete(key)
    })
    return next
  }
}
