import type { AgentDefinition } from '../../../shared/agent-definition'
import { commandOf, type AgentCommand } from '../../../shared/transport'
import type { RegistryAgent, RegistryEntryView } from '../../../shared/registry'
import { PRESET_PACKAGES, presetRunOf } from '../agents/presets'

/**
 * Which of the user's agents, set up otherwise than from the registry (a
 * preset, or a command of their own), is the agent a registry entry
 * publishes: the one that runs the entry's npm package through npx, or the
 * preset the entry is known to publish under another package name (the
 * registry lists Claude's adapter as `claude-code-acp`, the old package). The
 * registry then shows it as set up, with the version it runs, instead of
 * offering to install it again; an update is offered only for a preset that
 * runs the same package at an older version than the registry lists.
 */
export function configuredAs(entry: RegistryAgent, agents: readonly AgentDefinition[]): RegistryEntryView['configured'] {
  const listed = entry.distribution.npx ? splitPackage(entry.distribution.npx.package) : null
  for (const agent of agents) {
    if (agent.origin) continue
    const command = commandOf(agent.transport)
    const run = command && npxPackageOf(command)
    const presetRun = command && presetRunOf(command)
    const presetId = presetRun?.presetId ?? (PRESET_PACKAGES.some((p) => p.presetId === agent.id) ? agent.id : undefined)
    const samePackage = Boolean(listed && run && run.name === listed.name)
    const knownPreset = presetId !== undefined && (PRESET_REGISTRY_IDS[presetId] ?? []).includes(entry.id)
    if (!samePackage && !knownPreset) continue
    const version = run?.version ?? null
    // What registry.updatePreset takes: a listed version newer than the one run and not older than the tested one.
    const update =
      samePackage &&
      presetRun &&
      listed?.version &&
      version &&
      compareVersions(listed.version, version) > 0 &&
      compareVersions(listed.version, presetRun.tested) >= 0
        ? listed.version
        : undefined
    return { agentId: agent.id, name: agent.name, version, ...(update ? { update } : {}) }
  }
  return undefined
}

/** The registry's ids under which it has published each preset's agent (Claude's under its old package name). */
const PRESET_REGISTRY_IDS: Record<string, readonly string[]> = {
  'claude-code': ['claude-code-acp', 'claude-acp', 'claude-agent-acp'],
  gemini: ['gemini', 'gemini-cli'],
  codex: ['codex-acp', 'codex']
}

/** The npm package (and version, when named) an agent runs through `npx`: its first argument that is not an option. */
function npxPackageOf(agent: Pick<AgentCommand, 'command' | 'args'>): { name: string; version: string | null } | null {
  if (agent.command !== 'npx') return null
  const spec = agent.args.find((arg) => !arg.startsWith('-'))
  return spec ? splitPackage(spec) : null
}

/** `@scope/name@1.2.3` → name and version (null when none is named). */
export function splitPackage(spec: string): { name: string; version: string | null } {
  const at = spec.lastIndexOf('@')
  return at > 0 ? { name: spec.slice(0, at), version: spec.slice(at + 1) || null } : { name: spec, version: null }
}

/** Orders versions by their numbers (1.10.0 after 1.9.0); a pre-release comes before its release. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [main = '', pre] = v.split(/-(.*)/s)
    return { numbers: main.split('.').map((n) => Number.parseInt(n, 10) || 0), pre: pre ?? null }
  }
  const x = parse(a)
  const y = parse(b)
  for (let i = 0; i < Math.max(x.numbers.length, y.numbers.length); i++) {
    const d = (x.numbers[i] ?? 0) - (y.numbers[i] ?? 0)
    if (d) return d
  }
  if (x.pre === y.pre) return 0
  if (x.pre === null) return 1
  if (y.pre === null) return -1
  return x.pre < y.pre ? -1 : 1
}
