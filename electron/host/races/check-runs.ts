import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { CheckRun } from '../../../shared/race'
import type { UserEnvironment } from '../child-processes/environment'
import { killProcessTree, newProcessMark, PROCESS_MARK_ENV } from '../child-processes/process-tree'
import { privateFolder, writePrivateFile } from '../storage/private-files'

/**
 * The project's check command (`npm test`), run in one worktree at a time
 * per racer, on the user's request: through the shell, in the worktree, with
 * the environment every child of the Host gets (`forChild`: the user's,
 * without Switchboard's own) and a process mark of its own, so Cancel (and
 * the Host closing) ends it with everything it started. Pass or fail is its
 * exit code. What it prints (stdout and stderr as they come) is kept, its
 * last OUTPUT_LIMIT bytes: in memory while it runs, and in the data folder's
 * `race-checks/` once it ended, so a comparison read after a restart still
 * shows why a check failed.
 */

const OUTPUT_LIMIT = 256 * 1024
/** After the command exits, what it left holding its output is given this long before it is ended. */
const EXIT_GRACE_MS = 1000

interface Running {
  child: ChildProcess
  mark: string
  cancelled: boolean
  done: Promise<void>
}

interface Output {
  text: string
  truncated: boolean
}

export class CheckRuns {
  private readonly running = new Map<string, Running>()
  private readonly outputs = new Map<string, Output>()

  /** `folder`: where the output of a run that ended is kept (the data folder's `race-checks/`). */
  constructor(
    private readonly environment: UserEnvironment,
    private readonly markPrefix: string,
    private readonly folder: string
  ) {}

  isRunning(key: string): boolean {
    return this.running.has(key)
  }

  /**
   * Starts `command` in `cwd`; `ended` is told how the run ended (passed, failed,
   * cancelled, or could not run). Returns the run as it starts.
   */
  start(key: string, command: string, cwd: string, ended: (run: CheckRun) => Promise<void>): CheckRun {
    if (this.running.has(key)) throw new Error('The check is already running there; cancel it first')
    const startedAt = new Date().toISOString()
    const run: CheckRun = { command, status: 'running', startedAt }
    const output: Output = { text: '', truncated: false }
    this.outputs.set(key, output)
    const mark = newProcessMark(this.markPrefix)
    const child = spawn(command, {
      cwd,
      shell: true,
      env: this.environment.forChild({ [PROCESS_MARK_ENV]: mark }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true
    })
    const take = (chunk: Buffer): void => append(output, chunk.toString('utf8'))
    child.stdout?.on('data', take)
    child.stderr?.on('data', take)
    let resolveDone: () => void = () => undefined
    const entry: Running = { child, mark, cancelled: false, done: new Promise((resolve) => (resolveDone = resolve)) }
    this.running.set(key, entry)
    let finished = false
    const finish = (result: Omit<CheckRun, 'command' | 'startedAt'>): void => {
      if (finished) return
      finished = true
      this.running.delete(key)
      // What it left running in the background (a server it started) goes with it.
      killProcessTree({ pid: child.pid, mark, reaped: true })
      // Its output is saved before its end is told (and Cancel answers once both are).
      const endedAt = new Date().toISOString()
      void this.keep(key, output)
        .catch(() => undefined)
        .then(() => ended({ command, startedAt, endedAt, ...result }))
        .catch(() => undefined)
        .finally(resolveDone)
    }
    child.on('error', (error) => {
      append(output, `${error.message}\n`)
      finish({ status: 'error', message: `The check command could not run: ${error.message}` })
    })
    // Its exit decides; its pipes close once what it left in the background holding them is gone too (ended a moment after).
    child.on('exit', () => setTimeout(() => killProcessTree({ pid: child.pid, mark, reaped: true }), EXIT_GRACE_MS).unref())
    child.on('close', (code, signal) => {
      if (entry.cancelled) finish({ status: 'cancelled', exitCode: code, signal, message: 'Cancelled' })
      else if (code === 0) finish({ status: 'passed', exitCode: 0, signal: null })
      else if (signal) finish({ status: 'failed', exitCode: code, signal, message: `Ended by signal ${signal}` })
      else finish({ status: 'failed', exitCode: code, signal: null, message: `Exited with code ${code}` })
    })
    return run
  }

  /** Ends a running check with everything it started; resolves once it is over. */
  async cancel(key: string): Promise<void> {
    const entry = this.running.get(key)
    if (!entry) return
    entry.cancelled = true
    killProcessTree({ pid: entry.child.pid, mark: entry.mark, reaped: entry.child.exitCode !== null || entry.child.signalCode !== null })
    await entry.done
  }

  /** What the run printed: the one running or run since the Host started, else the one kept on disk, else nothing. */
  async output(key: string): Promise<Output> {
    const held = this.outputs.get(key)
    if (held) return held
    try {
      const kept = JSON.parse(await fs.readFile(this.fileOf(key), 'utf8')) as Partial<Output>
      return { text: typeof kept.text === 'string' ? kept.text : '', truncated: kept.truncated === true }
    } catch {
      return { text: '', truncated: false }
    }
  }

  /** Saves a finished run's output (a run that could not be saved keeps it in memory until the Host closes). */
  private async keep(key: string, output: Output): Promise<void> {
    await privateFolder(this.folder)
    await writePrivateFile(this.fileOf(key), JSON.stringify(output))
  }

  /** The key names a race and a session; its file is named by its hash, so nothing in it reaches the path. */
  private fileOf(key: string): string {
    return join(this.folder, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`)
  }

  /** Every check still running is ended (the Host is closing). */
  async close(): Promise<void> {
    await Promise.all([...this.running.keys()].map((key) => this.cancel(key)))
  }
}

/** Keeps the last OUTPUT_LIMIT bytes, never cutting a character in two. */
function append(output: Output, text: string): void {
  output.text += text
  if (Buffer.byteLength(output.text, 'utf8') <= OUTPUT_LIMIT) return
  const bytes = Buffer.from(output.text, 'utf8')
  let start = bytes.length - OUTPUT_LIMIT
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++
  output.text = bytes.subarray(start).toString('utf8')
  output.truncated = true
}
