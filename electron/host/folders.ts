import { promises as fs } from 'node:fs'
import { isAbsolute, resolve, win32 } from 'node:path'

/** A folder the user named, checked: absolute (in either path style), existing, a folder; returned resolved. */
export async function checkedFolder(path: string, notAbsolute: (got: string) => string): Promise<string> {
  const trimmed = path.trim()
  if (!isAbsolute(trimmed) && !win32.isAbsolute(trimmed)) throw new Error(notAbsolute(trimmed))
  const folder = resolve(trimmed)
  await assertDirectory(folder)
  return folder
}

export async function assertDirectory(folder: string): Promise<void> {
  let stat
  try {
    stat = await fs.stat(folder)
  } catch {
    throw new Error(`Folder not found: ${folder}`)
  }
  if (!stat.isDirectory()) throw new Error(`Not a folder: ${folder}`)
}
