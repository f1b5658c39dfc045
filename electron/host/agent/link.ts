import type { Stream } from '@agentclientprotocol/sdk'

/**
 * What carries an agent's messages, for the connection: a process's stdio
 * (AgentRun, process.ts) or a network connection (NetworkLink, network.ts).
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
  /** Put away without news (a version 2 attempt replaced by a version 1 one): its end is not reported. */
  putAway: boolean
  /** Why Switchboard ended the link, when it did so because of something the agent did. */
  readonly failure: string | null
  readonly pid: number | undefined
  exitMessage(): string
  exitSummary(): string
  explanation(mark?: number): { lines: string[]; found: boolean }
  stderrMark(): number
  stderrQuiet(): Promise<void>
  flushLog(): Promise<void>
  stop(): Promise<void>
  abandon(message: string): Promise<void>
}
