/** An agent as the user set it up (db.json's `agents`): its name, how it is reached, and what Switchboard remembers of it. */

import type { Project } from './domain'
import { transportHost, type AgentTransport } from './transport'

export interface AgentDefinition {
  id: string
  name: string
  /** How it is reached: a process here, a command on a host over SSH, or a server over the network (shared/transport.ts). */
  transport: AgentTransport
  /** Sign-in methods given an API key (kept in the secret store): sent again in `authenticate` at each start, as the agent keeps it in memory only. */
  apiKeySignIn?: string[]
  /** How to install the command, told to the user when it cannot be found. */
  installHint?: string
  /**
   * The mode (id) Switchboard puts a new or reopened session in, right after
   * `session/new`/`session/load`; absent: the agent's mode that asks before
   * edits and commands (shared/modes.ts startingModeOf). A project may override it.
   */
  startingMode?: string
  /** The user confirmed once that this agent may be put in a mode that skips permissions (asked the first time one is chosen). */
  skipPermissionsConfirmed?: boolean
  /**
   * The ACP protocol version to ask the agent for: 1 (the stable protocol, the
   * default) or 2 (the draft, through the SDK's experimental entry). An agent
   * asked for 2 that answers 1 is spoken to in version 1.
   */
  protocol?: 1 | 2
  /** Installed from the ACP Registry: which entry, version and distribution (see shared/registry.ts). */
  origin?: AgentOrigin
}

/** How a registry agent is run: a downloaded archive, an npm package through npx, a PyPI package through uv's uvx. */
export type DistributionKind = 'binary' | 'npx' | 'uvx'

/** Where an agent came from, on its definition: what to update, and what to remove on uninstall. */
export interface AgentOrigin {
  registryId: string
  version: string
  kind: DistributionKind
  /** Kept at this version: no update is offered. */
  pinned?: boolean
  /** binary: the folder its files were extracted into (inside the data folder). */
  installDir?: string
}

/**
 * Whether an agent can work in a project: a project on a host takes only
 * agents over SSH to that host; a project on this computer takes the others
 * (an agent over the network works on this computer's files through the client).
 */
export function agentFitsProject(agent: Pick<AgentDefinition, 'transport'>, project: Pick<Project, 'sshHost'>): boolean {
  return transportHost(agent.transport) === project.sshHost
}
