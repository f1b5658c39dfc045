import type { HandlerSlice } from '../contract/handlers'
import type { Records } from '../storage/records'
import type { AskBroker } from './broker'

/** The `permissions.*` (remembered answers) and `elicitations.*` requests. */

export function asksHandlers(records: Records, broker: AskBroker): HandlerSlice<'permissions'> & HandlerSlice<'elicitations'> {
  return {
    'permissions.list': async ({ projectId }) => records.data.permissionRules.filter((r) => !projectId || r.projectId === projectId),
    'permissions.revoke': async ({ ruleId }) => {
      await broker.revokeRule(ruleId)
      return {}
    },
    'elicitations.list': async () => broker.pendingElicitations(),
    'elicitations.answer': async ({ requestId, action, content }) => {
      broker.answerElicitation(requestId, action, content)
      return {}
    }
  }
}
