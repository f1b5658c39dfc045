import type { SessionRecord, UnseenTurn } from '../../../shared/domain'
import type { InboxItem } from '../../../shared/inbox'
import type { AgentSupervisor } from '../agents/supervisor'
import type { AskBroker } from '../asks/broker'
import { cutText } from '../asks/permission-rules'
import type { EventBus } from '../contract/events'
import type { HandlerSlice } from '../contract/handlers'
import type { Records } from '../storage/records'
import type { SessionRegistry } from '../sessions/registry'
import { plainText } from '../search/plain-text'
import type { Thread } from '../../../shared/thread'

/**
 * The inbox: what waits on the user, across every session, project and agent,
 * in one list. It keeps no copy of what it lists: permission requests and
 * questions are the broker's, sign-ins the supervisor's (an agent whose
 * problem is `sign_in`), and a turn's end that no window has shown yet is kept
 * in the session's record (`unseen`), so it survives a restart. The list is
 * made again when any of them changes, and told to the windows
 * (`inbox.changed`) when it is not the same.
 */

export interface InboxDeps {
  records: Records
  events: EventBus
  registry: Pick<SessionRegistry, 'allStates' | 'get' | 'appendAlways'>
  broker: Pick<AskBroker, 'pendingElicitations' | 'answerPermission' | 'answerElicitation'>
  supervisor: Pick<AgentSupervisor, 'stateOf'>
}

/** The events after which the list may read otherwise. */
const CHANGES = new Set([
  'session.state',
  'session.record',
  'session.removed',
  'agent.state',
  'agents.changed',
  'projects.changed',
  'elicitations.changed'
])

/** What blocks an agent first, then what only waits to be read. */
const ORDER: Record<InboxItem['kind'], number> = { permission: 0, elicitation: 1, sign_in: 2, error: 3, finished: 4 }

export class Inbox {
  /** The list as last told to the windows (JSON), so an unchanged list is not sent again. */
  private told = '[]'
  private scheduled = false
  private closing = false
  /** When each request or sign-in was first listed (they carry no time of their own). */
  private readonly since = new Map<string, string>()
  /** Sign-ins the user put aside, by agent: the time of the problem put aside (a new one shows again). */
  private readonly setAside = new Map<string, string>()

  /** Sessions whose record says a turn is under way (`underWay`), as this Host last wrote it. */
  private readonly markedUnderWay = new Set<string>()

  constructor(private readonly deps: InboxDeps) {
    deps.events.tap((event) => {
      if (CHANGES.has(event.type)) this.schedule()
    })
    this.listCutShortByStop()
  }

  /** Everything that waits on the user, most pressing first, oldest first within each kind. */
  items(): InboxItem[] {
    const { records, registry, broker, supervisor } = this.deps
    const items: InboxItem[] = []
    for (const state of registry.allStates()) {
      const record = records.findSession(state.id)
      if (!record) continue
      for (const permission of state.permissions ?? []) {
        items.push({ ...this.about(record), id: `permission:${permission.requestId}`, kind: 'permission', at: '', permission })
      }
    }
    for (const elicitation of broker.pendingElicitations()) {
      const record = elicitation.sessionId ? records.findSession(elicitation.sessionId) : undefined
      const where = record ? this.about(record) : { agent: this.agent(elicitation.agentId) }
      items.push({ ...where, id: `elicitation:${elicitation.requestId}`, kind: 'elicitation', at: '', elicitation })
    }
    for (const definition of records.data.agents) {
      const problem = supervisor.stateOf(definition.id)?.problem
      if (problem?.kind !== 'sign_in' || this.setAside.get(definition.id) === problem.at) continue
      items.push({ id: `sign_in:${definition.id}`, kind: 'sign_in', at: problem.at, agent: this.agent(definition.id), summary: problem.summary })
    }
    for (const record of records.data.sessions) {
      const end = record.unseen
      if (!end) continue
      const base = { ...this.about(record), at: end.at }
      if (end.error !== undefined) items.push({ ...base, id: `error:${record.id}:${end.at}`, kind: 'error', message: end.error })
      else
        items.push({
          ...base,
          id: `finished:${record.id}:${end.at}`,
          kind: 'finished',
          stopReason: end.stopReason ?? 'end_turn',
          ...(end.reply ? { reply: end.reply } : {})
        })
    }
    this.timeLiveItems(items)
    return items.sort((a, b) => ORDER[a.kind] - ORDER[b.kind] || a.at.localeCompare(b.at))
  }

