import { isAbsolute, resolve } from 'node:path'
import type { McpServer } from '@agentclientprotocol/sdk'
import type { AgentCapabilities } from '../../../shared/domain'
import type { McpProfile, McpTransport, SessionMcpLeftOut, SessionMcpServer } from '../../../shared/mcp'
import type { UserEnvironment } from '../child-processes/environment'
import { findExecutable } from '../child-processes/executables'
import type { UnlockedProfile } from './profiles'

/**
 * A session's MCP servers in ACP's shape, in two steps:
 *
 * 1. `prepareServers`, before the agent is asked anything: secret values are
 *    filled in and each stdio command is resolved to an absolute path (ACP
 *    wants one). A command that cannot be found is an error, so the session
 *    is not started with a server silently missing.
 * 2. `serversForAgent`, once the agent's capabilities are known: servers over
 *    a transport the agent does not announce are left out, each with a reason
 *    the session shows.
 */

export interface PreparedServer {
  profile: McpProfile
  /** The server as ACP sends it; null when it cannot be given (then `leftOut` says why). */
  acp: McpServer | null
  leftOut?: string
  note?: string
}

export class McpCommandNotFoundError extends Error {}

type Find = (command: string, env: NodeJS.ProcessEnv) => Promise<string | null>

/**
 * `environment`: the one the Host's processes get, whose PATH (under the profile's own variables) finds the commands.
 * `sshHost`: the project is on that host, where its agent would start a stdio server: such servers are left out.
 */
export async function prepareServers(
  unlocked: UnlockedProfile[],
  environment: UserEnvironment,
  find: Find = findExecutable,
  sshHost?: string
): Promise<PreparedServer[]> {
  const prepared: PreparedServer[] = []
  for (const { profile, env, headers, missingSecrets } of unlocked) {
    if (missingSecrets.length) {
      prepared.push({
        profile,
        acp: null,
        leftOut: `the secret value of ${missingSecrets.join(', ')} is not in the secret store any more: enter it again on the MCP page`
      })
      continue
    }
    if (profile.lastTest && !profile.lastTest.ok) {
      prepared.push({ profile, acp: null, leftOut: lastTestFailed(profile.lastTest.error) })
      continue
    }
    if (profile.transport !== 'stdio') {
      const server = { name: profile.name, url: profile.url, headers }
      prepared.push({ profile, acp: profile.transport === 'http' ? { type: 'http', ...server } : { type: 'sse', ...server } })
      continue
    }
    if (sshHost) {
      prepared.push({
        profile,
        acp: null,
        leftOut: `its command is on this computer, and the agent runs on ${sshHost}, where it would start it: use the server over HTTP, or switch it off for this project`
      })
      continue
    }
    const command = await resolveCommand(profile, env, environment, find)
    prepared.push({
      profile,
      acp: { name: profile.name, command, args: profile.args, env },
      note: profile.cwd
        ? `ACP cannot pass a working folder: the agent starts it in its own (${profile.cwd} is used only by Test connection)`
        : undefined
    })
  }
  return prepared
}

/** The command as an absolute path: found on PATH (the profile's own PATH first), or relative to the profile's folder. */
async function resolveCommand(
  profile: McpProfile,
  env: { name: string; value: string }[],
  environment: UserEnvironment,
  find: Find
): Promise<string> {
  const found = await findProfileCommand(profile, env, environment, find)
  if (found) return found
  throw new McpCommandNotFoundError(
    `MCP server “${profile.name}”: ${commandNotFound(profile)} Or switch the server off for this project on the MCP page.`
  )
}

/**
 * Why a server whose last Test connection failed is not given: the agent would
 * start it anyway and fail in its own way (a missing tool, a slow start, or a
 * refused session), and the user, who saw it fail, would not see that here.
 */
export function lastTestFailed(error?: string): string {
  const why = error ? ` (${error.replace(/[.\s]+$/, '')})` : ''
  return `its last Test connection failed${why}: test it again on the MCP page once it is fixed, and new sessions get it`
}

/** A stdio profile's command as an absolute path, or null when there is nothing to run. */
export async function findProfileCommand(
  profile: McpProfile,
  env: { name: string; value: string }[],
  environment: UserEnvironment,
  find: Find = findExecutable
): Promise<string | null> {
  const lookupEnv = environment.forChild(Object.fromEntries(env.map((e) => [e.name, e.value])))
  const relativePath = !isAbsolute(profile.command) && /[\\/]/.test(profile.command)
  const candidate = relativePath && profile.cwd ? resolve(profile.cwd, profile.command) : profile.command
  const found = await find(candidate, lookupEnv)
  return found ? resolve(found) : null
}

/** Why a stdio profile's command cannot be run, and what to do. */
export function commandNotFound(profile: McpProfile): string {
  const where = /[\\/]/.test(profile.command) ? 'there is no executable file at that path' : 'it is not on PATH'
  return `the command '${profile.command}' was not found (${where}). Install it, or give its absolute path.`
}

export interface AgentServers {
  /** What `session/new` (load, resume, fork) sends. */
  mcpServers: McpServer[]
  given: SessionMcpServer[]
  leftOut: SessionMcpLeftOut[]
}

export function serversForAgent(prepared: PreparedServer[], capabilities: AgentCapabilities, agentName: string): AgentServers {
  const result: AgentServers = { mcpServers: [], given: [], leftOut: [] }
  for (const server of prepared) {
    const { profile } = server
    const summary: SessionMcpServer = { profileId: profile.id, version: profile.version, name: profile.name, transport: profile.transport }
    if (!server.acp) {
      result.leftOut.push({ ...summary, reason: server.leftOut ?? 'it could not be prepared' })
      continue
    }
    if (!capabilities.mcp[profile.transport]) {
      result.leftOut.push({ ...summary, reason: unsupportedReason(profile.transport, capabilities, agentName) })
      continue
    }
    result.mcpServers.push(server.acp)
    result.given.push(server.note ? { ...summary, note: server.note } : summary)
  }
  return result
}

const TRANSPORT_NAMES: Record<McpTransport, string> = { stdio: 'stdio', http: 'HTTP', sse: 'SSE' }

function unsupportedReason(transport: McpTransport, capabilities: AgentCapabilities, agentName: string): string {
  // The key the agent would have announced, in the capability shape it speaks.
  const key = capabilities.protocolVersion >= 2 ? `session.mcp.${transport}` : `mcpCapabilities.${transport}`
  return `${agentName} does not take MCP servers over ${TRANSPORT_NAMES[transport]} (it does not announce ${key})`
}
