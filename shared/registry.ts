import { z } from 'zod'
import { confirmationCodeParam } from './confirmation'
import type { AgentCheckReport } from './check-report'
import type { AgentDefinition, DistributionKind } from './agent-definition'

/**
 * The ACP Registry (repository agentclientprotocol/registry, FORMAT.md) as
 * Switchboard reads it, the requests of the Agents page's registry view, and
 * the capability report of the Check action. Types only and schemas: the Host
 * fetches, installs and probes (electron/host/acp-registry/), the renderer shows.
 */

/** The feed everyone reads unless a setting names another (a team may host its own). */
export const DEFAULT_REGISTRY_URL = 'https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json'

export const distributionKinds = ['binary', 'npx', 'uvx'] as const satisfies readonly DistributionKind[]

/** This machine's key in a `binary` distribution: darwin|linux|windows - aarch64|x86_64. */
export type PlatformKey = `${'darwin' | 'linux' | 'windows'}-${'aarch64' | 'x86_64'}`

const text = (max: number) => z.string().max(max)
const env = z.record(z.string().max(200), z.string().max(10_000)).default({})
const args = z.array(z.string().max(10_000)).max(200).default([])

export const binaryTargetSchema = z.object({
  archive: z.string().url().max(4096),
  cmd: z.string().min(1).max(1000),
  args,
  env
})
export type BinaryTarget = z.infer<typeof binaryTargetSchema>

export const packageDistributionSchema = z.object({
  package: z.string().min(1).max(1000),
  cmd: z.string().min(1).max(500).optional(),
  args,
  env
})
export type PackageDistribution = z.infer<typeof packageDistributionSchema>

/** One agent of the feed; fields the format adds later are ignored, not refused. */
export const registryAgentSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[a-z0-9][a-z0-9._-]*$/i, 'an id of letters, digits, dots, dashes and underscores'),
  name: text(200).min(1),
  version: text(100).min(1),
  description: text(2000).default(''),
  repository: text(2000).optional(),
  website: text(2000).optional(),
  authors: z.array(text(200)).max(50).default([]),
  license: text(200).optional(),
  icon: text(4096).optional(),
  distribution: z
    .object({
      binary: z.record(z.string().max(50), binaryTargetSchema).optional(),
      npx: packageDistributionSchema.optional(),
      uvx: packageDistributionSchema.optional()
    })
    .refine((d) => Boolean(d.binary || d.npx || d.uvx), 'at least one distribution (binary, npx or uvx)')
})
export type RegistryAgent = z.infer<typeof registryAgentSchema>

/** The feed's outer shape; each agent is checked on its own so one bad entry does not hide the rest. */
export const registryFeedSchema = z.object({
  version: z.string().max(50),
  agents: z.array(z.unknown()).max(5000)
})

/** A feed as the Host keeps it (cache and bundled snapshot): the agents that passed, and each icon's SVG text. */
export interface RegistrySnapshot {
  url: string
  fetchedAt: string
  agents: RegistryAgent[]
  /** Registry id → the icon's SVG markup (shown as a mask, never as markup). */
  icons: Record<string, string>
}

/** One registry agent on the Agents page. */
export interface RegistryEntryView {
  id: string
  name: string
  version: string
  description: string
  repository?: string
  website?: string
  authors: string[]
  license?: string
  /** The icon's SVG markup, when there is one. */
  icon?: string
  /** The distributions usable here, best first (a binary for another platform is left out). */
  kinds: DistributionKind[]
  /** Why it cannot be installed here, when `kinds` is empty. */
  unavailable?: string
  /** The agent set up from this entry, if any. */
  installed?: { agentId: string; version: string; kind: DistributionKind; pinned: boolean }
  /** The registry lists a newer version than the one installed (and it is not pinned). */
  update?: { from: string; to: string }
  /**
   * An agent of the user's, not installed from here, that is this entry's agent (a preset, or a command running
   * the entry's npm package): the version it runs (null: not known), and the registry's newer one when it can
   * move to it (registry.updatePreset).
   */
  configured?: { agentId: string; name: string; version: string | null; update?: string }
}

