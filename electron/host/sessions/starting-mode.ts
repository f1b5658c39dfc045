import type { SessionConfigOption } from '@agentclientprotocol/sdk'
import type { SessionRecord } from '../../../shared/domain'
import { permissionSkipOf, permissionSkipWords, startingModeOf, type ModeLike } from '../../../shared/modes'
import type { AgentConnection } from '../connection/connection'
import { agentReason } from '../contract/errors'
import type { Records } from '../storage/records'
import type { LiveSession, SessionRegistry } from './registry'

/**
 * The mode a session starts in. Right after `session/new` and after a
 * reopening (load or resume), Switchboard puts the session in the mode the
 * user chose for it (the session's own last choice, then the project's for the
 * agent, then the agent's), or else in the agent's mode that asks before edits
 * and commands: agents start in a mode of their own choosing (Claude Code 0.101
 * in "auto", codex-acp 2.x in "agent"), which would let writes and commands go
 * through without the user ever seeing a permission card.
 *
 * Where the agent offers its modes as a configuration option of category
 * `mode` (as the renderer then shows them), that option is set; else
 * `session/set_mode`.
 */
export async function applyStartingMode(
  live: LiveSession,
  connection: AgentConnection,
  deps: { records: Records; registry: SessionRegistry }
): Promise<void> {
  const { records, registry } = deps
  const record = live.record
  const preferred = preferredMode(record, records)
  const modeOption = modeOptionOf(live.thread.configOptions)
  const modes = live.thread.modes
  try {
    if (modeOption) {
      const target = startingModeOf(optionModes(modeOption), modeOption.currentValue, preferred)
      if (target === null) return
      const response = await connection.acp.setConfigOption({ sessionId: record.acpSessionId ?? '', configId: modeOption.id, value: target })
      registry.append(live, { t: 'session', at: new Date().toISOString(), configOptions: response.configOptions })
      return
    }
    if (!modes?.availableModes.length) return
    const target = startingModeOf(modes.availableModes, modes.currentModeId, preferred)
    if (target === null) return
    await connection.acp.setMode({ sessionId: record.acpSessionId ?? '', modeId: target })
    registry.append(live, { t: 'session', at: new Date().toISOString(), modes: { ...modes, currentModeId: target } })
  } catch (error) {
    // The session stays usable; the thread says which mode it is in and why, as it may not ask before acting.
    const current = modeOption ? modeOption.currentValue : modes?.currentModeId
    const skip = permissionSkipOf(typeof current === 'string' ? current : undefined)
    registry.append(live, {
      t: 'error',
      at: new Date().toISOString(),
      message: `${connection.definition.name} could not be put in its starting mode (${agentReason(error)}); the session is in its mode '${String(current)}'${skip ? `, which ${permissionSkipWords(skip)}` : ''}. Choose a mode in the header.`
    })
  }
}

/** The user's choice for this session: its own last mode, the project's for its agent, the agent's. */
function preferredMode(record: SessionRecord, records: Records): string | undefined {
  if (record.chosenMode) return record.chosenMode
  const project = records.data.projects.find((p) => p.id === record.projectId)
  return project?.startingModes?.[record.agentId] ?? records.data.agents.find((a) => a.id === record.agentId)?.startingMode
}

/** The configuration option of category `mode` that takes a value from a list, if the agent offers one. */
export function modeOptionOf(options: SessionConfigOption[] | undefined): (SessionConfigOption & { type: 'select' }) | undefined {
  return options?.find((o): o is SessionConfigOption & { type: 'select' } => o.category === 'mode' && o.type === 'select')
}

/** A select option's values as modes (grouped or not). */
function optionModes(option: SessionConfigOption & { type: 'select' }): ModeLike[] {
  return option.options.flatMap((o) => ('group' in o ? o.options : [o])).map((o) => ({ id: o.value, name: o.name }))
}
