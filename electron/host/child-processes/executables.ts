import { constants, promises as fs } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'

/**
 * Finds a command the way spawn will: an absolute path as it is, a bare name
 * on PATH (with PATHEXT on Windows). Null when there is nothing to run, so the
 * user can be told before anything is started.
 */
export async function findExecutable(command: string, env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const extensions = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : ['']
  const candidates =
    isAbsolute(command) || command.includes('/') || command.includes('\\')
      ? [command]
      : (env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((dir) => join(dir, command))
  for (const candidate of candidates) {
    for (const extension of extensions) {
      try {
        await fs.access(candidate + extension, process.platform === 'win32' ? constants.F_OK : constants.X_OK)
        if ((await fs.stat(candidate + extension)).isFile()) return candidate + extension
      } catch {
        // not here
      }
    }
  }
  return null
}
