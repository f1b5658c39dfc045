import type { SessionConfigOption } from '@agentclientprotocol/sdk'
import type { SessionRecord } from '../../../shared/domain'
import type { SessionPreset } from '../../../shared/presets'
import type { AgentConnection } from '../connection/connection'
import { agentReason } from '../contract/errors'
import type { Records } from '../storage/records'
import { modeOptionOf } from './starting-mode'
import type { LiveSession, SessionRegistry } from './registry'

/**
 * What a preset sets on a session right after `session/new`. The mode goes
 * through the starting-mode mechanism (starting-mode.ts): `presetMode` makes
 * it the session's chosen mode when the agent offers it, so a reopening puts
 * it back. The model and the other configuration options are set here, after
 * the mode. A setting the agent does not offer, or refuses, does not stop the
 * session: the thread gets one error that names each setting that did not
 * apply and why, and the session stays open in what the agent chose.
 */

/** Makes the preset's mode the chosen mode of a session being made (`record`) when the agent offers it; else says why it does not apply. */
export function presetMode(live: LiveSession, record: SessionRecord, preset: SessionPreset, agentName: string): string | null {
  if (!preset.modeId) return null
  const offered = offeredModes(live)
  if (offered.includes(preset.modeId)) {
    record.chosenMode = preset.modeId
    return null
  }
  return offered.length
    ? `mode '${preset.modeId}': ${agentName} does not offer it (it offers ${offered.map((m) => `'${m}'`).join(', ')})`
    : `mode '${preset.modeId}': ${agentName} offers no modes for this session`
}

/**
 * Sets the preset's model and configuration options on a session that has just
 * been created (and put in its starting mode), then reports every setting that
 * did not apply, `notApplied` (the mode's) included, as one error in the thread.
 */
export async function applyPresetSettings(
  live: LiveSession,
  connection: AgentConnection,
  preset: SessionPreset,
  deps: { registry: SessionRegistry; notApplied: string[] }
): Promise<void> {
  const { registry } = deps
  const failed = [...deps.notApplied]
  const name = connection.definition.name
  const sessionId = live.record.acpSessionId ?? ''
  const append = (configOptions: SessionConfigOption[]): void => registry.append(live, { t: 'session', at: new Date().toISOString(), configOptions })
  if (preset.modeId && live.record.chosenMode === preset.modeId && currentMode(live) !== preset.modeId) {
    // Offered, but the starting mode could not be set (the thread already says what the agent answered).
    failed.push(`mode '${preset.modeId}': ${name} refused it`)
  }
  if (preset.model) {
    const option = live.thread.configOptions?.find(
      (o): o is SessionConfigOption & { type: 'select' } => o.category === 'model' && o.type === 'select'
    )
    const models = live.thread.models
    try {
      if (option) {
        if (!selectValues(option).includes(preset.model)) throw new NotOffered(selectValues(option))
        if (option.currentValue !== preset.model)
          append((await connection.acp.setConfigOption({ sessionId, configId: option.id, value: preset.model })).configOptions)
      } else if (models?.availableModels.length) {
        const ids = models.availableModels.map((m) => m.modelId)
        if (!ids.includes(preset.model)) throw new NotOffered(ids)
        if (models.currentModelId !== preset.model) {
          await connection.acp.setModel({ sessionId, modelId: preset.model })
          registry.append(live, { t: 'session', at: new Date().toISOString(), models: { ...models, currentModelId: preset.model } })
        }
      } else {
        failed.push(`model '${preset.model}': ${name} offers no choice of model for this session`)
      }
    } catch (error) {
      failed.push(`model '${preset.model}': ${reason(error, name)}`)
    }
  }
  for (const [configId, value] of Object.entries(preset.configOptions ?? {})) {
    const option = live.thread.configOptions?.find((o) => o.id === configId)
    const label = `option '${configId}' = ${String(value)}`
    if (!option) {
      failed.push(`${label}: ${name} has no such option for this session`)
      continue
    }
    if (option === modeOptionOf(live.thread.configOptions)) {
      failed.push(`${label}: the mode is set by the preset's mode, not as an option`)
      continue
    }
    try {
      if (option.type === 'boolean') {
        if (typeof value !== 'boolean') throw new Error(`${option.name} takes true or false`)
        if (option.currentValue !== value)
          append((await connection.acp.setConfigOption({ sessionId, configId, type: 'boolean', value })).configOptions)
      } else if (option.type === 'select') {
        const values = selectValues(option)
        if (typeof value !== 'string' || !values.includes(value)) throw new NotOffered(values)
        if (option.currentValue !== value) append((await connection.acp.setConfigOption({ sessionId, configId, value })).configOptions)
      } else {
        throw new Error(`Switchboard cannot set an option of type '${String((option as { type: unknown }).type)}'`)
      }
    } catch (error) {
      failed.push(`${label}: ${reason(error, name)}`)
    }
  }
  if (failed.length === 0) return
  registry.append(live, {
    t: 'error',
    at: new Date().toISOString(),
    message: `The preset '${preset.name}' did not apply everything: ${failed.join('; ')}. The session is open with ${name}'s own ${failed.length === 1 ? 'setting' : 'settings'} for ${failed.length === 1 ? 'it' : 'them'}; change them in the header.`
  })
}

/** The MCP profiles a session of a preset gets besides the project's: the preset's, as it is now (none when it was removed). */
export function presetProfilesOf(record: SessionRecord, records: Records): string[] {
  const preset = record.preset ? records.data.presets?.find((p) => p.id === record.preset?.id) : undefined
  return preset?.mcpProfileIds ?? []
}

class NotOffered extends Error {
  constructor(values: string[]) {
    super(values.length ? `not offered (it offers ${values.map((v) => `'${v}'`).join(', ')})` : 'not offered')
  }
}

function reason(error: unknown, agentName: string): string {
  return error instanceof NotOffered || !(error instanceof Error && 'code' in error)
    ? (error as Error).message
    : `${agentName} refused it (${agentReason(error)})`
}

function selectValues(option: SessionConfigOption & { type: 'select' }): string[] {
  return option.options.flatMap((o) => ('group' in o ? o.options : [o])).map((o) => o.value)
}

function offeredModes(live: LiveSession): string[] {
  const option = modeOptionOf(live.thread.configOptions)
  if (option) return selectValues(option)
  return live.thread.modes?.availableModes.map((m) => m.id) ?? []
}

function currentMode(live: LiveSession): string | undefined {
  const option = modeOptionOf(live.thread.configOptions)
  if (option) return String(option.currentValue)
  return live.thread.modes?.currentModeId
}
