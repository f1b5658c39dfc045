import { join } from 'node:path'
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk'
import type { AgentRuntimeState } from '../../../shared/domain'
import type { SshEndpoint } from '../ssh/endpoint'
import type { SshHosts, SshSettings } from '../ssh/options'

/**
 * What carries an agent's messages, for the connection: the SDK's `Stream`
 * plus a small lifecycle. A link starts when its transport's factory makes it
 * (transports.ts: a process's stdio, process.ts; a command on another host
 * over SSH, ssh.ts; a network connection, network.ts), ends once (`ended`,
 * `exited` rejects with how, `closed` resolves), says how in `exitMessage`,
 * and is never reused. What only a process has (a pid, stderr) is its
 * `diagnostics`.
 */
export interface AgentLink {
  readonly stream: Stream
  /** Rejects with how the link ended, once it has (or with what to do when it could not start at all). */
  readonly exited: Promise<never>
  /** Resolves once the link is gone (or never started). */
  readonly closed: Promise<void>
  /** True once the link has ended after it started (a process that could not be spawned says so in `diagnostics`). */
  readonly ended: boolean
  readonly stopping: boolean
  /** When a message last went either way (idle agents are stopped). */
  readonly lastActivity: number
  /** It ended because its connection was lost (a network or SSH connection), not closed by Switchboard nor by the agent. */
  readonly connectionLost: boolean
  /** Put away without news (a version 2 attempt replaced by a version 1 one): its end is not reported. */
  putAway: boolean
  /** Why Switchboard ended the link, when it did so because of something the agent did. */
  readonly failure: string | null
  /** How it ended, with what explains it (its stderr's lines, what the network said). */
  exitMessage(): string
  /** How it ended, in one sentence. */
  exitSummary(): string
  flushLog(): Promise<void>
  stop(): Promise<void>
  /** Stops the agent because of something it did; the message is what later errors say. */
  abandon(message: string): Promise<void>
  /** A process's own diagnostics (locally or over SSH); absent over the network. */
  readonly diagnostics?: ProcessDiagnostics
  /** The host the agent runs on, for its sessions' files and terminals (over SSH). */
  readonly sshHost?: SshEndpoint
}

/** What a process tells besides its messages: its pid, whether it could be spawned, and its stderr. */
export interface ProcessDiagnostics {
  readonly pid: number | undefined
  /** It could not be spawned at all (its `exited` rejected with why). */
  readonly spawnFailed: boolean
  /** Its command does not exist. */
  readonly commandNotFound: boolean
  /** Where its stderr is now: what it writes after this is `stderrSince(mark)`. */
  stderrMark(): number
  /** What it wrote to stderr since `mark` (as much as is kept). */
  stderrSince(mark: number): string
  /** The lines of its stderr since `mark` that explain a failure (found by what they say; else the last ones, `found` false). */
  explanation(mark?: number): { lines: string[]; found: boolean }
  /** Resolves once stderr has been quiet a moment (an error answered on stdout may come before the stderr line that explains it). */
  stderrQuiet(): Promise<void>
}

/** What a link is given: where to log, the limits, and the connection's hooks (a network link ignores what is a process's: env, mark, cwd). */
export interface RunOptions {
  logDir: string
  /** The agent's whole environment (`UserEnvironment.forChild`: the user's, its own variables, its secrets); the run adds only its mark. */
  env: Record<string, string>
  /** Start of the mark put in the agent's environment (see child-processes/process-tree.ts). */
  markPrefix?: string
  /** The folder the process starts in (default: the agent's own, else the user's home folder). */
  cwd?: string
  /** The log file's name, when not the agent's id. */
  logName?: string
  /** Longest message line accepted on stdout; a longer one stops the agent. */
  maxMessageBytes: number
  /** Sees every JSON-RPC message in either direction (tests check what goes out against the schema). */
  onMessage?: (direction: 'in' | 'out', message: AnyMessage) => void
  /** Every message from the agent in arrival order, before the SDK parses it; true when taken whole (not handed to the SDK). */
  receive(message: AnyMessage): boolean
  /** The run's part of the runtime state: status at the end, stderr tail, pid. */
  setState(patch: Partial<AgentRuntimeState>): void
  status(): AgentRuntimeState['status']
  /** The run ended or was abandoned: the protocol's connection closes with this error. */
  closeStream(error: Error): void
}

/** What every link's factory is given (transports.ts): the run's options, and what one transport or another needs of the Host. */
export interface LinkOptions extends RunOptions {
  /** A network agent's headers, from the secret store. */
  headers?: Record<string, string>
  /** The agent's secret variables, from the secret store (a local process has them in `env` already; over SSH they travel to the host). */
  secretEnv?: Record<string, string>
  /** For an agent over SSH: where its connection's socket goes, and the keep-alive (`env` is then ssh's own, on this computer). */
  ssh?: { hosts: SshHosts; settings: SshSettings }
}

/**
 * The outgoing side of a link's stream, tapped: each message the SDK writes is
 * seen by `seen` (activity, the test hook) before it goes on to `writable`.
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

/** Where an agent's stderr goes, across its runs (a network agent's connections too). */
export function agentLogPath(logDir: string, agentId: string): string {
  return join(logDir, `${agentId.replace(/[^A-Za-z0-9._-]/g, '_')}.log`)
}
