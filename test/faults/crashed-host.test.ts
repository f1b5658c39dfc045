import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { isProcessRunning, openHost, removeDir, tempDir } from '../helpers'

/**
 * The app killed outright (no chance to stop anything): what its agents'
 * commands left running is found by the next start on the same data folder,
 * stopped, and the user is told. Linux only: elsewhere the processes cannot
 * be found once their parent is gone.
 */

let root: string
let host: Host | null = null
beforeEach(async () => {
  root = await tempDir('crashed-host')
})
afterEach(async () => {
  await host?.close()
  await removeDir(root)
})

describe.runIf(process.platform === 'linux')('after the app was killed', () => {
  it('the next start stops what the dead one left running, and says so', async () => {
    const dataDir = join(root, 'data')
    const projectDir = join(root, 'project')
    await mkdir(projectDir)
    const pidFile = join(root, 'left.pid')
    const tsx = createRequire(import.meta.url).resolve('tsx')
    const script = fileURLToPath(new URL('./crashing-host.ts', import.meta.url))
    const child = spawn(process.execPath, ['--import', tsx, script, dataDir, projectDir, join(root, 'agent-state'), pidFile], {
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve())
      child.on('exit', () => reject(new Error(`the host ended before it was ready: ${stderr}`)))
    })
    await expect.poll(() => existsSync(pidFile)).toBe(true)
    const left = Number((await readFile(pidFile, 'utf8')).trim())
    expect(isProcessRunning(left)).toBe(true)

    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    // Nobody stopped it: the command is still running with its host gone.
    expect(isProcessRunning(left)).toBe(true)

    host = await openHost(dataDir)
    await expect.poll(() => isProcessRunning(left)).toBe(false)
    const { warnings } = await host.request('app.info', {})
    expect(warnings).toEqual([
      expect.stringMatching(
        /^Switchboard did not shut down properly last time: \d+ process(es)? its agents had started (was|were) still running and (has|have) been stopped\.$/
      )
    ])
  })
})
