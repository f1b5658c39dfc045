import type { HostEvent, HostEventName, HostEvents } from '../../../shared/contract'

/**
 * Collects the Host's events and hands them to the transports in batches: a
 * burst of streamed chunks becomes one IPC/WebSocket message and one
 * re-render. The first event after a quiet moment goes out on the next tick;
 * while events keep coming, batches go out at most once a frame (16 ms), so
 * an agent flooding updates costs the renderer ~60 messages a second however
 * fast it writes. Within a batch, consecutive transcript records of one
 * session are merged into one event, and a state of an agent or session
 * replaces the one just before it when it is the same agent's or session's
 * (a state followed by other events stays, so the order the renderer sees is
 * the order things happened).
 */
const MIN_INTERVAL_MS = 16

export class EventBus {
  private queue: HostEvent[] = []
  private scheduled = false
  private timer: NodeJS.Timeout | null = null
  private lastFlush = 0
  private readonly listeners = new Set<(events: HostEvent[]) => void>()
  private readonly taps = new Set<(event: HostEvent) => void>()

  subscribe(listener: (events: HostEvent[]) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Sees each event synchronously as it is emitted, before any batching (the search index follows the Host this way). */
  tap(listener: (event: HostEvent) => void): () => void {
    this.taps.add(listener)
    return () => this.taps.delete(listener)
  }

  emit<K extends HostEventName>(type: K, payload: HostEvents[K]): void {
    this.enqueue(this.tell(type, payload))
    if (!this.scheduled) {
      this.scheduled = true
      const wait = this.lastFlush + MIN_INTERVAL_MS - Date.now()
      if (wait > 0) this.timer = setTimeout(() => this.flush(), wait)
      else setImmediate(() => this.flush())
    }
  }

  /**
   * Tells the Host's own observers (the taps) only, not the windows: what no window can show (a new session's copied
   * conversation, before the session is registered: a window that opens it reads its tail).
   */
  tell<K extends HostEventName>(type: K, payload: HostEvents[K]): HostEvent {
    // A type and its payload, paired by the caller's K: TypeScript cannot see that the pair is one member of the union.
    const event = { type, payload } as unknown as HostEvent
    for (const tap of this.taps) {
      try {
        tap(event)
      } catch (error) {
        console.error(`An observer of ${type} failed`, error)
      }
    }
    return event
  }

  flush(): void {
    this.scheduled = false
    if (this.timer) {
      clearTimeout(this.timer)
      this.timer = null
    }
    if (this.queue.length === 0) return
    this.lastFlush = Date.now()
    const batch = this.queue
    this.queue = []
    for (const listener of this.listeners) listener(batch)
  }

  private enqueue(event: HostEvent): void {
    const last = this.queue[this.queue.length - 1]
    if (event.type === 'session.records' && last?.type === 'session.records') {
      const prev = last.payload
      if (prev.id === event.payload.id && prev.seq + prev.records.length === event.payload.seq) {
        prev.records.push(...event.payload.records)
        return
      }
    }
    if (last && stateKey(last) !== null && stateKey(last) === stateKey(event)) {
      this.queue[this.queue.length - 1] = event
      return
    }
    this.queue.push(event)
  }
}

/** What a state event is the state of (`agent:<id>` or `session:<id>`); null for other events. */
function stateKey(event: HostEvent): string | null {
  if (event.type === 'agent.state') return `agent:${event.payload.agentId}`
  if (event.type === 'session.state') return `session:${event.payload.id}`
  return null
}
