import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Host } from '../host'
import { AtomicTextFile } from '../storage/atomic-file'
import { startWsServer } from './ws-server'
import { isRunning } from '../child-processes/running'

/**
 * How a second process on this machine reaches the Host that runs on a data
 * folder (the `switchboard` command, electron/host/cli/): `host-door.json` in
 * the data folder names the Host's process and the loopback port and token of
 * its WebSocket transport. Written once the server listens, owner-only (0600),
 * removed when the Host closes. The token lets anything that holds it drive
 * the Host as a window would, so a door others could read is not trusted.
 */

export const DOOR_FILE = 'host-door.json'

export interface Door {
  pid: number
  port: number
  token: string
}

/** Writes the door for this process's Host; `close` removes it (only while it is still this process's). */
export async function openDoor(dataDir: string, server: { port: number; token: string }): Promise<{ close(): Promise<void> }> {
  const file = new AtomicTextFile(join(dataDir, DOOR_FILE), 0o600)
  const door: Door = { pid: process.pid, port: server.port, token: server.token }
  await file.write(JSON.stringify(door))
  return {
    async close() {
      const current = await readDoorFile(join(dataDir, DOOR_FILE)).catch(() => null)
      if (current?.pid === door.pid && current.port === door.port) await fs.rm(file.file, { force: true })
    }
  }
}

/**
 * The desktop app's door: its Host has no WebSocket of its own (its windows
 * talk over ports), so one is opened for the command, on loopback, with a new
 * token each start, and closed with the Host.
 */
export async function serveDoor(host: Host, dataDir: string, rendererDir: string): Promise<{ close(): Promise<void> }> {
  const server = await startWsServer({ host, rendererDir })
  try {
    const door = await openDoor(dataDir, server)
    return {
      async close() {
        await door.close()
        await server.close()
      }
    }
  } catch (error) {
    await server.close()
    throw error
  }
}

/**
 * The door of the Host running on `dataDir`, or null when none runs there (no
 * door, or one left by a process that is gone). Throws when the door can be
 * read by other users (its token is not to be used) or is not a door.
 */
export async function findDoor(dataDir: string): Promise<Door | null> {
  const file = join(dataDir, DOOR_FILE)
  const door = await readDoorFile(file)
  if (!door || !isRunning(door.pid)) return null
  if (process.platform !== 'win32') {
    const { mode } = await fs.stat(file)
    if ((mode & 0o077) !== 0) {
      throw new Error(`${file} can be read by other users of this machine, so its token is not used; restart Switchboard to make a new one.`)
    }
  }
  return door
}

async function readDoorFile(file: string): Promise<Door | null> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
  let value: Partial<Door>
  try {
    value = JSON.parse(text) as Partial<Door>
  } catch {
    throw new Error(`${file} is not a Switchboard door file (not JSON); if no Switchboard runs on this data folder, remove it.`)
  }
  const { pid, port, token } = value
  if (!Number.isInteger(pid) || !Number.isInteger(port) || typeof token !== 'string' || !/^[\w-]{16,200}$/.test(token)) {
    throw new Error(`${file} is not a Switchboard door file; if no Switchboard runs on this data folder, remove it.`)
  }
  return { pid: pid as number, port: port as number, token }
}
