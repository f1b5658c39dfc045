import { defineStore } from 'pinia'
import { computed, ref, toRaw } from 'vue'
import type { Attachment } from '../../../shared/contract'
import type { AgentProblem, SessionRecord, SessionState } from '../../../shared/domain'
import { host, HostRequestError, messageOf } from '../host/client'
import { useInboxStore } from './inbox'
import { useNoticesStore } from './notices'
import { usePanesStore } from './panes'
import { useProjectsStore } from './projects'
import { useThreadsStore } from './threads'
import { useUiStore } from './ui'
import { useViewStore } from './view'

/**
 * What the user does with sessions and their live state: opening one (in a
 * pane), starting, continuing, prompting, cancelling, answering permissions,
 * fork, rename, close, delete; the states from `session.state` events; unsent
 * drafts. The threads themselves are the threads store's, the prompt queue's
 * actions `prompt-queue.ts`'s, a session's mode, model and options
 * `session-settings.ts`'s.
 */

/** A session at work or waiting for the user's answer: the sidebar lists it whatever page it is in. */
export function atWorkOrWaiting(state: SessionState): boolean {
  return state.status === 'running' || state.status === 'starting' || Boolean(state.permissions?.length)
}

export const useSessionsStore = defineStore('sessions', () => {
  const notices = useNoticesStore()
  const view = useViewStore()
  const projects = useProjectsStore()

  const states = ref<Record<string, SessionState>>({})
  const threads = useThreadsStore()
  const panes = usePanesStore()
  /** The session in the focused pane (panes.ts holds the layout: several sessions are open at once). */
  const openId = computed<string | null>(() => panes.focused.sessionId)
  /** Unsent composer text, by session id: switching sessions does not lose it. */
  const drafts = ref<Record<string, string>>({})
  /** An entry to bring into view (by entry id or index) once its session's thread shows; the session view takes it. */
  const entryToReveal = ref<{ sessionId: string; entry: string | number } | null>(null)

  /**
   * What kept a session's agent from going on (a sign-in it asks for, a start
   * that failed), with what to do again once it is dealt with: shown once, in
   * the session (AgentProblemPanel), not in the banner. Cleared by the next
   * attempt.
   */
  const problems = ref<Record<string, { problem: AgentProblem; again: { text: string; attachments: Attachment[] } | null }>>({})

  /** Sessions whose snapshot is on its way; a state that arrives meanwhile is newer than the snapshot's. */
  const stateSinceOpen = new Set<string>()
  /** While every state is asked for again (`readStates`): the sessions whose state arrived meanwhile, newer than the answer's. */
  let stateSinceRead: Set<string> | null = null

  const openSession = computed<SessionRecord | null>(() => (openId.value ? (projects.sessionById(openId.value) ?? null) : null))

  function stateOf(id: string): SessionState {
    return states.value[id] ?? { id, status: 'idle' }
  }

  /** Shows a session in the focused pane (or focuses the pane that has it) and loads its thread. */
  async function open(id: string): Promise<void> {
    view.show('sessions')
    panes.show(id)
    if (!threads.threads[id]) await load(id)
  }

  /** Opens a session in a new pane beside the focused one (in the focused one when all panes are taken). */
  async function openInNewPane(id: string): Promise<void> {
    if (!panes.split(id)) useUiStore().toast('All four panes are in use: the conversation opened in the focused one. Close a pane to add another.')
    if (!threads.threads[id]) await load(id)
  }

  /** Loads the session's thread, and takes the snapshot's state unless a newer one arrived meanwhile. */
  async function load(id: string): Promise<void> {
    stateSinceOpen.delete(id)
    const snapshot = await threads.load(id)
    if (snapshot && !stateSinceOpen.has(id)) states.value[id] = snapshot.state
  }

  /**
   * Opens a session and shows one of its entries (search results, links to a
   * message). A conversation opens at its end: earlier records are loaded
   * until the entry is there (`seq`: where it starts, when known).
   */
  async function revealEntry(sessionId: string, entry: string | number, seq?: number): Promise<void> {
    await open(sessionId)
    await threads.loaded(sessionId)
    if (typeof entry === 'string') {
      for (let page = 0; page < 1000; page++) {
        const thread = threads.threads[sessionId]
        if (!thread || thread.firstSeq === 0 || (seq !== undefined && thread.firstSeq <= seq)) break
        if (thread.thread.entries.some((e) => e.id === entry)) break
        if (!(await threads.loadEarlier(sessionId))) break
      }
    }
    entryToReveal.value = { sessionId, entry }
  }

  /**
   * Every session's state as the Host has it now (`sessions.states`), in place of what this window had: a
   * session the Host does not list is idle (after a restart, none is running or waiting on the user). What
   * `answer` gives replaces the states, except those that arrived as events while it was on its way (newer).
   */
  async function readStates(answer: Promise<SessionState[]>): Promise<void> {
    const since = new Set<string>()
    stateSinceRead = since
    try {
      const list = await answer
      const next: Record<string, SessionState> = {}
      for (const state of list) next[state.id] = state
      for (const id of since) if (states.value[id]) next[id] = states.value[id]
      states.value = next
      for (const state of list) if (!since.has(state.id)) noticeBusy(state)
    } finally {
      if (stateSinceRead === since) stateSinceRead = null
    }
  }

  /** After a reconnect: each thread this window keeps is read again, with its session's state (its snapshot's). */
  async function reloadOpen(): Promise<void> {
    await Promise.all(Object.keys(threads.threads).map((id) => load(id)))
  }

  function receiveState(state: SessionState): void {
    states.value[state.id] = state
    stateSinceOpen.add(state.id)
    stateSinceRead?.add(state.id)
    noticeBusy(state)
  }

  /** A busy session is listed (and named in a notification) even when it is not in the pages the window has. */
  function noticeBusy(state: SessionState): void {
    if (atWorkOrWaiting(state) && !projects.sessionById(state.id)) void projects.fetchSessions([state.id]).catch(() => undefined)
  }

  /**
   * A session that is gone (deleted here, or its removal announced): its
   * thread, state and draft go, and a pane that showed it shows the session it
   * was forked from instead, when that is still there (`record`: the session
   * as it was, for where it came from).
   */
  function forget(id: string, record?: SessionRecord): void {
    threads.forget(id)
    delete states.value[id]
    delete drafts.value[id]
    delete problems.value[id]
    const origin = record?.forkedFrom
    if (origin && !projects.sessionById(origin) && panes.paneOf(id)) {
      // The origin is not in the pages this window holds: asked for first (it may be gone too).
      void projects
        .ensureSession(origin)
        .catch(() => undefined)
        .then((found) => showInstead(id, found ? origin : null))
    } else showInstead(id, origin && projects.sessionById(origin) ? origin : null)
  }

  /** The pane that showed a session that is gone shows `origin` instead (loaded), or is left empty. */
  function showInstead(id: string, origin: string | null): void {
    if (panes.removeSession(id, origin) && origin && !threads.threads[origin]) void load(origin)
  }

  /** Starts a session with an agent and opens it; throws the Host's message (the sidebar shows it, or a sign-in). */
  /** A new session with the agent, or from a preset (`where.presetId`, whose agent `agentId` is). */
  async function create(
    projectId: string,
    agentId: string,
    where: { isolation?: 'folder' | 'worktree'; branch?: string; presetId?: string } = {}
  ): Promise<void> {
    view.show('sessions')
    const { presetId, ...place } = where
    const record = presetId
      ? await host().request('presets.start', { presetId, projectId, ...place })
      : await host().request('sessions.new', { projectId, agentId, ...place })
    projects.upsertSession(record)
    await open(record.id)
  }

  async function continueSession(id: string): Promise<boolean> {
    delete problems.value[id]
    try {
      states.value[id] = await host().request('sessions.continue', { id })
      return true
    } catch (error) {
      // A conversation the agent could not reopen is said once, in the session's header, with what to do;
      // an agent that cannot go on, once, in the session.
      if (error instanceof HostRequestError && error.problem) problems.value[id] = { problem: error.problem, again: null }
      else if (!reopenFailed(error)) notices.report(messageOf(error))
      return false
    }
  }

  /** Does again what the agent's problem stopped: sends the same prompt, or continues the session. */
  async function retryAfterProblem(id: string): Promise<void> {
    const again = problems.value[id]?.again
    if (again) await send(id, again.text, again.attachments)
    else await continueSession(id)
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
    delete problems.value[id]
    try {
      await host().request('sessions.prompt', { id, text, attachments })
    } catch (error) {
      if (error instanceof HostRequestError && error.problem) problems.value[id] = { problem: error.problem, again: { text, attachments } }
      // A failed turn is said in the thread, as its error entry.
      else if (!reopenFailed(error) && !(error instanceof HostRequestError && error.code === 'turn_failed')) notices.report(messageOf(error))
    }
    return true
  }

  async function cancel(id: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.cancel', { id }))
  }

  /**
   * Answers a permission request, from its card in the session's pane or in the inbox alike: the card goes from both
   * at once (a second key press must not answer twice); refused, it shows again in both, and the banner says why.
   * Resolves true when the Host took the answer.
   */
  async function respondPermission(id: string, requestId: string, optionId: string | null): Promise<boolean> {
    const inbox = useInboxStore()
    const itemId = inbox.permissionItemId(id, requestId)
    // Being answered from the inbox already.
    if (itemId && inbox.hidden(itemId)) return false
    const before = states.value[id]
    let after: SessionState | null = null
    if (before?.permissions?.some((p) => p.requestId === requestId)) {
      after = { ...before, permissions: before.permissions.filter((p) => p.requestId !== requestId) }
      states.value[id] = after
    }
    if (itemId) inbox.hide(itemId)
    try {
      await host().request('sessions.respondPermission', { id, requestId, optionId })
      return true
    } catch (error) {
      // The card comes back unless a newer state came meanwhile: that one says what waits.
      if (after && toRaw(states.value[id]) === after) states.value[id] = before
      if (itemId) inbox.unhide(itemId)
      notices.report(messageOf(error))
      return false
    }
  }

  /** Forks a session; the fork opens in the focused pane, or beside the parent when `newPane`. */
  async function fork(id: string, newPane = false): Promise<void> {
    view.show('sessions')
    const record = await notices.attempt(() => host().request('sessions.fork', { id }))
    if (!record) return
    projects.upsertSession(record)
    await (newPane ? openInNewPane(record.id) : open(record.id))
  }

  /** Continues a conversation its agent could not reopen in a new session given it as context; opens it in the same pane. */
  async function continueInNew(id: string): Promise<void> {
    const record = await notices.attempt(() => host().request('sessions.continueInNew', { id }))
    if (!record) return
    projects.upsertSession(record)
    await open(record.id)
  }

  /** Gives a session the user's own title; throws the Host's message for the field. */
  async function rename(id: string, title: string): Promise<void> {
    projects.upsertSession(await host().request('sessions.rename', { id, title }))
  }

  async function close(id: string): Promise<void> {
    await notices.attempt(() => host().request('sessions.close', { id }))
  }

  /** Deletes a session; with `removeWorktree` a refusal (uncommitted work in it) is thrown for the dialog to show. */
  async function remove(id: string, keepTranscript: boolean, worktree: { removeWorktree?: boolean; discardChanges?: boolean } = {}): Promise<void> {
    const record = projects.sessionById(id)
    const request = () => host().request('sessions.delete', { id, keepTranscript, ...worktree })
    const result = worktree.removeWorktree ? await request() : await notices.attempt(request)
    if (!result) return
    projects.removeSession(id)
    forget(id, record)
    const title = record ? `“${record.title}”` : 'The conversation'
    const kept = keepTranscript ? ' Its transcript is kept in the data folder (deleted-transcripts).' : ''
    if (result.agentDeleted) useUiStore().toast(`${title} was deleted here and by the agent.${kept}${result.note ? ` ${result.note}` : ''}`)
    else useUiStore().toast(`${title} was removed from Switchboard; the agent keeps its own copy.${result.note ? ` (${result.note})` : ''}${kept}`)
  }

  return {
    states,
    openId,
    drafts,
    entryToReveal,
    openSession,
    stateOf,
    open,
    openInNewPane,
    revealEntry,
    load,
    readStates,
    reloadOpen,
    receiveState,
    forget,
    create,
    continueSession,
    problems,
    retryAfterProblem,
    send,
    cancel,
    respondPermission,
    fork,
    continueInNew,
    rename,
    close,
    remove
  }
})

/** The agent could not reopen the conversation: the session's header says so, with what to do (not a second banner). */
function reopenFailed(error: unknown): boolean {
  return error instanceof HostRequestError && error.code === 'reopen_failed'
}
