import type { FirstScreenRenderer } from '../../shared/contract'
import type { TranscriptRecord } from '../../shared/transcript'
import type { AgentDefinition } from '../../shared/agent-definition'
import type { PlatformKey, RegistrySnapshot } from '../../shared/registry'
import type { ConnectAgent } from './connection/connection'
import type { SupervisorOptions } from './agents/supervisor'
import type { ConfirmCommand } from './contract/confirmations'
import type { LoginShellOptions } from './child-processes/environment'
import type { SearchHooks } from './search/build'
import type { SecretStore } from './storage/secrets'
import type { RegistryLimits } from './acp-registry/limits'

/** How a Host is made: what the shell around it supplies (a folder picker, dialogs, the secret store) and what tests change. */

export interface HostOptions {
  dataDir: string
  version: string
  /** Agent definitions seeded into a new database. */
  presets?: AgentDefinition[]
  /** Supplied by the Electron shell: a native folder picker. */
  pickFolder?: () => Promise<string | null>
  initializeTimeoutMs?: number
  /** Longest message an agent may send on one line (default 8 MiB); a longer one stops the agent with a message. */
  maxAgentMessageBytes?: number
  /** How long an agent may take to end a turn after session/cancel before it is stopped (default 15 s). */
  cancelGraceMs?: number
  /** Stop an agent after this long without a message either way (default 10 minutes; 0 never). */
  agentIdleMs?: number
  /** Where secrets live; defaults to memory (nothing survives a restart). */
  secrets?: SecretStore
  /** Supplied by the Electron shell: shows a file or folder in the system's file manager. */
  revealPath?: (path: string) => void
  /** Sees every ACP message to and from every agent (tests validate what goes out against the schema). */
  onAgentMessage?: (agentId: string, direction: 'in' | 'out', message: unknown) => void
  /** Starts agents in place of spawning them (fast Host tests use an in-process stub agent). */
  connectAgent?: ConnectAgent
  /** The ACP Registry: the feed's URL when the user set none, the snapshot served offline, the platform, its size limits (tests). */
  registry?: {
    url?: string
    snapshot?: RegistrySnapshot
    platform?: PlatformKey | null
    timeoutMs?: number
    limits?: Partial<RegistryLimits>
  }
  /**
   * Read the user's login shell's environment at start and give it to every process the Host starts
   * (see environment.ts; the shell decides with `wantsLoginShell`). Without it, the Host's own environment.
   */
  loginShell?: boolean | LoginShellOptions
  /** Supplied by the Electron shell: installs the downloaded update, now (restart) or when the app next quits (updates/service.ts). */
  installUpdate?: (when: 'restart' | 'quit') => Promise<void>
  /** Asks the user outside the window to confirm a change that would run a program (confirmations.ts); without it, such changes are refused. */
  confirmCommand?: ConfirmCommand
  /** Tests: the transcripts the search index reads, its build held at a step or started by a search only (search/search-index.ts). */
  search?: SearchHooks
  /** Test-only seams the contract cannot reach: faults put where they would be a bug. */
  faults?: { onFold?: (record: TranscriptRecord) => void }
  /** The waits between attempts to reconnect a network or SSH agent's sessions after its connection was lost (sessions/reconnect.ts). */
  reconnectDelaysMs?: number[]
  /**
   * Draws the window's first screen as HTML (`app.firstScreen`): the window's own sidebar, rendered from the
   * answers `request` gives to the window's first load (renderer/src/first-screen.ts, built for Node). Given by
   * `serve` and the desktop shell from the build; without it, the window draws its first screen itself.
   */
  firstScreen?: FirstScreenRenderer
  /** Keep-alive and connection timeouts of agents over SSH (ssh/options.ts; tests shorten them). */
  ssh?: SupervisorOptions['ssh']
}

export const DEFAULT_AGENT_IDLE_MS = 10 * 60_000
export const DEFAULT_CANCEL_GRACE_MS = 15_000
