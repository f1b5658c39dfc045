import { z } from 'zod'
import type { SessionRecord } from './domain'

/**
 * Session presets (as JetBrains Air has them): a named starting point for a
 * new session, kept in db.json and edited on the Agents page. A preset names
 * an agent and what Switchboard sets right after `session/new`: the mode, the
 * model and other configuration options, a system prompt (sent in
 * session/new where the agent announces `sessionCapabilities.systemPrompt`),
 * MCP servers given besides the project's, and where the session works.
 * (Not to be confused with the built-in agent presets of presets.ts, which
 * are agent definitions.) Types and schemas only.
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

const id = z.string().min(1).max(200)
/** The largest system prompt taken (a project's or a preset's). */
export const SYSTEM_PROMPT_MAX = 100_000

export const presetInputSchema = z.object({
  name: z.string().trim().min(1, 'A preset needs a name').max(200),
  agentId: id,
  model: z.string().trim().max(200).optional(),
  modeId: z.string().trim().max(200).optional(),
  configOptions: z
    .record(z.string().trim().min(1).max(200), z.union([z.string().max(1000), z.boolean()]))
    .refine((o) => Object.keys(o).length <= 50, { message: 'At most 50 options' })
    .default({}),
  systemPrompt: z.string().max(SYSTEM_PROMPT_MAX).optional(),
  mcpProfileIds: z.array(id).max(100).default([]),
  isolation: z.enum(['folder', 'worktree']).default('folder'),
  /** A mode that skips permissions needs it once per agent (as `agents.setStartingMode`). */
  confirmSkip: z.boolean().optional()
})
export type PresetInput = z.input<typeof presetInputSchema>

export const presetRequestParams = {
  'presets.list': z.object({}),
  'presets.add': presetInputSchema,
  'presets.update': presetInputSchema.extend({ presetId: id }),
  'presets.remove': z.object({ presetId: id }),
  /**
   * A new session from a preset in a project: its agent, put in its mode, model and options right after session/new;
   * `isolation` (and `branch` for a worktree) overrides the preset's.
   */
  'presets.start': z.object({
    presetId: id,
    projectId: id,
    isolation: z.enum(['folder', 'worktree']).optional(),
    branch: z.string().trim().min(1).max(200).optional()
  })
} as const

export interface PresetRequestResults {
  'presets.list': SessionPreset[]
  'presets.add': SessionPreset
  'presets.update': SessionPreset
  'presets.remove': Record<string, never>
  'presets.start': SessionRecord
}

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
