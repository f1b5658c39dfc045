/**
 * How an agent is reached: one case of a tagged union per transport. Plain
 * data (db.json keeps it as it is); the Host has one link per kind
 * (electron/host/connection/transports.ts), the renderer one form part per kind.
 */

/** The command an agent runs, on this computer or on a host over SSH. */
export interface AgentCommand {
  /** Executable name (looked up on PATH) or absolute path. */
  command: string
  args: string[]
  env: Record<string, string>
  /** Names of environment variables whose values are kept in the secret store, not here. */
  secretEnv?: string[]
  /**
   * The folder the agent's process starts in (absolute), where a relative command or argument
   * resolves; absent: the user's home folder. Each session still names its own cwd.
   */
  cwd?: string
}

/** A process on this computer speaking ACP on its stdio. */
export interface ProcessTransport extends AgentCommand {
  kind: 'process'
}

/** How an agent's host is reached over SSH (the OpenSSH client's own settings and ~/.ssh/config apply besides). */
export interface SshTarget {
  /** `user@host`, `host`, or a `Host` alias from ~/.ssh/config. */
  destination: string
  port?: number
  /** A private key file on this computer (absolute); absent: ssh's own choice (the agent, ~/.ssh/id_*, the config). */
  identityFile?: string
  /** A known_hosts file on this computer (absolute) the host's key is checked against; absent: the user's. */
  knownHostsFile?: string
}

/**
 * An agent on another machine, started there through the system's `ssh`: the
 * command, arguments, variables, secret variables and folder are the remote
 * side's (the command is looked up on that host's PATH).
 */
export interface SshTransport extends SshTarget, AgentCommand {
  kind: 'ssh'
}

/** An agent over the network, reached at its URL with the SDK's client transports; it runs no command here. */
export interface NetworkTransport {
  kind: 'network'
  /** `ws://` or `wss://` (WebSocket), `http://` or `https://` (Streamable HTTP). */
  url: string
  /** Names of the headers sent on every request (an Authorization token…): their values are in the secret store, not here. */
  secretHeaders?: string[]
  /** A PEM file of certificate authorities trusted for this agent's TLS, besides the system's (verification is never off). */
  caFile?: string
}

export type AgentTransport = ProcessTransport | SshTransport | NetworkTransport
export type TransportKind = AgentTransport['kind']

/** The transport of `kind`, by its tag. */
export type TransportOf<K extends TransportKind> = Extract<AgentTransport, { kind: K }>

/** The command of a transport that runs one (process, SSH); null over the network. */
export function commandOf(transport: AgentTransport): AgentCommand | null {
  switch (transport.kind) {
    case 'process':
    case 'ssh':
      return transport
    case 'network':
      return null
    default:
      return unknownTransport(transport)
  }
}

/** The transport with its command changed (process, SSH); a network transport, which runs none, as it is. */
export function withCommand(transport: AgentTransport, patch: Partial<AgentCommand>): AgentTransport {
  switch (transport.kind) {
    case 'process':
    case 'ssh':
      return { ...transport, ...patch }
    case 'network':
      return transport
    default:
      return unknownTransport(transport)
  }
}

/** The names of what an agent keeps in the secret store: its secret variables, or its secret headers. */
export function secretNamesOf(transport: AgentTransport): { env: string[]; headers: string[] } {
  const command = commandOf(transport)
  return { env: command?.secretEnv ?? [], headers: transport.kind === 'network' ? (transport.secretHeaders ?? []) : [] }
}

/** The host an SSH agent runs on, as projects on it name it: the destination, with `:port` when one is given. */
export function sshHostOf(target: SshTarget): string {
  return target.port ? `${target.destination}:${target.port}` : target.destination
}

/** The SSH host a transport runs its agent on; undefined on this computer (a process, or a network agent working through the client). */
export function transportHost(transport: AgentTransport): string | undefined {
  return transport.kind === 'ssh' ? sshHostOf(transport) : undefined
}

/** Where an agent runs: a process on this machine, a server reached over the network (its host name), or a host over SSH. */
export function agentPlace(transport: AgentTransport): { remote: false } | { remote: true; host: string; transport: 'WebSocket' | 'HTTP' | 'SSH' } {
  switch (transport.kind) {
    case 'process':
      return { remote: false }
    case 'ssh':
      return { remote: true, host: sshHostOf(transport), transport: 'SSH' }
    case 'network': {
      let host = transport.url
      try {
        host = new URL(transport.url).host
      } catch {
        // Shown as typed: the Host refuses such a URL when the agent is saved.
      }
      return { remote: true, host, transport: /^wss?:/i.test(transport.url) ? 'WebSocket' : 'HTTP' }
    }
    default:
      return unknownTransport(transport)
  }
}

/** The end of an exhaustive switch on a transport's kind: a kind added to the union and not handled fails to compile. */
export function unknownTransport(transport: never): never {
  throw new Error(`Unknown agent transport '${(transport as { kind?: unknown }).kind}'`)
}
