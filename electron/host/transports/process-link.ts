import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { Readable, Writable } from 'node:stream'
import { ndJsonStream, type Stream } from '@agentclientprotocol/sdk'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { AgentCommand } from '../../../shared/transport'
import { explainingLines, lastLines } from '../../../shared/stderr-lines'
import { killProcessTree, newProcessMark, PROCESS_MARK_ENV } from '../child-processes/process-tree'
import { untilGone } from '../child-processes/running'
import { LineGuard } from './line-guard'
import type { AgentLink, LinkEnd, LinkOptions, ProcessDiagnostics } from './link'

/**
 * One run of an agent's process: spawned at construction, its stderr logged
 * with a tail kept for messages, its stdout filtered by the LineGuard into an
 * ndjson message stream, its exit noticed and described, and on stop the
 * whole process tree ended (stdin closed, SIGTERM after a moment, SIGKILL
 * after another) so nothing it started outlives it. It knows nothing of ACP
 * versions: the connection puts a protocol on its stream. A run is never
 * reused: a new start is a new run.
 */

const STDERR_TAIL_BYTES = 8 * 1024
/** What of a run's stderr is kept to find the lines that explain a failure in (the log file has all of it). */
const STDERR_KEPT_BYTES = 64 * 1024
const STDIN_GRACE_MS = 500
const KILL_GRACE_MS = 2000
/** Lines on stdout that are not messages: the first ones are logged, then only counted. */
const IGNORED_LINES_LOGGED = 100
/** How long a launch may take to say how its process ended. */
const DESCRIBE_EXIT_MS = 1500

/**
 * A process that carries an agent without being it (ssh, running the agent on
 * another host): what to spawn instead of the definition's command, and how
 * to tell its ending.
 */
export interface ProcessLaunch {
  command: string
  args: string[]
  cwd: string
  /** Written to its stdin before the first message (never logged: it may hold secrets). */
  preamble: string
  /** What the log says is starting. */
  describe: string
  /** The sentence when its command cannot be found. */
  notFound: string
  /** How the run ended, in one sentence, when the launch knows (undefined: "exited with code N"). */
  describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): Promise<string | undefined>
}

/** What a process's run is given: the link's options, and the process's whole environment (the run adds only its mark). */
export interface ProcessRunOptions extends LinkOptions {
  env: Record<string, string>
}

export class AgentRun implements AgentLink, ProcessDiagnostics {
  readonly child: ChildProcess
  readonly stream: Stream
  /** Resolves with how the process ended once it has, or with a sentence the user can act on when it cannot be started. */
  readonly exited: Promise<LinkEnd>
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null
  spawnFailed = false
  /** The command does not exist (spawn's ENOENT). */
  commandNotFound = false
  private resolveExited!: (end: LinkEnd) => void
  /** The end of this run's stderr (STDERR_KEPT_BYTES), and how much it wrote in all: `stderrSince` reads from a mark. */
  private stderrKept = ''
  private stderrTotal = 0
  /** When stderr last wrote (ms since the epoch), for stderrQuiet. */
  private stderrAt = 0
  private ignoredLines = 0
  private readonly mark: string
  /** How the launch said the run ended (see ProcessLaunch.describeExit). */
  private exitDescription: string | undefined

