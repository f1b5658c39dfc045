import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { LOGIN_SHELL_ENV } from './environment'
import { firstScreenBeside } from './first-screen-module'
import { startServing } from './serving'
import { readVersion } from './version'

/**
 * `npm run serve`: the Host without Electron, serving the built renderer and
 * the contract over a loopback WebSocket. Prints the URL (with its token) to
 * open in a browser. The port and the token are those of the last run on the
 * same data folder (serving.ts), so a page left open reconnects by itself.
 */

const USAGE = `Usage: node out/main/serve.js [--data-dir DIR] [--port N] [--new-token] [--renderer-dir DIR]
  --data-dir      where db.json, transcripts and logs live (default: $SWITCHBOARD_DATA_DIR or ~/.switchboard)
  --port          port on 127.0.0.1 (default: the last run's on this data folder when it is free, else a free one)
  --new-token     a new token in the address (the last run's is kept otherwise); pages opened with the old one are refused
  --renderer-dir  the built renderer (default: out/renderer next to this script)`

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      'new-token': { type: 'boolean' },
      'renderer-dir': { type: 'string' },
      help: { type: 'boolean' }
    }
  })
  if (values.help) {
    console.log(USAGE)
    return
  }
  const here = dirname(fileURLToPath(import.meta.url))
  const dataDir = resolve(values['data-dir'] ?? process.env.SWITCHBOARD_DATA_DIR ?? join(homedir(), '.switchboard'))
  const rendererDir = resolve(values['renderer-dir'] ?? join(here, '..', 'renderer'))
  if (!existsSync(join(rendererDir, 'index.html'))) {
    throw new Error(`No built renderer in ${rendererDir}; run 'npm run build' first or pass --renderer-dir`)
  }
  const port = values.port === undefined ? undefined : Number(values.port)
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new Error(`--port must be a port number (got '${values.port}')`)
  }

  // The last resort: an error that got past the rooms (each reports and resets its own, room-errors.ts) is logged with
  // its stack and the Host goes on, as it would have without that room, instead of stopping every agent and window.
  process.on('uncaughtException', (error) => console.error('switchboard serve: an error nothing caught (the Host goes on):', error))
  process.on('unhandledRejection', (reason) => console.error('switchboard serve: a promise failed and nothing caught it (the Host goes on):', reason))

  // Started from a terminal or by a script that set its environment on purpose: the login shell's is read only when asked.
  const { host, server, notes, close } = await startServing({
    dataDir,
    rendererDir,
    version: readVersion(),
    port,
    newToken: values['new-token'],
    host: { loginShell: process.env[LOGIN_SHELL_ENV] === '1', firstScreen: firstScreenBeside(import.meta.url) }
  })
  for (const warning of (await host.request('app.info', {})).warnings) console.warn(`warning: ${warning}`)
  for (const note of notes) console.log(note)
  console.log(`Switchboard is serving ${dataDir}`)
  console.log(`Open ${server.url}`)
  console.log('A change that would run a program (an agent, an MCP server, a sign-in) is confirmed with a code printed here.')

  let stopping = false
  const stop = async (): Promise<void> => {
    if (stopping) return
    stopping = true
    await close()
    process.exit(0)
  }
  process.on('SIGINT', () => void stop())
  process.on('SIGTERM', () => void stop())
}

main().catch((error: Error) => {
  console.error(`switchboard serve: ${error.message}`)
  process.exit(1)
})
