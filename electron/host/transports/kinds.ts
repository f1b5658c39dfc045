import type { AgentTransport, TransportKind, TransportOf } from '../../../shared/transport'
import type { TransportKindModule } from './kind'
import { networkKind } from './network'
import { processKind } from './process'
import { sshKind } from './ssh'

/**
 * The Host's one table of transport kinds (shared/transport.ts's union): the
 * module that owns everything one kind does (kind.ts). The rest of the Host
 * looks a kind up here (`kindOf`) instead of switching on it; a kind added to
 * the union does not compile until it has its entry.
 */
const KINDS: { [K in TransportKind]: TransportKindModule<TransportOf<K>> } = {
  process: processKind,
  ssh: sshKind,
  network: networkKind
}

/** The module of a transport's kind (its methods take a transport, or what was typed for one, of that kind: this one). */
export function kindOf(transport: { kind: TransportKind }): TransportKindModule<AgentTransport> {
  const kind = KINDS[transport.kind] as TransportKindModule<AgentTransport> | undefined
  if (!kind) throw new Error(`Unknown agent transport '${transport.kind as string}'`)
  return kind
}
