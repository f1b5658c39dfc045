import { createWriteStream, type WriteStream } from 'node:fs'
import { join } from 'node:path'
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk'
import type { AgentRuntimeState } from '../../../shared/domain'
import { PRIVATE_FILE_MODE, privateFolderSync } from '../storage/private-files'
import type { AgentLink, LinkEnd, OpenLink, ProcessDiagnostics } from '../transports/link'

/**
 * One link under the connection, with what is the same for every kind,
 * written once: the log file, the tap on its messages (activity, the test
 * hook, what the protocol takes whole), the flags (stopping, put away,
 * failed), abandoning it for what the agent did, its end reported once (the
 * state, the protocol's connection closed, the log line) and the message
 * saying how it ended, with what explains it. The link itself
 * (transports/link.ts) is only a stream, how it ended, and stop.
 */

/** An agent's log grows by at most this much per run (a flood of stderr or garbage must not fill the disk). */
const LOG_LIMIT_BYTES = 20 * 1024 * 1024

export interface LinkRunOptions {
  /** The agent's name, for messages. */
  name: string
  logDir: string
  /** The log file's name (the agent's id; a capability check logs apart). */
  logName: string
  maxMessageBytes: number
  markPrefix?: string
  cwd?: string
  /** Sees every JSON-RPC message in either direction (tests check what goes out against the schema). */
  onMessage?: (direction: 'in' | 'out', message: AnyMessage) => void
  /** Every message from the agent in arrival order, before the SDK parses it; true when taken whole (not handed to the SDK). */
  receive(message: AnyMessage): boolean
  /** The run's part of the runtime state: status at the end, stderr tail. */
  setState(patch: Partial<AgentRuntimeState>): void
  status(): AgentRuntimeState['status']
  /** The link ended or was abandoned: the protocol's connection closes with this error. */
  closeStream(error: Error): void
}

export class LinkRun {
  readonly stream: Stream
  /** Rejects with exitMessage() once the link has ended (or could not start). */
  readonly exited: Promise<never>
  /** Resolves once the link has ended (or could not start). */
  readonly closed: Promise<void>
  /** When a message last went either way (idle agents are stopped). */
  lastActivity = Date.now()
  stopping = false
  /** Put away without news (a version 2 attempt replaced by a version 1 one): its end is not reported. */
  putAway = false
  /** Why Switchboard ended the link, when it did so because of something the agent did. */
  failure: string | null = null
  private readonly link: AgentLink
  private end: LinkEnd | null = null
  private log: WriteStream | null
  private logBytes = 0

  constructor(
    open: OpenLink,
    private readonly options: LinkRunOptions
  ) {
    privateFolderSync(options.logDir)
    this.log = createWriteStream(agentLogPath(options.logDir, options.logName), { flags: 'a', mode: PRIVATE_FILE_MODE })
    this.log.on('error', () => undefined)
    let rejectExited!: (error: Error) => void
    this.exited = new Promise<never>((_, reject) => (rejectExited = reject))
    this.exited.catch(() => undefined)
    this.link = open({
      log: (text) => this.writeLog(text),
      fail: (message) => void this.abandon(message),
      stderrTail: (tail) => options.setState({ stderrTail: tail }),
      maxMessageBytes: options.maxMessageBytes,
      markPrefix: options.markPrefix,
      cwd: options.cwd
    })
    this.stream = this.tap(this.link.stream)
    this.closed = this.link.exited.then((end) => {
      this.report(end)
      rejectExited(new Error(this.exitMessage()))
    })
  }

  get diagnostics(): ProcessDiagnostics | undefined {
    return this.link.diagnostics
  }

  /** True once the link has ended, or could not start. */
  get ended(): boolean {
    return this.end !== null
  }

  /** It ended because its connection was lost (a network or SSH connection), not closed by Switchboard nor by the agent. */
  get connectionLost(): boolean {
    return Boolean(this.end?.connectionLost) && !this.stopping && !this.putAway && this.failure === null
  }

