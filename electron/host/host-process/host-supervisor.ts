import { createWriteStream, readdirSync, rmSync, type WriteStream } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FromHost, HostOpen, ToHost } from './host-channel'
import { killLeftovers } from '../child-processes/process-tree'
import { SSH_SOCKETS_PREFIX } from '../ssh/options'

/**
 * Runs the Host in a process of its own and keeps it running, as VS Code runs
 * its extension host: the desktop app's main process (a `utilityProcess`,
 * electron/main.ts) and `npm run serve` (`child_process.fork`, serve.ts) both
 * use it. No Electron import: how a process is started is given (`start`).
 *
 * - A Host that exits unexpectedly is cleaned up after (its agents' processes
 *   that outlived it, its SSH connections and their socket folders) and
 *   started again after a wait that grows (RESTART_DELAYS_MS); more than
 *   MAX_RESTARTS in RESTART_WINDOW_MS, and the supervisor gives up with the
 *   cause and the log's path (`onGaveUp`).
 * - A Host that does not answer a ping for `deadAfterMs` is treated as dead:
 *   it is killed, and the above follows. So is one that answers but has not
 *   opened within `readyWithinMs` (its open stuck on something that never
 *   ends): the window would otherwise wait for it with no word, for good.
 * - A Host that could not open (it says why: `failed`), or that exits before
 *   it was ready twice running, is not started again: starting it would fail
 *   the same way (a database it cannot read, a data folder another
 *   Switchboard holds). `onGaveUp` says why.
 * - Its output (stdout and stderr) goes to the Host's log, `logs/host.log` in
 *   the data folder, and to the supervisor's own stderr.
 *
 * Nothing here waits on the Host: every message is handled as it comes, so
 * the process that supervises (the window's menus, moves and dialogs) stays
 * responsive however busy the Host is.
 */

/** A started Host process, whichever way it was started. */
export interface HostProcess {
  readonly pid: number | undefined
  /** A message to the Host; `transfer` (desktop) carries a window's port along. */
  send(message: ToHost, transfer?: unknown[]): void
  onMessage(listener: (message: FromHost) => void): void
  /** Once, when the process has gone (code, or null when killed by a signal). */
  onExit(listener: (code: number | null, signal: string | null) => void): void
  /** Its stdout and stderr as they come, for the log. */
  onOutput(listener: (chunk: Buffer | string) => void): void
  /** SIGKILL. */
  kill(): void
}

export interface SupervisorOptions {
  open: Omit<HostOpen, 'type'>
  start(): HostProcess
  /** The Host is open: `host` takes messages and windows' ports. */
  onUp?(host: HostProcess, ready: Extract<FromHost, { type: 'ready' }>): void
  /** The Host went away (it is being started again unless `onGaveUp` follows). */
  onDown?(reason: string): void
  /** The supervisor will not start the Host again: why, in a sentence, and where its log is. */
  onGaveUp?(failure: HostFailure): void
  /** Any other message from the Host (calls to the shell, the badge). */
  onMessage?(host: HostProcess, message: FromHost): void
  pingEveryMs?: number
  /** How long without an answer to a ping before the Host counts as dead (default 30 s: an index build or a large db.json read answers long before). */
  deadAfterMs?: number
  /** How long a started Host may take to open (say `ready` or `failed`) before it is stopped as stuck (default READY_WITHIN_MS). */
  readyWithinMs?: number
  /** How long the Host gets to close (stop its agents, write its files) when asked, before it is killed. */
  closeTimeoutMs?: number
  /** Stops what a dead Host left running (default: its marked processes, its SSH socket folders). */
  cleanUp?(pid: number | undefined): number
}

export interface HostFailure {
  cause: string
  logFile: string
}

export const RESTART_DELAYS_MS = [500, 2000, 5000]
export const MAX_RESTARTS = 3
export const RESTART_WINDOW_MS = 60_000
export const DEFAULT_PING_EVERY_MS = 10_000
export const DEFAULT_DEAD_AFTER_MS = 30_000
export const DEFAULT_CLOSE_TIMEOUT_MS = 30_000
/** How long a Host that was just started may take to answer its first ping (it loads its code meanwhile). */
export const START_GRACE_MS = 60_000
/**
 * How long a started Host may take to open: its code loaded, the data folder locked, db.json read and the login
 * shell's environment read (which has a deadline of its own, 10 s). Twice the start's grace: a Host that has not
 * opened by then is stuck, not slow.
 */
