import { promises as fs } from 'node:fs'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'

/**
 * Confines an agent's file requests to the session's folders. Paths are
 * resolved (`..`), then symlinks are followed for the part that exists, so a
 * link inside the project that points elsewhere is refused too.
 */

export class PathRefusedError extends Error {}

/** Returns the real path to use, or throws PathRefusedError saying why. */
export async function confinePath(requested: string, roots: string[]): Promise<string> {
  if (typeof requested !== 'string' || requested.length === 0) {
    throw new PathRefusedError('Refused: the path is empty')
  }
  if (requested.includes('\0')) throw new PathRefusedError('Refused: the path contains a NUL byte')
  if (!isAbsolute(requested)) {
    throw new PathRefusedError(`Refused: '${requested}' is not an absolute path (ACP requires absolute paths)`)
  }
  const lexical = resolve(requested)
  const real = await realpathOfLongestExisting(lexical)
  for (const root of roots) {
    const realRoot = await realpathOfLongestExisting(resolve(root))
    if (isInside(realRoot, real)) return real
  }
  throw new PathRefusedError(
    `Refused: '${requested}' is outside the session's folder${roots.length > 1 ? 's' : ''} (${roots.join(', ')})`
  )
}

function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true
  const rel = relative(root, candidate)
  return rel !== '' && !rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel)
}

/** realpath of the deepest ancestor that exists, with the missing tail appended. */
async function realpathOfLongestExisting(path: string): Promise<string> {
  let current = path
  const tail: string[] = []
  for (;;) {
    try {
      const real = await fs.realpath(current)
      return tail.length ? resolve(real, ...tail.reverse()) : real
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error
      const parent = dirname(current)
      if (parent === current) return path
      tail.push(current.slice(parent.length).replace(/^[\\/]+/, ''))
      current = parent
    }
  }
}

/** `fs/read_text_file` semantics: optional 1-based start line and line limit. */
export async function readTextFile(path: string, line?: number | null, limit?: number | null): Promise<string> {
  const text = await fs.readFile(path, 'utf8')
  if (line == null && limit == null) return text
  const lines = text.split('\n')
  const start = Math.max(0, (line ?? 1) - 1)
  const end = limit == null ? lines.length : start + Math.max(0, limit)
  return lines.slice(start, end).join('\n')
}

export async function writeTextFile(path: string, content: string): Promise<void> {
  await fs.mkdir(dirname(path), { recursive: true })
  await fs.writeFile(path, content, 'utf8')
}
