import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { WireResponse } from '../../shared/contract'
import type { AgentRuntimeState } from '../../shared/domain'
import { hostWithProjectPerTest, scriptedAgent } from '../helpers'

/**
 * The first session asked of an agent that cannot start one: the refusal
 * carries the problem in parts (what happened, what the agent said, the
 * stderr lines that explain it) and the agent's state keeps it, so no page
 * calls such an agent ready.
 */

const run = hostWithProjectPerTest('contact')

async function stateOf(agentId: string): Promise<AgentRuntimeState> {
  return (await run.host.request('agents.states', {})).find((s) => s.agentId === agentId)!
}

function failure(response: WireResponse) {
  if (response.ok) throw new Error('the session was started')
  return response.error
}

describe('an agent that cannot start a session', () => {
  it('a custom agent that crashes at start: the line that explains it is found above the stack frames', async () => {
    // Outside the repository, where no node_modules holds tsx.
    const script = join(run.root, 'agent.mjs')
    await writeFile(script, "import 'tsx'\n")
    const agent = await run.host.request('agents.add', {
      name: 'Half-built',
      transport: { kind: 'process', command: process.execPath, args: [script] }
    })
    const error = failure(await run.host.handle('sessions.new', { projectId: run.projectId, agentId: agent.id }))
    expect(error.code).toBe('agent_failed')
    expect(error.problem).toMatchObject({
      agentId: agent.id,
      kind: 'start_failed',
      summary: "Agent 'Half-built' exited during initialize with code 1.",
      found: true
    })
    expect(error.problem?.lines).toEqual([
      expect.stringMatching(/^Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package 'tsx' imported from .*agent\.mjs$/)
    ])
    // The message says it too, and no frame.
    expect(error.message).toMatch(/exited during initialize with code 1; stderr: Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package 'tsx'/)
    expect(error.message).not.toMatch(/\n\s+at /)
    const state = await stateOf(agent.id)
    expect(state.status).toBe('exited')
    expect(state.problem?.kind).toBe('start_failed')
  })

  it('a command that does not exist: not installed', async () => {
    const agent = await run.host.request('agents.add', {
      name: 'Ghost',
      transport: { kind: 'process', command: join(run.root, 'no-such-agent'), args: [] }
    })
    const error = failure(await run.host.handle('sessions.new', { projectId: run.projectId, agentId: agent.id }))
    expect(error).toMatchObject({ code: 'agent_failed', problem: { kind: 'not_installed', lines: [] } })
    expect(error.problem?.summary).toBe(
      `Ghost could not be started: its command '${join(run.root, 'no-such-agent')}' was not found on this computer.`
    )
  })

  it('an internal error from session/new: the details the agent sent, and what it wrote to stderr meanwhile; the state says failing until a session starts', async () => {
    const agent = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_NEW: 'fail' }, 'Indexer'))
    const error = failure(await run.host.handle('sessions.new', { projectId: run.projectId, agentId: agent.id }))
    expect(error.code).toBe('agent_failed')
    expect(error.problem).toMatchObject({
      kind: 'session_failed',
      summary: 'Indexer could not start a session.',
      // Not "Internal error": what the agent's data explained.
      detail: 'The workspace index could not be opened',
      lines: [`scripted-agent: open ${join(run.root, 'project')}/.index/lock: permission denied`],
      found: true
    })
    expect(error.message).not.toMatch(/^Internal error/)
    const state = await stateOf(agent.id)
    // The process runs; it cannot start a session, and the state says so.
    expect(state).toMatchObject({ status: 'ready', problem: { kind: 'session_failed', detail: 'The workspace index could not be opened' } })
    expect(state.sessionStarted).toBeUndefined()

    // Fixed: the same agent without the failure starts a session, and the problem is gone.
    await run.host.request('agents.update', { agentId: agent.id, ...scriptedAgent(join(run.root, 'state'), {}, 'Indexer') })
    await run.host.request('agents.restart', { agentId: agent.id })
    expect((await stateOf(agent.id)).problem).toBeUndefined()
    expect((await stateOf(agent.id)).sessionStarted).toBeUndefined()
    await run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })
    expect(await stateOf(agent.id)).toMatchObject({ status: 'ready', sessionStarted: true })
  })
})
