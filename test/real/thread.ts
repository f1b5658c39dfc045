import { expect } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { PendingPermission } from '../../shared/domain'
import type { ThreadEntry, ToolCallEntry } from '../../shared/thread'
import { entriesOf, fold, waitUntil } from '../helpers'

/**
 * What the real-agent suites read of a session through the Host, as the window
 * shows it: its entries, its tool calls, its state, the permission it waits on
 * (answered as a user would). `host` is a getter: the suites restart the Host.
 */
export interface ThreadReader {
  entries(id: string): Promise<ThreadEntry[]>
  toolCalls(id: string): Promise<ToolCallEntry[]>
  stateOf(id: string): ReturnType<typeof stateIn>
  /** The first permission the session waits on, once the agent has asked (30 s at most). */
  pendingPermission(id: string): Promise<PendingPermission>
  /** Answers the pending permission with its first option of that kind, and returns it. */
  answer(id: string, kind: 'allow' | 'reject'): Promise<PendingPermission>
}

async function stateIn(host: Host, id: string) {
  return (await host.request('sessions.states', {})).find((s) => s.id === id)
}

export function threadReader(host: () => Host, agentName: string): ThreadReader {
  const thread = async (id: string) => fold((await host().request('sessions.open', { id })).records)
  const reader: ThreadReader = {
    entries: async (id) => (await thread(id)).entries,
    toolCalls: async (id) => entriesOf(await thread(id), 'tool_call') as ToolCallEntry[],
    stateOf: (id) => stateIn(host(), id),
    pendingPermission: (id) =>
      waitUntil(`${agentName} to ask for permission`, async () => (await stateIn(host(), id))?.permissions?.[0], { timeoutMs: 30_000 }),
    answer: async (id, kind) => {
      const permission = await reader.pendingPermission(id)
      const option = permission.options.find((o) => o.kind === `${kind}_once`)
      expect(option, `a ${kind} option among ${JSON.stringify(permission.options)}`).toBeTruthy()
      await host().request('sessions.respondPermission', { id, requestId: permission.requestId, optionId: option!.optionId })
      return permission
    }
  }
  return reader
}

/** What a person reads of a thread: each entry's kind and text, in order. */
export function said(list: ThreadEntry[]): string[] {
  return list.flatMap((e) => (e.kind === 'user' || e.kind === 'assistant' ? [`${e.kind}: ${e.text}`] : []))
}
