import { promises as fs } from 'node:fs'
import { isAbsolute, resolve, win32 } from 'node:path'

/** A folder the user named, checked: absolute (in either path style), existing, a folder; returned resolved. `what` names it in errors. */
export async function checkedFolder(path: string, notAbsolute: (got: string) => string, what = 'Folder'): Promise<string> {
  const trimmed = path.trim()
  if (!isAbsolute(trimmed) && !win32.isAbsolute(trimmed)) throw new Error(notAbsolute(trimmed))
  const folder = resolve(trimmed)
  await assertDirectory(folder, what)
  return folder
}

export async function assertDirectory(folder: string, what = 'Folder'): Promise<void> {
  let stat
  try {
    stat = await fs.stat(folder)
  } catch {
    throw new Error(`${what} not found: ${folder}`)
  }
  if (!stat.isDirectory()) throw new Error(`${what === 'Folder' ? 'Not a folder' : `${what} is a file, not a folder`}: ${folder}`)
}
