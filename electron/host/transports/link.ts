import type { Stream } from '@agentclientprotocol/sdk'

/**
 * What carries an agent's messages: the SDK's `Stream` plus a small
 * lifecycle. A link starts when its kind's factory makes it (a process's
 * stdio, process-link.ts; a command on another host over SSH, ssh-link.ts; a
 * network connection, network-link.ts), ends once (`exited` resolves with
 * how), stops when asked, and is never reused. What only a process has (a
 * pid, its stderr) is the optional `diagnostics`. Everything that is the same
 * for every link (activity, abandon, the message saying how it ended, the
 * state, the log file) is the connection's `LinkRun` (connection/link-run.ts).
 */
export interface AgentLink {
  readonly stream: Stream
  /** Resolves once, when the link has ended or could not start, with how. */
  readonly exited: Promise<LinkEnd>
  /** Ends the link (Switchboard's choice); resolves once it has ended. Safe to call again, or after it ended. */
  stop(): Promise<void>
  /** A process's own diagnostics (locally or over SSH); absent over the network. */
  readonly diagnostics?: ProcessDiagnostics
}

/** How a link ended. */
export interface LinkEnd {
  /** In one sentence, without what explains it (a process's stderr lines are its diagnostics'). */
  readonly summary: string
  /** Its connection was lost (a network or SSH connection): not closed by Switchboard nor by the agent. Its sessions reconnect. */
  readonly connectionLost?: boolean
  /** It never started (its process could not be spawned): the agent's state is an error, and says what to do. */
  readonly failedToStart?: boolean
}

/** What a process tells besides its messages: its pid, whether it could be spawned, and its stderr. */
export interface ProcessDiagnostics {
  readonly pid: number | undefined
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

/** What every link is given by the run that holds it (connection/link-run.ts). */
export interface LinkOptions {
  /** Appends to the agent's log (logs/<agentId>.log): what the link says besides its messages (stderr, what the network said). */
  log(text: string | Buffer): void
  /** The agent did something Switchboard does not accept (a message too long): the run stops it, and this is what later errors say. */
  fail(message: string): void
  /** A process's stderr tail changed (shown in the agent's state). */
  stderrTail(tail: string): void
  /** Longest message accepted from the agent; a longer one fails it. */
  maxMessageBytes: number
  /** Start of the mark put in the environment of the processes a link starts (see child-processes/process-tree.ts). */
  markPrefix?: string
  /** The folder a process starts in (default: the agent's own, else the user's home folder). */
  cwd?: string
}

/** Opens a new link of one agent (its kind's module made it: transports/kinds.ts). */
export type OpenLink = (options: LinkOptions) => AgentLink
