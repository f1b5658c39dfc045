import type { AgentTransport } from '../../../shared/transport'

/**
 * db.json version 6: an agent's transport is one tagged field (shared/transport.ts) instead of a command, its
 * arguments, variables and folder with `remote?` or `ssh?` beside them. Each agent is rewritten in place; one
 * whose old fields cannot mean one transport (both a network address and an SSH host, a network agent that also
 * names a command, no command and no address) is taken out of the list and the user told which and why: it stays
 * in the copy made before the migration (db.v5.backup.json), and nothing else changes.
 */
export function migrateAgentTransports(data: Record<string, unknown>, notices: string[], backup: string): void {
  const agents = (Array.isArray(data.agents) ? data.agents : []) as Record<string, unknown>[]
  const kept: Record<string, unknown>[] = []
  const refused: string[] = []
  for (const agent of agents) {
    const transport = transportOfFlat(agent)
    if (typeof transport === 'string') {
      refused.push(`“${String(agent.name ?? agent.id)}” (${String(agent.id)}): ${transport}`)
      continue
    }
    for (const key of FLAT_KEYS) delete agent[key]
    agent.transport = transport
    kept.push(agent)
  }
  data.agents = kept
  if (refused.length === 0) return
  notices.push(
    `${refused.length === 1 ? 'An agent' : `${refused.length} agents`} could not be carried over to this version of Switchboard and ${refused.length === 1 ? 'was' : 'were'} left out: ${refused.join('; ')}. ` +
      `${refused.length === 1 ? 'Its definition is' : 'Their definitions are'} kept in ${backup}; add ${refused.length === 1 ? 'it' : 'them'} again on the Agents page under the same name to continue ${refused.length === 1 ? 'its' : 'their'} sessions.`
  )
}

const FLAT_KEYS = ['command', 'args', 'env', 'secretEnv', 'cwd', 'remote', 'ssh'] as const

/** The transport an agent of version 5 meant, or why it meant none. */
export function transportOfFlat(agent: Record<string, unknown>): AgentTransport | string {
  const { remote, ssh } = agent as { remote?: Record<string, unknown>; ssh?: Record<string, unknown> }
  const command = typeof agent.command === 'string' ? agent.command : ''
  const args = stringList(agent.args)
  const env = isRecord(agent.env) ? (agent.env as Record<string, string>) : {}
  const secretEnv = stringList(agent.secretEnv)
  const cwd = typeof agent.cwd === 'string' && agent.cwd ? agent.cwd : undefined
  const commandPart = { command, args, env, ...(secretEnv.length ? { secretEnv } : {}), ...(cwd ? { cwd } : {}) }
  if (remote && ssh) return 'it has both a network address and an SSH host, and an agent is reached one way'
  if (remote) {
    if (!isRecord(remote) || typeof remote.url !== 'string' || !remote.url) return 'it is a network agent without an address'
    if (command || args.length || Object.keys(env).length || secretEnv.length || cwd) {
      return `it is a network agent (${remote.url}) that also names a command to run (${command || args.join(' ') || 'its variables or folder'}), which a network agent cannot`
    }
    const secretHeaders = stringList(remote.secretHeaders)
    return {
      kind: 'network',
      url: remote.url,
      ...(secretHeaders.length ? { secretHeaders } : {}),
      ...(typeof remote.caFile === 'string' && remote.caFile ? { caFile: remote.caFile } : {})
    }
  }
  if (!command) return 'it has no command to run and no address to reach'
  if (ssh) {
    if (!isRecord(ssh) || typeof ssh.destination !== 'string' || !ssh.destination) return 'it runs over SSH but names no host'
    return {
      kind: 'ssh',
      destination: ssh.destination,
      ...(typeof ssh.port === 'number' ? { port: ssh.port } : {}),
      ...(typeof ssh.identityFile === 'string' ? { identityFile: ssh.identityFile } : {}),
      ...(typeof ssh.knownHostsFile === 'string' ? { knownHostsFile: ssh.knownHostsFile } : {}),
      ...commandPart
    }
  }
  return { kind: 'process', ...commandPart }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string') : []
}