  /** Sessions a window shows while it has the focus: what their last turns did is seen. */
  async seen(sessionIds: string[]): Promise<void> {
    const seen = sessionIds.flatMap((id) => {
      const record = this.deps.records.findSession(id)
      return record?.unseen ? [record] : []
    })
    await Promise.all(seen.map((record) => this.deps.records.updateSession(record.id, { unseen: undefined })))
  }

  /** Takes one item out (see `inbox.dismiss`); refused when it no longer waits. */
  async dismiss(itemId: string): Promise<void> {
    const item = this.items().find((i) => i.id === itemId)
    if (!item) throw new Error('That is no longer in the inbox (it was answered, seen or dismissed meanwhile)')
    switch (item.kind) {
      case 'permission':
        if (item.session) this.deps.broker.answerPermission(item.session.id, item.permission.requestId, null)
        return
      case 'elicitation':
        this.deps.broker.answerElicitation(item.elicitation.requestId, 'cancel', {})
        return
      case 'sign_in':
        this.setAside.set(item.agent.id, item.at)
        this.schedule()
        return
      default:
        if (item.session) await this.seen([item.session.id])
    }
  }

  /**
   * Switchboard is closing: what waits in a turn that is cut short now (a
   * permission or a question its agent will never get an answer to, a turn
   * still running) is kept in its session's record as an error, so the next
   * start says so instead of offering an answer nobody waits for. Turns that
   * end from here on end because of the close, and are not listed.
   */
  close(): void {
    this.closing = true
    const now = new Date().toISOString()
    for (const id of this.markedUnderWay) this.deps.records.noteSession(id, { underWay: undefined })
    this.markedUnderWay.clear()
    for (const [id, what] of this.underWay()) {
      const record = this.deps.records.findSession(id)
      if (!record) continue
      const agent = this.agent(record.agentId).name
      // Saved by the Host's last save, after this.
      this.deps.records.noteSession(id, {
        unseen: {
          at: now,
          error: what
            ? `Switchboard was closed while ${agent} waited for ${what}, so that turn was cut short and can no longer be answered. Send again to go on.`
            : `Switchboard was closed while ${agent} was working, so that turn was cut short. Send again to go on.`
        }
      })
    }
  }

  /** The sessions whose turn is under way, each with what it waits for from the user ('' while its agent works). */
  private underWay(): Map<string, string> {
    const asked = new Map<string, string>()
    for (const e of this.deps.broker.pendingElicitations()) if (e.sessionId) asked.set(e.sessionId, `your answer (“${cutText(e.message, 200)}”)`)
    for (const state of this.deps.registry.allStates()) {
      const permission = state.permissions?.[0]
      if (permission) asked.set(state.id, `your permission (“${cutText(permission.title, 200)}”)`)
      else if (state.status === 'running' && !asked.has(state.id)) asked.set(state.id, '')
    }
    return asked
  }

  /**
   * Each turn under way, and what it waits for, written in its session's record as it changes: a Host that
   * stops without closing (killed, crashed: `close` never runs) leaves them for the next one to list.
   */
  private markUnderWay(): void {
    if (this.closing) return
    const { records } = this.deps
    const now = this.underWay()
    let changed = false
    for (const [id, what] of now) {
      const record = records.findSession(id)
      if (!record || record.underWay === what) continue
      records.noteSession(id, { underWay: what })
      this.markedUnderWay.add(id)
      changed = true
    }
    for (const id of this.markedUnderWay) {
      if (now.has(id)) continue
      this.markedUnderWay.delete(id)
      const record = records.findSession(id)
      if (record?.underWay === undefined) continue
      records.noteSession(id, { underWay: undefined })
      changed = true
    }
    // Host-side only: the windows are told what waits by the states and this list, not by the mark.
    if (changed) void records.save()
  }

