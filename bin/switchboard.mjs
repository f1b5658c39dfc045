#!/usr/bin/env node
// The `switchboard` command from a checkout (`npm link`, `npx switchboard`): runs the built command,
// out/main/cli.js (electron/host/cli/main.ts), telling it how to start the app when it is not running
// (this checkout's Electron on this folder).
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(root, 'out', 'main', 'cli.js')
if (!existsSync(cli)) {
  console.error(`switchboard: the command is not built yet (${cli} is missing): run 'npm run build' in ${root} first.`)
  process.exit(2)
}
if (!process.env.SWITCHBOARD_APP_COMMAND) {
  const electron = electronBinary()
  if (electron) process.env.SWITCHBOARD_APP_COMMAND = JSON.stringify([electron, root])
}
await import(pathToFileURL(cli).href)

/**
 * This checkout's Electron, where `npm start` put it (node_modules/electron/path.txt), or ELECTRON_EXEC_PATH;
 * null when there is none yet (the command then says to start the app). Never `require('electron')`: that
 * downloads the binary when it is missing.
 */
function electronBinary() {
  const given = process.env.ELECTRON_EXEC_PATH
  if (given) return existsSync(given) ? given : null
  try {
    const electronDir = join(root, 'node_modules', 'electron')
    const binary = join(electronDir, 'dist', readFileSync(join(electronDir, 'path.txt'), 'utf8').trim())
    return existsSync(binary) ? binary : null
  } catch {
    return null
  }
}
