import type { AgentConnection } from '../connection/connection'
import { describeError, HostError } from '../contract/errors'
import type { Records } from '../storage/records'
import type { SessionConnector } from './connector'
import type { SessionRegistry } from './registry'

/**
 * A network or SSH agent's connection was lost (not closed by Switchboard): the
 * sessions that were live on it are reopened on a new connection, through
 * `session/resume` or `session/load` as for any continue (connector.ts), once
 * the turn the loss cut short has been reported. A connection that cannot be
 * made again is tried a few times, with the wait said in the session; after
 * the last, sending again tries once more.
 */

/** Waits between attempts; one more attempt than waits. */
export const RECONNECT_DELAYS_MS = [1000, 3000, 10_000, 30_000]
/** How often to look whether the cut-short turn has been reported. */
const TURN_POLL_MS = 100

export interface ReconnectDeps {
  records: Records
  registry: SessionRegistry
  connector: SessionConnector
  delaysMs?: number[]
}

export class Reconnector {
  private readonly under = new Set<string>()
  private stopped = false
  private readonly timers = new Set<NodeJS.Timeout>()

  constructor(private readonly deps: ReconnectDeps) {}

  /** The connection is lost: these sessions, live on it, reconnect. */
  lost(connection: AgentConnection, sessionIds: string[]): void {
    if (!connection.connectionLost || this.stopped) return
    for (const id of sessionIds) {
      if (this.under.has(id)) continue
      this.under.add(id)
      void this.reconnect(id, connection.definition.name, connection.exitMessage()).finally(() => this.under.delete(id))
    }
  }

  /** No more attempts (the Host is closing). */
  stop(): void {
    this.stopped = true
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
  }

  private async reconnect(id: string, agentName: string, lost: string): Promise<void> {
    const { registry, connector } = this.deps
    const delays = this.deps.delaysMs ?? RECONNECT_DELAYS_MS
    // The turn the loss cut short ends first (its error is written to the thread), then the session comes back.
    while (registry.get(id)?.phase.inTurn || registry.stateOf(id).status === 'running') {
      if (!(await this.wait(TURN_POLL_MS))) return
    }
    for (let attempt = 0; ; attempt++) {
      if (this.stopped || !this.deps.records.findSession(id)) return
      if (registry.get(id)?.connection?.isAlive) return
      try {
        const live = await connector.ensureLive(id)
        // Said in the thread after what a session/load replayed, which replaces the view (and the error the cut-short turn wrote).
        registry.append(live, { t: 'reconnected', at: new Date().toISOString(), agent: agentName, lost })
        return
      } catch (error) {
        // The agent is back but cannot reopen this conversation, or the user cancelled: not the network's to retry.
        if (error instanceof HostError && error.code === 'reopen_failed') return
        if (/cancelled|cannot reopen past sessions/.test((error as Error).message)) return
        const delay = delays[attempt]
        const reason = describeError(error).replace(/[.\s]+$/, '')
        if (delay === undefined) {
          registry.setState(id, { status: 'error', error: `${reason}. Gave up reconnecting to ${agentName}; send again to try once more.` })
          return
        }
        registry.setState(id, {
          status: 'error',
          error: `${reason}. Reconnecting to ${agentName} in ${Number((delay / 1000).toFixed(1))} s (attempt ${attempt + 2} of ${delays.length + 1}).`
        })
        if (!(await this.wait(delay))) return
      }
    }
  }

  /** Resolves true after `ms`, or false at once when stopped. */
  private wait(ms: number): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer)
        resolve(!this.stopped)
      }, ms)
      timer.unref?.()
      this.timers.add(timer)
    })
  }
}
