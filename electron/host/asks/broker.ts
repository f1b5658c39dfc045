import { randomUUID } from 'node:crypto'
import type {
  CreateElicitationRequest,
  CreateElicitationResponse,
  RequestPermissionRequest,
  RequestPermissionResponse
} from '@agentclientprotocol/sdk'
import type { ElicitationValue, PendingElicitation, PendingPermission, SessionRecord } from '../../../shared/domain'
import { describeScope, type PermissionAlways, type RuleSubject } from '../../../shared/permissions'
import type { ToolCallEntry } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import type { EventBus } from '../contract/events'
import { Elicitations, type ElicitationAction } from './elicitation'
import type { Records } from '../storage/records'
import { KeptRules } from './kept-rules'
import { CommandApprovals, decisionOf, requestCommandKey, type CommandKey, type Decision as CommandDecision } from './command-approvals'
import {
  PERMISSION_TEXT,
  alwaysDecision,
  cutText,
  onceOption,
  pathsOutside,
  permissionRecord,
  rememberable,
  sessionScoped,
  subjectOf,
  type Decision
} from './permission-rules'

/**
 * Everything an agent asks the user and waits for: permission requests and
 * elicitations (forms and pages to open). Each session has a list of pending
 * permission requests, so several asked at once are all shown and each is
 * answered on its own; "always" answers become Switchboard's rules, each
 * for one tool and one command or files inside the project (see
 * permission-rules.ts), that answer later requests they cover. What was
 * asked and answered goes into the session's transcript.
 */

export interface BrokerOptions {
  records: Records
  events: EventBus
  /** Appends to a session's transcript (when the session is in memory). */
  record(sessionId: string, record: TranscriptRecord): void
  /** A session's pending permission requests changed: its live state shows them. */
  permissionsChanged(sessionId: string, pending: PendingPermission[]): void
}

/** Where the session may work, and the tool call the agent announced for the request (if it has). */
export interface PermissionContext {
  /** The session's folders: its cwd and the additional folders the agent was told of. */
  folders: string[]
  /** The tool call as the session's thread has it now (read again when the agent announces it after asking). */
  announced(): ToolCallEntry | undefined
  /** Asked for a `terminal/create` nothing approved (command-approvals.ts): its answer is for that command alone, not kept for another. */
  forTerminal?: boolean
}

interface PendingAsk {
  readonly session: SessionRecord
  readonly params: RequestPermissionRequest
  readonly context: PermissionContext
  /** The request's title as shown and recorded (cut to PERMISSION_TEXT.title). */
  readonly title: string
  view: PendingPermission
  /** False while the request is being judged the first time (not listed yet). */
  shown: boolean
  /** What an "always" answer remembers; null when it cannot be remembered. */
  remember: { subject: RuleSubject; project: string } | null
  /** Counts the judgements begun: only the latest one's outcome is taken. */
  judgements: number
  /** Ends the request with this answer to the agent, or with an error. */
  resolve(response: RequestPermissionResponse): void
  reject(error: unknown): void
  /** Stops listening for the request's cancellation. */
  release(): void
  /** Settles once the request is answered, however. */
  settled: Promise<void>
}

export class AskBroker {
  /** By our session id, then by requestId, in the order asked. */
  private readonly permissions = new Map<string, Map<string, PendingAsk>>()
  /** The rules that answer without asking: the user's "always" (saved) and "for this session" (in memory). */
  private readonly rules: KeptRules
  private readonly elicitations: Elicitations
  /** Answers to requests that named a command, for the agent's `terminal/create` of it. */
  private readonly approvals = new CommandApprovals()
  /** Sessions whose turn under way is answered by no rule (`sessions.prompt` with `rulesApply: false`), with how many such turns. */
  private readonly rulesOff = new Map<string, number>()

  constructor(private readonly options: BrokerOptions) {
    this.rules = new KeptRules(options.records)
    this.elicitations = new Elicitations(
      (pending) => options.events.emit('elicitations.changed', pending),
      (view, action, content) => {
        if (!view.sessionId) return
        options.record(view.sessionId, {
          t: 'elicitation',
          at: new Date().toISOString(),
          message: view.message,
          mode: view.mode,
          action,
          url: view.url,
          content
        })
      }
    )
  }

