/**
 * Domain types shared by the Host and the renderer. Plain data only: everything
 * here crosses a transport as JSON.
 */

export interface Project {
  id: string
  /** Shown in the sidebar; defaults to the folder's name. */
  name: string
  /** Absolute path of the project's working directory (the ACP `cwd`). */
  cwd: string
  /** More absolute folders the project's sessions may use (ACP `additionalDirectories`, where announced). */
  additionalDirectories?: string[]
  createdAt: string
}

export interface AgentDefinition {
  id: string
  name: string
  /** Executable name (looked up on PATH) or absolute path. */
  command: string
  args: string[]
  env: Record<string, string>
  /** Names of environment variables whose values are kept in the secret store, not here. */
  secretEnv?: string[]
  /** How to install the command, told to the user when it cannot be found. */
  installHint?: string
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
  }
  auth: { logout: boolean }
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
  agentInfo?: AgentInfo
  capabilities?: AgentCapabilities
  authMethods?: AuthMethodView[]
}

/** A conversation with one agent in one project, as kept in db.json. */
export interface SessionRecord {
  /** Switchboard's own id: stable across agents and restarts. */
  id: string
  /** The agent's ACP session id; null until `session/new` has answered. */
  sessionId: string | null
  agentId: string
  projectId: string
  /** Absolute cwd the session was started in. */
  cwd: string
  /** The additional folders the session was started with (sent to the agent only when it announces them). */
  additionalDirectories?: string[]
  title: string
  /** The user named the session: the agent's titles (session_info_update) and the first prompt no longer change it. */
  titleSetByUser?: boolean
  createdAt: string
  updatedAt: string
  lastStopReason?: string
}

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
}

export interface PendingPermission {
  requestId: string
  title: string
  options: PermissionOptionView[]
}

/** Live state of a session (not persisted). */
export interface SessionState {
  id: string
  status: SessionStatus
  error?: string
  /** Why the session cannot be continued, when it cannot. */
  continueBlockedReason?: string
  permission?: PendingPermission | null
}

export interface AppInfo {
  version: string
  dataDir: string
  /** True when the host can show a native folder picker (the Electron shell). */
  nativeFolderPicker: boolean
  /** Problems found at start-up the user should know about (e.g. a corrupt db.json moved aside). */
  warnings: string[]
}

/** A remembered "always" answer to permission requests of one kind of tool, for one agent in one project. */
export interface PermissionRule {
  id: string
  agentId: string
  projectId: string
  /** The ACP tool kind (read, edit, execute, ...; `other` when the agent gave none). */
  toolKind: string
  decision: 'allow' | 'reject'
  createdAt: string
}
