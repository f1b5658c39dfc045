#!/usr/bin/env node
// The `switchboard` command from a checkout (`npm link`, `npx switchboard`): runs the built command,
// out/main/cli.js (electron/host/cli/main.ts).
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(root, 'out', 'main', 'cli.js')
if (!existsSync(cli)) {
  console.error(`switchboard: the command is not built yet (${cli} is missing): run 'npm run build' in ${root} first.`)
  process.exit(2)
}
await import(pathToFileURL(cli).href)
