/**
 * Domain types shared by the Host and the renderer. Plain data only: everything
 * here crosses a transport as JSON.
 */

import type { Attachment } from './attachment'
import type { SessionMcpLeftOut, SessionMcpRunState, SessionMcpServer } from './mcp'
import type { PermissionAlways, RuleSubject } from './permissions'
import type { SessionWorktree } from './workspace'
import type { HandOffSeedInfo } from './hand-off'

export interface Project {
  id: string
  /** Shown in the sidebar; defaults to the folder's name. */
  name: string
  /** Absolute path of the project's working directory (the ACP `cwd`). */
  cwd: string
  /** More absolute folders the project's sessions may use (ACP `additionalDirectories`, where announced). */
  additionalDirectories?: string[]
  /**
   * The project's folders are on another machine, reached over SSH: the host as
   * `sshHostOf` names it (`user@host`, or an alias, with `:port` when one is
   * given). Only agents over SSH to that host work in it (`agentFitsProject`).
   */
  sshHost?: string
  /**
   * Commit and merge from the Changes view run the repository's own git hooks
   * (the user turned it on, confirmed outside the page; off by default: an
   * agent can write hooks). Nothing else of the repository's ever runs.
   */
  gitHooks?: boolean
  /** Run in each worktree of a race on request (`npm test`), through the shell; set only once confirmed outside the page. */
  checkCommand?: string
  /** The mode each agent's new and reopened sessions start in here (agent id → mode id), over the agent's own `startingMode`. */
  startingModes?: Record<string, string>
  /** Instructions sent as the system prompt of its new sessions, where the agent takes one (before a preset's own). */
  systemPrompt?: string
  createdAt: string
}

export type AgentStatus = 'stopped' | 'starting' | 'ready' | 'exited' | 'error'

/**
 * What the agent announced in `initialize`, normalised from either capability
 * shape (protocol version 1's `agentCapabilities`, or the version 2 draft's
 * `capabilities.session.*`) into one object. Every optional method is used
 * only when its flag here is true.
 */
export interface AgentCapabilities {
  protocolVersion: number
  loadSession: boolean
  prompt: { image: boolean; audio: boolean; embeddedContext: boolean }
  mcp: { stdio: boolean; http: boolean; sse: boolean }
  session: {
    list: boolean
    resume: boolean
    close: boolean
    delete: boolean
    fork: boolean
    additionalDirectories: boolean
    /** `sessionCapabilities.systemPrompt` (unstable): session/new, load, resume and fork take a client's system prompt (mode `append`). */
    systemPrompt: boolean
  }
  auth: { logout: boolean }
  /**
   * The agent takes a prompt while a turn runs (Claude Code announces it as
   * `agentCapabilities._meta.claudeCode.promptQueueing`): the prompt is handed
   * to the running turn, which goes on with it. Absent: it does not.
   */
  promptQueueing?: boolean
  /**
   * The agent takes a follow-up into the running turn through the steering
   * extension (`_session/steering`, announced as `_meta.steering.supported`
   * in its initialize answer, as claude-agent-acp does): "Send now" steers
   * instead of sending a second `session/prompt`. Absent: it does not.
   */
  steering?: boolean
}

export interface AuthMethodView {
  id: string
  name: string
  description?: string
  /** `agent` (the agent handles it), `env_var` (variables to set) or `terminal` (a login command to run). */
  type: string
  /** env_var: the variables the user must provide. */
  vars?: string[]
  /** terminal: the arguments to run the agent's own command with. */
  args?: string[]
  /** terminal: extra environment variables for that login command. */
  env?: Record<string, string>
  /** The method takes an API key (its `_meta["api-key"]`, as Gemini CLI sends): asked of the user, passed in authenticate's `_meta`. */
  apiKey?: { provider?: string }
  /** The method's `_meta`, as the agent sent it. */
  meta?: Record<string, unknown>
}

export interface AgentInfo {
  name: string
  title?: string
  version?: string
}

/** Live state of an agent's process and ACP connection (not persisted). */
export interface AgentRuntimeState {
  agentId: string
  status: AgentStatus
  /** A sentence the user can act on when status is `error` or `exited`. */
  message?: string
  /** The last lines the agent wrote to stderr. */
  stderrTail: string
  pid?: number
  /** False when the agent's command cannot be found (then `message` says how to install it). */
  installed?: boolean
  /** The ACP protocol version the connection speaks, once initialised. */
  protocolVersion?: number
  /** How that version came about when it is not the one asked for (e.g. asked for 2, the agent speaks 1). */
  protocolNote?: string
  agentInfo?: AgentInfo
  capabilities?: AgentCapabilities
  authMethods?: AuthMethodView[]
  /**
   * Secret variables the agent is defined with whose value the secret store no
   * longer has (`serve` keeps secrets in memory only: a restart forgets them).
   */
  missingSecrets?: string[]
  /**
   * Why the agent could not start the last session asked of it (or run the
   * last turn), until one starts: a process that runs is not yet an agent
   * that can start a session (it may need a sign-in, or fail every time).
   */
  problem?: AgentProblem
  /** This run of the agent has started (or reopened) a session: it can. Until then a running agent is only running. */
  sessionStarted?: boolean
}

