import { randomUUID } from 'node:crypto'
import type {
  CreateElicitationRequest,
  CreateElicitationResponse,
  RequestPermissionRequest,
  RequestPermissionResponse
} from '@agentclientprotocol/sdk'
import type { ElicitationValue, PendingElicitation, PendingPermission, SessionRecord } from '../../../shared/domain'
import type { TranscriptRecord } from '../../../shared/transcript'
import type { EventBus } from '../events'
import { Elicitations, type ElicitationAction } from '../elicitation'
import type { Records } from '../records'
import { alwaysDecision, optionFor, permissionRecord } from './permission-rules'

/**
 * Everything an agent asks the user and waits for: permission requests and
 * elicitations (forms and pages to open). Each session has a list of pending
 * permission requests, so several asked at once are all shown and each is
 * answered on its own; "always" answers become rules that answer later
 * requests of the same kind. What was asked and answered goes into the
 * session's transcript.
 */

export interface BrokerOptions {
  records: Records
  events: EventBus
  /** Appends to a session's transcript (when the session is in memory). */
  record(sessionId: string, record: TranscriptRecord): void
  /** A session's pending permission requests changed: its live state shows them. */
  permissionsChanged(sessionId: string, pending: PendingPermission[]): void
}

interface PendingAsk {
  view: PendingPermission
  settle(optionId: string | null): void
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
   * `session/request_permission`: answered at once by a remembered rule for
   * this agent, project and kind of tool; else held until the user answers,
   * the request is cancelled, or the session's turn ends.
   */
  askPermission(session: SessionRecord, params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    const toolKind = params.toolCall.kind ?? 'other'
    const title = params.toolCall.title ?? 'The agent asks for permission'
    const rule = this.options.records.data.permissionRules.find(
      (r) => r.agentId === session.agentId && r.projectId === session.projectId && r.toolKind === toolKind
    )
    const remembered = rule && optionFor(params.options, rule.decision)
    if (remembered) {
      this.options.record(session.id, permissionRecord(title, remembered, true))
      return Promise.resolve({ outcome: { outcome: 'selected', optionId: remembered.optionId } })
    }
    const requestId = randomUUID()
    const pending = this.permissionsOf(session.id)
    return new Promise<RequestPermissionResponse>((resolve) => {
      const settle = (optionId: string | null): void => {
        if (!pending.delete(requestId)) return
        if (pending.size === 0) this.permissions.delete(session.id)
        this.options.permissionsChanged(session.id, this.pendingPermissions(session.id))
        const option = params.options.find((o) => o.optionId === optionId)
        this.options.record(session.id, permissionRecord(title, option ?? null, false))
        if (option) void this.rememberIfAlways(session, toolKind, option.kind)
        resolve(option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } })
      }
      const view: PendingPermission = {
        requestId,
        title,
        options: params.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
        toolCallId: params.toolCall.toolCallId
      }
      pending.set(requestId, { view, settle })
      signal.addEventListener('abort', () => settle(null), { once: true })
      this.options.permissionsChanged(session.id, this.pendingPermissions(session.id))
    })
  }

  /** The user's answer to one pending request (null: dismissed). */
  answerPermission(sessionId: string, requestId: string, optionId: string | null): void {
    const pending = this.permissions.get(sessionId)?.get(requestId)
    if (!pending) throw new Error('That permission request is no longer pending')
    const offered = pending.view.options.map((o) => o.optionId)
    if (optionId !== null && !offered.includes(optionId)) {
      throw new Error(`'${optionId}' is not one of the options the agent offered (${offered.join(', ')})`)
    }
    pending.settle(optionId)
  }

  /** A session's pending permission requests, oldest first. */
  pendingPermissions(sessionId: string): PendingPermission[] {
    return [...(this.permissions.get(sessionId)?.values() ?? [])].map((p) => p.view)
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

  /** An allow_always / reject_always answer becomes a rule for this agent, project and kind of tool. */
  private async rememberIfAlways(session: SessionRecord, toolKind: string, optionKind: string): Promise<void> {
    const decision = alwaysDecision(optionKind)
    if (!decision) return
    const rules = this.options.records.data.permissionRules.filter(
      (r) => !(r.agentId === session.agentId && r.projectId === session.projectId && r.toolKind === toolKind)
    )
    rules.push({ id: randomUUID(), agentId: session.agentId, projectId: session.projectId, toolKind, decision, createdAt: new Date().toISOString() })
    this.options.records.data.permissionRules = rules
    await this.options.records.saved('permissions')
  }
}
