import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { APP_COMMAND_ENV, RELAY_ENV } from './host/cli/launch-env'

/**
 * The `switchboard` command of an AppImage. An AppImage is mounted in a new place at each start, so the command
 * installed for it (electron/shell-command.ts) runs the AppImage itself, marked (SWITCHBOARD_CLI=1, then the
 * command's arguments after `--switchboard-cli`): the app's main process starts at once, before any window or lock,
 * runs the command's bundle with its own Electron as Node (as build/bin/switchboard does), and leaves with its exit
 * code. It stays while the command runs: the mount (and app.asar in it) stays as long.
 */
export const RELAY_MARK = '--switchboard-cli'

export function isCliRelay(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[RELAY_ENV] === '1'
}

/** Runs the command with the arguments after the mark (the AppImage's own start may put a --no-sandbox before them). */
export function relayToCli(mainDir: string, exit: (code: number) => void): void {
  const mark = process.argv.indexOf(RELAY_MARK)
  const args = mark === -1 ? [] : process.argv.slice(mark + 1)
  const { [RELAY_ENV]: _mark, ...env } = process.env
  const child = spawn(process.execPath, [join(mainDir, 'cli.js'), ...args], {
    stdio: 'inherit',
    env: {
      ...env,
      ELECTRON_RUN_AS_NODE: '1',
      // The command starts the app (when it is asked to) as the AppImage, not as this mount's executable.
      [APP_COMMAND_ENV]: env[APP_COMMAND_ENV] ?? JSON.stringify([env.APPIMAGE ?? process.execPath])
    }
  })
  // Ctrl-C reaches the command (the same terminal's process group); this process waits for it to leave.
  process.on('SIGINT', () => undefined)
  child.once('error', (error) => {
    process.stderr.write(`switchboard: could not run the command: ${error.message}\n`)
    exit(1)
  })
  child.once('exit', (code, signal) => exit(code ?? (signal ? 128 : 1)))
}
