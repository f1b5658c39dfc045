import { z } from 'zod'
import type { PendingElicitation, PendingPermission } from './domain'

/**
 * The inbox: one list, across every pane and project, of what waits on the
 * user. The Host derives it (electron/host/inbox/) from what its rooms already
 * know: the permission requests and questions agents are waiting on, agents
 * that need signing in, and each session's last turn that ended in an error or
 * finished while no window showed it (kept in the session's record, so a
 * restart keeps it). Types and schemas only.
 */

export type InboxItemKind = 'permission' | 'elicitation' | 'sign_in' | 'error' | 'finished'

interface InboxItemBase {
  /** Stable while the item waits: its kind and what it is about (a request, an agent's problem, a session's turn). */
  id: string
  kind: InboxItemKind
  /** When it began to wait (ISO). */
  at: string
  agent: { id: string; name: string }
  /** Absent for what an agent asks outside any session (a sign-in, a question while signing in). */
  project?: { id: string; name: string }
  session?: { id: string; title: string }
}

export type InboxItem =
  /** A permission request, answerable in place (`sessions.respondPermission`). */
  | (InboxItemBase & { kind: 'permission'; permission: PendingPermission })
  /** A question (`elicitation/create`), answered with `elicitations.answer`. */
  | (InboxItemBase & { kind: 'elicitation'; elicitation: PendingElicitation })
  /** The agent refused to work until the user signs in (its state's problem is `sign_in`). */
  | (InboxItemBase & { kind: 'sign_in'; summary: string })
  /** The session's last turn ended in an error (or could not go on: Switchboard closed while it waited). */
  | (InboxItemBase & { kind: 'error'; message: string })
  /** The session's last turn finished while no window showed it. */
  | (InboxItemBase & { kind: 'finished'; stopReason: string; reply?: string })

const id = z.string().min(1).max(200)

export const inboxRequestParams = {
  /** Everything that waits on the user, the most pressing first (what an agent is blocked on), oldest first within each kind. */
  'inbox.list': z.object({}),
  /** These sessions are shown in a window that has the focus: their finished or failed turns are seen. */
  'inbox.seen': z.object({ sessionIds: z.array(id).max(100) }),
  /**
   * Takes an item out: a turn's end is seen; a permission request is answered
   * as dismissed and a question cancelled (the agent is told); a sign-in is
   * left out until the agent asks again.
   */
  'inbox.dismiss': z.object({ itemId: z.string().min(1).max(500) })
} as const

export interface InboxRequestResults {
  'inbox.list': InboxItem[]
  'inbox.seen': Record<string, never>
  'inbox.dismiss': Record<string, never>
}
