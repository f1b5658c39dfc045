import type { ContentBlock, SessionUpdate } from '@agentclientprotocol/sdk'

/**
 * One line of a session's JSONL transcript. The same records travel to the
 * renderer as `session.records` events, and both sides fold them into a thread
 * with `applyRecord` (shared/thread.ts): one representation on disk, on the
 * wire and in memory.
 *
 * A record's `seq` is its line number in the file (the header is line 0).
 */
export type TranscriptRecord =
  | TranscriptHeader
  | { t: 'prompt'; at: string; content: ContentBlock[] }
  | { t: 'update'; at: string; update: SessionUpdate }
  | { t: 'stop'; at: string; stopReason: string }
  | { t: 'error'; at: string; message: string }
  /** The agent is about to replay the conversation (`session/load`): the replay replaces the view. */
  | { t: 'reset'; at: string; reason: 'load' }

export interface TranscriptHeader {
  t: 'header'
  v: 1
  /** Switchboard's session record id. */
  id: string
  /** The agent's ACP session id. */
  sessionId: string
  agentId: string
  projectId: string
  cwd: string
  createdAt: string
}

export const TRANSCRIPT_VERSION = 1