export const READY_WITHIN_MS = 120_000
/** The last lines of the Host's output, quoted when it could not start. */
const TAIL_LINES = 12

export function hostLogFile(dataDir: string): string {
  return join(dataDir, 'logs', 'host.log')
}

export class HostSupervisor {
  /** The Host, once open and until it goes away. */
  current: HostProcess | null = null
  private child: HostProcess | null = null
  private readonly restarts: number[] = []
  private startFailures = 0
  private stopping: Promise<void> | null = null
  private gaveUp = false
  private restartTimer: ReturnType<typeof setTimeout> | null = null
  private pingTimer: ReturnType<typeof setInterval> | null = null
  private log: WriteStream | null = null
  private tail: string[] = []
  readonly logFile: string

  constructor(private readonly options: SupervisorOptions) {
    this.logFile = hostLogFile(options.open.dataDir)
  }

  async start(): Promise<void> {
    await mkdir(join(this.options.open.dataDir, 'logs'), { recursive: true })
    this.log = createWriteStream(this.logFile, { flags: 'a' })
    this.log.on('error', (error) => console.error(`Could not write the Host's log ${this.logFile}: ${error.message}`))
    this.launch()
  }

  /** Asks the Host to close and waits for it (killing it after closeTimeoutMs); no restart follows. */
  stop(): Promise<void> {
    this.stopping ??= this.shutDown()
    return this.stopping
  }

