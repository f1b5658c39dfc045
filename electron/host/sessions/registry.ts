import { RequestError, type SessionUpdate } from '@agentclientprotocol/sdk'
import type { SessionRecord, SessionState } from '../../../shared/domain'
import { currentModeOf, permissionSkipOf } from '../../../shared/modes'
import { applyRecordAt, foldTail, TAIL_RECORDS } from '../../../shared/thread-fold'
import { contentToText, createThread, type Thread } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import type { AgentConnection } from '../connection/connection'
import { turnFailureSignal } from '../connection/quirks'
import type { CheckedNotification } from '../connection/updates'
import type { EventBus } from '../contract/events'
import { Listeners } from '../contract/listeners'
import type { Records, Saved } from '../storage/records'
import { readTranscriptTail } from '../storage/transcript-pages'
import type { ReadRecord } from '../storage/transcript-stream'
import { TranscriptWriter, transcriptPath } from '../storage/transcripts'
import { headerOf } from './session-parts'
import { appendFromAgent } from './replay'
import { LivePhase } from './turn-phase'

/**
 * The sessions in memory and their lifecycle: a session is loaded when it is
 * created or continued, linked to its agent's connection (updates are routed
 * to it by the agent's session id), unlinked when the agent stops or the
 * session closes, and then let go from memory. Its live state (status, error,
 * pending permissions) is kept here for every session that has one, loaded or
 * not, and each change goes out as a `session.state` event.
 */

export interface LiveSession {
  readonly record: Saved<SessionRecord>
  readonly writer: TranscriptWriter
  /** The session folded as the window folds it (from the tail of its transcript): what the agent announced is checked against it. */
  readonly thread: Thread
  connection: AgentConnection | null
  /** What the session is doing with its agent now: idle, being reopened (replaying a load), or in a turn (turn-phase.ts). */
  readonly phase: LivePhase
}

export interface RegistryOptions {
  transcriptDir: string
  records: Records
  events: EventBus
  /**
   * A record the session's view could not take (a bug in the fold, whatever the agent sent): reported where the
   * Host's rooms report (room-errors.ts), with the reset that reads the view again from the transcript.
   */
  foldFailed?: (room: string, error: unknown, reset: { says: string; run: () => void }) => void
  /** An event a session's phase could not take (turn-phase.ts): a bug, reported where the Host's rooms report. */
  phaseRefused?: (room: string, error: Error) => void
  /** Test-only: called with each record as it is folded into a live session's view (a throw stands for a bug in the fold). */
  onFold?: (record: TranscriptRecord) => void
  /** A new session's copied conversation is written, its view folded from the tail (the search index reads the rest). */
  onCopied?: (sessionId: string) => void
}

/** Updates for a session id the Host has not registered yet (they can race session/new's answer). */
const MAX_EARLY_UPDATES = 1000
/** Session ids held that way at most: an agent sending updates for made-up sessions cannot grow memory. */
const MAX_EARLY_SESSIONS = 16
/** Records of a copied conversation written before the copy waits for the disk. */
const COPY_BATCH = 1000

/** What a copied conversation is made of: records read from a transcript with their lines, or records made anew (a seed's). */
export type Copied = TranscriptRecord | ReadRecord

/** The updates that change a session's mode. */
const MODE_UPDATES = new Set(['current_mode_update', 'config_option_update'])

export class SessionRegistry {
  /** A session lost its link to its agent (what else ends with it: its terminals, the questions it asked; host.ts wires them). */
  readonly detached = new Listeners<[sessionId: string]>()
  private readonly live = new Map<string, LiveSession>()
  private readonly byAcpSession = new Map<string, LiveSession>()
  /** Subagents' child sessions (by agent and ACP session id) → the session that owns them. */
  private readonly children = new Map<string, LiveSession>()
  private readonly earlyUpdates = new Map<string, CheckedNotification[]>()
  private readonly states = new Map<string, SessionState>()
  /** Sessions being let go: their last writes finish before the transcript is read again. */
  private readonly releasing = new Map<string, Promise<void>>()

  constructor(private readonly options: RegistryOptions) {}

  get(id: string): LiveSession | undefined {
    return this.live.get(id)
  }

  /** The sessions in memory linked to that agent connection. */
  on(connection: AgentConnection): LiveSession[] {
    return [...this.live.values()].filter((l) => l.connection === connection)
  }

  /** A session's transcript file. */
  transcriptFile(id: string): string {
    return transcriptPath(this.options.transcriptDir, id)
  }

