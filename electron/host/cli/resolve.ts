import type { AgentDefinition } from '../../../shared/agent-definition'
import type { Project, SessionRecord } from '../../../shared/domain'
import type { SessionPreset } from '../../../shared/presets'
import type { ConfirmCommand } from '../contract/confirmations'
import { CliError, EXIT } from './exit-codes'
import { HostRefusal, type HostLink } from './link'

/**
 * What the command line names, found in the Host: an agent or a preset by id
 * or name, a session by id, the project of a folder (added when it is new).
 * A name that matches nothing is a usage error that lists what there is.
 */

export async function findAgent(link: HostLink, name: string): Promise<AgentDefinition> {
  const agents = await link.request('agents.list', {})
  const found = byIdOrName(agents, name)
  if (found) return found
  throw new CliError(`No agent '${name}'. Agents: ${agents.map((agent) => agent.name).join(', ') || 'none yet'}.`, EXIT.usage)
}

export async function findPreset(link: HostLink, name: string): Promise<SessionPreset> {
  const presets = await link.request('presets.list', {})
  const found = byIdOrName(presets, name)
  if (found) return found
  throw new CliError(`No preset '${name}'. Presets: ${presets.map((preset) => preset.name).join(', ') || 'none yet'}.`, EXIT.usage)
}

export async function findSession(link: HostLink, id: string): Promise<SessionRecord> {
  const [session] = await link.request('sessions.get', { ids: [id] }).catch((error: Error) => {
    if (error instanceof HostRefusal && error.error.code === 'invalid_params') return []
    throw error
  })
  if (session) return session
  throw new CliError(`No session '${id}' (switchboard ls lists them).`, EXIT.usage)
}

/**
 * How the command adds a project the Host does not know yet. A Host opened
 * here confirms exactly that addition (`confirmCommand`: the user named the
 * folder); the running app asks in its own dialog; `serve` asks for the code it
 * printed, which `code` gets from the user (null: no terminal to ask on).
 */
export interface ProjectAdder {
  confirmCommand: ConfirmCommand
  code: () => Promise<string | null>
}

export function projectAdder(code: () => Promise<string | null>): ProjectAdder & { expect(cwd: string | null): void } {
  let expected: string | null = null
  return {
    expect: (cwd) => void (expected = cwd),
    confirmCommand: async (change) =>
      expected !== null && change.programs.length === 0 && change.action.startsWith('Add the project folder ')
        ? { confirmed: true }
        : { confirmed: false, code: 'confirmation_refused', message: 'The switchboard command confirms only the project it was given.' },
    code
  }
}

export async function projectFor(link: HostLink, cwd: string, adder: ProjectAdder & { expect?(cwd: string | null): void }): Promise<Project> {
  const known = (await link.request('projects.list', {})).find((project) => project.cwd === cwd && !project.sshHost)
  if (known) return known
  adder.expect?.(cwd)
  try {
    return await link.request('projects.add', { cwd })
  } catch (error) {
    if (!(error instanceof HostRefusal) || error.error.code !== 'confirmation_required') throw error
    const code = await adder.code()
    if (code === null) {
      throw new CliError(
        `${cwd} is not a project of the running Switchboard yet, and adding one is confirmed with the code it prints on its console: ` +
          'add the folder in its window, or run this command again in a terminal to type the code.',
        EXIT.failed
      )
    }
    return link.request('projects.add', { cwd, confirmationCode: code })
  } finally {
    adder.expect?.(null)
  }
}

function byIdOrName<T extends { id: string; name: string }>(items: T[], name: string): T | undefined {
  const lower = name.toLowerCase()
  return items.find((item) => item.id === name) ?? items.find((item) => item.name.toLowerCase() === lower)
}
