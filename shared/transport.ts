/**
 * How an agent is reached: one case of a tagged union per transport. Plain
 * data (db.json keeps it as it is); the Host has one module per kind
 * (electron/host/transports/kinds.ts), the renderer one form part per kind.
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

/** Where an agent runs, as the window shows it: this computer, or a host reached over the network or SSH. */
export type AgentPlace = { remote: false } | { remote: true; host: string; transport: 'WebSocket' | 'HTTP' | 'SSH' }

/**
 * What differs by kind that both the Host and the window need, one entry per
 * kind (TRANSPORT_KINDS): the helpers below look the kind up here instead of
 * switching on it, and a kind added to the union does not compile until it
 * has its entry. What only the Host needs is electron/host/transports/kinds.ts.
 */
export interface TransportTraits<T extends AgentTransport> {
  /** The command it runs, here or on its host; null: it runs none (a network agent). */
  command(transport: T): AgentCommand | null
  /** The transport with its command changed (as it is when it runs none). */
  withCommand(transport: T, patch: Partial<AgentCommand>): T
  /** It runs its command on this computer: a terminal sign-in can run it here, its own files are here. */
  readonly local: boolean
  /** The names of the headers whose values are in the secret store. */
  secretHeaders(transport: T): string[]
  /** The SSH host it runs on; null elsewhere. */
  sshTarget(transport: T): SshTarget | null
  place(transport: T): AgentPlace
}

export const TRANSPORT_KINDS: { [K in TransportKind]: TransportTraits<TransportOf<K>> } = {
  process: {
    command: (transport) => transport,
    withCommand: (transport, patch) => ({ ...transport, ...patch }),
    local: true,
    secretHeaders: () => [],
    sshTarget: () => null,
    place: () => ({ remote: false })
  },
  ssh: {
    command: (transport) => transport,
    withCommand: (transport, patch) => ({ ...transport, ...patch }),
    local: false,
    secretHeaders: () => [],
    sshTarget: (transport) => transport,
    place: (transport) => ({ remote: true, host: sshHostOf(transport), transport: 'SSH' })
  },
  network: {
    command: () => null,
    withCommand: (transport) => transport,
    local: false,
    secretHeaders: (transport) => transport.secretHeaders ?? [],
    sshTarget: () => null,
    place: (transport) => {
      let host = transport.url
      try {
        host = new URL(transport.url).host
      } catch {
        // Shown as typed: the Host refuses such a URL when the agent is saved.
      }
      return { remote: true, host, transport: /^wss?:/i.test(transport.url) ? 'WebSocket' : 'HTTP' }
    }
  }
}

/** The entry of a transport's kind (one lookup: the entries' methods take their own kind). */
export function traitsOf(transport: AgentTransport): TransportTraits<AgentTransport> {
  const traits = TRANSPORT_KINDS[transport.kind] as TransportTraits<AgentTransport> | undefined
  if (!traits) throw new Error(`Unknown agent transport '${transport.kind as string}'`)
  return traits
}

/** The command of a transport that runs one (process, SSH); null over the network. */
export function commandOf(transport: AgentTransport): AgentCommand | null {
  return traitsOf(transport).command(transport)
}

/** The transport with its command changed (process, SSH); a network transport, which runs none, as it is. */
export function withCommand(transport: AgentTransport, patch: Partial<AgentCommand>): AgentTransport {
  return traitsOf(transport).withCommand(transport, patch)
}

/** The command of an agent that runs on this computer; null when it runs elsewhere (over SSH, over the network). */
export function localCommandOf(transport: AgentTransport): AgentCommand | null {
  return traitsOf(transport).local ? commandOf(transport) : null
}

/** The names of what an agent keeps in the secret store: its secret variables, or its secret headers. */
export function secretNamesOf(transport: AgentTransport): { env: string[]; headers: string[] } {
  return { env: commandOf(transport)?.secretEnv ?? [], headers: traitsOf(transport).secretHeaders(transport) }
}

/** The host an SSH agent runs on, as projects on it name it: the destination, with `:port` when one is given. */
export function sshHostOf(target: SshTarget): string {
  return target.port ? `${target.destination}:${target.port}` : target.destination
}

/** How to reach the host an agent runs on over SSH; null on this computer or over the network. */
export function sshTargetOf(transport: AgentTransport): SshTarget | null {
  return traitsOf(transport).sshTarget(transport)
}

/** The SSH host a transport runs its agent on; undefined on this computer (a process, or a network agent working through the client). */
export function transportHost(transport: AgentTransport): string | undefined {
  const target = sshTargetOf(transport)
  return target ? sshHostOf(target) : undefined
}

/** Where an agent runs: a process on this machine, a server reached over the network (its host name), or a host over SSH. */
export function agentPlace(transport: AgentTransport): AgentPlace {
  return traitsOf(transport).place(transport)
}

/** The end of an exhaustive switch on a transport's kind (the window's form parts; the Host looks kinds up in its tables): a kind not handled fails to compile. */
export function unknownTransport(transport: never): never {
  throw new Error(`Unknown agent transport '${(transport as { kind?: unknown }).kind}'`)
}