  private launch(): void {
    const child = this.options.start()
    this.child = child
    this.tail = []
    let ready = false
    let failed: string | null = null
    let lastPong = Date.now()
    let pings = 0
    /** The silence (ms) after which it was stopped as hung: the dead time, or the start's grace before its first answer. */
    let killedAsHung: number | null = null
    /** It answered pings but had not opened after this long (ms), and was stopped. */
    let killedUnopened: number | null = null
    let readyTimer: ReturnType<typeof setTimeout> | undefined
    let closed = false
    /** Until its first answer the Host is loading its code: it gets START_GRACE_MS, not deadAfterMs. */
    let answered = false
    this.note(`starting the Host (process ${child.pid ?? '?'})`)
    child.onOutput((chunk) => {
      const text = chunk.toString()
      this.log?.write(text)
      process.stderr.write(text)
      this.tail = [...this.tail, ...text.split('\n').filter((line) => line.trim() !== '')].slice(-TAIL_LINES)
    })
    child.onMessage((message) => {
      if (this.child !== child) return
      if (message.type === 'pong') {
        lastPong = Date.now()
        answered = true
      } else if (message.type === 'ready') {
        ready = true
        clearTimeout(readyTimer)
        this.startFailures = 0
        this.current = child
        this.note(`the Host (process ${child.pid ?? '?'}) is open`)
        this.options.onUp?.(child, message)
      } else if (message.type === 'failed') {
        failed = message.message
        this.note(`the Host could not open: ${message.message}`)
        child.kill()
      } else if (message.type === 'closed') {
        // Closed as asked (its agents stopped, its files written): nothing more to wait for.
        closed = true
        child.kill()
      } else {
        this.options.onMessage?.(child, message)
      }
    })
    child.onExit((code, signal) => {
      clearTimeout(readyTimer)
      if (this.pingTimer) clearInterval(this.pingTimer)
      this.pingTimer = null
      if (this.child === child) this.child = null
      if (this.current === child) this.current = null
      const how = closed
        ? 'it closed as asked'
        : killedAsHung !== null
          ? `it did not answer for ${Math.round(killedAsHung / 1000)} s${answered ? '' : ' after it started'} and was stopped`
          : killedUnopened !== null
            ? `it had not opened the data folder ${Math.round(killedUnopened / 1000)} s after it started and was stopped`
            : signal
              ? `it was killed (${signal})`
              : `it exited with code ${code}`
      this.note(`the Host's process ended: ${how}`)
      const cleaned = this.cleanUp(child.pid)
      if (cleaned > 0) this.note(`stopped ${cleaned} process${cleaned === 1 ? '' : 'es'} the Host had left running`)
      if (this.stopping || this.gaveUp) return
      if (failed !== null) return this.giveUp(failed)
      if (!ready) {
        this.startFailures++
        const said = this.tail.length > 0 ? `; it said:\n${this.tail.join('\n')}` : ''
        if (this.startFailures >= 2)
          return this.giveUp(`The Switchboard host stopped as it started, ${this.startFailures} times running (${how})${said}`)
      }
      const now = Date.now()
      while (this.restarts.length > 0 && now - this.restarts[0] > RESTART_WINDOW_MS) this.restarts.shift()
      if (this.restarts.length >= MAX_RESTARTS) {
        return this.giveUp(`The Switchboard host stopped ${this.restarts.length + 1} times within a minute; the last time ${how}`)
      }
      const delay = RESTART_DELAYS_MS[Math.min(this.restarts.length, RESTART_DELAYS_MS.length - 1)]
      this.restarts.push(now)
      this.options.onDown?.(`The Switchboard host stopped (${how}); starting it again…`)
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null
        if (!this.stopping && !this.gaveUp) this.launch()
      }, delay)
    })
    child.send({ type: 'open', ...this.options.open })
    // A Host that answers pings but never opens (a step of its open that never ends) is stopped like a hung one: its
    // start counts as failed, and a second such start gives up with its log's last lines, where the window shows them.
    const readyWithin = this.options.readyWithinMs ?? READY_WITHIN_MS
    readyTimer = setTimeout(() => {
      if (this.child !== child || ready || failed !== null || this.stopping) return
      killedUnopened = readyWithin
      this.note(`the Host has not opened ${readyWithin} ms after it started: stopping it`)
      child.kill()
    }, readyWithin)
    // A Host that stops answering (hung, or stopped) counts as dead: killed, then started again like one that died.
    this.pingTimer = setInterval(() => {
      if (this.child !== child) return
      const limit = answered ? this.deadAfterMs : Math.max(this.deadAfterMs, START_GRACE_MS)
      if (Date.now() - lastPong > limit) {
        killedAsHung = limit
        this.note(`the Host has not answered for ${Date.now() - lastPong} ms: stopping it`)
        child.kill()
        return
      }
      child.send({ type: 'ping', id: ++pings })
    }, this.options.pingEveryMs ?? DEFAULT_PING_EVERY_MS)
  }

  private get deadAfterMs(): number {
    return this.options.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS
  }

  private giveUp(cause: string): void {
    this.gaveUp = true
    this.note(`giving up: ${cause}`)
    this.options.onGaveUp?.({ cause, logFile: this.logFile })
  }

  private cleanUp(pid: number | undefined): number {
    try {
      return this.options.cleanUp ? this.options.cleanUp(pid) : cleanUpAfterHost(this.options.open.dataDir, pid)
    } catch (error) {
      this.note(`could not clean up after the Host: ${(error as Error).message}`)
      return 0
    }
  }

  private async shutDown(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer)
    this.restartTimer = null
    const child = this.child
    if (child) {
      const exited = new Promise<void>((resolve) => child.onExit(() => resolve()))
      try {
        child.send({ type: 'close' })
      } catch {
        // gone already: `exited` follows
      }
      const timer = setTimeout(() => {
        this.note(`the Host did not close within ${this.options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS} ms: stopping it`)
        child.kill()
      }, this.options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS)
      await exited
      clearTimeout(timer)
    }
    await new Promise<void>((resolve) => (this.log ? this.log.end(resolve) : resolve()))
    this.log = null
  }

  private note(text: string): void {
    this.log?.write(`[supervisor ${new Date().toISOString()}] ${text}\n`)
  }
}

/**
 * What a Host that went away without closing left: the processes its agents
 * started (marked with the data folder, child-processes/process-tree.ts: Linux only) and its SSH
 * connections' socket folders (named after its pid, ssh/options.ts). Called
 * while no Host runs on the folder: every marked process of the folder is the
 * dead one's. Returns how many processes were stopped.
 */
export function cleanUpAfterHost(dataDir: string, pid: number | undefined): number {
  const killed = killLeftovers(dataDir)
  if (pid !== undefined) {
    for (const name of safeReaddir(tmpdir())) {
      if (name.startsWith(`${SSH_SOCKETS_PREFIX}${pid}-`)) rmSync(join(tmpdir(), name), { recursive: true, force: true })
    }
  }
  return killed
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