export interface RegistryListing {
  /** The feed's URL as set (what is shown may be an older copy or the snapshot: see source). */
  url: string
  /** network: fetched now; cache: the copy kept in the data folder; snapshot: the copy bundled with the app. */
  source: 'network' | 'cache' | 'snapshot'
  fetchedAt: string
  /** What went wrong fetching or reading the feed (the list shown is then the cache or the snapshot). */
  problem?: string
  /** Entries of the feed that were left out, each with why. */
  skipped: string[]
  platform: PlatformKey | null
  /** Whether uv's `uvx` is on PATH (uvx distributions need it). */
  uvx: boolean
  agents: RegistryEntryView[]
}

/** Progress of an install or update, as `registry.progress` events. */
export interface RegistryProgress {
  registryId: string
  phase: 'downloading' | 'extracting' | 'done' | 'failed'
  received: number
  /** Bytes expected, when the server said. */
  total: number | null
}

// ---- the capability report: its shape and text are in check-report.ts (no zod there: the sidebar shows it on the first screen) ----
export type { AgentCheckReport, CheckLine, CheckOutcome } from './check-report'
export { checkReportMarkdown, checkSummary, shownOutcome } from './check-report'

/** An agent set up from a preset and run through npx: the version it runs and what it could run. */
export interface PresetVersionView {
  agentId: string
  npxPackage: string
  /** The version it runs; null: none named, so npx runs whatever the npm registry serves that day. */
  runs: string | null
  /** The version this Switchboard was tested with (the preset's pin). */
  tested: string
  /** A version newer than the one it runs, offered: the ACP Registry's, else the tested one; null when there is none. */
  newer: string | null
  /** Where `newer` comes from. */
  newerFrom?: 'registry' | 'tested'
}

export const registryRequestParams = {
  /** The registry's agents: from the cache when it is under a day old, else fetched (`refresh` fetches anyway). */
  'registry.list': z.object({ refresh: z.boolean().default(false) }),
  /** Sets the feed's URL (empty: the default); the next listing fetches it. */
  'registry.setUrl': z.object({ url: z.string().max(4096), ...confirmationCodeParam }),
  /** Installs an agent from the registry (the best distribution for this machine unless one is named). */
  'registry.install': z.object({ registryId: z.string().min(1).max(200), kind: z.enum(distributionKinds).optional(), ...confirmationCodeParam }),
  /** Moves an installed registry agent to the version the registry lists now. */
  'registry.update': z.object({ agentId: z.string().min(1).max(200), ...confirmationCodeParam }),
  /** Keeps an installed registry agent at its version (no update offered), or lets it follow the registry again. */
  'registry.pin': z.object({ agentId: z.string().min(1).max(200), pinned: z.boolean() }),
  /** Which version each agent set up from a preset runs through npx, the tested one, and a newer one the registry lists. */
  'registry.presetVersions': z.object({ refresh: z.boolean().default(false) }),
  /** Moves an agent set up from a preset to another version of its npm package (the tested one, or one the registry lists); the check runs after. */
  'registry.updatePreset': z.object({
    agentId: z.string().min(1).max(200),
    version: z.string().regex(/^\d+\.\d+\.\d+[0-9A-Za-z.+-]*$/, 'A version such as 1.2.3'),
    ...confirmationCodeParam
  }),
  /** Starts the agent apart, in a scratch folder, and probes what it does (no prompt is sent). */
  'agents.check': z.object({ agentId: z.string().min(1).max(200) }),
  /** The last check of each agent that has one. */
  'agents.checks': z.object({})
} as const

export interface RegistryRequestResults {
  'registry.list': RegistryListing
  'registry.setUrl': { url: string }
  'registry.install': AgentDefinition
  'registry.update': AgentDefinition
  'registry.pin': AgentDefinition
  'registry.presetVersions': PresetVersionView[]
  'registry.updatePreset': AgentDefinition
  'agents.check': AgentCheckReport
  'agents.checks': AgentCheckReport[]
}