  /** The transcript file once what the session has written so far is on disk (to read it). */
  async flushedTranscript(id: string): Promise<string> {
    await this.live.get(id)?.writer.flush()
    return this.transcriptFile(id)
  }

  /** A new session: its transcript starts with the header. */
  create(record: Saved<SessionRecord>): LiveSession {
    const writer = this.writerFor(record.id, 0, true)
    writer.append(headerOf(record))
    return this.add(record, writer, [])
  }

  /** The transcript of a session that is not loaded yet (one imported from the agent's list): its header, on disk. */
  async writeHeader(record: Saved<SessionRecord>): Promise<void> {
    const writer = this.writerFor(record.id, 0, true)
    writer.append(headerOf(record))
    await writer.flush()
  }

  /** A past session in memory, folded from the tail of its transcript (never the whole file). */
  async load(record: Saved<SessionRecord>): Promise<LiveSession> {
    await this.releasing.get(record.id)
    const loaded = this.live.get(record.id)
    if (loaded) return loaded
    const tail = await readTranscriptTail(this.transcriptFile(record.id), { limit: TAIL_RECORDS })
    // Another request may have loaded it while the tail was read.
    return this.live.get(record.id) ?? this.add(record, this.writerFor(record.id, tail.nextSeq, tail.endsClean), tail.records)
  }

  /** Links the session to its agent's connection: the agent's updates for it are routed here from now on. */
  attach(live: LiveSession, connection: AgentConnection): void {
    live.connection = connection
    // Its subagents' child sessions (known from its thread) are routed to it too.
    for (const child of subagentThreadsOf(live)) this.children.set(acpKey(live.record.agentId, child), live)
    if (!live.record.acpSessionId) return
    const key = acpKey(live.record.agentId, live.record.acpSessionId)
    this.byAcpSession.set(key, live)
    for (const early of this.earlyUpdates.get(key) ?? []) this.apply(live, early)
    this.earlyUpdates.delete(key)
  }

  /** Unlinks the session from its agent (the record and transcript stay), and lets it go from memory when nothing holds it. */
  detach(live: LiveSession): void {
    if (live.record.acpSessionId) this.byAcpSession.delete(acpKey(live.record.agentId, live.record.acpSessionId))
    for (const [key, parent] of this.children) if (parent === live) this.children.delete(key)
    live.connection = null
    // No agent holds the session in a mode any more.
    if (this.stateOf(live.record.id).modeSkips) this.setState(live.record.id, { modeSkips: undefined })
    this.detached.tell(live.record.id)
    this.releaseIfUnused(live)
  }

  /** Lets an unlinked session go from memory once no turn or reopening holds it; its writes finish first. */
  releaseIfUnused(live: LiveSession): void {
    if (live.connection || live.phase.now.phase !== 'idle' || this.live.get(live.record.id) !== live) return
    this.live.delete(live.record.id)
    const id = live.record.id
    const done = live.writer.flush().finally(() => {
      if (this.releasing.get(id) === done) this.releasing.delete(id)
    })
    this.releasing.set(id, done)
  }

  /** Takes the session out entirely (it is being deleted): unlinked, written out, forgotten. */
  async remove(id: string): Promise<void> {
    const live = this.live.get(id)
    if (live) {
      this.detach(live)
      this.live.delete(id)
      await live.writer.flush()
    }
    await this.releasing.get(id)
    this.states.delete(id)
  }

  /**
   * Appends to the transcript, folds into the thread, and tells the windows. The record is written first: one the
   * view cannot take is still kept, the error reported, and the view read again from the transcript without it.
   */
  append(live: LiveSession, record: TranscriptRecord): void {
    const at = live.writer.nextSeq
    const seq = live.writer.append(record)
    try {
      this.options.onFold?.(record)
      applyRecordAt(live.thread, record, at)
    } catch (error) {
      this.foldFailed(live, error)
    }
    this.options.events.emit('session.records', { id: live.record.id, seq, records: [record] })
    if (record.t === 'session' || (record.t === 'update' && MODE_UPDATES.has(record.update.sessionUpdate))) this.noteMode(live)
  }

