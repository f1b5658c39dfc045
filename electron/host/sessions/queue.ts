import { randomUUID } from 'node:crypto'
import type { Attachment } from '../../../shared/contract'
import type { QueuedPrompt, SessionRecord } from '../../../shared/domain'
import type { HandlerSlice } from '../contract/handlers'
import type { Records, Saved, SessionPatch } from '../storage/records'
import { describeError } from '../contract/errors'
import type { SessionRegistry } from './registry'
import type { Turns } from './turns'

/**
 * The prompts a user writes while a turn runs. Each session's queue is kept
 * with its record (so every window sees the same one, and a restart loses
 * nothing) and goes out in the session's state. When a turn ends normally the
 * first queued prompt is sent; a turn that was cancelled, refused or failed,
 * or an agent that stopped, holds the queue with the reason, until the user
 * resumes or clears it. After a restart a queue is held too: nothing is sent
 * that the user did not see go.
 */

export interface PromptQueueDeps {
  records: Records
  registry: SessionRegistry
  turns: Turns
  /**
   * A change no request awaits (a turn's end holding the queue, a queued prompt sent) failed: the Host reports it
   * (RoomErrors) and calls `publish` again. Without it, it is logged.
   */
  onError?: (error: unknown, record: SessionRecord) => void
}

/** Queued prompts a session keeps at most. */
export const MAX_QUEUED = 100
/** What a queued prompt's attachments may weigh (characters of JSON): the queue is kept in db.json. */
export const MAX_QUEUED_ATTACHMENTS = 2_000_000

export const RESTART_HOLD = 'Switchboard was closed while these prompts waited, so they wait for you to resume.'

export class PromptQueue {
  /** Sessions whose first queued prompt is being sent (its id): not yet in the thread, so still queued. */
  private readonly starting = new Map<string, string>()

  constructor(private readonly deps: PromptQueueDeps) {
    this.restore()
  }

  /** At start: every queue left from the last run is shown, held. */
  private restore(): void {
    for (const record of this.deps.records.data.sessions) {
      if (!record.queue?.length) continue
      // Kept with the next save: a save now would read all of db.json before the first screen.
      this.deps.records.noteSession(record.id, { queueHeld: record.queueHeld ?? RESTART_HOLD })
      this.publish(record)
    }
  }

  async add(id: string, text: string, attachments: Attachment[]): Promise<{ queued: QueuedPrompt; queue: QueuedPrompt[] }> {
    const record = this.deps.records.session(id)
    const queue = record.queue ?? []
    if (queue.length >= MAX_QUEUED) throw new Error(`A session keeps at most ${MAX_QUEUED} queued prompts; send or remove some first`)
    if (JSON.stringify(attachments).length > MAX_QUEUED_ATTACHMENTS) {
      throw new Error('Attachments over 2 MB cannot wait in the queue; send them once the turn has ended')
    }
    const queued: QueuedPrompt = { id: randomUUID(), text, attachments, queuedAt: new Date().toISOString() }
    await this.changed(id, { queue: [...queue, queued] })
    this.kick(id)
    return { queued, queue: [...(record.queue ?? [])] }
  }

  async edit(id: string, queuedId: string, text: string): Promise<{ queue: QueuedPrompt[] }> {
    const record = this.deps.records.session(id)
    const item = this.find(record, queuedId)
    if (this.starting.get(id) === queuedId) throw new Error('That prompt is being sent; it can no longer be changed')
    if (text.trim() === '' && item.attachments.length === 0) throw new Error('A queued prompt needs text; remove it instead')
    await this.changed(id, { queue: (record.queue ?? []).map((q) => (q === item ? { ...q, text } : q)) })
    return { queue: [...(record.queue ?? [])] }
  }

  async remove(id: string, queuedId: string): Promise<{ queue: QueuedPrompt[] }> {
    const record = this.deps.records.session(id)
    this.find(record, queuedId)
    if (this.starting.get(id) === queuedId) throw new Error('That prompt is being sent; cancel the turn instead')
    await this.changed(id, { queue: (record.queue ?? []).filter((q) => q.id !== queuedId) })
    return { queue: [...(record.queue ?? [])] }
  }

  async clear(id: string): Promise<{ queue: QueuedPrompt[] }> {
    const record = this.deps.records.session(id)
    const sending = this.starting.get(id)
    await this.changed(id, { queue: (record.queue ?? []).filter((q) => q.id === sending) })
    return { queue: [...(record.queue ?? [])] }
  }

  async resume(id: string): Promise<{ queue: QueuedPrompt[] }> {
    const record = this.deps.records.session(id)
    await this.changed(id, { queueHeld: undefined })
    this.kick(id)
    return { queue: [...(record.queue ?? [])] }
  }

  /**
   * A queued prompt sent at once. While a turn runs, it is handed to that turn
   * (only to an agent that announces it takes prompts mid-turn); the request
   * answers once the prompt is in the thread. Otherwise it goes first, and the
   * queue goes on.
   */
  async sendNow(id: string, queuedId: string): Promise<{ queue: QueuedPrompt[] }> {
    const { registry, turns } = this.deps
    const record = this.deps.records.session(id)
    const item = this.find(record, queuedId)
    if (this.starting.get(id) === queuedId) return { queue: [...(record.queue ?? [])] }
    const live = registry.get(id)
    if (registry.stateOf(id).status !== 'running' && !live?.phase.inTurn) return this.sendFirst(record, item)
    if (live?.connection?.capabilities.steering) {
      // The agent's steering hands it to the running turn; a turn that ended meanwhile takes it as the next prompt.
      if ((await turns.steer(id, item.text, item.attachments)) === 'injected') {
        this.take(record, queuedId)
        return { queue: [...(record.queue ?? [])] }
      }
      return this.sendFirst(record, item)
    }
    if (!live?.connection?.capabilities.promptQueueing) {
      throw new Error(`${this.agentName(record)} does not take prompts while a turn runs; this one is sent when the turn ends`)
    }
    await new Promise<void>((resolve, reject) => {
      turns
        .prompt(id, item.text, item.attachments, {
          midTurn: true,
          onStart: () => {
            this.take(record, queuedId)
            resolve()
          }
        })
        // Once started, the turn's end says what became of it (turnOver).
        .catch(reject)
    })
    return { queue: [...(record.queue ?? [])] }
  }

