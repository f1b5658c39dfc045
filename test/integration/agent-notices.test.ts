import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { ThreadEntry } from '../../shared/thread'
import { entriesOf, fold, openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * Issue 36, points 3 and 4, through a real Host and the scripted agent: the
 * client announces notices and compaction; an agent's informational chunk is
 * a notice, never glued to its reply; a tool call whose permission was
 * rejected, or dismissed by a cancel, reads so although the agent ends it
 * failed; in the live thread and in the one reopened after a restart alike.
 */

let root: string
let dataDir: string
let host: Host
let projectId: string
let agentId: string

beforeEach(async () => {
  root = await tempDir('agent-notices')
  dataDir = join(root, 'data')
  const project = join(root, 'project')
  await mkdir(project)
  host = await openHost(dataDir)
  projectId = (await host.request('projects.add', { cwd: project })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state')))).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function threadOf(id: string) {
  return fold((await host.request('sessions.open', { id })).records)
}

/** The thread after the Host restarted on the same data folder (reopened from the transcript Switchboard kept). */
async function threadAfterRestart(id: string) {
  await host.close()
  host = await openHost(dataDir)
  return threadOf(id)
}

const informational = JSON.stringify({
  sessionUpdate: 'agent_message_chunk',
  content: { type: 'text', text: "**Warning:** We're changing auto mode.\nSee the docs." },
  _meta: { claudeCode: { kind: 'informational', level: 'warning' } }
})

describe("an agent's notices (issue 36.3)", () => {
  it('announces session notices and compaction in its client capabilities', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: session.id, text: '/client-caps' })
    const said = (entriesOf(await threadOf(session.id), 'assistant').at(-1) as { text: string }).text
    const caps = JSON.parse(said.replace(/^clientCapabilities=/, '')) as { session?: Record<string, unknown> }
    expect(caps.session).toEqual({ notices: {}, compaction: {} })
  })

  it('an informational chunk after the reply is a warning notice, and the reply keeps its own words, live and after a restart', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: session.id, text: `/say Done: \`code\`.\n/raw ${informational}` })
    for (const thread of [await threadOf(session.id), await threadAfterRestart(session.id)]) {
      expect((entriesOf(thread, 'assistant')[0] as { text: string }).text).toBe('Done: `code`.')
      expect(entriesOf(thread, 'notice')).toEqual([
        expect.objectContaining({ severity: 'warning', title: "We're changing auto mode.", description: 'See the docs.' })
      ])
    }
  })
})

describe('cancel reads as cancel (issue 36.4)', () => {
  const status = (thread: ReturnType<typeof fold>): string => (entriesOf(thread, 'tool_call')[0] as ThreadEntry & { status: string }).status

  it('a call whose permission the user rejected reads rejected (the agent ends it failed), live and after a restart', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: session.id, text: '/permission' })
    const asked = await waitUntil('the permission card', async () => (await host.request('sessions.open', { id: session.id })).state.permissions?.[0])
    await host.request('sessions.respondPermission', { id: session.id, requestId: asked.requestId, optionId: 'reject' })
    await turn
    expect(status(await threadOf(session.id))).toBe('rejected')
    expect(status(await threadAfterRestart(session.id))).toBe('rejected')
  })

  it('a call whose permission was pending when the user cancelled the turn reads cancelled, live and after a restart', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: session.id, text: '/permission' })
    await waitUntil('the permission card', async () => (await host.request('sessions.open', { id: session.id })).state.permissions?.[0])
    await host.request('sessions.cancel', { id: session.id })
    await turn.catch(() => undefined)
    const live = await threadOf(session.id)
    expect(status(live)).toBe('cancelled')
    expect(status(await threadAfterRestart(session.id))).toBe('cancelled')
  })
})

describe('subagents (issue 36.6)', () => {
  const subagentOfThread = (thread: ReturnType<typeof fold>) => {
    const call = entriesOf(thread, 'tool_call').find((e) => e.kind === 'tool_call' && e.title === 'Agent: the flaky test') as
      (ThreadEntry & { subagent?: string; status: string; toolCallId: string }) | undefined
    const entry = call?.subagent ? thread.keyed.get(`subagent:${call.subagent}`) : undefined
    return { call, entry: entry?.kind === 'subagent' ? entry : undefined }
  }

  it("announces subagents; a child session's updates are nested under the tool call that launched it, live, and kept with its parent", async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: session.id, text: '/subagent the flaky test' })
    for (const thread of [await threadOf(session.id), await threadAfterRestart(session.id)]) {
      const { call, entry } = subagentOfThread(thread)
      expect(call?.status).toBe('completed')
      expect(entry).toMatchObject({ title: 'the flaky test', description: 'Looks into the flaky test', state: 'idle', toolCallId: call?.toolCallId })
      // The child's own thread: its message and its tool call; none of it in the parent's.
      expect(entry?.thread.entries.map((e) => e.kind)).toEqual(['assistant', 'tool_call'])
      expect(entriesOf(thread, 'assistant').map((e) => (e as { text: string }).text)).not.toContain('Looking into the flaky test.')
      // Its report to the parent is a message of its own.
      expect(entriesOf(thread, 'session_message')).toEqual([expect.objectContaining({ text: 'the flaky test: found it' })])
    }
  })

  it("a subagent's permission request is asked through its parent (the card, the inbox) and its answer reaches the child", async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: session.id, text: '/subagent ask the flaky test' })
    const asked = await waitUntil('the permission card', async () => (await host.request('sessions.open', { id: session.id })).state.permissions?.[0])
    expect(asked.title).toBe('Check the flaky test')
    const inbox = await host.request('inbox.list', {})
    expect(JSON.stringify(inbox)).toContain('Check the flaky test')
    await host.request('sessions.respondPermission', { id: session.id, requestId: asked.requestId, optionId: 'reject' })
    await turn
    const { entry } = subagentOfThread(await threadOf(session.id))
    expect(entriesOf(entry!.thread, 'tool_call').at(-1)).toMatchObject({ title: 'Check the flaky test', status: 'rejected' })
    expect(entriesOf(await threadOf(session.id), 'session_message')).toEqual([
      expect.objectContaining({ text: 'the flaky test: found it (permission: reject)' })
    ])
  })
})

describe('a subagent is found by search (issue 36.6)', () => {
  it('finds what a subagent said, after a restart too', async () => {
    const session = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: session.id, text: '/subagent the quasar parser' })
    const found = async () => {
      const results = await host.request('search.query', { q: 'Looking into the quasar' })
      return JSON.stringify(results).includes(session.id)
    }
    await waitUntil('the subagent to be found', found)
    await host.close()
    host = await openHost(dataDir)
    await waitUntil('the subagent to be found after a restart', found)
  })
})
