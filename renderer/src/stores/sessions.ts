import { defineStore } from 'pinia'
import { computed, markRaw, ref } from 'vue'
import type { Attachment } from '../../../shared/contract'
import type { SessionRecord, SessionState } from '../../../shared/domain'
import { applyRecordAt, createThread, type Thread } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import { host, messageOf } from '../host/client'
import { useNoticesStore } from './notices'
import { usePanesStore } from './panes'
import { useProjectsStore } from './projects'
import { useUiStore } from './ui'
import { useViewStore } from './view'

/**
 * Live sessions: their state (from `session.state` events) and the threads of
 * the sessions that were opened. A thread is the snapshot from `sessions.open`
 * folded with the shared `applyRecord`, then live `session.records` applied
 * from the snapshot's `nextSeq` on, so a session opened mid-stream shows each
 * record exactly once. Threads stay after another session is opened: several
 * may stream at once.
 */

export interface OpenThread {
  thread: Thread
  /** seq of the next record this thread expects. */
  nextSeq: number
  skippedLines: number
  /** seq and byte offset of the first record shown: above 0, earlier records can still be loaded. */
  firstSeq: number
  firstOffset: number
  /**
   * The records shown, kept while earlier ones are missing (firstSeq > 0):
   * loading earlier records folds them all again, in order.
   */
  records: TranscriptRecord[] | null
  loadingEarlier: boolean
}

/** Records shown when a conversation opens: its last turns (a long transcript is never read whole for the first screen). */
const TAIL_RECORDS = 400
/** Records added by each "load earlier". */
const EARLIER_RECORDS = 800

/** What arrived for a session while its snapshot was on its way, in order. */
type Held = { kind: 'records'; seq: number; records: TranscriptRecord[] } | { kind: 'state'; state: SessionState }

/**
 * Folds records that end just before `nextSeq`. Entries are named after their
 * records' seqs (counted back from the end), so when earlier records are
 * folded in front later, the entries already shown keep their ids and the
 * list keeps the reader's place.
 */
function foldAll(records: TranscriptRecord[], nextSeq: number): Thread {
  const thread = createThread()
  const first = nextSeq - records.length
  for (let i = 0; i < records.length; i++) applyRecordAt(thread, records[i], first + i)
  return thread
}

