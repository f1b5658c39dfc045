import type { ProgramToRun } from '../../../shared/confirmation'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { AgentInput } from '../../../shared/agent-requests'
import { secretNamesOf } from '../../../shared/transport'
import { kindOf } from '../transports/kinds'

/**
 * Checks what the user typed for an agent (Agents page: add and edit) and
 * turns it into a definition plus the secret values to store. Secret values
 * never enter the definition (db.json) and never go back to the renderer.
 * What differs by transport is its kind's (transports/kinds.ts).
 */

export type { AgentInput }

export interface CheckedAgent {
  fields: Pick<AgentDefinition, 'name' | 'protocol' | 'transport'>
  /** Values to write to the secret store, by variable name. */
  secretValues: Record<string, string>
  /** Secret variables the agent had and no longer has. */
  forgottenSecrets: string[]
  /** A network agent's header values to write to the secret store, by header name. */
  headerValues: Record<string, string>
  /** Headers the agent had and no longer has. */
  forgottenHeaders: string[]
}

/** Throws a message the form can show when the input is not usable; `previous` is the agent being edited. */
export async function checkAgentInput(input: AgentInput, previous?: AgentDefinition): Promise<CheckedAgent> {
  const name = input.name.trim()
  if (!name) throw new Error('The agent needs a name')
  const protocol = input.protocol === undefined ? {} : { protocol: input.protocol === 2 ? (2 as const) : undefined }
  const before = previous ? secretNamesOf(previous.transport) : { env: [], headers: [] }
  const { transport, secretValues, headerValues } = await kindOf(input.transport).check(input.transport, previous?.transport)
  const after = secretNamesOf(transport)
  return {
    fields: { name, ...protocol, transport },
    secretValues,
    forgottenSecrets: before.env.filter((variable) => !after.env.includes(variable)),
    headerValues,
    forgottenHeaders: before.headers.filter((h) => !after.headers.some((n) => n.toLowerCase() === h.toLowerCase()))
  }
}

/**
 * What the agent would run once the checked input is saved, for the
 * confirmation: its command line, folder and variables (a secret with a value
 * typed is new, one sent as null kept), or the address it is reached at.
 */
export function agentProgram(checked: CheckedAgent): ProgramToRun {
  const { name, transport } = checked.fields
  return kindOf(transport).program(name, transport, { transport, ...checked })
}

/**
 * Whether saving the checked input changes what the agent runs: its command,
 * arguments, folder, variables (names or values, plain or secret), its host
 * or address. A new name or protocol version alone does not, nor a secret
 * kept as it is.
 */
export function changesWhatRuns(previous: AgentDefinition, checked: CheckedAgent): boolean {
  const next = checked.fields.transport
  if (next.kind !== previous.transport.kind) return true
  return kindOf(next).changesWhatRuns(next, previous.transport, { transport: next, ...checked })
}

/** A new agent's id: its name made safe, unique among the ids given. */
export function agentIdFor(name: string, taken: (id: string) => boolean): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'agent'
  let id = base
  for (let n = 2; taken(id); n++) id = `${base}-${n}`
  return id
}
