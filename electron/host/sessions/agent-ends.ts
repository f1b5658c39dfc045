import type { AgentRuntimeState } from '../../../shared/domain'
import type { AgentConnection } from '../connection/connection'
import type { AskBroker } from '../asks/broker'
import type { Reconnector } from './reconnect'
import type { SessionRegistry } from './registry'

/**
 * What an agent's connection means to the sessions on it, as the supervisor
 * asks: whether it may be stopped now without losing anything (its idle
 * stop), and what becomes of them when it ends.
 */

/**
 * No turn running, starting or about to, no question pending, and every
 * session on it can come back. `promptUnderWay`: a prompt of the session
 * was asked for and has not ended (Turns), though its turn may not have begun.
 */
export function canStopQuietly(
  connection: AgentConnection,
  registry: SessionRegistry,
  broker: AskBroker,
  promptUnderWay: (sessionId: string) => boolean
): boolean {
  const sessions = registry.on(connection)
  // The phase covers the moments between statuses (a prompt taking its checkpoint, a replay going quiet);
  // a prompt still being prepared (its mentions checked, a hand-off's seed read) is in none of them yet.
  const busy = sessions.some(
    (l) =>
      l.phase.now.phase !== 'idle' || registry.isBusy(l.record.id) || promptUnderWay(l.record.id) || broker.pendingPermissions(l.record.id).length > 0
  )
  const { loadSession, session } = connection.capabilities
  return !busy && !broker.isAsking(connection.definition.id) && (sessions.length === 0 || loadSession || session.resume)
}

/** The agent's process ended: its sessions lose their link and, unless a turn is ending with an error of its own, go idle. */
export function agentEnded(connection: AgentConnection, state: AgentRuntimeState, registry: SessionRegistry, reconnector: Reconnector): void {
  const sessions = registry.on(connection)
  for (const live of sessions) {
    registry.detach(live)
    if (registry.stateOf(live.record.id).status !== 'running') {
      registry.setState(live.record.id, { status: 'idle', error: state.message })
    }
  }
  // A network or SSH agent's connection lost (not stopped by Switchboard): its sessions come back on a new one.
  const ids = sessions.map((l) => l.record.id)
  if (state.status === 'exited') reconnector.lost(connection, ids)
}
