import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fold, hostWithProjectPerTest, openHost, readDbJson, recordEvents, scriptedAgent } from '../helpers'

/**
 * Session presets (shared/presets.ts, electron/host/session-presets/) and the client's system prompt:
 * a preset starts the scripted agent with its mode, model, options and system prompt; an agent that does
 * not announce sessionCapabilities.systemPrompt gets none, and the session says why; what an agent does not
 * offer is named in the session, which still opens; presets are kept in db.json.
 */

const run = hostWithProjectPerTest('presets')

async function addAgent(env: Record<string, string>, name = 'Scripted'): Promise<string> {
  return (await run.host.request('agents.add', scriptedAgent(join(run.root, `state-${name}`), { SCRIPTED_AGENT_SESSION_STATE: '1', ...env }, name)))
    .id
}

/** The agent's last reply to `text`. */
async function ask(id: string, text: string): Promise<string> {
  await run.host.request('sessions.prompt', { id, text })
  const thread = fold((await run.host.request('sessions.open', { id })).records)
  return (thread.entries.filter((e) => e.kind === 'assistant').at(-1) as { text: string } | undefined)?.text ?? ''
}

async function errorsOf(id: string): Promise<string[]> {
  const thread = fold((await run.host.request('sessions.open', { id })).records)
  return thread.entries.filter((e) => e.kind === 'error').map((e) => (e as { message: string }).message)
}

describe('session presets', () => {
  it('start the agent with their mode, model, options and system prompt (after the project’s)', async () => {
    const agentId = await addAgent({ SCRIPTED_AGENT_SYSTEM_PROMPT: '1' })
    await run.host.request('projects.setSystemPrompt', { projectId: run.projectId, systemPrompt: 'This project is written in Rust.' })
    const preset = await run.host.request('presets.add', {
      name: 'Careful reviewer',
      agentId,
      modeId: 'code',
      model: 'smart',
      configOptions: { verbose: true },
      systemPrompt: 'Review; never push.'
    })
    const record = await run.host.request('presets.start', { presetId: preset.id, projectId: run.projectId })
    expect(record).toMatchObject({ agentId, preset: { id: preset.id, name: 'Careful reviewer' }, chosenMode: 'code' })
    expect(record.systemPrompt).toBe('This project is written in Rust.\n\nReview; never push.')
    expect(record).not.toHaveProperty('systemPromptLeftOut')

    expect(await ask(record.id, '/state')).toBe('mode=code model=smart verbose=true legacyModel=scripted-small')
    const sent = JSON.parse((await ask(record.id, '/system')).replace(/^systemPrompt=/, '')) as unknown
    expect(sent).toEqual({ mode: 'append', content: [{ type: 'text', text: 'This project is written in Rust.\n\nReview; never push.' }] })
    expect(await errorsOf(record.id)).toEqual([])

    // A plain new session of the same project gets the project's prompt alone.
    const plain = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    expect(plain.systemPrompt).toBe('This project is written in Rust.')
    expect(await ask(plain.id, '/system')).toContain('"text":"This project is written in Rust."')
  })

  it('send the same system prompt again when the session is reopened', async () => {
    const agentId = await addAgent({ SCRIPTED_AGENT_SYSTEM_PROMPT: '1' })
    const preset = await run.host.request('presets.add', { name: 'Terse', agentId, systemPrompt: 'Answer in one line.' })
    const record = await run.host.request('presets.start', { presetId: preset.id, projectId: run.projectId })
    await run.host.request('agents.restart', { agentId })
    await run.host.request('sessions.continue', { id: record.id })
    expect(await ask(record.id, '/system')).toContain('"text":"Answer in one line."')
  })

  it('send no system prompt to an agent that does not announce it, and the session says why', async () => {
    const agentId = await addAgent({}, 'Plain')
    const preset = await run.host.request('presets.add', { name: 'Terse', agentId, systemPrompt: 'Answer in one line.' })
    const record = await run.host.request('presets.start', { presetId: preset.id, projectId: run.projectId })
    expect(record).not.toHaveProperty('systemPrompt')
    expect(record.systemPromptLeftOut).toMatch(
      /Plain does not take a system prompt from Switchboard \(it does not announce sessionCapabilities\.systemPrompt\)/
    )
    // The agent was sent none (it fails any session request that carries one): the session opened, and /system says so.
    expect(await ask(record.id, '/system')).toBe('systemPrompt: none')
  })

  it('open the session when the agent does not offer a setting, and say which did not apply', async () => {
    const agentId = await addAgent({})
    const preset = await run.host.request('presets.add', {
      name: 'Too much',
      agentId,
      modeId: 'architect',
      model: 'huge',
      configOptions: { verbose: true, effort: 'high' }
    })
    const record = await run.host.request('presets.start', { presetId: preset.id, projectId: run.projectId })
    expect(await ask(record.id, '/state')).toBe('mode=ask model=fast verbose=true legacyModel=scripted-small')
    const [error, ...more] = await errorsOf(record.id)
    expect(more).toEqual([])
    expect(error).toContain("The preset 'Too much' did not apply everything")
    expect(error).toContain("mode 'architect': Scripted does not offer it (it offers 'ask', 'code')")
    expect(error).toContain("model 'huge': not offered (it offers 'fast', 'smart')")
    expect(error).toContain("option 'effort' = high: Scripted has no such option for this session")
    expect(error).not.toContain('verbose')
  })

  it('give their MCP servers besides the project’s, also when the session is reopened', async () => {
    const agentId = await addAgent({ SCRIPTED_AGENT_MCP: 'http' })
    await mkdir(join(run.root, 'other'))
    const other = await run.host.request('projects.add', { cwd: join(run.root, 'other') })
    await run.host.request('mcp.save', { name: 'everywhere', transport: 'http', url: 'https://a.example/mcp' })
    const elsewhere = await run.host.request('mcp.save', {
      name: 'docs',
      transport: 'http',
      url: 'https://b.example/mcp',
      scope: 'projects',
      projectIds: [other.id]
    })
    const plain = await run.host.request('sessions.new', { projectId: run.projectId, agentId })
    expect(plain.mcpServers?.map((s) => s.name)).toEqual(['everywhere'])
    const preset = await run.host.request('presets.add', { name: 'With docs', agentId, mcpProfileIds: [elsewhere.id] })
    const record = await run.host.request('presets.start', { presetId: preset.id, projectId: run.projectId })
    expect(record.mcpServers?.map((s) => s.name)).toEqual(['everywhere', 'docs'])
    await run.host.request('agents.restart', { agentId })
    await run.host.request('sessions.continue', { id: record.id })
    expect(await ask(record.id, '/mcp')).toContain('"name":"docs"')
  })

  it('are checked, listed, changed and removed, and announced to every window', async () => {
    const agentId = await addAgent({ SCRIPTED_AGENT_MODES: 'ask:ask,acceptEdits' })
    const events = recordEvents(run.host)
    expect(await run.host.handle('presets.add', { name: ' ', agentId })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('A preset needs a name') }
    })
    expect(await run.host.handle('presets.add', { name: 'X', agentId: 'nobody' })).toMatchObject({
      ok: false,
      error: { message: "No agent with id 'nobody'" }
    })
    expect(await run.host.handle('presets.add', { name: 'X', agentId, mcpProfileIds: ['gone'] })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining("No MCP server with id 'gone'") }
    })
    // A mode that lets the agent edit without asking is confirmed once per agent, as a starting mode is.
    expect(await run.host.handle('presets.add', { name: 'Fast', agentId, modeId: 'acceptEdits' })).toMatchObject({
      ok: false,
      error: { code: 'skip_permissions_unconfirmed' }
    })
    const fast = await run.host.request('presets.add', { name: 'Fast', agentId, modeId: 'acceptEdits', confirmSkip: true, isolation: 'worktree' })
    expect(await run.host.handle('presets.add', { name: 'fast', agentId })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('already exists') }
    })
    const updated = await run.host.request('presets.update', { presetId: fast.id, name: 'Quick', agentId, isolation: 'folder' })
    expect(updated).toMatchObject({ id: fast.id, name: 'Quick', isolation: 'folder', createdAt: fast.createdAt })
    expect(updated).not.toHaveProperty('modeId')
    expect(await run.host.request('presets.list', {})).toEqual([updated])
    await run.host.request('presets.remove', { presetId: fast.id })
    expect(await run.host.request('presets.list', {})).toEqual([])
    run.host.events.flush()
    const announced = events.flatMap((e) => (e.type === 'presets.changed' ? [e.payload.map((p) => p.name)] : []))
    expect(announced).toEqual([['Fast'], ['Quick'], []])
    expect(await run.host.handle('presets.start', { presetId: fast.id, projectId: run.projectId })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('No preset') }
    })
  })
})