/**
 * Why an agent could not start a session, said once with what to do about it:
 * - `sign_in`: it answered auth_required; `authMethods` are the ways to sign in
 * - `not_installed`: its command was not found (`installHint` says how to install a preset)
 * - `start_failed`: its process ended, failed or hung before it answered initialize
 * - `session_failed`: it runs, but session/new (or a turn) failed for another reason
 */
export type AgentProblemKind = 'sign_in' | 'not_installed' | 'start_failed' | 'session_failed'

export interface AgentProblem {
  agentId: string
  kind: AgentProblemKind
  /** One sentence: what happened. */
  summary: string
  /** What the agent itself said: its error's explanation (the JSON-RPC `data` it sent), never a bare "Internal error". */
  detail?: string
  /** A cause Switchboard knows for this agent and this failure (connection/quirks.ts), with what to do. */
  hint?: string
  /**
   * Lines of its stderr that explain it, found among what it wrote (error,
   * cannot, not found, a stack trace's message…); when none says anything of
   * the sort, its last lines (`found` false). The whole log is `agents.log`.
   */
  lines: string[]
  found: boolean
  at: string
}

/** A conversation with one agent in one project, as kept in db.json. */
export interface SessionRecord {
  /** Switchboard's own id: stable across agents and restarts. */
  id: string
  /** The agent's ACP session id; null until `session/new` has answered. */
  acpSessionId: string | null
  agentId: string
  projectId: string
  /** Absolute cwd the session was started in. */
  cwd: string
  /** The mode the user put this session in (set again when it is reopened, over the starting mode). */
  chosenMode?: string
  /** The additional folders the session was started with (sent to the agent only when it announces them). */
  additionalDirectories?: string[]
  title: string
  /** Where the title came from: a later source of higher rank replaces it (see TitleSource). */
  titleSource: TitleSource
  /**
   * The session this one was made from (a fork, or a conversation continued in
   * a new session), by Switchboard's id: where a pane goes back to when this
   * one is deleted.
   */
  forkedFrom?: string
  /** A hand-off (sessions.handOff): the session this one continues, those that continue this one, the seed not yet sent. */
  handedOffFrom?: string
  handedOffTo?: string[]
  handOffSeed?: HandOffSeedInfo
  /** Made by "Edit and resend" from message `message` (transcript line `seq`) of session `session` (which `forkedFrom` names too). */
  editedFrom?: { session: string; message: number; seq: number }
  /** The race it runs in (shared/race.ts): started with others on one prompt, each in its own worktree. */
  raceId?: string
  createdAt: string
  /** The last activity: a turn's end. Settings (mode, model, options), titles and reopening leave it alone. */
  updatedAt: string
  lastStopReason?: string
  /** The MCP servers the session started with (profile id and version); later edits of a profile leave this alone. */
  mcpServers?: SessionMcpServer[]
  /** Servers that applied but were not given to the agent, each with why (e.g. a transport it does not announce). */
  mcpLeftOut?: SessionMcpLeftOut[]
  /** The session works in a git worktree of its own, on its own branch (its cwd is in there). */
  worktree?: SessionWorktree
  /** The preset it was started from (its id, and its name then). */
  preset?: { id: string; name: string }
  /** The system prompt sent to the agent (session/new, and again at each load, resume and fork). */
  systemPrompt?: string
  /** A system prompt applied (the project's, the preset's) but was not sent, and why (the agent does not take one). */
  systemPromptLeftOut?: string
  /** What the next prompt tells the agent first (e.g. that the files were rewound to a checkpoint); cleared once sent. */
  rewindNote?: string
  /** Prompts written while a turn ran, waiting to be sent one by one as turns end (kept across restarts). */
  queue?: QueuedPrompt[]
  /** Why the queue waits for the user instead of going on (a cancelled or failed turn, a restart). */
  queueHeld?: string
  /** How the last turn ended, until a window has shown the session or the user dismissed it from the inbox. */
  unseen?: UnseenTurn
  /**
   * Set while a turn is under way: what it waits for (`your permission (“…”)`, `your answer (“…”)`, or '' while
   * the agent works). A Host that stops without closing (killed, crashed) finds it at its next start and lists
   * that turn as cut short, as a closing Host does (electron/host/inbox/inbox.ts).
   */
  underWay?: string
}

