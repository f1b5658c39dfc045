import type { ContentBlock, SessionConfigOption, SessionModeState, SessionUpdate } from '@agentclientprotocol/sdk'

/** Tokens one prompt turn used, as the agent reported them in its prompt response (ACP's `Usage`). */
export interface TurnUsage {
  totalTokens: number
  inputTokens: number
  outputTokens: number
  thoughtTokens?: number
  cachedReadTokens?: number
  cachedWriteTokens?: number
}

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
  /** `steered`: handed to the running turn through the agent's steering, not a turn of its own. */
  | { t: 'prompt'; at: string; content: ContentBlock[]; steered?: boolean }
  /** `child`: the update is for a subagent's child session (its ACP session id), shown nested in this one. */
  | { t: 'update'; at: string; update: SessionUpdate; child?: string }
  /**
   * A turn's end; `usage`: the tokens the agent counted for the turn (its prompt response's `usage`);
   * `bySwitchboard`: the turn did not end, Switchboard stopped its agent (the app closing, the agent restarted).
   */
  | { t: 'stop'; at: string; stopReason: string; usage?: TurnUsage; bySwitchboard?: true }
  /**
   * Something went wrong; `endsTurn`: the turn failed with it (older transcripts leave it out), else a refusal mid-turn.
   * `echo`: the text the agent streamed of the failure as if it were its reply (Codex 2.x), which this error says instead.
   */
  | { t: 'error'; at: string; message: string; endsTurn?: boolean; echo?: string }
  /**
   * This session continues another the agent could not reopen: the conversation
   * above (copied from it) goes to the agent as context with the next prompt. `handedTo`: a hand-off instead, to
   * this agent (or preset): the conversation with `agent` is not copied, only given to it with the first prompt.
   */
  | { t: 'context'; at: string; from: string; title: string; agent: string; reason: string; handedTo?: string }
  /**
   * Where a conversation and its edited copy part ("Edit and resend", message `message`, at line `seq` of the
   * original's transcript): in the copy, `from` names the original; in the original, `to` names the copy.
   */
  | { t: 'branch'; at: string; from?: string; to?: string; title: string; message: number; seq: number }
  /** A network agent's connection was lost (`lost`: what the network said) and the session reopened on a new one. */
  | { t: 'reconnected'; at: string; agent: string; lost: string }
  /** The agent is replaying the conversation (`session/load`): the replay replaces the view. */
  | { t: 'reset'; at: string; reason: 'load' }
  /** Session state the agent gave in a response (session/new, load, set_config_option, ...), not as an update. */
  | SessionStateRecord
  /** A command the agent runs through the client (terminal/create), or its own (ACP v2): its start, its output, its end. */
  | ({ t: 'terminal'; at: string } & TerminalPatch)
  /** How a permission request was answered (optionId null: dismissed or cancelled); `remembered`: by a saved rule. */
  | {
      t: 'permission'
      at: string
      title: string
      optionId: string | null
      optionName?: string
      optionKind?: string
      remembered: boolean
      /** What the rule that answered covers, or the one the user's "always" made. */
      rule?: string
      /** The tool call the request was for: a refused or dismissed one shows so, whatever status the agent reports after. */
      toolCallId?: string
    }
  /** How a question the agent asked (`elicitation/create`) was answered; `content` holds a form's accepted values. */
  | {
      t: 'elicitation'
      at: string
      message: string
      mode: 'form' | 'url'
      action: 'accept' | 'decline' | 'cancel'
      url?: string
      content?: Record<string, string | number | boolean | string[]>
    }
  /** A checkpoint of the session's files taken as a turn started (its number in `index`), or why none could be. */
  | { t: 'checkpoint'; at: string; index?: number; turn?: number; error?: string }
  /** The files were restored to checkpoint `to`; checkpoint `undo` holds what they were just before. */
  | { t: 'rewind'; at: string; to: number; undo: number; files: string[] }
  /** A session/update that could not be folded, kept verbatim: nothing the agent sent is lost. */
  | { t: 'unsupported'; at: string; raw: unknown; reason: string }

export interface SessionStateRecord {
  t: 'session'
  at: string
  modes?: SessionModeState | null
  configOptions?: SessionConfigOption[] | null
  models?: SessionModelState | null
}

/** Models as older agents announce them (`models` in the session/new answer, changed with session/set_model). */
export interface SessionModelState {
  currentModelId: string
  availableModels: { modelId: string; name: string; description?: string | null }[]
}

/** What is new about a terminal: its command, output, or exit (the one shape for client-run and agent-owned terminals). */
export interface TerminalPatch {
  terminalId: string
  command?: string
  data?: string
  /** `data` replaces the output shown so far instead of extending it (ACP v2 agent-owned terminals send snapshots). */
  replace?: boolean
  exitStatus?: { exitCode?: number | null; signal?: string | null }
}

export interface TranscriptHeader {
  t: 'header'
  /** 1: the agent's id was called `sessionId`; 2: `acpSessionId` (readers accept both). */
  v: 1 | 2
  /** Switchboard's session record id. */
  id: string
  /** The agent's ACP session id. */
  acpSessionId: string
  agentId: string
  projectId: string
  cwd: string
  createdAt: string
}
