import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { appendFileSync, readFileSync, readdirSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { repoRoot } from './agents'
import { until } from './lib'
import { consoleCodes, servedUrl, WsClient } from './serve-client'

/**
 * The processes of the app under measurement, read from /proc: CPU time (utime + stime of /proc/<pid>/stat) and
 * resident set size (VmRSS of /proc/<pid>/status), of the served Host (`node out/main/serve.js`: a supervisor
 * process, the part of the desktop app's main process that watches the Host, and the Host it forks) and of
 * Chromium's processes by type (its own account, CDP's SystemInfo.getProcessInfo).
 */

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100

/** CPU seconds the process has used (user + system), or 0 when it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The fields after the command's name (which may hold spaces) in parentheses; utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/** A size in MB from /proc/<pid>/status: VmRSS (resident now) or VmHWM (its peak so far); throws when the process is gone. */
export function procStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`))
  if (!line) throw new Error(`/proc/${pid}/status has no ${field}`)
  return Number(/(\d+)/.exec(line)![1]) / 1024
}

/**
 * Resolves once the process has been quiet for `quietMs`: at most 1 % of a core (CPU time from /proc) and its RSS
 * within 1 MB, read every 100 ms; or after `timeoutMs` (then false). A Host quiet for 2 s has had its quiet collector's
 * look, which comes a second after the Host goes quiet (quiet-gc.ts): it has handed back its garbage or had none.
 */
export async function untilQuiet(pid: number, quietMs = 2_000, timeoutMs = 15_000): Promise<boolean> {
  const started = Date.now()
  const seen: { at: number; cpu: number; mb: number }[] = []
  for (;;) {
    const now = { at: Date.now(), cpu: cpuSeconds(pid), mb: rssMb(pid) }
    seen.push(now)
    while (seen.length > 1 && now.at - seen[1].at >= quietMs) seen.shift()
    const first = seen[0]
    if (now.at - first.at >= quietMs && now.cpu - first.cpu <= (0.01 * (now.at - first.at)) / 1000 + 1 / TICKS_PER_SECOND) {
      if (seen.every((s) => Math.abs(s.mb - now.mb) <= 1)) return true
    }
    if (now.at - started >= timeoutMs) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Resident set size in MB (VmRSS), or 0 when the process is gone. */
export function rssMb(pid: number): number {
  try {
    return procStatusMb(pid, 'VmRSS')
  } catch {
    return 0
  }
}

/** The processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  const children: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(join('/proc', name, 'stat'), 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  return children
}

export interface ChromiumProcess {
  type: string
  pid: number
}

/** Chromium's processes for `browser` (browser, GPU, renderers, utilities), by its own account. */
export async function chromiumProcesses(browser: Browser): Promise<ChromiumProcess[]> {
  const session = await browser.newBrowserCDPSession()
  try {
    const { processInfo } = (await session.send('SystemInfo.getProcessInfo' as never)) as { processInfo: { type: string; id: number }[] }
    return processInfo.map((p) => ({ type: p.type, pid: p.id }))
  } finally {
    await session.detach()
  }
}

/** `node out/main/serve.js` on a data folder, with its Host's process and a WebSocket client of its own. */
export interface Served {
  url: string
  /** serve.js itself: the supervisor (in the desktop app, this part of the main process). */
  supervisor: number
  /** The Host's process that serve.js forked (serve.js itself in a build from before it forked one). */
  host: number
  client: WsClient
  /** Sends a request that runs a program (agents.add), confirmed with the code serve prints. */
  confirmed<T>(method: string, params: object): Promise<T>
  close(): Promise<void>
  /**
   * Ends serve and its Host at once (SIGKILL), for a Host whose data folder is removed next: what its close would do
   * (the search index reading again the sessions used, 9–18 s after a fork of 100,000 entries) is read by nothing. Its
   * agents end as their stdin closes.
   */
  kill(): Promise<void>
}

export const WAKEUPS_PRELOAD = join(repoRoot, 'bench', 'wakeups-preload.cjs')
const GC_TRACE_PRELOAD = join(repoRoot, 'bench', 'gc-trace-preload.cjs')

/**
 * Starts serve.js (or the build BENCH_SERVE_JS names, to measure a version before); `wakeupsDir`: with
 * bench/wakeups-preload.cjs loaded in it and its Host (their wake-ups counted).
 */
export async function startServe(dataDir: string, wakeupsDir?: string): Promise<Served> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  if (wakeupsDir) Object.assign(env, { NODE_OPTIONS: `--require ${WAKEUPS_PRELOAD}`, BENCH_WAKEUPS_ROLE: 'agent', BENCH_WAKEUPS_DIR: wakeupsDir })
  // BENCH_GC_TRACE=<folder>: the Host's collections with V8's reasons (bench/gc-trace-preload.cjs), serve's console kept there.
  const gcTrace = process.env.BENCH_GC_TRACE
  if (gcTrace) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${GC_TRACE_PRELOAD}`.trim()
  const serveJs = process.env.BENCH_SERVE_JS ?? join(repoRoot, 'out', 'main', 'serve.js')
  const child: ChildProcess = spawn(process.execPath, [serveJs, '--data-dir', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  try {
    const codes = consoleCodes(child)
    if (gcTrace) keepConsole(child, join(gcTrace, `serve-${child.pid}.log`))
    const url = await servedUrl(child)
    // A build before serve forked its Host (BENCH_SERVE_JS) runs the Host in serve's own process.
    const hosts = childrenOf(child.pid!)
    if (hosts.length > 1) throw new Error(`serve.js (process ${child.pid}) has ${hosts.length} child processes; expected its Host alone`)
    const client = await WsClient.connect(url, () => undefined)
    return {
      url,
      supervisor: child.pid!,
      host: hosts[0] ?? child.pid!,
      client,
      confirmed: (method, params) => codes.confirmed(client, method, params),
      async close() {
        client.close()
        child.kill('SIGTERM')
        await exited
      },
      async kill() {
        client.close()
        child.kill('SIGKILL')
        for (const pid of hosts) {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {
            // Gone already.
          }
        }
        await exited
      }
    }
  } catch (error) {
    child.kill('SIGTERM')
    await exited
    throw error
  }
}

/** Appends each line `child` prints to `file`, after the wall clock's time. */
function keepConsole(child: ChildProcess, file: string): void {
  createInterface({ input: child.stdout! }).on('line', (line) => appendFileSync(file, `${new Date().toISOString()} ${line}\n`))
}

/** Resolves once the served Host's search index is complete (`search.query` no longer says `indexing`); throws after 10 minutes. */
export async function searchComplete(served: Served): Promise<void> {
  await until(
    async () => {
      const { indexing } = await served.client.request<{ indexing: unknown }>('search.query', { q: 'question', limit: 1 })
      if (indexing) await new Promise((resolve) => setTimeout(resolve, 200))
      return !indexing
    },
    'the search index to be complete',
    600_000
  )
}
