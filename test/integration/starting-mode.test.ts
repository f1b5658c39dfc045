import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fold, hostWithProjectPerTest, openHost, scriptedAgent } from '../helpers'

/**
 * The mode a session starts in (shared/modes.ts, electron/host/sessions/starting-mode.ts), with the
 * scripted agent announcing Claude Code 0.101's modes and starting, as it does, in `auto`.
 */

const CLAUDE_LIKE = 'auto:default,acceptEdits,plan,auto,bypassPermissions'

const run = hostWithProjectPerTest('starting-mode')

async function addAgent(modes = CLAUDE_LIKE): Promise<string> {
  return (
    await run.host.request('agents.add', scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_SESSION_STATE: '1', SCRIPTED_AGENT_MODES: modes }))
  ).id
}

/** The mode as the thread shows it, and as the agent itself reports it (its `/state` reply). */
async function modeOf(id: string): Promise<{ shown: string | undefined; agent: string | undefined }> {
  await run.host.request('sessions.prompt', { id, text: '/state' })
  const thread = fold((await run.host.request('sessions.open', { id })).records)
  const last = thread.entries.filter((e) => e.kind === 'assistant').at(-1) as { text: string } | undefined
  return { shown: thread.modes?.currentModeId, agent: /mode=(\S+)/.exec(last?.text ?? '')?.[1] }
}

describe('the mode a session starts in', () => {
  it("is the agent's mode that asks, not the 'auto' it starts in", async () => {
    const agentId = await addAgent()
    const { id } = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    expect(await modeOf(id)).toEqual({ shown: 'default', agent: 'default' })
  })

  it('leaves an agent that starts in a mode that asks (or one not known to skip) as it is', async () => {
    const agentId = await addAgent('ask:ask,code')
    const { id } = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    expect(await modeOf(id)).toEqual({ shown: 'ask', agent: 'ask' })
  })

  it("is the agent's chosen starting mode, overridden per project; a skipping one needs one confirmation per agent", async () => {
    const agentId = await addAgent()
    const refused = await run.host.handle('agents.setStartingMode', { agentId, modeId: 'acceptEdits' })
    expect(refused).toMatchObject({
      ok: false,
      error: { code: 'skip_permissions_unconfirmed', message: expect.stringContaining('edits without asking') }
    })
    expect((await run.host.request('agents.list', {})).find((a) => a.id === agentId)).not.toHaveProperty('startingMode')

    expect(await run.host.request('agents.setStartingMode', { agentId, modeId: 'acceptEdits', confirmSkip: true })).toMatchObject({
      startingMode: 'acceptEdits',
      skipPermissionsConfirmed: true
    })
    const first = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    expect(await modeOf(first.id)).toEqual({ shown: 'acceptEdits', agent: 'acceptEdits' })

    // The project's choice wins over the agent's; confirmed once, another skipping mode is not asked again.
    await run.host.request('projects.setStartingMode', { projectId: run.projectId, agentId, modeId: 'plan' })
    const second = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    expect(await modeOf(second.id)).toEqual({ shown: 'plan', agent: 'plan' })
    await run.host.request('sessions.setMode', { id: second.id, modeId: 'bypassPermissions' })
    expect(await modeOf(second.id)).toEqual({ shown: 'bypassPermissions', agent: 'bypassPermissions' })

    // Back to the agent's own choice.
    await run.host.request('projects.setStartingMode', { projectId: run.projectId, agentId, modeId: null })
    expect((await run.host.request('projects.list', {})).find((p) => p.id === run.projectId)).not.toHaveProperty('startingModes')
    await run.host.request('agents.setStartingMode', { agentId, modeId: null })
    const third = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    expect(await modeOf(third.id)).toEqual({ shown: 'default', agent: 'default' })
  })

  it('refuses a mode that skips permissions in a session until the user confirms it for the agent, changing nothing', async () => {
    const agentId = await addAgent()
    const { id } = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    const refused = await run.host.handle('sessions.setMode', { id, modeId: 'bypassPermissions' })
    expect(refused).toMatchObject({
      ok: false,
      error: { code: 'skip_permissions_unconfirmed', message: expect.stringContaining('acts without asking') }
    })
    expect(await modeOf(id)).toEqual({ shown: 'default', agent: 'default' })
    const stateOf = async () => (await run.host.request('sessions.states', {})).find((s) => s.id === id)
    expect((await stateOf())?.modeSkips).toBeUndefined()
    await run.host.request('sessions.setMode', { id, modeId: 'bypassPermissions', confirmSkip: true })
    expect(await modeOf(id)).toEqual({ shown: 'bypassPermissions', agent: 'bypassPermissions' })
    // The session's state marks it (the sidebar shows it), until the mode asks again.
    expect((await stateOf())?.modeSkips).toEqual({ mode: 'bypassPermissions', skip: 'all' })
    await run.host.request('sessions.setMode', { id, modeId: 'acceptEdits' })
    expect((await stateOf())?.modeSkips).toEqual({ mode: 'acceptEdits', skip: 'edits' })
    await run.host.request('sessions.setMode', { id, modeId: 'default' })
    expect((await stateOf())?.modeSkips).toBeUndefined()
    expect((await run.host.request('agents.list', {})).find((a) => a.id === agentId)?.skipPermissionsConfirmed).toBe(true)
  })

  it('is set again when the session is reopened: the asking mode, or the one the user chose for it', async () => {
    const agentId = await addAgent()
    const asking = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    const chosen = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    await run.host.request('sessions.setMode', { id: chosen.id, modeId: 'plan' })
    await run.host.close()
    run.host = await openHost(join(run.root, 'data'))
    // The scripted agent forgets modes across processes: each reopened session starts in `auto` again.
    await run.host.request('sessions.continue', { id: asking.id })
    expect(await modeOf(asking.id)).toEqual({ shown: 'default', agent: 'default' })
    await run.host.request('sessions.continue', { id: chosen.id })
    expect(await modeOf(chosen.id)).toEqual({ shown: 'plan', agent: 'plan' })
  })
})
