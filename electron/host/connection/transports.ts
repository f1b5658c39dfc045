import type { AgentDefinition } from '../../../shared/agent-definition'
import type { TransportKind, TransportOf } from '../../../shared/transport'
import type { AgentLink, LinkOptions } from './link'
import { networkLink } from './network'
import { processLink } from './process'
import { sshLink } from './ssh'

/**
 * One link factory per transport kind (shared/transport.ts), each in its own
 * file: a process on this computer (process.ts), a command on a host over SSH
 * (ssh.ts), a server over the network (network.ts). A new transport is one
 * more entry here, and the compiler asks for it.
 */
type LinkFactory<K extends TransportKind> = (definition: AgentDefinition, transport: TransportOf<K>, options: LinkOptions) => AgentLink

const LINKS: { [K in TransportKind]: LinkFactory<K> } = {
  process: processLink,
  ssh: sshLink,
  network: networkLink
}

/** Starts the link the agent's transport calls for. */
export function openLink(definition: AgentDefinition, options: LinkOptions): AgentLink {
  const transport = definition.transport
  const factory = LINKS[transport.kind] as LinkFactory<typeof transport.kind>
  return factory(definition, transport, options)
}
