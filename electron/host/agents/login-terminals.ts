import { randomUUID } from 'node:crypto'
import { homedir } from 'node:os'
import type { IPty } from '@lydell/node-pty'
import { killProcessTree, newProcessMark, PROCESS_MARK_ENV } from '../child-processes/process-tree'
import { onConoutWorkerError } from './pty-worker'

/**
 * Terminal sign-in (ACP `AuthMethodTerminal`): the client runs the agent's own
 * program with the method's arguments as a separate interactive process, in a
 * terminal the user sees; exit status 0 means signed in. Login programs are
 * TUIs that need a real terminal, so this runs them in a pseudo-terminal
 * (node-pty, prebuilt) and streams its output to the renderer's xterm.js.
 */

export interface LoginSpec {
  agentId: string
  methodId: string
  command: string
  args: string[]
  env: Record<string, string | undefined>
  /** Where the program starts (default: the home folder). */
  cwd?: string
  cols: number
  rows: number
}

export interface LoginEvents {
  output(loginId: string, data: string): void
  exit(loginId: string, spec: LoginSpec, exitCode: number | null, signal: number | null): void
}

interface Running {
  pty: IPty
  spec: LoginSpec
  /** In the program's environment, inherited by what it starts: found and killed with it. */
  mark: string
}

type PtyModule = typeof import('@lydell/node-pty')
let ptyModule: Promise<PtyModule> | null = null
/** Loaded on first use: a native module, needed only when someone signs in this way. */
function loadPty(): Promise<PtyModule> {
  ptyModule ??= import('@lydell/node-pty')
  return ptyModule
}

export class LoginTerminals {
  private readonly running = new Map<string, Running>()

  /** `markPrefix`: the start of the mark each program carries (see child-processes/process-tree.ts). */
  constructor(
    private readonly events: LoginEvents,
    private readonly markPrefix?: string
  ) {}

  async start(spec: LoginSpec): Promise<string> {
    let pty: PtyModule
    try {
      pty = await loadPty()
    } catch (error) {
      throw new Error(
        `Switchboard cannot open a terminal here (${(error as Error).message}). Run \`${commandLine(spec)}\` in your own terminal, then try again.`
      )
    }
    const mark = newProcessMark(this.markPrefix)
    const env = Object.fromEntries(
      Object.entries({ ...spec.env, TERM: 'xterm-256color', COLORTERM: 'truecolor', [PROCESS_MARK_ENV]: mark }).filter(([, v]) => v !== undefined)
    ) as Record<string, string>
    let child: IPty
    try {
      child = pty.spawn(spec.command, spec.args, { name: 'xterm-256color', cols: spec.cols, rows: spec.rows, cwd: spec.cwd ?? homedir(), env })
    } catch (error) {
      throw new Error(`Could not run \`${commandLine(spec)}\`: ${(error as Error).message}`)
    }
    const loginId = randomUUID()
    this.running.set(loginId, { pty: child, spec, mark })
    child.onData((data) => this.events.output(loginId, data))
    // Windows: node-pty's console reader fails in its Worker: the sign-in says so and stops, the Host goes on.
    onConoutWorkerError(child, (error) => {
      this.events.output(loginId, `\r\nSwitchboard's terminal stopped reading this program's output: ${error.message}\r\n`)
      this.stop(loginId)
    })
    child.onExit(({ exitCode, signal }) => {
      this.running.delete(loginId)
      // What the program started and left behind (a browser helper, a local callback server) goes with it.
      killProcessTree({ pid: child.pid, mark, reaped: true })
      this.events.exit(loginId, spec, signal ? null : exitCode, signal || null)
    })
    return loginId
  }

  write(loginId: string, data: string): void {
    this.get(loginId).pty.write(data)
  }

  resize(loginId: string, cols: number, rows: number): void {
    this.get(loginId).pty.resize(cols, rows)
  }

  stop(loginId: string): void {
    const running = this.running.get(loginId)
    if (!running) return
    try {
      running.pty.kill()
    } catch {
      // already gone
    }
    // The pty's hang-up reaches its foreground group only: the rest of what the program started goes too.
    killProcessTree({ pid: running.pty.pid, mark: running.mark })
  }

  stopAll(): void {
    for (const id of [...this.running.keys()]) this.stop(id)
  }

  private get(loginId: string): Running {
    const running = this.running.get(loginId)
    if (!running) throw new Error('That sign-in has already ended')
    return running
  }
}

export function commandLine(spec: Pick<LoginSpec, 'command' | 'args'>): string {
  return [spec.command, ...spec.args].map((part) => (/[\s"'$`\\]/.test(part) ? JSON.stringify(part) : part)).join(' ')
}
