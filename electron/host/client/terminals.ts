import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import type { CreateTerminalRequest, TerminalExitStatus, TerminalOutputResponse } from '@agentclientprotocol/sdk'
import type { UserEnvironment } from '../child-processes/environment'
import { killProcessTree, newProcessMark, PROCESS_MARK_ENV } from '../child-processes/process-tree'
import type { SshEndpoint } from '../ssh/endpoint'
import { lifelineScript } from '../ssh/script'

/**
 * The client side of ACP's `terminal/*`: commands an agent runs through us,
 * so the user sees them. Each runs in its own process group (killed whole on
 * kill, release, session end and host stop). Output is kept to the agent's
 * `outputByteLimit`, dropping from the start at a character boundary.
 */

export interface TerminalEvents {
  /** New output, and the exit status once the command has ended. */
  onOutput(terminalId: string, data: string): void
  onExit(terminalId: string, status: TerminalExitStatus): void
}

interface Terminal {
  id: string
  owner: string
  child: ChildProcess
  /** In the command's environment, inherited by what it starts: found and killed with it. */
  mark: string
  output: string
  truncated: boolean
  limit: number | null
  exitStatus: TerminalExitStatus | null
  exited: Promise<TerminalExitStatus>
}

const DEFAULT_LIMIT_BYTES = 1024 * 1024

export class Terminals {
  private readonly terminals = new Map<string, Terminal>()

  /** `environment`: what each command starts with; `markPrefix`: the start of the mark each carries (see child-processes/process-tree.ts). */
  constructor(
    private readonly environment: UserEnvironment,
    private readonly markPrefix?: string
  ) {}

  /**
   * Starts the command; `owner` groups terminals for release at session end.
   * With no args the command is a shell command line, as agents send them.
   * Its environment: the user's, the agent's own variables (`agentEnv`, not
   * its secrets: the agent passes what a command needs in the request), then
   * the request's `env`. On a `remote` host (an agent over SSH) the command
   * runs there, in the login's environment with the same variables added,
   * and ends with its ssh (see ssh/script.ts).
   */
  create(
    owner: string,
    request: CreateTerminalRequest,
    cwd: string,
    events: TerminalEvents,
    agentEnv: Record<string, string> = {},
    remote?: SshEndpoint
  ): string {
    const id = `term-${randomUUID()}`
    const requested = Object.fromEntries((request.env ?? []).map((v) => [v.name, v.value]))
    const { child, mark } = remote
      ? this.startRemote(remote, request, cwd, { ...agentEnv, ...requested })
      : this.startHere(request, cwd, agentEnv, requested)
    let resolveExit!: (status: TerminalExitStatus) => void
    const terminal: Terminal = {
      id,
      owner,
      child,
      mark,
      output: '',
      truncated: false,
      limit: request.outputByteLimit ?? null,
      exitStatus: null,
      exited: new Promise((resolve) => (resolveExit = resolve))
    }
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8')
      this.append(terminal, text)
      events.onOutput(id, text)
    }
    // Spawned with stdio pipes: both streams exist.
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    const finish = (status: TerminalExitStatus): void => {
      if (terminal.exitStatus) return
      terminal.exitStatus = status
      events.onExit(id, status)
      resolveExit(status)
    }
    child.on('error', (error) => {
      const message = `${request.command}: ${error.message}\n`
      this.append(terminal, message)
      events.onOutput(id, message)
      finish({ exitCode: 127, signal: null })
    })
    child.on('close', (code, signal) => finish({ exitCode: code, signal }))
    this.terminals.set(id, terminal)
    return id
  }

  private startHere(request: CreateTerminalRequest, cwd: string, agentEnv: Record<string, string>, requested: Record<string, string>) {
    const mark = newProcessMark(this.markPrefix)
    const args = request.args ?? []
    const child = spawn(request.command, args, {
      cwd,
      env: this.environment.forChild(agentEnv, requested, { [PROCESS_MARK_ENV]: mark }),
      shell: args.length === 0,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true
    })
    return { child, mark }
  }

  /** The command on the host, through its ssh; killing that ssh ends it there. */
  private startRemote(remote: SshEndpoint, request: CreateTerminalRequest, cwd: string, env: Record<string, string>) {
    const args = request.args ?? []
    const command = args.length ? { argv: [request.command, ...args] } : { shell: request.command }
    return remote.start('terminal', lifelineScript({ cwd, env, command, mark: newProcessMark(this.markPrefix), stdin: 'none' }))
  }

  output(id: string): TerminalOutputResponse {
    const terminal = this.require(id)
    return { output: terminal.output, truncated: terminal.truncated, exitStatus: terminal.exitStatus }
  }

  async waitForExit(id: string): Promise<TerminalExitStatus> {
    return this.require(id).exited
  }

  kill(id: string): void {
    killGroup(this.require(id))
  }

  /** Kills the command if it still runs and forgets the terminal. */
  release(id: string): void {
    const terminal = this.require(id)
    killGroup(terminal)
    this.terminals.delete(id)
  }

  /** Releases every terminal of an owner (a session that ended). */
  releaseAll(owner?: string): void {
    for (const terminal of [...this.terminals.values()]) {
      if (owner === undefined || terminal.owner === owner) this.release(terminal.id)
    }
  }

  isOwnedBy(id: string, owner: string): boolean {
    return this.terminals.get(id)?.owner === owner
  }

  private require(id: string): Terminal {
    const terminal = this.terminals.get(id)
    if (!terminal) throw new Error(`Unknown terminal '${id}' (released, or never created)`)
    return terminal
  }

  private append(terminal: Terminal, text: string): void {
    terminal.output += text
    const limit = terminal.limit ?? DEFAULT_LIMIT_BYTES
    if (Buffer.byteLength(terminal.output, 'utf8') <= limit) return
    // Drop from the start; slicing a Buffer may split a character, so drop the partial one.
    const bytes = Buffer.from(terminal.output, 'utf8')
    let start = bytes.length - limit
    while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++
    terminal.output = bytes.subarray(start).toString('utf8')
    terminal.truncated = true
  }
}

/** The command and whatever it started and left running (a server put in the background, say). */
function killGroup(terminal: Terminal): void {
  const { child, mark } = terminal
  killProcessTree({ pid: child.pid, mark, reaped: child.exitCode !== null || child.signalCode !== null })
}
