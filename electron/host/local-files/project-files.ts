import { promises as fs } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Attachment } from '../../../shared/attachment'
import { confinePath, hardLinkRefusal, PathRefusedError } from './fs-boundary'

/**
 * The files of a project, for @-mentions in the composer (`files.list`), and
 * showing a path from the thread in the system's file manager (`files.reveal`).
 * The listing walks the project folder breadth-first without following
 * symbolic links, skips version-control and dependency folders, stops at a cap
 * (and says so), and is kept a few seconds so typing a query does not walk
 * the tree on every key.
 */

export interface ProjectFile {
  /** Absolute path. */
  path: string
  /** Relative to the project folder, with `/` separators. */
  relative: string
}

export interface FileListing {
  files: ProjectFile[]
  /** True when the walk stopped at the cap: some files were not looked at. */
  truncated: boolean
}

/** Folders never listed: version control, dependencies, caches. */
export const SKIPPED = new Set(['.git', '.hg', '.svn', 'node_modules', '.venv', '__pycache__', '.cache', '.next', '.turbo'])
export const MAX_FILES = 20_000
const MAX_DIRS = 5_000
const KEEP_MS = 5_000

export async function walkProject(root: string, maxFiles = MAX_FILES): Promise<FileListing> {
  const files: ProjectFile[] = []
  const queue: string[] = [root]
  let dirs = 0
  let truncated = false
  for (let dir = queue.shift(); dir !== undefined; dir = queue.shift()) {
    if (++dirs > MAX_DIRS) {
      truncated = true
      break
    }
    let entries: import('node:fs').Dirent[]
    try {
      entries = await fs.readdir(dir, { withFileTypes: true })
    } catch {
      continue // unreadable folder: skipped, like the file manager would show it empty
    }
    entries.sort((a, b) => a.name.localeCompare(b.name))
    for (const entry of entries) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) queue.push(path)
      } else if (entry.isFile()) {
        if (files.length >= maxFiles) {
          truncated = true
          break
        }
        files.push({ path, relative: relative(root, path).split(sep).join('/') })
      }
    }
    if (truncated) break
  }
  return { files, truncated }
}

/**
 * The files matching `query`, best first: the name starts with it, the name
 * contains it, the path contains it, then the path holds its letters in order.
 * Shorter paths first within a rank. An empty query lists the shallowest files.
 */
export function rankFiles(files: ProjectFile[], query: string, limit: number): ProjectFile[] {
  const q = query.trim().toLowerCase()
  const scored: { file: ProjectFile; rank: number }[] = []
  for (const file of files) {
    const rel = file.relative.toLowerCase()
    const name = rel.slice(rel.lastIndexOf('/') + 1)
    let rank: number
    if (!q) rank = 0
    else if (name.startsWith(q)) rank = 0
    else if (name.includes(q)) rank = 1
    else if (rel.includes(q)) rank = 2
    else if (isSubsequence(q, rel)) rank = 3
    else continue
    scored.push({ file, rank })
  }
  scored.sort(
    (a, b) =>
      a.rank - b.rank ||
      depth(a.file.relative) - depth(b.file.relative) ||
      a.file.relative.length - b.file.relative.length ||
      a.file.relative.localeCompare(b.file.relative)
  )
  return scored.slice(0, limit).map((s) => s.file)
}

function depth(rel: string): number {
  let n = 0
  for (const c of rel) if (c === '/') n++
  return n
}

function isSubsequence(needle: string, haystack: string): boolean {
  let i = 0
  for (const c of haystack) if (c === needle[i] && ++i === needle.length) return true
  return needle.length === 0
}

export class ProjectFiles {
  private readonly kept = new Map<string, { at: number; listing: Promise<FileListing> }>()

  /** `key` names the folder (on its host, for one elsewhere); `walk` lists it when what is kept is too old. */
  async list(key: string, query: string, limit: number, walk: () => Promise<FileListing>): Promise<FileListing> {
    const now = Date.now()
    let entry = this.kept.get(key)
    if (!entry || now - entry.at > KEEP_MS) {
      entry = { at: now, listing: walk() }
      this.kept.set(key, entry)
      // A failed walk is not kept.
      entry.listing.catch(() => this.kept.delete(key))
    }
    const listing = await entry.listing
    return { files: rankFiles(listing.files, query, limit), truncated: listing.truncated }
  }
}

/**
 * Checks that `path` is an existing file or folder inside one of `roots`
 * (symbolic links followed) and returns its real path; throws a sentence
 * saying why not.
 */
export async function existingPathInside(path: string, roots: string[]): Promise<string> {
  let real: string
  try {
    real = await confinePath(path, roots)
  } catch (error) {
    if (error instanceof PathRefusedError) throw new Error(error.message.replace(/^Refused: /, 'Cannot show this path: '))
    throw error
  }
  try {
    await fs.stat(real)
  } catch {
    throw new Error(`Cannot show ${path}: it does not exist (any more)`)
  }
  return real
}

/**
 * Refuses a prompt whose file links (@-mentions, `resource_link`s to
 * `file:` URIs on this computer) name a regular file with more than one name:
 * a hard link in the project may be a file outside it, which the agent would
 * then read on the user's word. Throws a sentence naming the file.
 */
export async function refuseLinkedMentions(attachments: Attachment[]): Promise<void> {
  for (const attachment of attachments) {
    if (attachment.type !== 'resource_link' || !/^file:/i.test(attachment.uri)) continue
    let file: string
    try {
      file = fileURLToPath(attachment.uri)
    } catch {
      continue // not a path on this computer: nothing here to look at
    }
    const stat = await fs.lstat(file).catch(() => null)
    if (stat?.isFile() && stat.nlink > 1) {
      throw new Error(`${hardLinkRefusal(file, stat.nlink).message.replace(/^Refused: /, 'Not sent: ')}; mention another file or remove the link`)
    }
  }
}