/** A turn's end the user has not seen yet: it finished (`stopReason`), or ended in an error (`error`). */
export interface UnseenTurn {
  at: string
  stopReason?: string
  error?: string
  /** The start of the agent's last message in the turn, as plain text (what the inbox shows of it). */
  reply?: string
}

/** A prompt waiting in a session's queue. */
export interface QueuedPrompt {
  id: string
  text: string
  attachments: Attachment[]
  queuedAt: string
}

/**
 * Where a session's title came from, lowest rank first: `default` (a placeholder),
 * `prompt` (the first prompt's first line), `agent` (the agent's
 * session_info_update or its session/list), `user` (renamed by the user; nothing
 * else changes it after that).
 */
export type TitleSource = 'default' | 'prompt' | 'agent' | 'user'

/**
 * - `idle`: no live connection; the transcript can be read and "Continue" offered
 * - `starting`: the agent is being spawned, initialised, or the session created/loaded
 * - `ready`: connected and waiting for a prompt
 * - `running`: a prompt turn is in progress
 * - `error`: the last operation failed; `error` says why
 */
export type SessionStatus = 'idle' | 'starting' | 'ready' | 'running' | 'error'

export interface PermissionOptionView {
  optionId: string
  name: string
  kind: string
  /** An "always" the agent offers for this session only ("Allow for this session"): remembered for the session, in memory. */
  forSession?: true
}

export interface PendingPermission {
  requestId: string
  title: string
  /**
   * The options the agent offered, less an "always" one that cannot be
   * remembered here when a "once" one of the same decision is there.
   */
  options: PermissionOptionView[]
  /** The tool call the request is about (its card in the thread shows that it waits). */
  toolCallId?: string
  /**
   * What an "always" option remembers (Switchboard's own rule, answered with
   * the agent's "once" option each time), or why nothing can be remembered.
   * Absent when the request is not about a tool (a mode switch: its options
   * go to the agent as they are).
   */
  always?: PermissionAlways
}

/** Live state of a session (not persisted). */
export interface SessionState {
  id: string
  status: SessionStatus
  /** The live session's mode lets the agent act without asking (shared/modes.ts): its name and what it skips. */
  modeSkips?: { mode: string; skip: 'edits' | 'all' }
  error?: string
  /** `error` is the last turn's failure, shown in the thread as its error entry: the window does not repeat it. Cleared by any new `error`. */
  errorInThread?: boolean
  /** Why the session cannot be continued, when it cannot. */
  continueBlockedReason?: string
  /**
   * The agent could not reopen the conversation (`session/load` or
   * `session/resume` failed): what it said. The view is kept, and the user is
   * offered to continue in a new session given the conversation as context.
   */
  reopenFailed?: string
  /** Every permission request of this session waiting for the user, oldest first (an agent may ask several at once). */
  permissions?: PendingPermission[]
  /** The MCP servers the live connection was given when it was last continued (loaded or resumed); the record keeps those it started with. */
  mcp?: { servers: SessionMcpServer[]; leftOut: SessionMcpLeftOut[] }
  /** Which of the given servers the agent started, as far as it shows (electron/host/mcp/run-watch.ts); set while it is linked. */
  mcpRun?: SessionMcpRunState
  /** The prompts waiting to be sent, oldest first (the record keeps them; every window sees the same queue). */
  queue?: QueuedPrompt[]
  /** Set while the queue is held: why, in a sentence the window shows beside Resume and Clear. */
  queueHeld?: string
}

export type { ElicitationField, ElicitationValue, PendingElicitation } from './elicitation'

export interface AppInfo {
  version: string
  dataDir: string
  /** True when the host can show a native folder picker (the Electron shell). */
  nativeFolderPicker: boolean
  /** Problems found at start-up the user should know about (e.g. a corrupt db.json moved aside). */
  warnings: string[]
  /** False when secrets (agent API keys) are kept in memory only and forgotten when the host stops. */
  secretsPersistent: boolean
}

/** A built-in agent preset, as the Agents page offers it. */
export interface AgentPresetView {
  id: string
  name: string
  command: string
  args: string[]
  /** The preset's command was found on PATH (else it runs through npx, which downloads it). */
  installed: boolean
  installHint: string
  /** An agent with this id is already set up. */
  added: boolean
}

/** The end of an agent's stderr log. */
export interface AgentLog {
  agentId: string
  /** Absolute path of the whole log. */
  path: string
  /** The last part of the log, terminal escape sequences removed. */
  text: string
  /** True when earlier lines were left out. */
  truncated: boolean
}

/**
 * A remembered "always" answer, for one agent in one project: one tool, and
 * one exact command or files inside the project's folders (see
 * shared/permissions.ts). Matching requests are answered with the agent's
 * "once" option of the same decision.
 */
export interface PermissionRule extends RuleSubject {
  id: string
  agentId: string
  projectId: string
  decision: 'allow' | 'reject'
  createdAt: string
}
