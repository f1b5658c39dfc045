import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { ElicitationValue, PendingElicitation } from '../../../shared/domain'
import { host } from '../host/client'

/** Questions agents are waiting for the user to answer (`elicitation/create`), kept current by `elicitations.changed`. */
export const useElicitationsStore = defineStore('elicitations', () => {
  const pending = ref<PendingElicitation[]>([])

  function forSession(sessionId: string): PendingElicitation | undefined {
    return pending.value.find((e) => e.sessionId === sessionId)
  }

  /** Questions asked outside any session (e.g. while an agent signs in): shown over the whole window. */
  function outsideSessions(): PendingElicitation | undefined {
    return pending.value.find((e) => e.sessionId === null)
  }

  /** Throws the Host's message (e.g. a field that does not fit) for the form to show. */
  async function answer(requestId: string, action: 'accept' | 'decline' | 'cancel', content: Record<string, ElicitationValue> = {}): Promise<void> {
    await host().request('elicitations.answer', { requestId, action, content })
  }

  return { pending, forSession, outsideSessions, answer }
})
