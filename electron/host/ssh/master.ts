import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { killProcessTree, newProcessMark } from '../child-processes/process-tree'
import { SSH_MISSING, type SshEndpoint } from './endpoint'
import { describeSshFailure, sshArgs } from './options'

/**
 * One SSH connection to a host, shared: `ssh -M -N` holding a ControlPath
 * socket that the agent's stream, its file requests and its terminals use
 * (`ssh -S`). It sends the keep-alive messages, so when the host stops
 * answering it is this process that ends, and every command on the
 * connection with it. `ready` resolves once it has authenticated (its socket
 * exists); when it ends first, it rejects with what ssh said, as a sentence.
 */

/** How often to look for the socket while the connection opens. */
const POLL_MS = 20
/** Longest a connection may take to open (ConnectTimeout bounds only the TCP part). */
const OPEN_TIMEOUT_MS = 60_000

export interface MasterEnd {
  code: number | null
  signal: NodeJS.Signals | null
  /** Why it ended, from what ssh wrote (null: it did not say). */
  reason: string | null
}

export class SshMaster {
  readonly ready: Promise<void>
  readonly ended: Promise<MasterEnd>
  /** Set once it has ended. */
  end: MasterEnd | null = null
  stopping = false
  private readonly child: ChildProcess
  private readonly mark: string
  private stderr = ''

  constructor(
    readonly endpoint: SshEndpoint,
    private readonly log: (text: string) => void
  ) {
    const { controlPath, markPrefix, settings } = endpoint.options
    if (!controlPath) throw new Error('A shared SSH connection needs a socket path')
    this.mark = newProcessMark(markPrefix)
    this.child = spawn('ssh', sshArgs(endpoint.target, settings, { controlPath, master: true }), {
      env: endpoint.envFor(this.mark),
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true
    })
    this.child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8')
      this.stderr = (this.stderr + text).slice(-16_384)
      this.log(text)
    })
    this.ended = new Promise((resolve) => {
      this.child.once('error', (error: NodeJS.ErrnoException) => {
        this.finish({ code: null, signal: null, reason: error.code === 'ENOENT' ? SSH_MISSING : error.message }, resolve)
      })
      this.child.once('close', (code, signal) => {
        const said = describeSshFailure(this.stderr, endpoint.target)
        const last = this.stderr.trim().split('\n').at(-1)?.trim()
        this.finish({ code, signal, reason: said ?? (last || null) }, resolve)
      })
    })
    this.ready = this.waitForSocket(controlPath)
    this.ready.catch(() => undefined)
  }

  /** The connection has not ended (nor been asked to). */
  get alive(): boolean {
    return this.end === null && !this.stopping
  }

  /** Why the connection could not be opened, or was lost, in a sentence (for after `ended`). */
  reason(): string {
    const end = this.end
    if (!end) return 'the connection is open'
    return end.reason ?? `ssh ended ${end.code !== null ? `with code ${end.code}` : `on signal ${end.signal}`} without saying why`
  }

  /** Closes the connection (and so every command still on it). */
  async stop(): Promise<void> {
    if (this.end) return
    this.stopping = true
    killProcessTree({ pid: this.child.pid, mark: this.mark }, 'SIGTERM')
    const timer = setTimeout(() => killProcessTree({ pid: this.child.pid, mark: this.mark }), 2000)
    await this.ended
    clearTimeout(timer)
  }

  private finish(end: MasterEnd, resolve: (end: MasterEnd) => void): void {
    if (this.end) return
    this.end = end
    resolve(end)
  }

  private async waitForSocket(controlPath: string): Promise<void> {
    const deadline = Date.now() + OPEN_TIMEOUT_MS
    for (;;) {
      if (this.end) throw new Error(this.reason())
      if (existsSync(controlPath)) return
      if (Date.now() > deadline) {
        await this.stop()
        throw new Error(`${this.endpoint.host} did not complete the SSH connection within ${OPEN_TIMEOUT_MS / 1000} s`)
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  }
}
