import { chmodSync, mkdirSync, promises as fs } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'

/**
 * The data folder is the user's alone: on POSIX its folders are 0700 and its
 * files 0600 (0700 for a program, e.g. an agent installed from the registry),
 * whatever the process's umask. Everything the Host writes there goes through
 * these helpers (or `AtomicTextFile`, whose files are 0600), and
 * `makeDataFolderPrivate` brings a folder an older version (or another
 * program) left open back to that at start. On Windows the folder is in the
 * user's profile, whose ACL already keeps others out: nothing is changed there.
 */

export const PRIVATE_FILE_MODE = 0o600
export const PRIVATE_FOLDER_MODE = 0o700

const POSIX = process.platform !== 'win32'

/** Makes a folder and any missing parents, each 0700 (mkdir's mode is narrowed by the umask, never widened: chmod says it exactly). */
export async function privateFolder(path: string): Promise<void> {
  const first = await fs.mkdir(path, { recursive: true, mode: PRIVATE_FOLDER_MODE })
  if (!POSIX) return
  for (const folder of madeFolders(path, first)) await fs.chmod(folder, PRIVATE_FOLDER_MODE)
}

export function privateFolderSync(path: string): void {
  const first = mkdirSync(path, { recursive: true, mode: PRIVATE_FOLDER_MODE })
  if (!POSIX) return
  for (const folder of madeFolders(path, first)) chmodSync(folder, PRIVATE_FOLDER_MODE)
}

/** `path` itself, and each folder mkdir made on the way to it (from `first`, the first it made). */
function madeFolders(path: string, first: string | undefined): string[] {
  const folders = [path]
  if (first === undefined) return folders
  for (let folder = dirname(path); folder.length >= first.length && folder !== dirname(folder); folder = dirname(folder)) folders.push(folder)
  return folders
}

/** Writes a whole file, 0600 (an existing file's mode is set too). */
export async function writePrivateFile(path: string, data: string | Uint8Array, flag = 'w'): Promise<void> {
  const handle = await fs.open(path, flag, PRIVATE_FILE_MODE)
  try {
    if (POSIX) await handle.chmod(PRIVATE_FILE_MODE)
    await handle.writeFile(data)
  } finally {
    await handle.close()
  }
}

/** A file made by another program (git): 0600, or 0400 when it was read-only. */
export async function makeFilePrivate(path: string): Promise<void> {
  if (!POSIX) return
  const stat = await fs.lstat(path).catch(() => null)
  if (stat?.isFile()) await chmodIfNeeded(path, stat.mode, privateFileMode(stat.mode))
}

/** A file's mode without anything for the group and others: the owner's read, write and execute bits as they were. */
function privateFileMode(mode: number): number {
  return mode & 0o700
}

async function chmodIfNeeded(path: string, mode: number, wanted: number): Promise<void> {
  if ((mode & 0o7777) !== wanted) await fs.chmod(path, wanted)
}

/**
 * Every folder under `root` (itself included) 0700 and every file without
 * access for the group and others, never following a symbolic link (a link
 * is left as it is, and what it points to is not touched). `opaque(path)`
 * names folders made private themselves but not descended into.
 */
export async function makeTreePrivate(
  root: string,
  opaque: (relativePath: string) => boolean = () => false,
  /** Files left as they are: their owner checks and fixes their mode itself. */
  leave: (relativePath: string) => boolean = () => false
): Promise<void> {
  if (!POSIX) return
  const rootStat = await fs.lstat(root).catch(() => null)
  if (!rootStat?.isDirectory()) return
  await chmodIfNeeded(root, rootStat.mode, PRIVATE_FOLDER_MODE)
  const pending = [root]
  while (pending.length > 0) {
    const folder = pending.pop() as string
    const entries = await fs.readdir(folder, { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      const path = join(folder, entry.name)
      if (entry.isSymbolicLink()) continue
      const stat = await fs.lstat(path).catch(() => null)
      if (!stat) continue
      if (stat.isDirectory()) {
        await chmodIfNeeded(path, stat.mode, PRIVATE_FOLDER_MODE)
        if (!opaque(relative(root, path))) pending.push(path)
      } else if (stat.isFile() && !leave(relative(root, path))) {
        await chmodIfNeeded(path, stat.mode, privateFileMode(stat.mode))
      }
    }
  }
}

/**
 * At start: the data folder, and all it holds, private. A session's worktree
 * (`worktrees/<repo>/<branch>`) is the user's checkout of their own project:
 * its folder is made 0700, its files keep the modes git and the agent gave
 * them (nobody else can reach them through that folder).
 */
export async function makeDataFolderPrivate(dataDir: string): Promise<void> {
  await privateFolder(dataDir)
  // The whole tree once (what an older version left), then what sits at its top at each start: the folder itself is
  // 0700, so nobody else reaches what lies below, and all Switchboard writes is private already. A walk at every
  // start cost a start one lstat per file: 3.8 s at 100,000 sessions.
  const marker = join(dataDir, TREE_MADE_PRIVATE)
  const walked = await fs.lstat(marker).then(
    (stat) => stat.isFile(),
    () => false
  )
  await makeTreePrivate(
    dataDir,
    (path) => walked || isWorktreeCheckout(path),
    (path) => path === SERVE_STATE
  )
  if (!walked) await writePrivateFile(marker, `${new Date().toISOString()}\n`)
}

/** Written once the whole data folder was made private (makeDataFolderPrivate): later starts check its top only. */
export const TREE_MADE_PRIVATE = 'private-tree.done'

/**
 * serve.json (serving.ts) holds serve's token: one that others could read is no longer trusted, so serve must see
 * its mode as it was; it makes a new token and writes the file owner-only itself.
 */
const SERVE_STATE = 'serve.json'

/** `worktrees/<repo>-<hash>/<branch>`: a worktree's own folder. */
export function isWorktreeCheckout(relativePath: string): boolean {
  const parts = relativePath.split(sep)
  return parts.length === 3 && parts[0] === 'worktrees'
}