  /** Nothing runs (or the steer found the turn over): the prompt goes first, and the queue goes on. */
  private async sendFirst(record: Saved<SessionRecord>, item: QueuedPrompt): Promise<{ queue: QueuedPrompt[] }> {
    await this.changed(record.id, { queue: [item, ...(record.queue ?? []).filter((q) => q !== item)], queueHeld: undefined })
    this.kick(record.id)
    return { queue: [...(record.queue ?? [])] }
  }

  /** A turn is over (Turns.over, wired by host.ts): the next prompt goes, or the queue is held with why (`hold`; null: it goes on). */
  turnOver(id: string, hold: string | null): void {
    const record = this.deps.records.data.sessions.find((s) => s.id === id)
    if (!record?.queue?.length) return
    // A turn cut short by the close: the queue waits for the next start, and says why.
    if (this.deps.turns.closing) hold = RESTART_HOLD
    if (hold) {
      if (record.queueHeld) return
      this.changedUnawaited(record, { queueHeld: hold })
      return
    }
    this.kick(id)
  }

  /** Sends the first queued prompt when nothing holds the queue and no turn runs. */
  private kick(id: string): void {
    const { registry, turns } = this.deps
    const record = this.deps.records.data.sessions.find((s) => s.id === id)
    const next = record?.queue?.[0]
    // Closing: what waits is held at the next start (restore).
    if (!record || !next || record.queueHeld || this.starting.has(id) || turns.closing) return
    if (registry.isBusy(id) || registry.get(id)?.phase.inTurn) return
    this.starting.set(id, next.id)
    let started = false
    turns
      .prompt(id, next.text, next.attachments, {
        onStart: () => {
          started = true
          this.starting.delete(id)
          this.take(record, next.id)
        }
      })
      .catch((error: unknown) => {
        // A turn that started and failed holds the queue when it is over (turnOver).
        if (started) return
        this.starting.delete(id)
        // Another turn got there first: the queue goes on when it ends.
        if (registry.isBusy(id) || registry.get(id)?.phase.inTurn) return
        if (!record.queue?.length) return
        this.changedUnawaited(record, { queueHeld: `The next prompt could not be sent: ${describeError(error)}` })
      })
  }

  /** A queued prompt leaves the queue: it is in the thread now. */
  private take(record: Saved<SessionRecord>, queuedId: string): void {
    this.changedUnawaited(record, { queue: (record.queue ?? []).filter((q) => q.id !== queuedId) })
  }

  private find(record: Saved<SessionRecord>, queuedId: string): QueuedPrompt {
    const item = record.queue?.find((q) => q.id === queuedId)
    if (!item) throw new Error('That prompt is no longer queued (it was sent or removed)')
    return item
  }

  /** Kept with the record (an empty queue holds nothing), then told to every window. */
  private async changed(id: string, patch: Pick<SessionPatch, 'queue' | 'queueHeld'>): Promise<void> {
    const { records } = this.deps
    const record = records.findSession(id)
    // A session deleted meanwhile is not brought back by its queue.
    if (!record) return
    const emptied = (patch.queue ?? record.queue)?.length === 0
    const saved = records.updateSession(id, emptied ? { queue: undefined, queueHeld: undefined } : patch)
    this.publish(record)
    await saved
  }

  /** `changed`, where no request awaits it (a turn's end, a prompt sent from the queue): a failure is reported, never left to the process. */
  private changedUnawaited(record: Saved<SessionRecord>, patch: Pick<SessionPatch, 'queue' | 'queueHeld'>): void {
    this.changed(record.id, patch).catch((error: unknown) => {
      if (this.deps.onError) this.deps.onError(error, record)
      else console.error(`The prompt queue of ${record.id} could not be saved`, error)
    })
  }

  /** The session's queue, as the record holds it, in its state (every window follows). */
  publish(record: Saved<SessionRecord>): void {
    this.deps.registry.setState(record.id, { queue: [...(record.queue ?? [])], queueHeld: record.queueHeld })
  }

  private agentName(record: Saved<SessionRecord>): string {
    return this.deps.records.data.agents.find((a) => a.id === record.agentId)?.name ?? 'This agent'
  }

  handlers(): Pick<
    HandlerSlice<'sessions'>,
    'sessions.queue' | 'sessions.editQueued' | 'sessions.removeQueued' | 'sessions.clearQueue' | 'sessions.sendQueuedNow' | 'sessions.resumeQueue'
  > {
    return {
      'sessions.queue': ({ id, text, attachments }) => this.add(id, text, attachments),
      'sessions.editQueued': ({ id, queuedId, text }) => this.edit(id, queuedId, text),
      'sessions.removeQueued': ({ id, queuedId }) => this.remove(id, queuedId),
      'sessions.clearQueue': ({ id }) => this.clear(id),
      'sessions.sendQueuedNow': ({ id, queuedId }) => this.sendNow(id, queuedId),
      'sessions.resumeQueue': ({ id }) => this.resume(id)
    }
  }
}
