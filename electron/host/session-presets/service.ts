import { randomUUID } from 'node:crypto'
import type { ParsedParams } from '../../../shared/contract'
import type { SessionPreset } from '../../../shared/presets'
import { confirmSkippingMode } from '../agents/skip-confirm'
import type { HandlerSlice } from '../contract/handlers'
import type { Records } from '../storage/records'
import type { SessionLifecycle } from '../sessions/lifecycle'

/**
 * The `presets.*` requests: session presets (shared/presets.ts), kept in
 * db.json (`presets`), and a new session started from one. What a preset
 * names is checked when it is saved (the agent and the MCP profiles exist; a
 * mode that skips permissions is confirmed once per agent, as a starting mode
 * is); whether the agent offers its mode, model and options is known only once
 * a session exists, so that is said in the session (sessions/preset-settings.ts).
 */

export interface PresetsServiceOptions {
  records: Records
  lifecycle: SessionLifecycle
}

export function presetsHandlers({ records, lifecycle }: PresetsServiceOptions): HandlerSlice<'presets'> {
  const list = (): readonly SessionPreset[] => records.data.presets ?? []
  const find = (presetId: string): SessionPreset => {
    const preset = list().find((p) => p.id === presetId)
    if (!preset) throw new Error(`No preset with id '${presetId}' (it may have been removed in another window)`)
    return preset
  }
  /** The preset's fields from what was typed, checked against the agents and MCP profiles there are. */
  const fieldsOf = async (input: ParsedParams<'presets.add'>): Promise<Omit<SessionPreset, 'id' | 'createdAt' | 'updatedAt'>> => {
    const definition = records.agent(input.agentId)
    const unknown = input.mcpProfileIds.filter((id) => !records.data.mcpProfiles.some((p) => p.id === id))
    if (unknown.length) throw new Error(`No MCP server with id ${unknown.map((id) => `'${id}'`).join(', ')} (removed on the MCP page?)`)
    const modeId = input.modeId || undefined
    if (modeId) await confirmSkippingMode(records, definition, modeId, input.confirmSkip)
    const systemPrompt = input.systemPrompt?.trim() ? input.systemPrompt : undefined
    return {
      name: input.name,
      agentId: input.agentId,
      ...(input.model ? { model: input.model } : {}),
      ...(modeId ? { modeId } : {}),
      ...(Object.keys(input.configOptions).length ? { configOptions: input.configOptions } : {}),
      ...(systemPrompt ? { systemPrompt } : {}),
      mcpProfileIds: [...new Set(input.mcpProfileIds)],
      isolation: input.isolation
    }
  }
  const nameTaken = (name: string, except?: string): void => {
    if (list().some((p) => p.id !== except && p.name.toLowerCase() === name.toLowerCase())) {
      throw new Error(`A preset named '${name}' already exists: choose another name`)
    }
  }
  return {
    'presets.list': async () => [...list()],
    'presets.add': async (input) => {
      nameTaken(input.name)
      const now = new Date().toISOString()
      const preset: SessionPreset = { id: randomUUID(), ...(await fieldsOf(input)), createdAt: now, updatedAt: now }
      await records.setPresets([...list(), preset])
      return preset
    },
    'presets.update': async ({ presetId, ...input }) => {
      const existing = find(presetId)
      nameTaken(input.name, presetId)
      const updated: SessionPreset = { id: presetId, ...(await fieldsOf(input)), createdAt: existing.createdAt, updatedAt: new Date().toISOString() }
      await records.setPresets(list().map((p) => (p.id === presetId ? updated : p)))
      return updated
    },
    'presets.remove': async ({ presetId }) => {
      find(presetId)
      await records.setPresets(list().filter((p) => p.id !== presetId))
      return {}
    },
    'presets.start': async ({ presetId, projectId, isolation, branch }) => {
      const preset = find(presetId)
      const chosen = isolation ?? preset.isolation
      return lifecycle.create(projectId, preset.agentId, { isolation: chosen, branch: chosen === 'worktree' ? branch : undefined, preset })
    }
  }
}
