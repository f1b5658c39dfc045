import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fold, hostWithProjectPerTest, openHost, scriptedAgent } from '../helpers'

/** Initialization and the session state an agent announces: modes, configuration options, models, commands, usage. */

const run = hostWithProjectPerTest('state')

async function lastText(id: string): Promise<string> {
  const thread = fold((await run.host.request('sessions.open', { id })).records)
  const assistant = thread.entries.filter((e) => e.kind === 'assistant')
  return (assistant.at(-1) as { text: string }).text
}

describe('initialization', () => {
  it('keeps what the agent announced, normalised, for the UI', async () => {
    const agent = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_NAME: 'scripty' }))
    await run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })
    const state = (await run.host.request('agents.states', {})).find((s) => s.agentId === agent.id)
    expect(state).toMatchObject({
      status: 'ready',
      protocolVersion: 1,
      agentInfo: { name: 'scripty', version: '1.0.0' },
      capabilities: { protocolVersion: 1, loadSession: true, prompt: { embeddedContext: true, image: false } },
      authMethods: []
    })
  })

  it.each([
    ['2', /answered with a newer ACP protocol version \(2\); Switchboard asked for version 1\. Set the agent to ask for protocol version 2/],
    ['3', /answered with a newer ACP protocol version \(3\); Switchboard speaks versions 1 and 2 \(it asked for 1\)\. Update Switchboard/],
    ['0', /answered with an older ACP protocol version \(0\).*Update the agent/]
  ])('refuses an agent that answers protocol version %s, and stops it', async (version, message) => {
    const agent = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_PROTOCOL_VERSION: version }))
    await expect(run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })).rejects.toThrow(message)
    const state = (await run.host.request('agents.states', {})).find((s) => s.agentId === agent.id)
    expect(state?.status).toMatch(/error|exited/)
  })
})

describe('modes, configuration options and models', () => {
  it('shows what the agent offers and changes it through the agent', async () => {
    const agent = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_SESSION_STATE: '1' }))
    const record = await run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })
    let thread = fold((await run.host.request('sessions.open', { id: record.id })).records)
    expect(thread.modes?.currentModeId).toBe('ask')
    expect(thread.modes?.availableModes.map((m) => m.id)).toEqual(['ask', 'code'])
    expect(thread.configOptions?.map((o) => [o.id, o.currentValue])).toEqual([
      ['model', 'fast'],
      ['verbose', false]
    ])
    expect(thread.models?.currentModelId).toBe('scripted-small')

    await run.host.request('sessions.setMode', { id: record.id, modeId: 'code' })
    await run.host.request('sessions.setConfigOption', { id: record.id, configId: 'model', value: 'smart' })
    await run.host.request('sessions.setConfigOption', { id: record.id, configId: 'verbose', value: true })
    await run.host.request('sessions.setModel', { id: record.id, modelId: 'scripted-large' })
    await run.host.request('sessions.prompt', { id: record.id, text: '/state\n/commands\n/usage' })
    expect(await lastText(record.id)).toBe('mode=code model=smart verbose=true legacyModel=scripted-large')

    thread = fold((await run.host.request('sessions.open', { id: record.id })).records)
    expect(thread.modes?.currentModeId).toBe('code')
    expect(thread.configOptions?.map((o) => o.currentValue)).toEqual(['smart', true])
    expect(thread.models?.currentModelId).toBe('scripted-large')
    expect(thread.commands?.map((c) => c.name)).toEqual(['review', 'test'])
    expect(thread.usage).toEqual({ used: 1200, size: 200000, cost: { amount: 0.42, currency: 'USD' } })
  })

  it("keeps each prompt response's token usage with its turn, across a restart", async () => {
    const agent = await run.host.request('agents.add', scriptedAgent(join(run.root, 'agent'), { SCRIPTED_AGENT_TURN_USAGE: '1' }))
    const record = await run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })
    await run.host.request('sessions.prompt', { id: record.id, text: 'count me' })
    await run.host.request('sessions.prompt', { id: record.id, text: 'and me too' })
    await run.host.close()
    run.host = await openHost(join(run.root, 'data'))
    const stops = fold((await run.host.request('sessions.open', { id: record.id })).records).entries.filter((e) => e.kind === 'stop')
    expect(stops.map((e) => (e.kind === 'stop' ? e.usage : undefined))).toEqual([
      { totalTokens: 1258, inputTokens: 1008, outputTokens: 250, cachedReadTokens: 800 },
      { totalTokens: 1260, inputTokens: 1010, outputTokens: 250, cachedReadTokens: 800 }
    ])
  })

  it('takes the session title from session_info_update', async () => {
    const agent = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state')))
    const record = await run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })
    await run.host.request('sessions.prompt', { id: record.id, text: '/title Fix the flaky build' })
    expect((await run.host.request('sessions.list', {}))[0].title).toBe('Fix the flaky build')
    expect((await run.host.request('sessions.list', {}))[0].titleSource).toBe('agent')
  })

  it('refuses what the agent does not offer, before asking it', async () => {
    const plain = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state')))
    const record = await run.host.request('sessions.new', { projectId: run.projectId, agentId: plain.id })
    await expect(run.host.request('sessions.setMode', { id: record.id, modeId: 'code' })).rejects.toThrow(/does not offer modes/)
    await expect(run.host.request('sessions.setModel', { id: record.id, modelId: 'x' })).rejects.toThrow(/does not offer the model 'x'/)
    await expect(run.host.request('sessions.setConfigOption', { id: record.id, configId: 'model', value: 'smart' })).rejects.toThrow(
      /has no configuration option 'model'/
    )

    const rich = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_SESSION_STATE: '1' }, 'Rich'))
    const other = await run.host.request('sessions.new', { projectId: run.projectId, agentId: rich.id })
    await expect(run.host.request('sessions.setMode', { id: other.id, modeId: 'yolo' })).rejects.toThrow(/not one this agent offers \(ask, code\)/)
    await expect(run.host.request('sessions.setConfigOption', { id: other.id, configId: 'verbose', value: 'very' })).rejects.toThrow(
      /takes a true\/false value/
    )
  })

  it('brings the state back after a restart, from the load answer', async () => {
    const agent = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_SESSION_STATE: '1' }))
    const record = await run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })
    await run.host.request('sessions.setMode', { id: record.id, modeId: 'code' })
    await run.host.close()
    run.host = await openHost(join(run.root, 'data'))
    // Read from disk, before the agent runs: the last known state.
    expect(fold((await run.host.request('sessions.open', { id: record.id })).records).modes?.currentModeId).toBe('code')
    await run.host.request('sessions.continue', { id: record.id })
    await run.host.request('sessions.prompt', { id: record.id, text: '/state' })
    // The scripted agent forgets modes across processes (its load answers 'ask'): the mode the user chose is set again.
    expect(fold((await run.host.request('sessions.open', { id: record.id })).records).modes?.currentModeId).toBe('code')
    expect(await lastText(record.id)).toContain('mode=code')
  })
})

