import { randomUUID } from 'node:crypto'
import { constants, promises as fs } from 'node:fs'
import path from 'node:path'

/**
 * Confines an agent's file requests (and the cwd of its terminals) to the
 * session's folders. A path is first checked for its form (absolute, no NUL
 * or control characters, no URI, on Windows no device or extended-length
 * namespace, no drive-less or drive-relative form, no component Windows
 * would silently rewrite), then resolved (`..`), then symlinks are followed
 * for the part that exists, so a link inside the project that points
 * elsewhere is refused too. The comparison with each folder ignores case
 * where the file system does (Windows, and a case-insensitive macOS or Linux
 * volume, found by looking), and only there.
 *
 * A path cannot show a hard link: a file inside the project may be another
 * name of a file outside it. So a regular file with more than one link is
 * never read, written or restored through (the count is taken on the opened
 * file, not the path), and a write never goes through the file it replaces:
 * the text goes to a new file in the same folder, renamed over the old name,
 * so a link made in a race between the check and the write is cut, and what
 * it leads to is left as it was.
 *
 * The checks on the form are pure functions of a path flavour, so the
 * Windows rules are tested on any machine.
 */

/** A path an agent named and may not use: `outside` when it is well formed but outside the session's folders. */
export class PathRefusedError extends Error {
  constructor(
    message: string,
    readonly outside = false
  ) {
    super(message)
  }
}

export type PathFlavor = 'posix' | 'win32'

export function hostFlavor(): PathFlavor {
  return process.platform === 'win32' ? 'win32' : 'posix'
}

/** Names Windows maps to devices in any folder (CON, NUL, COM1, …), with or without an extension. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i

/**
 * Checks the form of a requested path and resolves it lexically (`.` and
 * `..`); throws PathRefusedError saying what is wrong with it.
 */
