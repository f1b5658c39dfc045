import type { AgentDefinition } from '../../shared/domain'

/**
 * Agents a new database starts with. Each runs through npx so nothing needs to
 * be installed by hand; the first start downloads the adapter, later starts
 * use npm's cache.
 */
export function defaultAgentPresets(): AgentDefinition[] {
  return [
    {
      id: 'claude-code',
      name: 'Claude Code',
      command: 'npx',
      args: ['-y', '@agentclientprotocol/claude-agent-acp'],
      env: {}
    },
    {
      id: 'gemini',
      name: 'Gemini CLI',
      command: 'npx',
      args: ['-y', '@google/gemini-cli', '--acp'],
      // Gemini CLI re-spawns itself otherwise, and the copy would escape our process group's bookkeeping.
      env: { GEMINI_CLI_NO_RELAUNCH: 'true' }
    },
    {
      id: 'codex',
      name: 'Codex',
      command: 'npx',
      args: ['-y', '@zed-industries/codex-acp'],
      env: {}
    }
  ]
}
