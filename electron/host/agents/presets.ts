import type { AgentDefinition } from '../../../shared/agent-definition'
import type { AgentCommand, ProcessTransport } from '../../../shared/transport'
import { UserEnvironment } from '../child-processes/environment'

/**
 * The agents a new database starts with. Where an agent's ACP command is
 * installed (on PATH) it is run directly; otherwise through npx, which
 * downloads the adapter on first use (and needs the network then), at the
 * version pinned here: the one package.json's devDependencies install and the
 * real-agent suites test (test/unit/presets.test.ts fails when they differ).
 * To move a preset to a newer version: `npm install -D <package>@<version>`,
 * run the real-agent suites, and set the same version here.
 */

/** A preset's definition: a process on this computer. */
export type PresetDefinition = AgentDefinition & { transport: ProcessTransport }

interface Preset {
  id: string
  name: string
  /** The installed command, if the user has it. */
  binary: string
  binaryArgs: string[]
  /** The npm package to run through npx otherwise, */
  npxPackage: string
  /** at this version (tested: the devDependency's). */
  version: string
  env: Record<string, string>
  installHint: string
  /** The npm packages it ran as before (an agent set up with one is offered the tested version of this one). */
  formerly?: string[]
}

const PRESETS: Preset[] = [
  {
    id: 'claude-code',
    name: 'Claude Code',
    binary: 'claude-agent-acp',
    binaryArgs: [],
    npxPackage: '@agentclientprotocol/claude-agent-acp',
    version: '0.101.0',
    env: {},
    installHint: 'npm install -g @agentclientprotocol/claude-agent-acp@0.101.0'
  },
  {
    id: 'gemini',
    name: 'Gemini CLI',
    binary: 'gemini',
    binaryArgs: ['--acp'],
    npxPackage: '@google/gemini-cli',
    version: '0.61.0',
    // Gemini CLI re-spawns itself otherwise.
    env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
    installHint: 'npm install -g @google/gemini-cli@0.61.0'
  },
  {
    id: 'codex',
    name: 'Codex',
    binary: 'codex-acp',
    binaryArgs: [],
    npxPackage: '@agentclientprotocol/codex-acp',
    version: '2.6.0',
    env: {},
    installHint: 'npm install -g @agentclientprotocol/codex-acp@2.6.0',
    // The adapter before 2.x, under Zed's name.
    formerly: ['@zed-industries/codex-acp']
  }
]

export async function defaultAgentPresets(environment = UserEnvironment.ofProcess()): Promise<AgentDefinition[]> {
  return (await presetCatalog(environment)).map((p) => p.definition)
}

/** Every preset as it would be set up on this machine (on the PATH its processes get), and whether its own command is installed. */
export async function presetCatalog(environment: UserEnvironment): Promise<{ definition: PresetDefinition; installed: boolean }[]> {
  return Promise.all(
    PRESETS.map(async (preset) => {
      const installed = Boolean(await environment.find(preset.binary))
      const definition: PresetDefinition = {
        id: preset.id,
        name: preset.name,
        transport: {
          kind: 'process',
          command: installed ? preset.binary : 'npx',
          args: installed ? preset.binaryArgs : ['-y', `${preset.npxPackage}@${preset.version}`, ...preset.binaryArgs],
          env: { ...preset.env }
        },
        installHint: preset.installHint
      }
      return { definition, installed }
    })
  )
}

/** Each preset's npm package, the version it pins, and the packages it ran as before. */
export const PRESET_PACKAGES: readonly {
  presetId: string
  npxPackage: string
  version: string
  binaryArgs: readonly string[]
  formerly: readonly string[]
}[] = PRESETS.map(({ id, npxPackage, version, binaryArgs, formerly }) => ({
  presetId: id,
  npxPackage,
  version,
  binaryArgs,
  formerly: formerly ?? []
}))

/**
 * Which preset package and version an agent runs through npx (`npx -y <package>[@<version>]`), or null:
 * version null when it runs whatever npx serves that day (a definition from before presets were pinned).
 * `npxPackage` is the package it runs, which may be one the preset ran as before; `tested` is a version of
 * the preset's package now (`testedPackage`).
 */
export function presetRunOf(
  definition: Pick<AgentCommand, 'command' | 'args'>
): { presetId: string; npxPackage: string; version: string | null; tested: string; testedPackage: string } | null {
  if (definition.command !== 'npx') return null
  for (const arg of definition.args) {
    if (arg.startsWith('-')) continue
    for (const preset of PRESET_PACKAGES) {
      const runs = [preset.npxPackage, ...preset.formerly].find((name) => arg === name || arg.startsWith(`${name}@`))
      if (!runs) continue
      const version = arg === runs ? null : arg.slice(runs.length + 1)
      return { presetId: preset.presetId, npxPackage: runs, version: version || null, tested: preset.version, testedPackage: preset.npxPackage }
    }
    return null
  }
  return null
}

/** The definition's npx arguments with the preset's package at another version (in place of a package it ran as before, too). */
export function withPresetVersion(definition: Pick<AgentCommand, 'args'>, npxPackage: string, version: string): string[] {
  const names = [npxPackage, ...(PRESET_PACKAGES.find((p) => p.npxPackage === npxPackage)?.formerly ?? [])]
  return definition.args.map((arg) => (names.some((name) => arg === name || arg.startsWith(`${name}@`)) ? `${npxPackage}@${version}` : arg))
}
