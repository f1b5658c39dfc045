import type { AgentDefinition } from '../../../shared/agent-definition'
import { permissionSkipOf, permissionSkipWords } from '../../../shared/modes'
import { HostError } from '../contract/errors'
import type { Records, Saved } from '../storage/records'

/**
 * Choosing a mode that skips permissions asks once per agent: refused with
 * `skip_permissions_unconfirmed` until the user confirms (`confirmSkip`), which
 * is then kept on the agent.
 */
export async function confirmSkippingMode(
  records: Records,
  definition: Saved<AgentDefinition>,
  modeId: string,
  confirmSkip: boolean | undefined
): Promise<void> {
  const skip = permissionSkipOf(modeId)
  if (!skip || definition.skipPermissionsConfirmed) return
  if (!confirmSkip) {
    throw new HostError(
      'skip_permissions_unconfirmed',
      `In the mode '${modeId}' ${definition.name} ${permissionSkipWords(skip)}: Switchboard will not show its permission cards. Confirm to allow such modes for ${definition.name}.`
    )
  }
  await records.updateAgent(definition.id, { skipPermissionsConfirmed: true })
}