export function normaliseRequest(requested: unknown, flavor: PathFlavor = hostFlavor()): string {
  const p = flavor === 'win32' ? path.win32 : path.posix
  if (typeof requested !== 'string' || requested.length === 0) throw new PathRefusedError('Refused: the path is empty')
  if (requested.includes('\0')) throw new PathRefusedError('Refused: the path contains a NUL byte')
  if (/[\u0001-\u001f\u007f]/.test(requested)) throw new PathRefusedError('Refused: the path contains control characters')
  if (/^file:/i.test(requested)) {
    throw new PathRefusedError(`Refused: '${requested}' is a URI; ACP file requests take absolute paths, not file: URIs`)
  }
  if (flavor === 'win32') {
    if (/^[\\/]{2}[?.][\\/]/.test(requested)) {
      throw new PathRefusedError(`Refused: '${requested}' uses a Windows device or extended-length path (\\\\?\\ or \\\\.\\)`)
    }
    const unc = /^[\\/]{2}[^\\/]/.test(requested)
    if (!unc && !/^[a-zA-Z]:[\\/]/.test(requested)) {
      throw new PathRefusedError(
        /^[a-zA-Z]:/.test(requested) || !/^[\\/]/.test(requested)
          ? `Refused: '${requested}' is a relative path; it must be absolute (ACP requires absolute paths)`
          : `Refused: '${requested}' has no drive letter; it must be absolute (ACP requires absolute paths)`
      )
    }
    const components = requested.split(/[\\/]+/).slice(1)
    for (const component of components) {
      if (component === '' || component === '.' || component === '..') continue
      if (component.includes(':')) throw new PathRefusedError(`Refused: '${requested}' names an alternate data stream (':' in '${component}')`)
      if (/[. ]$/.test(component)) {
        throw new PathRefusedError(`Refused: '${requested}' has a name ending in a dot or space ('${component}'), which Windows would change`)
      }
      if (WINDOWS_DEVICE.test(component)) throw new PathRefusedError(`Refused: '${requested}' names a Windows device ('${component}')`)
    }
  } else if (!p.isAbsolute(requested)) {
    throw new PathRefusedError(`Refused: '${requested}' is a relative path; it must be absolute (ACP requires absolute paths)`)
  }
  const resolved = p.resolve(requested)
  if (resolved.length > MAX_PATH_LENGTH)
    throw new PathRefusedError(`Refused: the path is too long (${resolved.length} characters; at most ${MAX_PATH_LENGTH})`)
  const names = resolved.split(flavor === 'win32' ? /[\\/]/ : /\//)
  if (names.some((name) => Buffer.byteLength(name) > MAX_NAME_LENGTH)) {
    throw new PathRefusedError(`Refused: the path has a name longer than ${MAX_NAME_LENGTH} bytes`)
  }
  // Thousands of levels cost the file system seconds to resolve: a request must not hold the Host up.
  if (names.length > MAX_DEPTH) throw new PathRefusedError(`Refused: the path is ${names.length} folders deep (at most ${MAX_DEPTH})`)
  return resolved
}

/** Whether `candidate` is `root` or inside it; both resolved, of the same flavour. */
export function isInside(root: string, candidate: string, flavor: PathFlavor = hostFlavor(), foldCase = flavor === 'win32'): boolean {
  const p = flavor === 'win32' ? path.win32 : path.posix
  const a = foldCase ? root.toLowerCase() : root
  const b = foldCase ? candidate.toLowerCase() : candidate
  if (a === b) return true
  const rel = p.relative(a, b)
  return rel !== '' && rel !== '..' && !rel.startsWith('..' + p.sep) && !p.isAbsolute(rel)
}

/** Returns the real path to use, or throws PathRefusedError saying why. */
export async function confinePath(requested: string, roots: string[]): Promise<string> {
  const flavor = hostFlavor()
  const lexical = normaliseRequest(requested, flavor)
  const real = await realpathOfLongestExisting(lexical)
  for (const root of roots) {
    const realRoot = await realpathOfLongestExisting(path.resolve(root))
    const fold = flavor === 'win32' || (await caseInsensitiveAt(realRoot))
    if (isInside(realRoot, real, flavor, fold)) return real
  }
  throw new PathRefusedError(`Refused: '${requested}' is outside the session's folder${roots.length > 1 ? 's' : ''} (${roots.join(', ')})`, true)
}

/**
 * realpath of the deepest ancestor that exists, with the missing tail
 * appended. Which ancestors exist is monotonic in depth, so the deepest is
 * found by bisection: a path of thousands of components costs a dozen
 * lookups, not thousands.
 */
async function realpathOfLongestExisting(target: string): Promise<string> {
  const { root } = path.parse(target)
  // A backslash is a separator on Windows only; elsewhere it is part of a name.
  const parts = target
    .slice(root.length)
    .split(process.platform === 'win32' ? /[\\/]+/ : /\/+/)
    .filter(Boolean)
  const prefix = (count: number): string => path.join(root, ...parts.slice(0, count))
  const tryRealpath = async (candidate: string): Promise<string | null> => {
    try {
      return await fs.realpath(candidate)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ELOOP') throw new PathRefusedError(`Refused: '${target}' goes through a loop of symbolic links`)
      if (code === 'ENOENT' || code === 'ENOTDIR') return null
      throw error
    }
  }
  const whole = await tryRealpath(target)
  if (whole !== null) return whole
  // The root exists; find the largest count of components that still does.
  let found = (await tryRealpath(root)) ?? root
  let low = 0
  let high = parts.length - 1
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    const real = await tryRealpath(prefix(middle))
    if (real === null) high = middle - 1
    else {
      low = middle
      found = real
    }
  }
  return path.resolve(found, ...parts.slice(low))
}

/** Longest path accepted (Linux's PATH_MAX), and longest name in it (NAME_MAX almost everywhere). */
const MAX_PATH_LENGTH = 4096
const MAX_NAME_LENGTH = 255
const MAX_DEPTH = 256

const caseProbe = new Map<string, boolean>()

/**
 * Whether the file system holding `folder` ignores case: the folder's name
 * with its case swapped names the very same folder. (macOS and Windows
 * volumes usually do, Linux ones usually do not; looking is the only way to know.)
 */
async function caseInsensitiveAt(folder: string): Promise<boolean> {
  const known = caseProbe.get(folder)
  if (known !== undefined) return known
  const swapped = [...folder].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('')
  let result = false
  if (swapped !== folder) {
    try {
      const [a, b] = await Promise.all([fs.stat(folder), fs.stat(swapped)])
      result = a.dev === b.dev && a.ino === b.ino
    } catch {
      result = false
    }
  }
  caseProbe.set(folder, result)
  return result
}

