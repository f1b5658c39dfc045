import { z } from 'zod'
import type { AgentDefinition } from './agent-definition'
import { confirmationCodeParam } from './confirmation'
import type { AgentLog, AgentPresetView, AgentRuntimeState } from './domain'

/** The `agents.*` requests of the contract (shared/contract.ts): their parameters' schemas and their results. */

const id = z.string().min(1).max(200)
/** The ACP protocol version to ask an agent for (2: the draft, falling back to 1 when the agent answers 1). */
const protocolVersion = z.union([z.literal(1), z.literal(2)])

/** The command of a process or SSH agent as typed (empty ones are refused by the Host with a sentence the form can show). */
const commandInput = {
  command: z.string().max(4096),
  args: z.array(z.string().max(4096)).max(200).default([]),
  env: z.record(z.string(), z.string()).default({}),
  /** Variables kept in the secret store (name -> value, or null to keep the stored value); db.json only names them. A stored secret not listed is forgotten. */
  secretEnv: z.record(z.string(), z.string().min(1).max(10_000).nullable()).default({}),
  /** The folder the agent starts in (absolute; on the host over SSH); empty: the home folder; absent on update: left as it is. */
  cwd: z.string().max(4096).optional()
}

/** How the agent is reached, as typed: one case per transport (shared/transport.ts). */
export const transportInputSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('process'), ...commandInput }),
  /** An agent on another machine over SSH: where its host is and how it is reached; the command, variables and folder are the host's. */
  z.object({
    kind: z.literal('ssh'),
    destination: z.string().max(1000),
    port: z.number().int().min(1).max(65535).optional(),
    identityFile: z.string().max(4096).optional(),
    knownHostsFile: z.string().max(4096).optional(),
    ...commandInput
  }),
  /** A network agent: its URL, its headers (a value to keep in the secret store, or null to keep the stored one), a CA file. */
  z.object({
    kind: z.literal('network'),
    url: z.string().max(4096),
    headers: z.record(z.string().max(200), z.string().min(1).max(10_000).nullable()).default({}),
    caFile: z.string().max(4096).optional()
  })
])
export type TransportInput = z.output<typeof transportInputSchema>

const agentInputFields = {
  name: z.string().max(200),
  transport: transportInputSchema,
  /** Left as it was when absent (update). */
  protocol: protocolVersion.optional(),
  ...confirmationCodeParam
}

/** Why a key beside the name is refused: the command, host or URL of an agent belong in its `transport`. */
function flatShapeRefused(issue: { code?: string; keys?: string[] }): string | undefined {
  if (issue.code !== 'unrecognized_keys') return undefined
  const keys = (issue.keys ?? []).map((key) => `"${key}"`).join(', ')
  return `Unknown keys ${keys}: an agent's command, variables and folder, its SSH host or its URL go in \`transport\` ({ kind: 'process' | 'ssh' | 'network', … })`
}

/**
 * An agent as typed: its name, how it is reached (one case of `transportInputSchema`), the protocol version. Strict:
 * the flat shape of before the union (`command`, `remote`, `ssh` beside the name) is refused, not guessed at, so no
 * invalid combination can be written (old db.json files are migrated on read: electron/host/storage/migrate-transport.ts).
 */
const agentInput = z.strictObject(agentInputFields, { error: flatShapeRefused })
/** An agent as the Host checks it (electron/host/agents/definitions.ts). */
export type AgentInput = Omit<z.output<typeof agentInput>, 'confirmationCode'>

export const agentRequestParams = {
  'agents.list': z.object({}),
  /** A new agent: its name, how it is reached, the protocol version to ask for. */
  'agents.add': agentInput,
  /**
   * Replaces an agent's name and transport (its command, arguments, variables; its host; its URL and headers).
   * Confirmation is needed only when what the agent runs changes.
   */
  'agents.update': z.strictObject({ agentId: id, ...agentInputFields }, { error: flatShapeRefused }),
  /** The ACP protocol version to ask the agent for (2: the draft, with a fallback to 1); applied at its next start. */
  'agents.setProtocol': z.object({ agentId: id, protocol: protocolVersion }),
  /** The mode the agent's sessions start in; null: its mode that asks. A mode that skips permissions needs `confirmSkip` once per agent. */
  'agents.setStartingMode': z.object({ agentId: id, modeId: z.string().min(1).max(200).nullable(), confirmSkip: z.boolean().optional() }),
  'agents.remove': z.object({ agentId: id }),
  /** Stops the agent's process if it runs, and starts it again (with its current definition). */
  'agents.restart': z.object({ agentId: id }),
  /** The end of the agent's stderr log (logs/<agentId>.log), across its runs. */
  'agents.log': z.object({ agentId: id }),
  /** The built-in presets, whether each is set up and whether its command is installed. */
  'agents.presets': z.object({}),
  'agents.addPreset': z.object({ presetId: id, ...confirmationCodeParam }),
  'agents.states': z.object({}),
  'agents.authenticate': z.object({
    agentId: id,
    methodId: z.string().min(1).max(200),
    values: z.record(z.string().max(200), z.string().max(10_000)).default({})
  }),
  'agents.logout': z.object({ agentId: id }),
  /** Runs a terminal sign-in method (the agent's own command with the method's arguments) in a pseudo-terminal. */
  'agents.login.start': z.object({
    agentId: id,
    methodId: z.string().min(1).max(200),
    cols: z.number().int().min(10).max(1000).default(100),
    rows: z.number().int().min(4).max(500).default(30),
    ...confirmationCodeParam
  }),
  'agents.login.input': z.object({ loginId: id, data: z.string().max(100_000) }),
  'agents.login.resize': z.object({ loginId: id, cols: z.number().int().min(10).max(1000), rows: z.number().int().min(4).max(500) }),
  'agents.login.stop': z.object({ loginId: id })
}

export interface AgentRequestResults {
  'agents.list': AgentDefinition[]
  'agents.add': AgentDefinition
  'agents.update': AgentDefinition
  'agents.setProtocol': AgentDefinition
  'agents.setStartingMode': AgentDefinition
  'agents.remove': Record<string, never>
  'agents.restart': AgentRuntimeState
  'agents.log': AgentLog
  'agents.presets': AgentPresetView[]
  'agents.addPreset': AgentDefinition
  'agents.states': AgentRuntimeState[]
  'agents.authenticate': Record<string, never>
  'agents.logout': Record<string, never>
  'agents.login.start': { loginId: string; command: string }
  'agents.login.input': Record<string, never>
  'agents.login.resize': Record<string, never>
  'agents.login.stop': Record<string, never>
}
