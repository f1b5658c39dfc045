import type { HostEvent, HostTransport, WireResponse } from '../../shared/contract'
import type { SessionRecord } from '../../shared/domain'
import { newerFirst, type SessionGroupPage } from '../../shared/session-listing'
import { HostClient, installHost } from '../../renderer/src/host/client'

/** A session's record as the Host gives it, for store and component tests: session s1 of agent a1 in project p1. */
export function sessionRecord(title: string, at: string): SessionRecord {
  return {
    id: 's1',
    acpSessionId: 'acp-1',
    agentId: 'a1',
    projectId: 'p1',
    cwd: '/work/app',
    title,
    titleSource: 'prompt',
    createdAt: at,
    updatedAt: at
  }
}

/**
 * A Host for store and component tests (test/component/ and test/renderer/):
 * answers each request with what the test gave for its method (in the
 * constructor or with `answer`), or an error, records the requests, and
 * pushes event batches when told.
 */
export class FakeHost implements HostTransport {
  readonly requests: { method: string; params: unknown }[] = []
  private readonly answers = new Map<string, (params: unknown) => unknown>()
  private readonly listeners = new Set<(events: HostEvent[]) => void>()

  constructor(handlers: Record<string, (params: any) => unknown> = {}) {
    for (const [method, handler] of Object.entries(handlers)) this.answers.set(method, handler)
  }

  answer(method: string, answer: (params: any) => unknown): this {
    this.answers.set(method, answer)
    return this
  }

  async request(method: string, params: unknown): Promise<WireResponse> {
    this.requests.push({ method, params })
    const answer = this.answers.get(method)
    if (!answer) return { ok: false, error: { message: `No answer for ${method} in this test` } }
    try {
      return { ok: true, result: await answer(params) }
    } catch (error) {
      return { ok: false, error: { message: (error as Error).message } }
    }
  }

  onEvents(listener: (events: HostEvent[]) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  push(events: HostEvent[]): void {
    for (const listener of this.listeners) listener(events)
  }

  calls(method: string): unknown[] {
    return this.requests.filter((r) => r.method === method).map((r) => r.params)
  }

  /** The params of each `method` request so far (as `calls`). */
  sent(method: string): unknown[] {
    return this.calls(method)
  }

  install(): this {
    installHost(new HostClient(this))
    return this
  }
}

/**
 * Answers to everything the window asks for on its first load (app store's
 * `load`), empty: a test gives its own for what it is about.
 */
export function firstLoad(answers: Record<string, (params: any) => unknown> = {}): Record<string, (params: any) => unknown> {
  return {
    'app.info': () => ({ version: 'test', dataDir: '/data', warnings: [], nativeFolderPicker: false, secretsPersistent: true }),
    'projects.list': () => [],
    'sessions.summary': () => [],
    'sessions.states': () => [],
    'agents.list': () => [],
    'agents.states': () => [],
    'permissions.list': () => [],
    'elicitations.list': () => [],
    'inbox.list': () => [],
    'agents.checks': () => [],
    'mcp.list': () => ({ profiles: [], disabled: {}, secretsPersistent: true }),
    'settings.get': () => ({ settings: {}, saved: false }),
    ...answers
  }
}

/** The next animation frame (after the frames already asked for). */
export function nextFrame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()))
}

/** What `sessions.summary` answers for these records: each project's groups of one agent's sessions, newest first, `limit` of each. */
export function summaryOf(records: SessionRecord[], limit = Infinity): SessionGroupPage[] {
  const groups = new Map<string, SessionGroupPage>()
  for (const record of [...records].sort(newerFirst)) {
    const key = `${record.projectId} ${record.agentId}`
    const group = groups.get(key) ?? { projectId: record.projectId, agentId: record.agentId, count: 0, sessions: [] }
    groups.set(key, group)
    group.count++
    if (group.sessions.length < limit) group.sessions.push(record)
  }
  return [...groups.values()]
}