/** Opening flags that refuse a symbolic link in the last place (one swapped in after the check). */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0
/** Opening a FIFO must not wait for its other end: that would hold one of the few I/O threads forever. */
const NO_BLOCK = constants.O_NONBLOCK ?? 0
/** Largest file an agent may read through us in one request. */
export const MAX_READ_BYTES = 64 * 1024 * 1024

/** The refusal of a regular file with `links` names (hard links): it may be a file outside the folders under another name. */
export function hardLinkRefusal(file: string, links: number): PathRefusedError {
  return new PathRefusedError(
    `Refused: '${file}' has ${links} hard links, so it may be a file outside the project under another name; Switchboard does not read, write or restore files with more than one link`
  )
}

/** A regular file with one name, or a PathRefusedError saying what it is instead. */
async function requireRegularFile(handle: fs.FileHandle, file: string): Promise<import('node:fs').Stats> {
  const stat = await handle.stat()
  if (!stat.isFile()) {
    throw new PathRefusedError(`Refused: '${file}' is not a regular file (${stat.isDirectory() ? 'a folder' : 'a device, pipe or socket'})`)
  }
  if (stat.nlink > 1) throw hardLinkRefusal(file, stat.nlink)
  return stat
}

/**
 * The file as it is (opened without following a link in its last place), or
 * null when it does not exist; refused when it is not a regular file with
 * one name. Its mode is what a replacement keeps.
 */
export async function existingSingleFile(file: string): Promise<import('node:fs').Stats | null> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(file, constants.O_RDONLY | NO_FOLLOW | NO_BLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return null
    if (code === 'ELOOP') throw new PathRefusedError(`Refused: '${file}' is a symbolic link`)
    throw error
  }
  try {
    return await requireRegularFile(handle, file)
  } finally {
    await handle.close()
  }
}

/**
 * Writes `data` as the file's new content by replacement: a new file beside
 * it, flushed, renamed over it. An existing file must be a regular file with
 * one name (its permissions are kept); the rename replaces the name, never
 * writing through whatever the name leads to.
 */
export async function replaceFile(file: string, data: string | Uint8Array, mode?: number): Promise<void> {
  const existing = await existingSingleFile(file)
  const temporary = path.join(path.dirname(file), `.${path.basename(file).slice(0, 40)}.switchboard-${randomUUID()}.tmp`)
  const handle = await fs.open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW, 0o666)
  try {
    try {
      await handle.writeFile(data)
      const keep = mode ?? (existing ? existing.mode & 0o7777 : undefined)
      if (keep !== undefined) await handle.chmod(keep)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.rename(temporary, file)
  } catch (error) {
    await fs.rm(temporary, { force: true })
    throw error
  }
}

/** `fs/read_text_file` semantics: optional 1-based start line and line limit. */
export async function readTextFile(file: string, line?: number | null, limit?: number | null): Promise<string> {
  const handle = await fs.open(file, constants.O_RDONLY | NO_FOLLOW | NO_BLOCK)
  let text: string
  try {
    const { size } = await requireRegularFile(handle, file)
    if (size > MAX_READ_BYTES) {
      throw new PathRefusedError(`Refused: '${file}' is ${Math.round(size / 1048576)} MB; files of at most ${MAX_READ_BYTES / 1048576} MB are read`)
    }
    text = await handle.readFile('utf8')
  } finally {
    await handle.close()
  }
  return linesOf(text, line, limit)
}

/** `fs/read_text_file`'s optional 1-based start line and line limit, applied to a file's text. */
export function linesOf(text: string, line?: number | null, limit?: number | null): string {
  if (line == null && limit == null) return text
  const lines = text.split('\n')
  const start = Math.max(0, (line ?? 1) - 1)
  const end = limit == null ? lines.length : start + Math.max(0, limit)
  return lines.slice(start, end).join('\n')
}

/** `fs/write_text_file`: missing folders are made; the file is replaced (replaceFile), never written through a link. */
export async function writeTextFile(file: string, content: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true })
  await replaceFile(file, content)
}
