import { fork } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { LOGIN_SHELL_ENV } from './child-processes/environment'
import { HOST_EXEC_ARGV } from './host-process/exec-argv'
import { firstScreenBeside } from './host-process/first-screen-module'
import type { FromHost, ToHost } from './host-process/host-channel'
import { HostSupervisor, type HostProcess } from './host-process/host-supervisor'
import { readVersion } from './web/version'

/**
 * `npm run serve`: the Host without Electron, serving the built renderer and
 * the contract over a loopback WebSocket. The Host and its server run in a
 * process of their own that this one supervises (host-supervisor.ts, as the
 * desktop app does): a Host that dies or hangs is started again on the same
 * port and token, so open pages reconnect. Prints the URL (with its token) to
 * open in a browser. The port and the token are those of the last run on the
 * same data folder (serving.ts), so a page left open reconnects by itself.
 */

/** Set in the environment of the Host's process that serve forks (this script again). */
const SERVE_HOST_ENV = 'SWITCHBOARD_SERVE_HOST'

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
  const open = {
    dataDir,
    version: readVersion(),
    loginShell: process.env[LOGIN_SHELL_ENV] === '1',
    shell: 'serve' as const,
    serve: { rendererDir, port, newToken: values['new-token'] }
  }
  const script = fileURLToPath(import.meta.url)
  let started = false
  let stopping = false
  // The Host and its WebSocket server run in a process of their own, supervised here as the desktop app's main
  // process supervises its utility process (host-supervisor.ts): started again when it dies or hangs.
  const supervisor = new HostSupervisor({
    open,
    start: () => forkedHost(script),
    onUp: (_host, ready) => {
      if (started) {
        console.log('The Switchboard host was started again; open pages reconnect by themselves.')
        return
      }
      started = true
      // A restart keeps the address and token it has now (also when --port 0 chose a free port): pages opened with it reconnect.
      open.serve.newToken = false
      if (ready.url) open.serve.port = Number(new URL(ready.url).port)
      for (const warning of ready.warnings) console.warn(`warning: ${warning}`)
      for (const note of ready.notes ?? []) console.log(note)
      console.log(`Switchboard is serving ${dataDir}`)
      console.log(`Open ${ready.url}`)
      console.log('A change that would run a program (an agent, an MCP server, a sign-in) is confirmed with a code printed here.')
    },
    onDown: (reason) => console.error(reason),
    onGaveUp: ({ cause, logFile }) => {
      console.error(`switchboard serve: ${cause}`)
      console.error(`The host's log: ${logFile}`)
      void stop(1)
    },
    pingEveryMs: Number(process.env.SWITCHBOARD_HOST_PING_MS) || undefined,
    deadAfterMs: Number(process.env.SWITCHBOARD_HOST_DEAD_MS) || undefined
  })
  const stop = async (code: number): Promise<void> => {
    if (stopping) return
    stopping = true
    await supervisor.stop()
    process.exit(code)
  }
  process.on('SIGINT', () => void stop(0))
  process.on('SIGTERM', () => void stop(0))
  await supervisor.start()
}

/** The Host's process under serve: this script again, told so by its environment, with an IPC channel to this one. */
function forkedHost(script: string): HostProcess {
  const child = fork(script, [], {
    env: { ...process.env, [SERVE_HOST_ENV]: '1' },
    // stdout is the console's (the confirmation codes are printed there, never logged); stderr goes to the log.
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    serialization: 'advanced',
    execArgv: [...process.execArgv, ...HOST_EXEC_ARGV]
  })
  return {
    pid: child.pid,
    send: (message) => {
      if (child.connected) child.send(message)
    },
    onMessage: (listener) => child.on('message', (message: FromHost) => listener(message)),
    onExit: (listener) => child.once('exit', (code, signal) => listener(code, signal)),
    onOutput: (listener) => child.stderr?.on('data', listener),
    kill: () => child.kill('SIGKILL')
  }
}

/**
 * In the Host's process: the link to serve's supervisor is Node's IPC channel. The Host's code is imported here
 * only: the supervisor, which never runs it, stays a small process (about 60 MB of RSS, not 105).
 */
async function runAsHost(): Promise<void> {
  const { runHostProcess } = await import('./host-process/host-child')
  const host = runHostProcess(
    {
      send: (message) => {
        if (process.connected) process.send?.(message)
      },
      onMessage: (listener) => process.on('message', (message: ToHost) => listener(message, []))
    },
    firstScreenBeside(import.meta.url)
  )
  // Ctrl-C reaches every process of the terminal's group: the supervisor asks this one to close.
  process.on('SIGINT', () => undefined)
  process.on('SIGTERM', () => undefined)
  // The supervisor is gone (killed): close, and go too.
  process.on('disconnect', () => void host.close().finally(() => process.exit(0)))
}

if (process.env[SERVE_HOST_ENV] === '1')
  runAsHost().catch((error: Error) => {
    console.error(`switchboard serve: the Host's code could not load: ${error.stack ?? error.message}`)
    process.exit(1)
  })
else
  main().catch((error: Error) => {
    console.error(`switchboard serve: ${error.message}`)
    process.exit(1)
  })
