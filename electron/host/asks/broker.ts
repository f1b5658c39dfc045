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
import type { EventBus } from '../events'
import { Elicitations, type ElicitationAction } from '../elicitation'
import type { Records } from '../records'
import {
  PERMISSION_TEXT,
  alwaysDecision,
  cutText,
  onceOption,
  pathsOutside,
  permissionRecord,
  rememberable,
  ruleMatches,
  sameSubject,
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

/** Where the session may work, and the tool call the agent announced before asking (if it did). */
export interface PermissionContext {
  /** The session's folders: its cwd and the additional folders the agent was told of. */
  folders: string[]
  announced?: ToolCallEntry
}

interface PendingAsk {
  view: PendingPermission
  settle(optionId: string | null): void
  /** False while the request is being judged (not listed yet). */
  shown: boolean
  /** What an "always" answer remembers; null when it cannot be remembered. */
  remember: { subject: RuleSubject; project: string } | null
}

export class AskBroker {
  /** By our session id, then by requestId, in the order asked. */
  private readonly permissions = new Map<string, Map<string, PendingAsk>>()
  private readonly elicitations: Elicitations

  constructor(private readonly options: BrokerOptions) {
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
  async askPermission(
    session: SessionRecord,
    params: RequestPermissionRequest,
    signal: AbortSignal,
    context: PermissionContext
  ): Promise<RequestPermissionResponse> {
    const title = cutText(params.toolCall.title ?? context.announced?.title ?? 'The agent asks for permission', PERMISSION_TEXT.title)
    const requestId = randomUUID()
    const pending = this.permissionsOf(session.id)
    // Held from now, so requests asked together are listed in the order asked; shown once judged.
    let settle: (optionId: string | null) => void = () => undefined
    const answered = new Promise<RequestPermissionResponse>((resolve) => {
      settle = (optionId) => {
        const ask = pending.get(requestId)
        if (!ask) return
        pending.delete(requestId)
        if (pending.size === 0 && this.permissions.get(session.id) === pending) this.permissions.delete(session.id)
        if (ask.shown) this.options.permissionsChanged(session.id, this.pendingPermissions(session.id))
        resolve(this.answered(session, params, title, ask.remember, optionId))
      }
    })
    pending.set(requestId, { view: { requestId, title, options: [] }, settle, shown: false, remember: null })
    const onAbort = (): void => settle(null)
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) onAbort()

    const project = this.options.records.data.projects.find((p) => p.id === session.projectId)?.name ?? 'the project'
    const subject = subjectOf(params.toolCall, context.announced)
    const outside = await pathsOutside(subject.paths, context.folders, session.cwd)
    const ask = pending.get(requestId)
    if (!ask) return answered
    const remember = rememberable(subject, outside, project)
    const rule = remember.ok
      ? this.options.records.data.permissionRules.find(
          (r) => r.agentId === session.agentId && r.projectId === session.projectId && ruleMatches(r, remember.subject)
        )
      : undefined
    const once = rule && onceOption(params.options, rule.decision)
    if (rule && once) {
      pending.delete(requestId)
      if (pending.size === 0 && this.permissions.get(session.id) === pending) this.permissions.delete(session.id)
      signal.removeEventListener('abort', onAbort)
      this.options.record(session.id, permissionRecord(title, once, { remembered: true, rule: describeScope(rule, project) }))
      return { outcome: { outcome: 'selected', optionId: once.optionId } }
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
    ask.view = {
      requestId,
      title,
      options: offered.map((o) => ({ optionId: o.optionId, name: cutText(o.name, PERMISSION_TEXT.option), kind: o.kind })),
      toolCallId: params.toolCall.toolCallId,
      ...(always ? { always } : {})
    }
    ask.shown = true
    this.options.permissionsChanged(session.id, this.pendingPermissions(session.id))
    return answered
  }

  /**
   * Carries out the user's answer. An "always" becomes Switchboard's rule (when
   * the request can be remembered) and is answered to the agent with its
   * *once* option of the same decision, so the agent remembers nothing broader
   * of its own.
   */
  private answered(
    session: SessionRecord,
    params: RequestPermissionRequest,
    title: string,
    remember: PendingAsk['remember'],
    optionId: string | null
  ): RequestPermissionResponse {
    const picked = params.options.find((o) => o.optionId === optionId)
    if (!picked) {
      this.options.record(session.id, permissionRecord(title, null, { remembered: false }))
      return { outcome: { outcome: 'cancelled' } }
    }
    const decision = alwaysDecision(picked.kind)
    if (decision && remember) {
      const sent = onceOption(params.options, decision) ?? picked
      const rule = describeScope(remember.subject, remember.project)
      this.options.record(
        session.id,
        permissionRecord(title, sent, { remembered: false, name: decision === 'allow' ? 'Always allow' : 'Always reject', kind: picked.kind, rule })
      )
      void this.remember(session, remember.subject, decision)
      return { outcome: { outcome: 'selected', optionId: sent.optionId } }
    }
    this.options.record(session.id, permissionRecord(title, picked, { remembered: false }))
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
    pending.settle(optionId)
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
    for (const pending of [...(this.permissions.get(sessionId)?.values() ?? [])]) pending.settle(null)
    this.elicitations.cancelWhere((e) => e.sessionId === sessionId)
  }

  /** Everything is cancelled (the Host is closing). */
  cancelAll(): void {
    for (const sessionId of [...this.permissions.keys()]) this.cancelFor(sessionId)
    this.elicitations.cancelWhere(() => true)
  }

  /** Forgets the rule; refused when it is gone already. */
  async revokeRule(ruleId: string): Promise<void> {
    const rules = this.options.records.data.permissionRules
    if (!rules.some((r) => r.id === ruleId)) throw new Error('That remembered permission no longer exists')
    this.options.records.data.permissionRules = rules.filter((r) => r.id !== ruleId)
    await this.options.records.saved('permissions')
  }

  private permissionsOf(sessionId: string): Map<string, PendingAsk> {
    let pending = this.permissions.get(sessionId)
    if (!pending) this.permissions.set(sessionId, (pending = new Map<string, PendingAsk>()))
    return pending
  }

  /** The user's "always": a rule for this agent, project and subject (replacing one for the same subject). */
  private async remember(session: SessionRecord, subject: RuleSubject, decision: Decision): Promise<void> {
    const rules = this.options.records.data.permissionRules.filter(
      (r) => !(r.agentId === session.agentId && r.projectId === session.projectId && sameSubject(r, subject))
    )
    rules.push({
      id: randomUUID(),
      agentId: session.agentId,
      projectId: session.projectId,
      ...subject,
      decision,
      createdAt: new Date().toISOString()
    })
    this.options.records.data.permissionRules = rules
    await this.options.records.saved('permissions')
  }
}