  constructor(
    private readonly definition: Pick<AgentDefinition, 'id' | 'name' | 'installHint'>,
    command: AgentCommand,
    private readonly options: ProcessRunOptions,
    launch?: ProcessLaunch
  ) {
    const def = { name: definition.name, id: definition.id, installHint: definition.installHint, ...command }
    this.mark = newProcessMark(options.markPrefix)
    this.exited = new Promise<LinkEnd>((resolve) => (this.resolveExited = resolve))
    options.log(`\n--- ${new Date().toISOString()} starting ${launch?.describe ?? `${def.command} ${def.args.join(' ')}`}\n`)

    const cwd = launch?.cwd ?? options.cwd ?? def.cwd ?? homedir()
    const child = spawn(launch?.command ?? def.command, launch?.args ?? def.args, {
      cwd,
      // The mark lets stop() find what the agent started even after it left the agent's process group.
      env: { ...options.env, [PROCESS_MARK_ENV]: this.mark },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so stop() can take the agent's children down with it.
      detached: process.platform !== 'win32',
      windowsHide: true
    })
    this.child = child
    child.once('error', (error: NodeJS.ErrnoException) => {
      this.spawnFailed = true
      // spawn says ENOENT for a missing working folder too: say which it is.
      const folderMissing = error.code === 'ENOENT' && !existsSync(cwd)
      this.commandNotFound = error.code === 'ENOENT' && !folderMissing
      const message = folderMissing
        ? `Agent '${def.name}' could not be started: its working folder ${cwd} does not exist. Edit the agent to choose another.`
        : this.commandNotFound && launch
          ? `Agent '${def.name}' could not be started: ${launch.notFound}`
          : this.commandNotFound
            ? `Agent '${def.name}' could not be started: command '${def.command}' was not found. ${
                def.installHint ? `Install it with \`${def.installHint}\`, or fix the agent's command.` : "Install it or fix the agent's command."
              }`
            : `Agent '${def.name}' could not be started (${def.command}): ${error.message}`
      this.resolveExited({ summary: message, failedToStart: true })
    })
    child.stdin?.on('error', () => undefined) // EPIPE after the agent died is reported through 'close'
    child.stderr?.on('data', (chunk: Buffer) => this.onStderr(chunk))
    // 'close' waits for stdout to close, which a grandchild holding it open would delay forever:
    // once the agent itself has exited, whatever it left running goes.
    child.once('exit', () => killProcessTree({ pid: child.pid, mark: this.mark, reaped: true }))
    const ended = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (this.spawnFailed) return
      this.exitInfo = { code, signal }
      options.log(`--- exited (${code ?? signal})\n`)
      this.resolveExited({ summary: this.exitSummary() })
    }
    child.once('close', (code, signal) => {
      if (launch) void this.describeExit(launch, { code, signal }).then(() => ended(code, signal))
      else ended(code, signal)
    })

    const maxMessageBytes = options.maxMessageBytes
    const guard = new LineGuard({
      maxLineBytes: maxMessageBytes,
      onIgnored: (preview, bytes) => {
        // Lines on stdout that are not JSON-RPC are the agent's bug, not fatal: they go to its log.
        this.ignoredLines++
        if (this.ignoredLines <= IGNORED_LINES_LOGGED) {
          options.log(
            `--- ignored a line on stdout that is not JSON-RPC: ${preview}${bytes > preview.length + 2 ? ` … (${bytes} bytes in all)` : ''}\n`
          )
        } else if (this.ignoredLines % 10_000 === 0) {
          options.log(`--- ${this.ignoredLines} lines on stdout that are not JSON-RPC ignored so far\n`)
        }
      },
      onOverflow: (bytes) => {
        const limit = `${Math.round(maxMessageBytes / (1024 * 1024))} MB`
        options.fail(
          `Agent '${def.name}' sent a message longer than ${limit} (${bytes} bytes and counting) on stdout, which Switchboard does not accept; it was stopped.`
        )
      }
    })
    child.stdout?.pipe(guard)
    if (!child.stdin) throw new Error(`Agent '${def.name}' has no stdin to write to`)
    if (launch) child.stdin.write(launch.preamble)
    this.stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(guard) as ReadableStream<Uint8Array>, {
      maxMessageBytes: maxMessageBytes + 1024
    })
  }

  get pid(): number | undefined {
    return this.child.pid
  }

  get diagnostics(): ProcessDiagnostics {
    return this
  }

  /** How the agent ended, in one sentence without its stderr. */
  private exitSummary(): string {
    const name = this.definition.name
    if (!this.exitInfo) return `Agent '${name}' is not running`
    if (this.exitDescription) return this.exitDescription
    const how = this.exitInfo.code !== null ? `with code ${this.exitInfo.code}` : `on signal ${this.exitInfo.signal}`
    return `Agent '${name}' exited ${how}`
  }

  /**
   * The lines of this run's stderr (from `mark`, see stderrMark) that explain
   * a failure, found by what they say; when none does, its last lines.
   */
  explanation(mark = 0): { lines: string[]; found: boolean } {
    const text = this.stderrSince(mark)
    const found = explainingLines(text)
    return found.length ? { lines: found, found: true } : { lines: lastLines(text), found: false }
  }

  /** Where the run's stderr is now: what it writes after this is `stderrSince(mark)`. */
  stderrMark(): number {
    return this.stderrTotal
  }

  /** What the run wrote to stderr since `mark` (as much of it as is kept). */
  stderrSince(mark: number): string {
    const keptFrom = this.stderrTotal - this.stderrKept.length
    return this.stderrKept.slice(Math.max(0, mark - keptFrom))
  }

  /**
   * Ends the agent and everything it started: stdin closed (an ACP agent ends
   * then), SIGTERM to the whole tree after a moment, SIGKILL after another.
   */
  async stop(): Promise<void> {
    const child = this.child
    if (this.exitInfo || this.spawnFailed || child.pid === undefined) return
    // Ask politely first: an ACP agent ends when its stdin closes.
    child.stdin?.end()
    const endedOnItsOwn = await Promise.race([this.exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), STDIN_GRACE_MS))])
    let timer: NodeJS.Timeout | undefined
    let asked: number[] = []
    if (!endedOnItsOwn) {
      asked = killProcessTree({ pid: child.pid, mark: this.mark }, 'SIGTERM')
      timer = setTimeout(() => killProcessTree({ pid: child.pid, mark: this.mark, also: asked }, 'SIGKILL'), KILL_GRACE_MS)
    }
    await this.exited
    clearTimeout(timer)
    // The agent is gone; make sure nothing it started lingers, and is gone when this resolves (a Host closed has none
    // left: integration/real-claude's teardown once found Claude Code's last process still running right after close).
    await untilGone(killProcessTree({ pid: child.pid, mark: this.mark, reaped: true, also: asked }, 'SIGKILL'))
  }

  /** Asks the launch how the run ended (for a while: the run's end is reported either way). */
  private async describeExit(launch: ProcessLaunch, exit: { code: number | null; signal: NodeJS.Signals | null }): Promise<void> {
    if (this.spawnFailed) return
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), DESCRIBE_EXIT_MS)))
    this.exitDescription = await Promise.race([launch.describeExit(exit).catch(() => undefined), late])
    clearTimeout(timer)
  }

  /**
   * Waits until stderr has been quiet for `quietMs` (at most `maxMs`). stdout and
   * stderr are separate pipes: an error answered on stdout may be read before the
   * stderr line the agent wrote just before it, which explains the error.
   */
  async stderrQuiet(quietMs = 50, maxMs = 500): Promise<void> {
    const deadline = Date.now() + maxMs
    do {
      await new Promise((resolve) => setTimeout(resolve, quietMs))
    } while (Date.now() - this.stderrAt < quietMs && Date.now() < deadline && !this.exitInfo)
  }

  private onStderr(chunk: Buffer): void {
    this.stderrAt = Date.now()
    this.options.log(chunk)
    const text = chunk.toString('utf8')
    this.stderrTotal += text.length
    this.stderrKept = (this.stderrKept + text).slice(-STDERR_KEPT_BYTES)
    this.options.stderrTail(this.stderrKept.slice(-STDERR_TAIL_BYTES))
  }
}
