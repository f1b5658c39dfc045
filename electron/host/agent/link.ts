import { join } from 'node:path'
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk'
import type { AgentRuntimeState } from '../../../shared/domain'

/**
 * What carries an agent's messages, for the connection: a process's stdio
 * (AgentRun, process.ts), a network connection (NetworkLink, network.ts) or
 * a command on another host over SSH (SshLink, ssh.ts).
 * Either ends once (`exitInfo` set, `exited` rejects with how, `closed`
 * resolves), says how in `exitMessage`, and is never reused.
 */
export interface AgentLink {
  readonly stream: Stream
  /** Rejects with a message the user can act on when the agent cannot be started at all. */
  readonly spawnFailure: Promise<never>
  /** Rejects with how the link ended, once it has. */
  readonly exited: Promise<never>
  /** Resolves once the link is gone (or never started). */
  readonly closed: Promise<void>
  readonly lastActivity: number
  /** Non-null once the link has ended. */
  readonly exitInfo: object | null
  readonly spawnFailed: boolean
  readonly commandNotFound: boolean
  readonly stopping: boolean
  /** It ended because its connection was lost (a network or SSH connection), not closed by Switchboard nor by the agent. */
  readonly connectionLost: boolean
  /** Put away without news (a version 2 attempt replaced by a version 1 one): its end is not reported. */
  putAway: boolean
  /** Why Switchboard ended the link, when it did so because of something the agent did. */
  readonly failure: string | null
  readonly pid: number | undefined
  exitMessage(): string
  exitSummary(): string
  explanation(mark?: number): { lines: string[]; found: boolean }
  stderrMark(): number
  /** What it wrote to stderr since `mark` (as much as is kept; none over the network). */
  stderrSince(mark: number): string
  stderrQuiet(): Promise<void>
  flushLog(): Promise<void>
  stop(): Promise<void>
  abandon(message: string): Promise<void>
}

/** What a link is given: where to log, the limits, and the connection's hooks (a network link ignores what is a process's: env, mark, cwd). */
export interface RunOptions {
  logDir: string
  /** The agent's whole environment (`UserEnvironment.forChild`: the user's, its own variables, its secrets); the run adds only its mark. */
  env: Record<string, string>
  /** Start of the mark put in the agent's environment (see processes.ts). */
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