  /**
   * A new session's copied conversation (a fork's, a seed's), before it is linked to its agent: written as it is read,
   * a line read from a transcript written again as it is (never parsed and written anew), waiting for the disk every
   * batch; the Host's own observers (spend, search, MCP servers' run) are told each record, the windows none (no
   * window shows the session before it is registered, and one that opens it reads its tail). The view folds its tail
   * only, as a loaded session's does. However long the conversation, the Host holds a batch's lines and the tail.
   */
  async copyIn(live: LiveSession, history: Iterable<Copied> | AsyncIterable<Copied>): Promise<void> {
    let tail: TranscriptRecord[] = []
    let unflushed = 0
    for await (const item of history) {
      const { record, line } = 't' in item ? { record: item, line: undefined } : item
      if (record.t === 'header') continue
      const seq = line === undefined ? live.writer.append(record) : live.writer.appendLine(line)
      this.options.events.tell('session.records', { id: live.record.id, seq, records: [record] })
      tail.push(record)
      if (tail.length >= 2 * TAIL_RECORDS) tail = tail.slice(-TAIL_RECORDS)
      if (++unflushed >= COPY_BATCH) {
        unflushed = 0
        await live.writer.flush()
      }
    }
    await live.writer.flush()
    tail = tail.slice(-TAIL_RECORDS)
    const first = live.writer.nextSeq - tail.length
    tail.forEach((record, i) => {
      try {
        this.options.onFold?.(record)
        applyRecordAt(live.thread, record, first + i)
      } catch (error) {
        this.foldFailed(live, error)
      }
    })
    this.noteMode(live)
    this.options.onCopied?.(live.record.id)
  }

  /** A record the live view could not take: reported, and the view folded again from the transcript, skipping what throws. */
  private foldFailed(live: LiveSession, error: unknown): void {
    const refold = async (): Promise<void> => {
      await live.writer.flush()
      const tail = await readTranscriptTail(this.transcriptFile(live.record.id), { limit: TAIL_RECORDS })
      const thread = createThread()
      tail.records.forEach((record, i) => {
        try {
          this.options.onFold?.(record)
          applyRecordAt(thread, record, tail.nextSeq - tail.records.length + i)
        } catch {
          // The record that could not be folded stays in the transcript; the view goes on without it.
        }
      })
      Object.assign(live.thread, thread)
    }
    const reset = { says: 'its view is read again from the transcript', run: () => void refold().catch(() => undefined) }
    if (this.options.foldFailed) this.options.foldFailed(`The conversation “${live.record.title}”`, error, reset)
    else {
      console.error(error)
      reset.run()
    }
  }

  /** The state says when the session's mode lets the agent act without asking (the sidebar marks it). */
  private noteMode(live: LiveSession): void {
    const mode = currentModeOf(live.thread)
    const skip = permissionSkipOf(mode)
    const was = this.stateOf(live.record.id).modeSkips
    const now = mode && skip ? { mode: mode.name ?? mode.id, skip } : undefined
    if (was?.mode === now?.mode && was?.skip === now?.skip) return
    this.setState(live.record.id, { modeSkips: now })
  }

  /** Appends to a session's transcript if it is in memory (what is asked of the user is kept with its session). */
  appendTo(id: string, record: TranscriptRecord): void {
    const live = this.live.get(id)
    if (live) this.append(live, record)
  }

  /** Appends to a session whether or not it is in memory (loaded for the write, let go again after). */
  async appendAlways(record: Saved<SessionRecord>, entry: TranscriptRecord): Promise<void> {
    const live = await this.load(record)
    this.append(live, entry)
    this.releaseIfUnused(live)
  }

  /** A checked update from an agent: applied to its session (returned), or held until session/new or load has answered. */
  deliver(agentId: string, checked: CheckedNotification): LiveSession | undefined {
    const key = acpKey(agentId, checked.sessionId)
    const live = this.byAcpSession.get(key)
    if (live) {
      this.apply(live, checked)
      return live
    }
    // A subagent's child session: its updates are kept in its parent's transcript, nested.
    const parent = this.children.get(key)
    if (parent) {
      this.apply(parent, checked, checked.sessionId)
      return parent
    }
    const early = this.earlyUpdates.get(key) ?? []
    if (early.length < MAX_EARLY_UPDATES) early.push(checked)
    this.earlyUpdates.set(key, early)
    if (this.earlyUpdates.size > MAX_EARLY_SESSIONS) this.earlyUpdates.delete(this.earlyUpdates.keys().next().value as string)
    return undefined
  }

  /** The live session an agent's request names; an agent cannot reach a session that is not its own. */
  forAgentRequest(agentId: string, acpSessionId: string): LiveSession {
    // A subagent's requests (files, commands, permissions) are its parent session's, confined as the parent is.
    const key = acpKey(agentId, acpSessionId)
    const live = this.byAcpSession.get(key) ?? this.children.get(key)
    if (!live) throw new RequestError(-32002, `Unknown session '${acpSessionId}'`)
    return live
  }