  /**
   * At start: turns the last Host left under way (it stopped without closing) were cut short, as a close cuts
   * them short, and are listed so; their records are in db.json's first part (db-file.ts), read by now. The
   * thread says so too, as the turn's error: its transcript ended mid-turn, and nothing else will end it.
   */
  private listCutShortByStop(): void {
    const { records, registry } = this.deps
    const now = new Date().toISOString()
    const cut = records.data.sessions.filter((record) => record.underWay !== undefined)
    for (const record of cut) {
      const what = record.underWay
      const agent = this.agent(record.agentId).name
      const error = what
        ? `Switchboard stopped unexpectedly while ${agent} waited for ${what}, so that turn was cut short and can no longer be answered. Send again to go on.`
        : `Switchboard stopped unexpectedly while ${agent} was working, so that turn was cut short. Send again to go on.`
      records.updateSessionSoon(record.id, { underWay: undefined, unseen: { at: now, error } })
      registry.appendAlways(record, { t: 'error', at: now, message: error, endsTurn: true }).catch((failure: unknown) => {
        console.error(`Could not write to the transcript of “${record.title}” that its turn was cut short`, failure)
      })
    }
  }

  handlers(): HandlerSlice<'inbox'> {
    return {
      'inbox.list': async () => this.items(),
      'inbox.seen': async ({ sessionIds }) => {
        await this.seen(sessionIds)
        return {}
      },
      'inbox.dismiss': async ({ itemId }) => {
        await this.dismiss(itemId)
        return {}
      }
    }
  }

  /** A turn is over (Turns.ended, wired by host.ts): how it ended waits in the inbox until a window shows the session. A cancelled turn was the user's own doing. */
  turnEnded(id: string, end: UnseenTurn): void {
    if (this.closing || end.stopReason === 'cancelled') return
    const record = this.deps.records.findSession(id)
    if (!record) return
    const reply = end.error === undefined ? lastReply(this.deps.registry.get(id)?.thread) : undefined
    this.deps.records.updateSessionSoon(id, { unseen: { ...end, ...(reply ? { reply } : {}) } })
  }

  /** A request or sign-in is timed from when it was first listed; those no longer listed are forgotten. */
  private timeLiveItems(items: InboxItem[]): void {
    const now = new Date().toISOString()
    const listed = new Set<string>()
    for (const item of items) {
      if (item.kind !== 'permission' && item.kind !== 'elicitation') continue
      listed.add(item.id)
      if (!this.since.has(item.id)) this.since.set(item.id, now)
      item.at = this.since.get(item.id) ?? now
    }
    for (const id of this.since.keys()) if (!listed.has(id)) this.since.delete(id)
  }

  /** The list is made again once the current burst of changes is over, and told when it changed. */
  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.markUnderWay()
      const items = this.items()
      const json = JSON.stringify(items)
      if (json === this.told) return
      this.told = json
      this.deps.events.emit('inbox.changed', items)
    })
  }

  private about(record: SessionRecord): Pick<InboxItem, 'agent' | 'project' | 'session'> {
    const project = this.deps.records.findProject(record.projectId)
    return {
      agent: this.agent(record.agentId),
      ...(project ? { project: { id: project.id, name: project.name } } : {}),
      session: { id: record.id, title: record.title }
    }
  }

  private agent(agentId: string): InboxItem['agent'] {
    return { id: agentId, name: this.deps.records.findAgent(agentId)?.name ?? agentId }
  }
}

/** How much of the agent's last message the inbox shows (the rest is in the session). */
const REPLY_CHARS = 240

/** The start of the agent's last message, as the words a reader sees (only its start is read: a message may be megabytes). */
function lastReply(thread: Thread | undefined): string | undefined {
  const entries = thread?.entries ?? []
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]
    if (entry.kind === 'user') return undefined
    if (entry.kind !== 'assistant') continue
    const text = plainText(entry.text.slice(0, REPLY_CHARS * 4))
    if (text.length <= REPLY_CHARS) return text || undefined
    // Not between the halves of a surrogate pair.
    const end = /[\uD800-\uDBFF]/.test(text[REPLY_CHARS - 1]) ? REPLY_CHARS - 1 : REPLY_CHARS
    return `${text.slice(0, end).trimEnd()}…`
  }
  return undefined
}