  /**
   * `session/request_permission`: answered at once by a remembered rule that
   * covers it (same agent, project, tool, and command or files inside the
   * project's folders), with the agent's *once* option; else held until the
   * user answers, the request is cancelled, or the session's turn ends.
   * `context` is where the session may work and the tool call the agent
   * announced (it may name the tool, as Claude Code does).
   */
  askPermission(
    session: SessionRecord,
    params: RequestPermissionRequest,
    signal: AbortSignal,
    context: PermissionContext
  ): Promise<RequestPermissionResponse> {
    const title = cutText(params.toolCall.title ?? context.announced()?.title ?? 'The agent asks for permission', PERMISSION_TEXT.title)
    const requestId = randomUUID()
    const onAbort = (): void => this.end(session.id, requestId, (ask) => this.answered(ask, null))
    // Held from now, so requests asked together are listed in the order asked; shown once judged.
    const answered = new Promise<RequestPermissionResponse>((resolve, reject) => {
      this.permissionsOf(session.id).set(requestId, {
        session,
        params,
        context,
        title,
        view: { requestId, title, options: [] },
        shown: false,
        remember: null,
        judgements: 0,
        resolve,
        reject,
        release: () => signal.removeEventListener('abort', onAbort),
        settled: Promise.resolve()
      })
    })
    const held = this.permissions.get(session.id)?.get(requestId)
    if (held) held.settled = answered.then(noop, noop)
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) onAbort()
    this.judgeNow(session.id, requestId)
    return answered
  }

  /**
   * The agent announced or updated a tool call. A request still pending for
   * it is judged again with what the announcement adds: Claude Code may ask
   * before it announces the call, and only the announcement names the tool
   * (Bash, Edit…). A rule may now cover the request (it is answered), or what
   * "always" would remember changes (the card shows it).
   */
  toolCallChanged(sessionId: string, toolCallId: string): void {
    for (const [requestId, ask] of this.permissions.get(sessionId) ?? []) {
      if (ask.shown && ask.params.toolCall.toolCallId === toolCallId) this.judgeNow(sessionId, requestId)
    }
  }

  /** Judges the request; a judgement that fails answers the agent with the error. */
  private judgeNow(sessionId: string, requestId: string): void {
    this.judge(sessionId, requestId).catch((error: unknown) =>
      this.end(sessionId, requestId, () => {
        throw error
      })
    )
  }

  /**
   * Whether a remembered rule covers the request (it is answered with it),
   * and else what the card offers and what its "always" would remember; the
   * windows are told when that changed.
   */
  private async judge(sessionId: string, requestId: string): Promise<void> {
    const ask = this.permissions.get(sessionId)?.get(requestId)
    if (!ask) return
    const { session, params, context } = ask
    const judgement = ++ask.judgements
    const project = this.options.records.data.projects.find((p) => p.id === session.projectId)?.name ?? 'the project'
    const subject = subjectOf(params.toolCall, context.announced())
    const outside = await pathsOutside(subject.paths, context.folders, session.cwd)
    // Answered, cancelled, or judged again meanwhile (the newer judgement stands).
    if (this.permissions.get(sessionId)?.get(requestId) !== ask || ask.judgements !== judgement) return
    const remember = rememberable(subject, outside, project)
    const rule = remember.ok && !this.rulesOff.has(sessionId) ? this.rules.find(session, remember.subject) : undefined
    const once = rule && onceOption(params.options, rule.decision)
    if (rule && once) {
      this.end(sessionId, requestId, () => {
        this.options.record(
          sessionId,
          permissionRecord(ask.title, once, { remembered: true, rule: describeScope(rule, project) }, params.toolCall.toolCallId)
        )
        return { outcome: { outcome: 'selected', optionId: once.optionId } }
      })
      return
    }
    ask.remember = remember.ok ? { subject: remember.subject, project } : null
    // An "always" that cannot be remembered is left out when the same decision can be given once.
    const offered = params.options.filter((o) => {
      const decision = alwaysDecision(o.kind)
      return !decision || remember.ok || remember.reason === null || !onceOption(params.options, decision)
    })
    const always: PermissionAlways | undefined = !params.options.some((o) => alwaysDecision(o.kind))
      ? undefined
      : remember.ok
        ? { remembered: true, ...remember.subject, project, description: describeScope(remember.subject, project) }
        : remember.reason !== null
          ? { remembered: false, reason: remember.reason }
          : undefined
    const view: PendingPermission = {
      requestId,
      title: ask.title,
      options: offered.map((o) => ({
        optionId: o.optionId,
        name: cutText(o.name, PERMISSION_TEXT.option),
        kind: o.kind,
        ...(alwaysDecision(o.kind) && sessionScoped(o) ? { forSession: true as const } : {})
      })),
      // A terminal's own question has no tool call in the thread to show.
      ...(context.forTerminal ? {} : { toolCallId: params.toolCall.toolCallId }),
      ...(always ? { always } : {})
    }
    if (ask.shown && JSON.stringify(view) === JSON.stringify(ask.view)) return
    ask.view = view
    ask.shown = true
    this.options.permissionsChanged(sessionId, this.pendingPermissions(sessionId))
  }

  /** Takes the request out of the pending ones (the windows are told when it was shown) and answers the agent with `respond`'s answer (or error). */
  private end(sessionId: string, requestId: string, respond: (ask: PendingAsk) => RequestPermissionResponse): void {
    const pending = this.permissions.get(sessionId)
    const ask = pending?.get(requestId)
    if (!pending || !ask) return
    pending.delete(requestId)
    if (pending.size === 0) this.permissions.delete(sessionId)
    ask.release()
    if (ask.shown) this.options.permissionsChanged(sessionId, this.pendingPermissions(sessionId))
    let response: RequestPermissionResponse
    try {
      response = respond(ask)
    } catch (error) {
      ask.reject(error)
      return
    }
    this.noteCommandAnswer(ask, response)
    ask.resolve(response)
  }

  /** The user's (or a rule's) answer to a request that named a command: what the agent's `terminal/create` of that command is answered with. */
  private noteCommandAnswer(ask: PendingAsk, response: RequestPermissionResponse): void {
    if (ask.context.forTerminal || response.outcome.outcome !== 'selected') return
    const { optionId } = response.outcome
    const decision = decisionOf(ask.params.options.find((o) => o.optionId === optionId))
    const key = decision && requestCommandKey(ask.params.toolCall, ask.context.announced())
    if (decision && key) this.approvals.note(ask.session.id, key, decision)
  }

  /**
   * Settles once no request of the session for exactly this command is
   * pending: an agent that sends `terminal/create` before its permission
   * request for the command is answered waits for that answer, not a second card.
   */
  async commandAsked(sessionId: string, key: CommandKey): Promise<void> {
    for (;;) {
      const pending = [...(this.permissions.get(sessionId)?.values() ?? [])].filter(
        (ask) => !ask.context.forTerminal && requestCommandKey(ask.params.toolCall, ask.context.announced()) === key
      )
      if (pending.length === 0) return
      await Promise.all(pending.map((ask) => ask.settled))
    }
  }

  /** The answer the user gave this session for exactly this command since its turn began, if any; used once. */
  takeCommandAnswer(sessionId: string, key: CommandKey): CommandDecision | null {
    return this.approvals.take(sessionId, key)
  }

  /** The session's turn is over: answers its agent did not use for a command are void. */
  turnEnded(sessionId: string): void {
    this.approvals.forget(sessionId)
  }

  /**
   * Carries out the user's answer. An "always" becomes Switchboard's rule (when
   * the request can be remembered) and is answered to the agent with its
   * *once* option of the same decision, so the agent remembers nothing broader
   * of its own.
   */
  private answered(ask: PendingAsk, optionId: string | null): RequestPermissionResponse {
    const { session, params, title, remember } = ask
    const picked = params.options.find((o) => o.optionId === optionId)
    if (!picked) {
      this.options.record(session.id, permissionRecord(title, null, { remembered: false }, params.toolCall.toolCallId))
      return { outcome: { outcome: 'cancelled' } }
    }
    const decision = alwaysDecision(picked.kind)
    if (decision && remember) {
      const sent = onceOption(params.options, decision) ?? picked
      // The agent's "for this session" stays that: kept in memory for this session, never saved.
      const forSession = sessionScoped(picked)
      const rule = `${describeScope(remember.subject, remember.project)}${forSession ? ', for this session' : ''}`
      const name = forSession
        ? decision === 'allow'
          ? 'Allow for this session'
          : 'Reject for this session'
        : decision === 'allow'
          ? 'Always allow'
          : 'Always reject'
      this.options.record(session.id, permissionRecord(title, sent, { remembered: false, name, kind: picked.kind, rule }, params.toolCall.toolCallId))
      if (forSession) this.rules.keepForSession(session, remember.subject, decision)
      else void this.rules.keep(session, remember.subject, decision)
      return { outcome: { outcome: 'selected', optionId: sent.optionId } }
    }
    this.options.record(session.id, permissionRecord(title, picked, { remembered: false }, params.toolCall.toolCallId))
    return { outcome: { outcome: 'selected', optionId: picked.optionId } }
  }

  /** The user's answer to one pending request (null: dismissed). */
  answerPermission(sessionId: string, requestId: string, optionId: string | null): void {
    const pending = this.permissions.get(sessionId)?.get(requestId)
    if (!pending?.shown) throw new Error('That permission request is no longer pending')
    const offered = pending.view.options.map((o) => o.optionId)
    if (optionId !== null && !offered.includes(optionId)) {
      throw new Error(`'${optionId}' is not one of the options the agent offered (${offered.join(', ')})`)
    }
    this.end(sessionId, requestId, (ask) => this.answered(ask, optionId))
  }

  /** A session's pending permission requests, oldest first. */
  pendingPermissions(sessionId: string): PendingPermission[] {
    return [...(this.permissions.get(sessionId)?.values() ?? [])].filter((p) => p.shown).map((p) => p.view)
  }

  /** `elicitation/create`: refused at once (ElicitationError) when it cannot be shown. */
  elicit(agentId: string, sessionId: string | null, params: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> {
    return this.elicitations.ask(agentId, sessionId, params, signal)
  }

  pendingElicitations(): PendingElicitation[] {
    return this.elicitations.list()
  }

  answerElicitation(requestId: string, action: ElicitationAction, content: Record<string, ElicitationValue>): void {
    this.elicitations.answer(requestId, action, content)
  }

  /** True while an agent waits on the user for any of its questions. */
  isAsking(agentId: string): boolean {
    return this.elicitations.list().some((e) => e.agentId === agentId)
  }

  /** Everything a session asked is cancelled (its turn was cancelled, it closed, its agent stopped). */
  cancelFor(sessionId: string): void {
    for (const requestId of [...(this.permissions.get(sessionId)?.keys() ?? [])]) this.end(sessionId, requestId, (ask) => this.answered(ask, null))
    this.approvals.forget(sessionId)
    this.elicitations.cancelWhere((e) => e.sessionId === sessionId)
  }

  /** Everything is cancelled (the Host is closing). */
  cancelAll(): void {
    for (const sessionId of [...this.permissions.keys()]) this.cancelFor(sessionId)
    this.elicitations.cancelWhere(() => true)
  }

  /** While `turn` runs, no rule answers the session's requests: each is asked (a headless run told to deny everything). */
  async withoutRules<T>(sessionId: string, turn: () => Promise<T>): Promise<T> {
    this.rulesOff.set(sessionId, (this.rulesOff.get(sessionId) ?? 0) + 1)
    try {
      return await turn()
    } finally {
      const left = (this.rulesOff.get(sessionId) ?? 1) - 1
      if (left > 0) this.rulesOff.set(sessionId, left)
      else this.rulesOff.delete(sessionId)
    }
  }

  /** Forgets a remembered rule; refused when it is gone already. */
  revokeRule(ruleId: string): Promise<void> {
    return this.rules.revoke(ruleId)
  }

  private permissionsOf(sessionId: string): Map<string, PendingAsk> {
    let pending = this.permissions.get(sessionId)
    if (!pending) this.permissions.set(sessionId, (pending = new Map<string, PendingAsk>()))
    return pending
  }
}

function noop(): void {}
