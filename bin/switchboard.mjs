#!/usr/bin/env node
// The `switchboard` command from a checkout (`npm link`, `npx switchboard`): runs the built command,
// out/main/cli.js (electron/host/cli/main.ts), telling it how to start the app when it is not running
// (this checkout's Electron on this folder).
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(root, 'out', 'main', 'cli.js')
if (!existsSync(cli)) {
  console.error(`switchboard: the command is not built yet (${cli} is missing): run 'npm run build' in ${root} first.`)
  process.exit(2)
}
if (!process.env.SWITCHBOARD_APP_COMMAND) {
  try {
    // Under Node, the electron package's main export is the path of its binary.
    const electron = createRequire(import.meta.url)('electron')
    if (typeof electron === 'string' && existsSync(electron)) process.env.SWITCHBOARD_APP_COMMAND = JSON.stringify([electron, root])
  } catch {
    // No Electron here: the command says so when it would need to start the app.
  }
}
await import(pathToFileURL(cli).href)