export const useSessionsStore = defineStore('sessions', () => {
  const notices = useNoticesStore()
  const view = useViewStore()
  const projects = useProjectsStore()

  const states = ref<Record<string, SessionState>>({})
  const threads = ref<Record<string, OpenThread>>({})
  const panes = usePanesStore()
  /** The session in the focused pane (panes.ts holds the layout: several sessions are open at once). */
  const openId = computed<string | null>(() => panes.focused.sessionId)
  /** Why a session's transcript could not be opened, by session id. */
  const loadErrors = ref<Record<string, string>>({})
  /** Unsent composer text, by session id: switching sessions does not lose it. */
  const drafts = ref<Record<string, string>>({})
  /** An entry to bring into view (by entry id or index) once its session's thread shows; the session view takes it. */
  const entryToReveal = ref<{ sessionId: string; entry: string | number } | null>(null)

  const loading = new Map<string, Promise<void>>()
  const held = new Map<string, Held[]>()

  const openSession = computed<SessionRecord | null>(() => (openId.value ? (projects.sessionById(openId.value) ?? null) : null))

  function stateOf(id: string): SessionState {
    return states.value[id] ?? { id, status: 'idle' }
  }

  /** Shows a session in the focused pane (or focuses the pane that has it) and loads its thread. */
  async function open(id: string): Promise<void> {
    view.show('sessions')
    panes.show(id)
    if (!threads.value[id]) await loadThread(id)
  }

  /** Opens a session in a new pane beside the focused one (in the focused one when all panes are taken). */
  async function openInNewPane(id: string): Promise<void> {
    if (!panes.split(id)) useUiStore().toast('All four panes are in use: the conversation opened in the focused one. Close a pane to add another.')
    if (!threads.value[id]) await loadThread(id)
  }

  /**
   * Opens a session and shows one of its entries (search results, links to a
   * message). A conversation opens at its end: earlier records are loaded
   * until the entry is there (`seq`: where it starts, when known).
   */
  async function revealEntry(sessionId: string, entry: string | number, seq?: number): Promise<void> {
    await open(sessionId)
    await loading.get(sessionId)
    if (typeof entry === 'string') {
      for (let page = 0; page < 1000; page++) {
        const thread = threads.value[sessionId]
        if (!thread || thread.firstSeq === 0 || (seq !== undefined && thread.firstSeq <= seq)) break
        if (thread.thread.entries.some((e) => e.id === entry)) break
        if (!(await loadEarlier(sessionId))) break
      }
    }
    entryToReveal.value = { sessionId, entry }
  }

  /** Fetches the snapshot and (re)builds the thread; live records meanwhile are held and applied after. */
  function loadThread(id: string): Promise<void> {
    const inFlight = loading.get(id)
    if (inFlight) return inFlight
    held.set(id, [])
    const run = (async () => {
      let loaded = false
      try {
        const snapshot = await host().request('sessions.open', { id, tail: TAIL_RECORDS })
        // Fold the snapshot before it becomes reactive: one render however long the transcript is.
        threads.value[id] = {
          thread: foldAll(snapshot.records, snapshot.nextSeq),
          nextSeq: snapshot.nextSeq,
          skippedLines: snapshot.skippedLines,
          firstSeq: snapshot.firstSeq,
          firstOffset: snapshot.firstOffset,
          records: snapshot.firstSeq > 0 ? markRaw(snapshot.records) : null,
          loadingEarlier: false
        }
        states.value[id] = snapshot.state
        projects.upsertSession(snapshot.record)
        delete loadErrors.value[id]
        loaded = true
        if (snapshot.skippedLines > 0) {
          notices.report(
            `${snapshot.skippedLines} damaged line${snapshot.skippedLines === 1 ? '' : 's'} of “${snapshot.record.title}” could not be read and ${snapshot.skippedLines === 1 ? 'was' : 'were'} skipped.`
          )
        }
      } catch (error) {
        loadErrors.value[id] = messageOf(error)
        notices.report(`Could not open the conversation: ${messageOf(error)}`)
      } finally {
        const pending = held.get(id) ?? []
        held.delete(id)
        loading.delete(id)
        for (const item of pending) {
          if (item.kind === 'state') states.value[id] = item.state
          // Without a fresh snapshot the held records cannot be placed safely; the next open fetches them.
          else if (loaded) applyRecords(id, item.seq, item.records)
        }
      }
    })()
    loading.set(id, run)
    return run
  }

  /**
   * A `session.records` event: `seq` is records[0]'s, the rest follow
   * consecutively. Records are applied once per animation frame, in arrival
   * order: however fast an agent streams, the thread is folded and rendered
   * at most once a frame. (A timer stands in when frames stop, e.g. in a
   * hidden window.)
   */
  function receiveRecords(id: string, seq: number, records: TranscriptRecord[]): void {
    incoming.push({ id, seq, records })
    if (flushScheduled) return
    flushScheduled = true
    frame = typeof requestAnimationFrame === 'function' ? requestAnimationFrame(flushRecords) : null
    fallback = setTimeout(flushRecords, FLUSH_FALLBACK_MS)
  }

  const incoming: { id: string; seq: number; records: TranscriptRecord[] }[] = []
  const FLUSH_FALLBACK_MS = 100
  let flushScheduled = false
  let frame: number | null = null
  let fallback: ReturnType<typeof setTimeout> | null = null

  /** Applies every record received so far (the next frame would). */
  function flushRecords(): void {
    if (!flushScheduled) return
    flushScheduled = false
    if (frame !== null && typeof cancelAnimationFrame === 'function') cancelAnimationFrame(frame)
    if (fallback !== null) clearTimeout(fallback)
    frame = null
    fallback = null
    for (const batch of incoming.splice(0)) applyRecords(batch.id, batch.seq, batch.records)
  }

  function applyRecords(id: string, seq: number, records: TranscriptRecord[]): void {
    const queue = held.get(id)
    if (queue) {
      queue.push({ kind: 'records', seq, records })
      return
    }
    const open = threads.value[id]
    if (!open) return
    if (seq > open.nextSeq) {
      // Records were missed (e.g. while the connection was down): fetch the snapshot again.
      void loadThread(id)
      held.get(id)?.push({ kind: 'records', seq, records })
      return
    }
    for (let i = 0; i < records.length; i++) {
      if (seq + i < open.nextSeq) continue
      applyRecordAt(open.thread, records[i], seq + i)
      open.records?.push(records[i])
      open.nextSeq = seq + i + 1
    }
  }

  /**
   * Loads the records before the first one shown (a long conversation opens
   * at its end) and folds the thread again with them. Resolves false when
   * there is nothing earlier.
   */
  async function loadEarlier(id: string): Promise<boolean> {
    const open = threads.value[id]
    if (!open || open.firstSeq === 0 || open.loadingEarlier || loading.has(id)) return false
    open.loadingEarlier = true
    try {
      const page = await host().request('transcripts.read', {
        id,
        before: open.firstSeq,
        offset: open.firstOffset,
        limit: EARLIER_RECORDS
      })
      // The thread may have been reloaded meanwhile (a reconnect): then this page no longer fits.
      if (threads.value[id] !== open) return false
      const records = page.records.concat(open.records ?? [])
      open.thread = foldAll(records, open.nextSeq)
      open.firstSeq = page.firstSeq
      open.firstOffset = page.firstOffset
      open.records = page.firstSeq > 0 ? markRaw(records) : null
      if (page.skippedLines > 0) {
        notices.report(
          `${page.skippedLines} damaged line${page.skippedLines === 1 ? '' : 's'} of this conversation could not be read and ${page.skippedLines === 1 ? 'was' : 'were'} skipped.`
        )
      }
      return true
    } catch (error) {
      notices.report(`Could not load the earlier part of the conversation: ${messageOf(error)}`)
      return false
    } finally {
      open.loadingEarlier = false
    }
  }

  function receiveState(state: SessionState): void {
    states.value[state.id] = state
    held.get(state.id)?.push({ kind: 'state', state })
  }

  /** After a reconnect: events were missed, so every kept thread is fetched again. */
  function reloadThreads(): void {
    for (const id of Object.keys(threads.value)) void loadThread(id)
  }

  function forget(id: string): void {
    delete threads.value[id]
    delete states.value[id]
    delete drafts.value[id]
    delete loadErrors.value[id]
    panes.removeSession(id)
  }

  /** Starts a session with an agent and opens it; throws the Host's message (the sidebar shows it, or a sign-in). */
  async function create(projectId: string, agentId: string): Promise<void> {
    view.show('sessions')
    const record = await host().request('sessions.new', { projectId, agentId })
    projects.upsertSession(record)
    await open(record.id)
  }

  async function continueSession(id: string): Promise<boolean> {
    try {
      states.value[id] = await host().request('sessions.continue', { id })
      return true
    } catch (error) {
      notices.report(messageOf(error))
      return false
    }
  }

  /**
   * Sends a prompt; a session that is not connected is continued first.
   * Resolves false when nothing was sent (the composer then gives the text
   * back), else true once the turn has ended; a failed turn shows in the banner.
   */
  async function send(id: string, text: string, attachments: Attachment[] = []): Promise<boolean> {
    const state = stateOf(id)
    if (state.status === 'idle') {
      if (state.continueBlockedReason) {
        notices.report(state.continueBlockedReason)
        return false
      }
      if (!(await continueSession(id))) return false
    }
    try {
      await host().request('sessions.prompt', { id, text, attachments })
    } catch (error) {
      notices.report(messageOf(error))
    }
    return true
  }

  async function cancel(id: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.cancel', { id }))
  }

  async function respondPermission(id: string, requestId: string, optionId: string | null): Promise<void> {
    const state = states.value[id]
    // Hide the card at once: a second key press must not answer twice.
    if (state?.permissions?.some((p) => p.requestId === requestId)) {
      states.value[id] = { ...state, permissions: state.permissions.filter((p) => p.requestId !== requestId) }
    }
    await notices.attempt(() => host().request('sessions.respondPermission', { id, requestId, optionId }))
  }

  async function setMode(id: string, modeId: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.setMode', { id, modeId }))
  }

  async function setConfigOption(id: string, configId: string, value: string | boolean): Promise<void> {
    await notices.attempt(() => host().request('sessions.setConfigOption', { id, configId, value }))
  }

  async function setModel(id: string, modelId: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.setModel', { id, modelId }))
  }

  /** Forks a session; the fork opens in the focused pane, or beside the parent when `newPane`. */
  async function fork(id: string, newPane = false): Promise<void> {
    view.show('sessions')
    const record = await notices.attempt(() => host().request('sessions.fork', { id }))
    if (!record) return
    projects.upsertSession(record)
    await (newPane ? openInNewPane(record.id) : open(record.id))
  }

  /** Gives a session the user's own title; throws the Host's message for the field. */
  async function rename(id: string, title: string): Promise<void> {
    projects.upsertSession(await host().request('sessions.rename', { id, title }))
  }

  async function close(id: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.close', { id }))
  }

  async function remove(id: string, keepTranscript: boolean): Promise<void> {
    const record = projects.sessionById(id)
    const result = await notices.attempt(() => host().request('sessions.delete', { id, keepTranscript }))
    if (!result) return
    projects.removeSession(id)
    forget(id)
    const title = record ? `“${record.title}”` : 'The conversation'
    const kept = keepTranscript ? ' Its transcript is kept in the data folder (deleted-transcripts).' : ''
    if (result.agentDeleted) useUiStore().toast(`${title} was deleted here and by the agent.${kept}`)
    else useUiStore().toast(`${title} was removed from Switchboard; the agent keeps its own copy.${result.note ? ` (${result.note})` : ''}${kept}`)
  }

  return {
    states,
    threads,
    openId,
    loadErrors,
    drafts,
    entryToReveal,
    openSession,
    stateOf,
    open,
    openInNewPane,
    revealEntry,
    loadThread,
    loadEarlier,
    receiveRecords,
    flushRecords,
    receiveState,
    reloadThreads,
    forget,
    create,
    continueSession,
    send,
    cancel,
    respondPermission,
    setMode,
    setConfigOption,
    setModel,
    fork,
    rename,
    close,
    remove
  }
})
