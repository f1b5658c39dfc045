import { spawn, type ChildProcess } from 'node:child_process'
import { sshHostOf, type SshTarget } from '../../../shared/transport'
import { killProcessTree, newProcessMark, PROCESS_MARK_ENV } from '../child-processes/process-tree'
import { describeSshFailure, sshArgs, type SshSettings } from './options'
import { remoteCommand } from './script'

/**
 * One way to reach a host over SSH: its target and settings, and, when an
 * agent's connection is up, the socket of that connection (ControlPath), so
 * file requests and terminals ride the agent's connection instead of opening
 * their own. Each call is a short-lived `ssh` running one script (see
 * script.ts); without a socket (a project checked before any agent runs)
 * it connects by itself, with the same checks.
 */

export interface SshEndpointOptions {
  settings: SshSettings
  /** The environment ssh runs with on this computer (the user's: SSH_AUTH_SOCK, HOME…), without the agent's variables. */
  env: Record<string, string>
  /** The socket of the agent's connection, when there is one. */
  controlPath?: string
  /** Start of the mark each ssh process carries (see child-processes/process-tree.ts). */
  markPrefix?: string
}

export interface RemoteResult {
  code: number | null
  stdout: Buffer
  stderr: string
  /** The output went over `maxBytes` and the command was stopped. */
  cut: boolean
}

/** ssh could not reach the host (or lost it): what it said, as a sentence. */
export class SshError extends Error {}

const RUN_TIMEOUT_MS = 30_000
/** ssh's own exit code when it fails (the remote command's is passed on otherwise). */
export const SSH_FAILED = 255

export class SshEndpoint {
  constructor(
    readonly target: SshTarget,
    readonly options: SshEndpointOptions
  ) {}

  /** The host as the user named it (user@host, or the alias, and the port). */
  get host(): string {
    return sshHostOf(this.target)
  }

  /** The arguments of an ssh that runs `what`'s script on the host (the script goes first on its stdin). */
  argsFor(what: string): string[] {
    return [...sshArgs(this.target, this.options.settings, { controlPath: this.options.controlPath }), remoteCommand(what)]
  }

  /** The environment of a local ssh process, with its own mark. */
  envFor(mark: string): Record<string, string> {
    return { ...this.options.env, [PROCESS_MARK_ENV]: mark }
  }

  /**
   * Starts `script` on the host and leaves its stdin open: closing it ends the
   * remote command (see lifelineScript). The caller kills the returned ssh
   * with `kill` when done.
   */
  start(what: string, script: string): { child: ChildProcess; mark: string } {
    const mark = newProcessMark(this.options.markPrefix)
    const child = spawn('ssh', this.argsFor(what), {
      env: this.envFor(mark),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true
    })
    child.stdin?.on('error', () => undefined)
    child.stdin?.write(`${script}\n`)
    return { child, mark }
  }

  /**
   * Runs `script` on the host with `input` after it on stdin, and collects
   * what it printed. Throws SshError when ssh itself failed (the host cannot
   * be reached, its key or yours is refused), with what to do.
   */
  run(what: string, script: string, input: string | Buffer = '', { timeoutMs = RUN_TIMEOUT_MS, maxBytes = Infinity } = {}): Promise<RemoteResult> {
    return new Promise((resolve, reject) => {
      const { child, mark } = this.start(what, script)
      const chunks: Buffer[] = []
      let bytes = 0
      let cut = false
      let stderr = ''
      const timer = setTimeout(() => {
        killProcessTree({ pid: child.pid, mark })
        reject(new SshError(`${this.host} did not answer within ${timeoutMs / 1000} s`))
      }, timeoutMs)
      child.stdout?.on('data', (chunk: Buffer) => {
        if (cut) return
        chunks.push(chunk)
        bytes += chunk.length
        if (bytes > maxBytes) {
          cut = true
          killProcessTree({ pid: child.pid, mark })
        }
      })
      child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-16_384)))
      child.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer)
        reject(error.code === 'ENOENT' ? new SshError(SSH_MISSING) : error)
      })
      child.once('close', (code) => {
        clearTimeout(timer)
        const failure = code === SSH_FAILED && !cut ? describeSshFailure(stderr, this.target) : null
        if (failure) reject(new SshError(`Could not reach ${this.host} over SSH: ${failure}`))
        else resolve({ code, stdout: Buffer.concat(chunks), stderr, cut })
      })
      child.stdin?.end(input)
    })
  }
}

/** What to say when this computer has no `ssh`. */
/** What is said when the system's ssh cannot be found, inside a sentence. */
export const SSH_NOT_FOUND = "the OpenSSH client 'ssh' was not found on this computer: install it (openssh-client on Debian and Ubuntu)"
export const SSH_MISSING = `The${SSH_NOT_FOUND.slice(3)} to run agents over SSH`