describe('prompt content', () => {
  const pixel = Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64')

  it('sends links, images, audio and embedded files to an agent that accepts them', async () => {
    const agent = await run.host.request(
      'agents.add',
      scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_PROMPT: 'image,audio,embeddedContext' })
    )
    const record = await run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })
    await run.host.request('sessions.prompt', {
      id: record.id,
      text: '/blocks',
      attachments: [
        { type: 'resource_link', uri: 'file:///repo/src/main.ts', name: 'main.ts' },
        { type: 'image', data: pixel, mimeType: 'image/png' },
        { type: 'audio', data: pixel, mimeType: 'audio/wav' },
        { type: 'resource', uri: 'file:///repo/notes.md', text: 'hello', mimeType: 'text/markdown' }
      ]
    })
    expect(await lastText(record.id)).toBe(
      'blocks: text, resource_link(file:///repo/src/main.ts), image(image/png,4 bytes), audio(audio/wav,4 bytes), resource(file:///repo/notes.md: 5 chars)'
    )
    const user = fold((await run.host.request('sessions.open', { id: record.id })).records).entries[0] as { text: string }
    expect(user.text).toBe('/blocks\n[main.ts](file:///repo/src/main.ts)\n[image]\n[audio]\n[notes.md](file:///repo/notes.md)')
    expect((await run.host.request('sessions.list', {}))[0].title).toBe('/blocks')
  })

  it('refuses what the agent’s prompt capabilities exclude, before anything is sent', async () => {
    const agent = await run.host.request('agents.add', scriptedAgent(join(run.root, 'state'), { SCRIPTED_AGENT_PROMPT: 'none' }))
    const record = await run.host.request('sessions.new', { projectId: run.projectId, agentId: agent.id })
    await expect(
      run.host.request('sessions.prompt', { id: record.id, text: 'look', attachments: [{ type: 'image', data: pixel, mimeType: 'image/png' }] })
    ).rejects.toThrow(/does not accept images in prompts \(it does not announce promptCapabilities\.image\)/)
    await expect(
      run.host.request('sessions.prompt', { id: record.id, text: 'read', attachments: [{ type: 'resource', uri: 'file:///a', text: 'x' }] })
    ).rejects.toThrow(/does not accept embedded files/)
    await expect(run.host.request('sessions.prompt', { id: record.id, text: '  ' })).rejects.toThrow(/needs text or an attachment/)
    expect((await run.host.request('sessions.open', { id: record.id })).records.filter((r) => r.t === 'prompt')).toEqual([])
    // A link is always allowed.
    await run.host.request('sessions.prompt', {
      id: record.id,
      text: '/blocks',
      attachments: [{ type: 'resource_link', uri: 'file:///a', name: 'a' }]
    })
    expect(await lastText(record.id)).toBe('blocks: text, resource_link(file:///a)')
  })
})
