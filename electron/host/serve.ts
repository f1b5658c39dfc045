import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { LOGIN_SHELL_ENV } from './environment'
import { Host } from './host'
import { startWsServer } from './ws-server'
import { readVersion } from './version'

/**
 * `npm run serve`: the Host without Electron, serving the built renderer and
 * the contract over a loopback WebSocket. Prints the URL (with its token) to
 * open in a browser.
 */

const USAGE = `Usage: node out/main/serve.js [--data-dir DIR] [--port N] [--renderer-dir DIR]
  --data-dir      where db.json, transcripts and logs live (default: $SWITCHBOARD_DATA_DIR or ~/.switchboard)
  --port          port on 127.0.0.1 (default: a free one)
  --renderer-dir  the built renderer (default: out/renderer next to this script)`

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      port: { type: 'string' },
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
  const port = values.port === undefined ? 0 : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number (got '${values.port}')`)

  // Started from a terminal or by a script that set its environment on purpose: the login shell's is read only when asked.
  const host = await Host.open({ dataDir, version: readVersion(), loginShell: process.env[LOGIN_SHELL_ENV] === '1' })
  const server = await startWsServer({ host, rendererDir, port })
  for (const warning of (await host.request('app.info', {})).warnings) console.warn(`warning: ${warning}`)
  console.log(`Switchboard is serving ${dataDir}`)
  console.log(`Open ${server.url}`)

  let stopping = false
  const stop = async (): Promise<void> => {
    if (stopping) return
    stopping = true
    await server.close()
    await host.close()
    process.exit(0)
  }
  process.on('SIGINT', () => void stop())
  process.on('SIGTERM', () => void stop())
}

main().catch((error: Error) => {
  console.error(`switchboard serve: ${error.message}`)
  process.exit(1)
})
