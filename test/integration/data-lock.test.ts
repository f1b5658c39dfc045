import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openHost, removeDir, tempDir, waitUntil } from '../helpers'

/** One writer per data folder: a second host is refused with who holds it; a stale lock is taken over. */

let dataDir: string
beforeEach(async () => (dataDir = await tempDir('lock')))
afterEach(() => removeDir(dataDir))

describe('the data folder lock', () => {
  it('refuses a second host on the same folder until the first closes', async () => {
    const first = await openHost(dataDir)
    await expect(openHost(dataDir)).rejects.toThrow(
      new RegExp(`Another Switchboard \\(process ${process.pid}, .*is using the data folder .*Close it first, or use another data folder`)
    )
    await first.close()
    const second = await openHost(dataDir)
    await second.close()
    expect(existsSync(join(dataDir, 'switchboard.lock'))).toBe(false)
  })

  it('refuses while another live process holds it, and takes over once that process is gone', async () => {
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' })
    const owner = { pid: holder.pid, hostname: hostname(), startedAt: '2026-11-23T08:00:00.000Z' }
    await writeFile(join(dataDir, 'switchboard.lock'), JSON.stringify(owner))
    await expect(openHost(dataDir)).rejects.toThrow(`Another Switchboard (process ${holder.pid}, started 2026-11-23T08:00:00.000Z)`)
    holder.kill('SIGKILL')
    await new Promise((resolve) => holder.once('exit', resolve))
    const host = await openHost(dataDir)
    expect(await host.request('projects.list', {})).toEqual([])
    await host.close()
  })
  it('takes over from a holder killed but not yet reaped (a zombie), as after a kill -9 of serve and its Host', async () => {
    if (process.platform !== 'linux') return
    // A child that exits at once under a parent that never waits for it (sleep): a zombie for as long as sleep runs.
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] })
    try {
      const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()))))
      await waitUntil('the child is a zombie', async () => /^\d+ \(.*\) Z/.test(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')))
      const owner = { pid, hostname: hostname(), startedAt: '2026-11-23T08:00:00.000Z' }
      await writeFile(join(dataDir, 'switchboard.lock'), JSON.stringify(owner))
      const host = await openHost(dataDir)
      expect(await host.request('projects.list', {})).toEqual([])
      await host.close()
    } finally {
      parent.kill('SIGKILL')
    }
  })
})
