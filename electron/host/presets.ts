import type { AgentDefinition } from '../../shared/domain'
import { UserEnvironment } from './environment'

/**
 * The agents a new database starts with. Where an agent's ACP command is
 * installed (on PATH) it is run directly; otherwise through npx, which
 * downloads the adapter on first use (and needs the network then).
 */

interface Preset {
  id: string
  name: string
  /** The installed command, if the user has it. */
  binary: string
  binaryArgs: string[]
  /** The npm package to run through npx otherwise. */
  npxPackage: string
  env: Record<string, string>
  installHint: string
}

const PRESETS: Preset[] = [
  {
    id: 'claude-code',
    name: 'Claude Code',
    binary: 'claude-agent-acp',
    binaryArgs: [],
    npxPackage: '@agentclientprotocol/claude-agent-acp',
    env: {},
    installHint: 'npm install -g @agentclientprotocol/claude-agent-acp'
  },
  {
    id: 'gemini',
    name: 'Gemini CLI',
    binary: 'gemini',
    binaryArgs: ['--acp'],
    npxPackage: '@google/gemini-cli',
    // Gemini CLI re-spawns itself otherwise.
    env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
    installHint: 'npm install -g @google/gemini-cli'
  },
  {
    id: 'codex',
    name: 'Codex',
    binary: 'codex-acp',
    binaryArgs: [],
    npxPackage: '@zed-industries/codex-acp',
    env: {},
    installHint: 'npm install -g @zed-industries/codex-acp'
  }
]

export async function defaultAgentPresets(environment = UserEnvironment.ofProcess()): Promise<AgentDefinition[]> {
  return (await presetCatalog(environment)).map((p) => p.definition)
}

/** Every preset as it would be set up on this machine (on the PATH its processes get), and whether its own command is installed. */
export async function presetCatalog(environment: UserEnvironment): Promise<{ definition: AgentDefinition; installed: boolean }[]> {
  return Promise.all(
    PRESETS.map(async (preset) => {
      const installed = Boolean(await environment.find(preset.binary))
      const definition: AgentDefinition = {
        id: preset.id,
        name: preset.name,
        command: installed ? preset.binary : 'npx',
        args: installed ? preset.binaryArgs : ['-y', preset.npxPackage, ...preset.binaryArgs],
        env: { ...preset.env },
        installHint: preset.installHint
      }
      return { definition, installed }
    })
  )
}