  /** How it ended, with what explains it (its stderr's lines); why Switchboard ended it, when it did. */
  exitMessage(): string {
    if (this.failure) return this.failure
    const lines = this.diagnostics?.explanation().lines ?? []
    return `${this.exitSummary()}${lines.length ? `; stderr: ${lines.join('\n')}` : ''}`
  }

  /** How it ended, in one sentence. */
  exitSummary(): string {
    return this.end?.summary ?? `Agent '${this.options.name}' is not running`
  }

  /** Resolves once everything written to the log so far is in the file (the Agents page reads it). */
  flushLog(): Promise<void> {
    const log = this.log
    if (!log || log.writableEnded || log.destroyed) return Promise.resolve()
    return new Promise((resolve) => log.write('', () => resolve()))
  }

  /** Ends the link (Switchboard's choice: not a failure to report, unless it was abandoned for one). */
  async stop(): Promise<void> {
    if (!this.end) this.stopping = true
    await this.link.stop()
    await this.closed
  }

  /** Stops the agent because of something it did (or failed to do); the message is what every later error says. */
  async abandon(message: string): Promise<void> {
    if (this.failure || this.stopping) return
    this.failure = message
    this.writeLog(`--- ${message}\n`)
    this.options.setState({ status: 'error', message })
    this.options.closeStream(new Error(message))
    await this.stop()
  }

  /** The link ended: said once, in the state (unless Switchboard closed it or put it away), the log, and to the protocol. */
  private report(end: LinkEnd): void {
    this.end = end
    const { setState, status } = this.options
    const message = this.exitMessage()
    if (this.putAway) this.writeLog('--- asked for ACP protocol version 2, the agent answered 1: starting it again in version 1\n')
    else if (end.failedToStart) setState({ status: 'error', message, ...(this.diagnostics?.commandNotFound ? { installed: false } : {}) })
    else if (!this.stopping) setState({ status: 'exited', message, pid: undefined })
    else if (status() === 'error') setState({ pid: undefined })
    else setState({ status: 'stopped', message: undefined, pid: undefined })
    this.log?.end()
    this.log = null
    this.options.closeStream(new Error(message))
  }

  private writeLog(text: string | Buffer): void {
    if (!this.log || this.logBytes >= LOG_LIMIT_BYTES) return
    this.logBytes += text.length
    this.log.write(text)
    if (this.logBytes >= LOG_LIMIT_BYTES) this.log.write(`\n--- log limit reached (${LOG_LIMIT_BYTES} bytes): the rest of this run is not logged\n`)
  }

  /** Between the SDK and the link: every message, raw, in order, and the test hook; what the protocol takes whole (session updates) goes no further. */
  private tap(stream: Stream): Stream {
    const { onMessage, receive } = this.options
    const incoming = new TransformStream<AnyMessage, AnyMessage>({
      transform: (message, controller) => {
        this.lastActivity = Date.now()
        onMessage?.('in', message)
        if (!receive(message)) controller.enqueue(message)
      }
    })
    const writable = tapOutgoing(stream.writable, (message) => {
      this.lastActivity = Date.now()
      onMessage?.('out', message)
    })
    return { readable: stream.readable.pipeThrough(incoming), writable }
  }
}

/**
 * The outgoing side of a stream, tapped: each message the SDK writes is seen
 * by `seen` (activity, the test hook) before it goes on to `writable`.
 */
export function tapOutgoing(writable: WritableStream<AnyMessage>, seen: (message: AnyMessage) => void): WritableStream<AnyMessage> {
  const outgoing = new TransformStream<AnyMessage, AnyMessage>({
    transform: (message, controller) => {
      seen(message)
      controller.enqueue(message)
    }
  })
  void outgoing.readable.pipeTo(writable).catch(() => undefined)
  return outgoing.writable
}

/** Where an agent's log goes, across its runs (a network agent's connections too). */
export function agentLogPath(logDir: string, agentId: string): string {
  return join(logDir, `${agentId.replace(/[^A-Za-z0-9._-]/g, '_')}.log`)
}
