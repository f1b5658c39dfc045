import { homedir } from 'node:os'
import { join, resolve } from 'node:path'

/**
 * The data folder the desktop app uses (Electron's `userData` for the app
 * named Switchboard), found without Electron: `--data-dir`, else
 * `SWITCHBOARD_DATA_DIR` (as the app and `serve` read it), else the
 * platform's place for it.
 */
export function dataFolder(given: string | undefined, env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (given) return resolve(given)
  if (env.SWITCHBOARD_DATA_DIR) return resolve(env.SWITCHBOARD_DATA_DIR)
  const home = homedir()
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Switchboard')
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Switchboard')
  return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'Switchboard')
}
