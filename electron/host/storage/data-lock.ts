import { promises as fs } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { PRIVATE_FILE_MODE } from './private-files'
import { isRunning } from '../child-processes/running'

/**
 * One writer per data folder: the app and `npm run serve` on the same folder
 * would overwrite each other's db.json. The lock file names its owner; one
 * whose process is gone (or is a zombie: killed, not yet reaped) is stale
 * and taken over.
 */

export interface DataLock {
  release(): Promise<void>
}

interface LockOwner {
  pid: number
  hostname: string
  startedAt: string
}

/** Folders locked by hosts of this very process (a pid check cannot tell those apart). */
const lockedHere = new Set<string>()

export async function acquireDataLock(dataDir: string): Promise<DataLock> {
  const file = join(dataDir, 'switchboard.lock')
  if (lockedHere.has(file)) throw new Error(inUse(dataDir, { pid: process.pid, hostname: hostname(), startedAt: 'earlier' }))
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() }
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.writeFile(file, JSON.stringify(owner), { flag: 'wx', mode: PRIVATE_FILE_MODE })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error
      const current = await readOwner(file)
      if (current && current.hostname === owner.hostname && isRunning(current.pid)) throw new Error(inUse(dataDir, current))
      // Stale (its process is gone, or unreadable): take it over.
      await fs.rm(file, { force: true })
    }
  }
  lockedHere.add(file)
  return {
    async release() {
      if (!lockedHere.delete(file)) return
      const current = await readOwner(file)
      if (current?.pid === owner.pid && current.startedAt === owner.startedAt) await fs.rm(file, { force: true })
    }
  }
}

function inUse(dataDir: string, owner: LockOwner): string {
  return (
    `Another Switchboard (process ${owner.pid}, started ${owner.startedAt}) is using the data folder ${dataDir}. ` +
    'Close it first, or use another data folder (--data-dir or SWITCHBOARD_DATA_DIR).'
  )
}

async function readOwner(file: string): Promise<LockOwner | null> {
  try {
    const value = JSON.parse(await fs.readFile(file, 'utf8')) as LockOwner
    return typeof value.pid === 'number' ? value : null
  } catch {
    return null
  }
}
