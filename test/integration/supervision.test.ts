import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Host } from '../../electron/host/host'
import { LinkRun } from '../../electron/host/connection/link-run'
import { HandOffSeeds } from '../../electron/host/sessions/hand-off-seeds'
import { confirmEverything, entriesOf, fold, processesWithEnv, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/** Agents start when needed and stop when idle, where nothing is lost by it. */

let root: string
let host: Host
let projectId: string

beforeEach(async () => {
  root = await tempDir('supervision')
  await mkdir(join(root, 'project'))
  host = await Host.open({ dataDir: join(root, 'data'), version: 'test', confirmCommand: confirmEverything, presets: [], agentIdleMs: 300 })
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function agentStatus(agentId: string): Promise<string | undefined> {
  return (await host.request('agents.states', {})).find((s) => s.agentId === agentId)?.status
}

describe('idle agents', () => {
  it('stops an idle agent whose sessions can be loaded again, and brings it back on the next prompt', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: 'first' })
    await expect.poll(() => agentStatus(agent.id)).toBe('stopped')
    expect((await host.request('sessions.open', { id: record.id })).state).toMatchObject({ status: 'idle' })

    expect((await host.request('sessions.prompt', { id: record.id, text: 'second' })).stopReason).toBe('end_turn')
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'user').map((e) => (e as { text: string }).text)).toEqual(['first', 'second'])
  })

  it('does not stop an agent under a prompt still being prepared, however long that takes', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    // The prompt's preparation (here its hand-off seed read, for an SSH agent the mentions checked over the network)
    // outlasts the idle limit: the sweep runs (every 150 ms) while the session has no turn yet.
    const seeds = HandOffSeeds.prototype.blocksFor
    const held = vi.spyOn(HandOffSeeds.prototype, 'blocksFor').mockImplementationOnce(async function (this: HandOffSeeds, ...args) {
      await new Promise((r) => setTimeout(r, 900))
      return seeds.apply(this, args)
    })
    try {
      expect((await host.request('sessions.prompt', { id: record.id, text: 'first' })).stopReason).toBe('end_turn')
      expect(held).toHaveBeenCalledTimes(1)
    } finally {
      held.mockRestore()
    }
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'user').map((e) => (e as { text: string }).text)).toEqual(['first'])
  })

  it('a prompt sent while its idle agent is being stopped goes to the agent started again, not to the one ending', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    // The idle stop has begun (the agent's stdin closed) and the agent has not ended yet when the prompt comes.
    const stop = LinkRun.prototype.stop
    let begun!: () => void
    const stopBegun = new Promise<void>((resolve) => (begun = resolve))
    const stopping = vi.spyOn(LinkRun.prototype, 'stop').mockImplementationOnce(function (this: LinkRun) {
      const stopped = stop.call(this)
      begun()
      return stopped
    })
    try {
      await stopBegun
      expect((await host.request('sessions.prompt', { id: record.id, text: 'first' })).stopReason).toBe('end_turn')
    } finally {
      stopping.mockRestore()
    }
    expect(await agentStatus(agent.id)).toBe('ready')
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'user').map((e) => (e as { text: string }).text)).toEqual(['first'])
  })

  it('keeps an agent running while a turn runs, and one whose sessions could not come back', async () => {
    const forgetful = await host.request('agents.add', scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_LOAD: '0' }, 'Forgetful'))
    await host.request('sessions.new', { projectId, agentId: forgetful.id })
    const busy = await host.request('agents.add', scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_CHUNK_DELAY_MS: '0' }, 'Busy'))
    const record = await host.request('sessions.new', { projectId, agentId: busy.id })
    const turn = host.request('sessions.prompt', { id: record.id, text: '/sleep 1500\n/say done' })
    await new Promise((r) => setTimeout(r, 1000))
    expect(await agentStatus(busy.id)).toBe('ready')
    expect(await agentStatus(forgetful.id)).toBe('ready')
    expect((await turn).stopReason).toBe('end_turn')
  })
})

describe('an agent Switchboard stops, and one that stops on its own', () => {
  it('a turn Switchboard interrupts (the agent restarted, the app closing) is said as such: no "exited", the session idle', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    const turn = host.request('sessions.prompt', { id: record.id, text: '/stream 2\n/sleep 60000' }).then(
      () => 'finished',
      (error: Error) => error.message
    )
    await expect.poll(async () => (await host.request('sessions.states', {})).find((s) => s.id === record.id)?.status).toBe('running')
    await host.request('agents.restart', { agentId: agent.id })
    expect(await turn).toBe('The turn was interrupted: Switchboard stopped Scripted')

    const { records, state } = await host.request('sessions.open', { id: record.id })
    const thread = fold(records)
    expect(entriesOf(thread, 'error')).toEqual([])
    expect(entriesOf(thread, 'stop')).toMatchObject([{ stopReason: 'cancelled', bySwitchboard: true }])
    expect(JSON.stringify(records)).not.toContain('exited')
    expect(state).toMatchObject({ status: 'idle' })
    expect(state.error).toBeUndefined()
  })

  it('an agent still starting when Switchboard closes is stopped at once: close does not wait out its start', async () => {
    // A start that would be waited for ten minutes: on the old supervisor close waited for it, past this test's limit.
    await host.close()
    host = await Host.open({
      dataDir: join(root, 'data'),
      version: 'test',
      confirmCommand: confirmEverything,
      presets: [],
      initializeTimeoutMs: 600_000
    })
    const mark = `closing-start-${Date.now()}`
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_INIT: 'hang', SWITCHBOARD_TEST_MARK: mark }))
    const started = host.request('sessions.new', { projectId, agentId: agent.id }).then(
      () => 'started',
      (error: Error) => error.message
    )
    await waitUntil('the agent to run', () => processesWithEnv(`SWITCHBOARD_TEST_MARK=${mark}`).length > 0)
    await host.close()
    expect(processesWithEnv(`SWITCHBOARD_TEST_MARK=${mark}`)).toEqual([])
    expect(await started).not.toBe('started')
  }, 60_000)

  it('an agent that exits on its own mid-turn says so, with its last stderr line, in the thread', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    // The prompt fails saying so (its words also tell what went wrong, should the thread below not say it).
    const failure = await host.request('sessions.prompt', { id: record.id, text: '/stderr disk quota exceeded\n/exit 0' }).then(
      () => 'finished',
      (error: Error) => error.message
    )
    expect(failure).toMatch(/^Agent 'Scripted' exited with code 0; stderr: .*exiting with 0 mid-turn/s)
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect((entriesOf(thread, 'error') as { message: string }[]).map((e) => e.message)).toEqual([
      expect.stringMatching(/^Agent 'Scripted' exited with code 0; stderr: .*exiting with 0 mid-turn/s)
    ])
    expect(entriesOf(thread, 'stop')).toEqual([])
  })
})