  stateOf(id: string): SessionState {
    return this.states.get(id) ?? { id, status: 'idle' }
  }

  /** Every session that has a live state (the others are idle). */
  allStates(): SessionState[] {
    return [...this.states.values()]
  }

  setState(id: string, patch: Partial<SessionState>): void {
    const state = { ...this.stateOf(id), ...patch, id }
    // Where an error is shown goes with that error: a new one (or none) is not the thread's unless said so.
    if ('error' in patch && !('errorInThread' in patch)) delete state.errorInThread
    this.states.set(id, state)
    this.options.events.emit('session.state', state)
  }

  /** True while a turn runs or the session is being started or reopened. */
  isBusy(id: string): boolean {
    const { status } = this.stateOf(id)
    return status === 'running' || status === 'starting'
  }

  /** Writes out what every session in memory has pending (the Host is closing). */
  async flushAll(): Promise<void> {
    await Promise.all([...this.live.values()].map((l) => l.writer.flush()))
    await Promise.all(this.releasing.values())
  }

  private add(record: Saved<SessionRecord>, writer: TranscriptWriter, history: TranscriptRecord[]): LiveSession {
    // Entries are named as the window names them: the history ends just before the writer's next seq.
    const thread = foldTail(history, writer.nextSeq)
    const phase = new LivePhase((error) => {
      const room = `The turn of “${record.title}”`
      if (this.options.phaseRefused) this.options.phaseRefused(room, error)
      else console.error(`${room}: ${error.message}`)
    })
    const live: LiveSession = { record, writer, thread, connection: null, phase }
    this.live.set(record.id, live)
    return live
  }

  private writerFor(id: string, nextSeq: number, endsClean: boolean): TranscriptWriter {
    return new TranscriptWriter(this.transcriptFile(id), nextSeq, endsClean, (error) =>
      this.setState(id, { error: `Could not write the transcript: ${error.message}` })
    )
  }

  private apply(live: LiveSession, checked: CheckedNotification, child?: string): void {
    const at = new Date().toISOString()
    if ('terminal' in checked) {
      // An agent-owned terminal (ACP v2): shown like the ones the client runs.
      appendFromAgent(live.phase, (r) => this.append(live, r), { t: 'terminal', at, ...checked.terminal })
      return
    }
    if (!('update' in checked)) {
      this.append(live, { t: 'unsupported', at, raw: checked.unsupported, reason: checked.reason })
      return
    }
    const update = checked.update
    appendFromAgent(live.phase, (r) => this.append(live, r), { t: 'update', at, update, ...(child ? { child } : {}) })
    if (child) return
    noteTurnFailure(live.phase, update)
    // A subagent announced: its child session's updates and requests are this session's from now on.
    const announced = update as unknown as { sessionUpdate: string; sessionId?: unknown }
    if (announced.sessionUpdate === 'subagent_update' && typeof announced.sessionId === 'string') {
      this.children.set(acpKey(live.record.agentId, announced.sessionId), live)
    }
    const title = update.sessionUpdate === 'session_info_update' && typeof update.title === 'string' ? update.title.trim() : ''
    if (title && live.record.titleSource !== 'user') {
      this.options.records.updateSessionSoon(live.record.id, { title, titleSource: 'agent' })
    }
  }
}

/** What the agent says of the running turn's failure: that it failed, its reason (the text it streams after), or that it went on. */
function noteTurnFailure(phase: LivePhase, update: SessionUpdate): void {
  const failure = phase.turn?.failure
  if (failure === undefined) return
  const signal = turnFailureSignal(update)
  if (signal === 'failed') phase.move({ type: 'failure', text: '' })
  else if (signal === 'recovered') phase.move({ type: 'failure', text: null })
  else if (failure !== null && update.sessionUpdate === 'agent_message_chunk') {
    phase.move({ type: 'failure', text: failure + contentToText([update.content]) })
  }
}

/** The child session ids of the subagents a live session's thread holds. */
function subagentThreadsOf(live: LiveSession): string[] {
  return live.thread.entries.flatMap((entry) => (entry.kind === 'subagent' ? [entry.sessionId] : []))
}

function acpKey(agentId: string, acpSessionId: string): string {
  return `${agentId}\n${acpSessionId}`
}
