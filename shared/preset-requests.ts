import { z } from 'zod'
import type { SessionRecord } from './domain'
import { SYSTEM_PROMPT_MAX, type SessionPreset } from './presets'

/** The `presets.*` requests of the contract (shared/contract.ts): their parameters' schemas and their results. */

const id = z.string().min(1).max(200)
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
