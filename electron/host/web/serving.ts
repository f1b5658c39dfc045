import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { AtomicTextFile } from '../storage/atomic-file'
import { ConsoleCodes } from './console-codes'
import { Host, type HostOptions } from '../host'
import { openDoor } from './door'
import { startWsServer, type RunningServer } from './ws-server'

/**
 * `npm run serve` as a whole, without its command line: the Host on a data
 * folder and the WebSocket server in front of it, on the port and with the
 * token of the last run on that folder, so a page left open reconnects by
 * itself after a restart. Both are kept in `serve.json` in the data folder,
 * readable by its owner only (mode 0600): the token is what lets a page in.
 * The same port and token are the Host's door (door.ts) while it runs.
 */

export interface ServeOptions {
  dataDir: string
  rendererDir: string
  version: string
  /** `--port`: this port, and no other (a taken one is an error). Without it, the last run's port when it is free. */
  port?: number
  /** `--new-token`: a new token; pages opened with the old address are refused. */
  newToken?: boolean
  /** Anything else the Host is opened with (tests: no presets). */
  host?: Omit<HostOptions, 'dataDir' | 'version' | 'confirmCommand'>
  /**
   * Where the codes that confirm a change that runs a program are printed,
   * with what would run (console-codes.ts): the console (stdout) unless a test reads them.
   */
  print?: (line: string) => void
}

export interface Serving {
  host: Host
  server: RunningServer
  /** Lines for the console: what changed since the last run and why (a port taken, a new token). */
  notes: string[]
  close(): Promise<void>
}

export const SERVE_STATE_FILE = 'serve.json'

interface ServeState {
  port: number
  token: string
}

export async function startServing(options: ServeOptions): Promise<Serving> {
  // A change that would run a program is confirmed with a code only this console shows.
  const codes = new ConsoleCodes({ print: options.print ?? ((line) => console.log(line)) })
  const host = await Host.open({ ...options.host, dataDir: options.dataDir, version: options.version, confirmCommand: codes.confirm })
  try {
    const file = new AtomicTextFile(join(options.dataDir, SERVE_STATE_FILE), 0o600)
    const kept = await readServeState(file)
    const notes = [...kept.notes]
    let token = kept.state?.token
    if (!token || options.newToken) {
      if (token) notes.push('A new token was made (--new-token): pages opened with the old address are refused; open the new one.')
      token = randomBytes(24).toString('base64url')
    }
    const listen = (port: number): Promise<RunningServer> => startWsServer({ host, rendererDir: options.rendererDir, port, token })
    let server: RunningServer
    if (options.port !== undefined) {
      server = await listen(options.port).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EADDRINUSE') throw error
        throw new Error(`Port ${options.port} is taken by another program: choose another with --port, or leave --port out to take a free one`)
      })
    } else if (!kept.state?.port) {
      server = await listen(0)
    } else {
      try {
        server = await listen(kept.state.port)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code !== 'EADDRINUSE' && code !== 'EACCES') throw error
        server = await listen(0)
        notes.push(
          `Port ${kept.state.port}, used last time, is taken (${code}); serving on port ${server.port} instead. Pages opened with the old address cannot reconnect: open the new one.`
        )
      }
    }
    await file.write(JSON.stringify({ port: server.port, token } satisfies ServeState, null, 2))
    // The `switchboard` command finds this Host through its door (door.ts) instead of opening the data folder a second time.
    const door = await openDoor(options.dataDir, server)
    return {
      host,
      server,
      notes,
      close: async () => {
        await door.close()
        await server.close()
        await host.close()
      }
    }
  } catch (error) {
    await host.close()
    throw error
  }
}

/** The last run's port and token, when they can be trusted; `notes` say why not. */
async function readServeState(file: AtomicTextFile): Promise<{ state: Partial<ServeState> | null; notes: string[] }> {
  let text: string | null
  try {
    text = await file.read()
  } catch (error) {
    return { state: null, notes: [`${file.file} could not be read (${(error as Error).message}); a new token and port were chosen.`] }
  }
  if (text === null) return { state: null, notes: [] }
  let value: { port?: unknown; token?: unknown }
  try {
    value = JSON.parse(text) as typeof value
    if (typeof value !== 'object' || value === null) throw new Error('not an object')
  } catch (error) {
    return { state: null, notes: [`${file.file} could not be read (${(error as Error).message}); a new token and port were chosen.`] }
  }
  const port = Number.isInteger(value.port) && (value.port as number) > 0 && (value.port as number) <= 65535 ? (value.port as number) : undefined
  let token = typeof value.token === 'string' && /^[\w-]{16,200}$/.test(value.token) ? value.token : undefined
  const notes: string[] = []
  if (process.platform !== 'win32' && token) {
    const { mode } = await fs.stat(file.file)
    if ((mode & 0o077) !== 0) {
      token = undefined
      notes.push(
        `${file.file} could be read by other users of this machine; its token is no longer trusted and a new one was made (the file is owner-only again).`
      )
    }
  }
  return { state: { port, token }, notes }
}
