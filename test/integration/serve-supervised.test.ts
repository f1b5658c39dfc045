import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { hostLogFile } from '../../electron/host/host-process/host-supervisor'
import { listProcesses } from '../../electron/host/child-processes/process-tree'
import { isProcessRunning, removeDir, tempDir, waitUntil } from '../helpers'

/**
 * `npm run serve` as shipped (out/main/serve.js, run `npx electron-vite build` first): the Host and its
 * WebSocket server run in a process serve forks and supervises (electron/host/host-process/host-supervisor.ts, the same
 * code as the desktop app's). A Host killed outright is started again on the same address, with the same
 * token; one that cannot open its data folder is not, and serve says why and where the log is.
 */

const serveJs = fileURLToPath(new URL('../../out/main/serve.js', import.meta.url))

let root: string
let serve: ChildProcess | null = null

beforeEach(async () => {
  if (!existsSync(serveJs)) throw new Error('out/main/serve.js is not built: run `npx electron-vite build` first')
  root = await tempDir('serve-supervised')
})

afterEach(async () => {
  if (serve && serve.exitCode === null && serve.signalCode === null) {
    serve.kill('SIGKILL')
    await new Promise((resolve) => serve!.once('exit', resolve))
  }
  serve = null
  await removeDir(root)
})

function start(dataDir: string): { child: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [serveJs, '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  serve = child
  let out = ''
  let err = ''
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, out: () => out, err: () => err, exited }
}

const hostsOf = (pid: number): number[] =>
  listProcesses()
    .filter((p) => p.ppid === pid)
    .map((p) => p.pid)

async function accepted(url: string): Promise<boolean> {
  const { origin, hash } = new URL(url)
  const token = hash.replace('#token=', '')
  try {
    const response = await fetch(`${origin}/auth`, { headers: { authorization: `Bearer ${token}` } })
    return ((await response.json()) as { accepted?: boolean }).accepted === true
  } catch {
    return false
  }
}

describe.runIf(process.platform === 'linux')('npm run serve, supervised', () => {
  it('starts a Host killed with SIGKILL again on the same address and token, and stops it on SIGTERM', async () => {
    const run = start(join(root, 'data'))
    const url = (await waitUntil('the address', () => /^Open (\S+)$/m.exec(run.out())?.[1]))!
    expect(await accepted(url)).toBe(true)
    const [host] = hostsOf(run.child.pid!)
    expect(host).toBeGreaterThan(0)
    // Its `gc` exposed: it hands its garbage back once quiet (host-process/quiet-gc.ts); its young generation
    // 2 × 8 MB, not Node's 2 × 16; no memory reducer, whose collections woke an idle Host (host-process/exec-argv.ts).
    expect(readFileSync(`/proc/${host}/cmdline`, 'utf8').split('\0')).toEqual(
      expect.arrayContaining(['--expose-gc', '--max-semi-space-size=8', '--no-memory-reducer'])
    )

    process.kill(host, 'SIGKILL')
    await waitUntil('the Host started again', () => run.out().includes('The Switchboard host was started again'))
    const [again] = hostsOf(run.child.pid!)
    expect(again).not.toBe(host)
    expect(await accepted(url)).toBe(true)
    expect(run.err()).toContain('The Switchboard host stopped (it was killed (SIGKILL)); starting it again…')

    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    expect(isProcessRunning(again)).toBe(false)
    expect(existsSync(join(root, 'data', 'switchboard.lock'))).toBe(false)
  })

  it('a Host that cannot open its data folder is not started again: serve says why and where the log is, and exits 1', async () => {
    const dataDir = join(root, 'data')
    await mkdir(dataDir, { recursive: true })
    await writeFile(join(dataDir, 'db.json'), JSON.stringify({ version: 99, projects: [], agents: [], sessions: [] }))
    const run = start(dataDir)
    expect(await run.exited).toBe(1)
    expect(run.err()).toContain('switchboard serve: ')
    expect(run.err()).toContain('was written by a newer Switchboard (database version 99')
    expect(run.err()).toContain(`The host's log: ${hostLogFile(dataDir)}`)
    const log = await readFile(hostLogFile(dataDir), 'utf8')
    expect(log.match(/starting the Host/g)).toHaveLength(1)
  })
})
