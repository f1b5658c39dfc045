/**
 * Session presets (as JetBrains Air has them): a named starting point for a
 * new session, kept in db.json and edited on the Agents page. A preset names
 * an agent and what Switchboard sets right after `session/new`: the mode, the
 * model and other configuration options, a system prompt (sent in
 * session/new where the agent announces `sessionCapabilities.systemPrompt`),
 * MCP servers given besides the project's, and where the session works.
 * (Not to be confused with the built-in agent presets of presets.ts, which
 * are agent definitions.) Types only, and no zod: the window imports this
 * (its CSP has no eval, which zod's classic API probes for); the requests'
 * schemas are in preset-requests.ts.
 */

export type Isolation = 'folder' | 'worktree'

export interface SessionPreset {
  id: string
  name: string
  agentId: string
  /** The model (a value of the agent's configuration option of category `model`, or an older-style model id). */
  model?: string
  /** The mode the session is put in (the agent's mode id). */
  modeId?: string
  /** Other configuration options of the agent's sessions (effort…): option id → value. */
  configOptions?: Record<string, string | boolean>
  /** Instructions added to the agent's own (ACP `systemPrompt`, mode `append`), where the agent takes them. */
  systemPrompt?: string
  /** MCP server profiles given to its sessions besides those the project gets (a profile switched off is not). */
  mcpProfileIds: string[]
  isolation: Isolation
  createdAt: string
  updatedAt: string
}

/** The largest system prompt taken (a project's or a preset's). */
export const SYSTEM_PROMPT_MAX = 100_000

/** What a preset sets, in a line (the Agents page, the new-session menu). */
export function presetSummary(preset: SessionPreset, agentName: string): string {
  const parts = [agentName]
  if (preset.modeId) parts.push(`mode ${preset.modeId}`)
  if (preset.model) parts.push(`model ${preset.model}`)
  for (const [option, value] of Object.entries(preset.configOptions ?? {})) parts.push(`${option} ${String(value)}`)
  if (preset.systemPrompt?.trim()) parts.push('system prompt')
  if (preset.mcpProfileIds.length) parts.push(`${preset.mcpProfileIds.length} MCP server${preset.mcpProfileIds.length === 1 ? '' : 's'}`)
  if (preset.isolation === 'worktree') parts.push('worktree')
  return parts.join(' · ')
}