describe('presets in db.json', () => {
  it('are kept across a restart, with the project’s system prompt and the sessions started from them', async () => {
    const agentId = await addAgent({})
    const preset = await run.host.request('presets.add', {
      name: 'Keep me',
      agentId,
      model: 'smart',
      configOptions: { verbose: true },
      systemPrompt: 'Hi'
    })
    await run.host.request('projects.setSystemPrompt', { projectId: run.projectId, systemPrompt: 'Rust' })
    // A session makes db.json take its three-line layout (db-file.ts): the presets are on its first line.
    const started = await run.host.request('presets.start', { presetId: preset.id, projectId: run.projectId })
    await run.host.close()
    expect(await readDbJson(join(run.root, 'data'))).toMatchObject({ presets: [preset], projects: [{ systemPrompt: 'Rust' }] })
    run.host = await openHost(join(run.root, 'data'))
    expect(await run.host.request('presets.list', {})).toEqual([preset])
    expect((await run.host.request('projects.list', {}))[0]).toMatchObject({ systemPrompt: 'Rust' })
    const [kept] = await run.host.request('sessions.get', { ids: [started.id] })
    expect(kept).toMatchObject({ preset: { id: preset.id, name: 'Keep me' }, systemPromptLeftOut: expect.stringContaining('Scripted does not take') })
  })

  it('an old db.json without presets opens with none, and a preset added is kept', async () => {
    await run.host.close()
    const file = join(run.root, 'data', 'db.json')
    const old = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    delete old.presets
    await writeFile(file, JSON.stringify(old))
    run.host = await openHost(join(run.root, 'data'))
    expect(await run.host.request('presets.list', {})).toEqual([])
    expect((await run.host.request('app.info', {})).warnings).toEqual([])
    const agentId = await addAgent({})
    const preset = await run.host.request('presets.add', { name: 'New', agentId })
    await run.host.close()
    run.host = await openHost(join(run.root, 'data'))
    expect(await run.host.request('presets.list', {})).toEqual([preset])
  })
})
