import { randomUUID } from 'node:crypto'
import type { PermissionRule, SessionRecord } from '../../../shared/domain'
import type { RuleSubject } from '../../../shared/permissions'
import type { Records } from '../storage/records'
import { ruleMatches, sameSubject, type Decision } from './permission-rules'

type RuleOwner = Pick<SessionRecord, 'id' | 'agentId' | 'projectId'>

/**
 * The answers the broker gives without asking: the user's "always" (kept in
 * db.json, through Records) and an agent's "for this session" (in memory only,
 * never in db.json, gone with the Host). Each covers one agent in one project
 * and one subject (permission-rules.ts); a new one replaces the one it covers.
 */
export class KeptRules {
  /** "For this session" rules, by our session id. */
  private readonly forSessions = new Map<string, PermissionRule[]>()

  constructor(private readonly records: Records) {}

  /** The rule that answers this session's request for `subject`, if one does. */
  find(session: RuleOwner, subject: RuleSubject): PermissionRule | undefined {
    return [...this.records.data.permissionRules, ...(this.forSessions.get(session.id) ?? [])].find(
      (r) => r.agentId === session.agentId && r.projectId === session.projectId && ruleMatches(r, subject)
    )
  }

  /** The user's "for this session": a rule for this session alone, in memory. */
  keepForSession(session: RuleOwner, subject: RuleSubject, decision: Decision): void {
    const rules = (this.forSessions.get(session.id) ?? []).filter((r) => !sameSubject(r, subject))
    rules.push(newRule(session, subject, decision))
    this.forSessions.set(session.id, rules)
  }

  /** The user's "always": a rule for this agent, project and subject, saved and announced. */
  keep(session: RuleOwner, subject: RuleSubject, decision: Decision): Promise<void> {
    const others = this.records.data.permissionRules.filter(
      (r) => !(r.agentId === session.agentId && r.projectId === session.projectId && sameSubject(r, subject))
    )
    return this.records.setRules([...others, newRule(session, subject, decision)])
  }

  /** Forgets a kept rule; refused when it is gone already. */
  async revoke(ruleId: string): Promise<void> {
    const rules = this.records.data.permissionRules
    if (!rules.some((r) => r.id === ruleId)) throw new Error('That remembered permission no longer exists')
    await this.records.setRules(rules.filter((r) => r.id !== ruleId))
  }
}

/** A rule of the session's agent and project for `subject`, made now. */
function newRule(session: RuleOwner, subject: RuleSubject, decision: Decision): PermissionRule {
  return { id: randomUUID(), agentId: session.agentId, projectId: session.projectId, ...subject, decision, createdAt: new Date().toISOString() }
}
