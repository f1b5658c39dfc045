import { writeFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { PendingPermission } from '../../shared/domain'
import { checkReportMarkdown } from '../../shared/registry'
import { codexAdapter, requireCodexAdapter } from '../real/codex'
import { startFakeAnthropic } from '../real/fake-anthropic'
import { entriesOf, fold, openHost, processesWithEnv, removeDir, tempDir } from '../helpers'

/**
 * Interop with ACP agents nobody here wrote, installed from npm, offline and
 * without credentials, as a new user would meet them (HOME an empty folder):
 * what they announce, how they refuse, and that nothing of theirs outlives the
 * host. The SDK 1.x example agent runs a whole turn with a permission request.
 */

const modules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules')

let root: string
let home: string
let host: Host
let projectId: string

beforeEach(async () => {
  root = await tempDir('real')
  home = join(root, 'home')
  await mkdir(home)
  await mkdir(join(root, 'project'))
  host = await openHost(join(root, 'data'))
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
})

afterEach(async () => {
  await host.close()
  // Everything the agent started had HOME set to our folder: none of it may remain.
  expect(processesWithEnv(`HOME=${home}`)).toEqual([])
  await removeDir(root)
})

async function addAgent(name: string, command: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const agent = await host.request('agents.add', {
    name,
    transport: { kind: 'process', command, args, env: { HOME: home, USERPROFILE: home, ...env } }
  })
  return agent.id
}

async function stateOf(agentId: string) {
  return (await host.request('agents.states', {})).find((s) => s.agentId === agentId)!
}

describe('real ACP agents from npm, offline', () => {
  it('Claude Code (claude-agent-acp): announces v1 capabilities, and a refusal says why', async () => {
    const agentId = await addAgent('Claude Code', process.execPath, [join(modules, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js')])
    const result = await host.handle('sessions.new', { projectId, agentId })
    const state = await stateOf(agentId)
    expect(state.agentInfo).toMatchObject({ name: '@agentclientprotocol/claude-agent-acp', title: 'Claude Agent' })
    expect(state.capabilities).toMatchObject({
      protocolVersion: 1,
      loadSession: true,
      prompt: { image: true, embeddedContext: true },
      mcp: { stdio: true, http: true, sse: true },
      session: { list: true, resume: true, close: true, fork: true, additionalDirectories: true }
    })
    if (!result.ok) {
      // Without network or credentials it cannot start Claude Code; the message must carry the agent's details.
      expect(result.error.message).not.toBe('Internal error')
      expect(result.error.message.length).toBeGreaterThan(20)
    }
    const listed = await host.handle('sessions.import', { projectId, agentId })
    expect(listed.ok ? (listed.result as { imported: unknown[] }).imported : []).toEqual([])

    // Switchboard announces auth.terminal, so the adapter offers its terminal logins; one runs in a real
    // pseudo-terminal and asks for the code from the browser page (it cannot finish offline: stopped here).
    expect(state.authMethods).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'claude-ai-login', type: 'terminal', args: ['--cli', 'auth', 'login', '--claudeai'] })])
    )
    let output = ''
    let exited = false
    const unsubscribe = host.events.subscribe((events) => {
      for (const event of events) {
        if (event.type === 'agent.login.output') output += event.payload.data
        if (event.type === 'agent.login.exit') exited = true
      }
    })
    const login = await host.request('agents.login.start', { agentId, methodId: 'claude-ai-login' })
    expect(login.command).toMatch(/claude-agent-acp.*--cli auth login --claudeai$/)
    await expect.poll(() => output, { timeout: 20_000 }).toMatch(/Paste code here/)
    expect(output).toMatch(/https:\/\/\S*oauth/)
    await host.request('agents.login.stop', { loginId: login.loginId })
    await expect.poll(() => exited).toBe(true)
    unsubscribe()
  })

  it('Codex (codex-acp 2.x, its Codex app-server): auth_required with an API key and a ChatGPT sign-in', async () => {
    requireCodexAdapter()
    const agentId = await addAgent('Codex', process.execPath, [codexAdapter])
    const result = await host.handle('sessions.new', { projectId, agentId })
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'auth_required', message: expect.stringMatching(/^Codex needs you to sign in first/) }
    })
    const state = await stateOf(agentId)
    expect(state.agentInfo).toMatchObject({ name: '@agentclientprotocol/codex-acp', title: 'Codex' })
    expect(state.capabilities).toMatchObject({
      loadSession: true,
      mcp: { http: true, sse: false },
      session: { list: true, resume: true, close: true, fork: true },
      auth: { logout: true }
    })
    expect(state.authMethods).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'api-key', type: 'agent', apiKey: { provider: 'openai' } }),
        expect.objectContaining({ id: 'chat-gpt', type: 'agent' })
      ])
    )
  })

  it('Codex: the API key typed into its sign-in signs it in (codex-acp 2.x reads it as {apiKey})', async () => {
    requireCodexAdapter()
    const agentId = await addAgent('Codex', process.execPath, [codexAdapter])
    expect(await host.handle('sessions.new', { projectId, agentId })).toMatchObject({ ok: false, error: { code: 'auth_required' } })
    await host.request('agents.authenticate', { agentId, methodId: 'api-key', values: { 'api-key': 'sk-test-key' } })
    const result = await host.handle('sessions.new', { projectId, agentId })
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true })
  })

  it('Gemini CLI (--acp, no relaunch): announces load only and refuses a session without a key', async () => {
    const agentId = await addAgent('Gemini CLI', process.execPath, [join(modules, '@google', 'gemini-cli', 'bundle', 'gemini.js'), '--acp'], {
      GEMINI_CLI_NO_RELAUNCH: 'true'
    })
    const result = await host.handle('sessions.new', { projectId, agentId })
    expect(result).toMatchObject({ ok: false, error: { message: expect.stringMatching(/API key/i) } })
    const state = await stateOf(agentId)
    expect(state.agentInfo).toMatchObject({ name: 'gemini-cli' })
    expect(state.capabilities).toMatchObject({
      loadSession: true,
      session: { list: false, resume: false, close: false, delete: false, fork: false }
    })
    expect(state.authMethods?.map((m) => m.id)).toContain('gemini-api-key')
    await expect(host.request('sessions.import', { projectId, agentId })).rejects.toThrow(/cannot list its sessions/)
  })

  it('the SDK 1.x example agent: a whole turn with streaming, tool calls and a permission request', async () => {
    const agentId = await addAgent('SDK example', process.execPath, [join(modules, 'acp-sdk-v1', 'dist', 'examples', 'agent.js')])
    const record = await host.request('sessions.new', { projectId, agentId })
    const turn = host.request('sessions.prompt', { id: record.id, text: 'Improve the config' })
    let permission: PendingPermission | null | undefined
    await expect
      .poll(async () => (permission = (await host.request('sessions.open', { id: record.id })).state.permissions?.[0]), { timeout: 20_000 })
      .toBeTruthy()
    const allow = permission!.options.find((o) => o.kind.startsWith('allow'))!
    await host.request('sessions.respondPermission', { id: record.id, requestId: permission!.requestId, optionId: allow.optionId })
    expect((await turn).stopReason).toBe('end_turn')
    const thread = fold((await host.request('sessions.open', { id: record.id })).records)
    expect(entriesOf(thread, 'tool_call').map((e) => (e as { title: string }).title)).toContain('Reading project files')
    expect(entriesOf(thread, 'permission')).toMatchObject([{ allowed: true }])
    expect(entriesOf(thread, 'unsupported')).toEqual([])
    expect((await stateOf(agentId)).capabilities?.loadSession).toBe(false)
  }, 60_000)
})

/**
 * The Check action on the three presets, offline and signed out, as a new user
 * would run it: what each announces, and what each answers. The reports are
 * written to test-results/agent-checks/ as markdown (the closing notes quote them).
 */
describe('the capability check of the three presets, offline', () => {
  async function checked(agentId: string, file: string) {
    const report = await host.request('agents.check', { agentId })
    const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test-results', 'agent-checks')
    await mkdir(dir, { recursive: true })
    writeFileSync(join(dir, `${file}.md`), checkReportMarkdown(report))
    return (id: string) => report.lines.find((l) => l.id === id)!
  }

  it('Claude Code: announces every session method; offline, signed out, its session cannot start', async () => {
    const agentId = await addAgent('Claude Code', process.execPath, [join(modules, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js')])
    const line = await checked(agentId, 'claude-code')
    expect(line('initialize')).toMatchObject({ outcome: 'worked', detail: expect.stringContaining('agent Claude Agent') })
    for (const id of ['session/list', 'session/resume', 'session/load', 'session/fork', 'session/close']) expect(line(id).announced, id).toBe(true)
    expect(line('authMethods').detail).toContain('(terminal)')
    // Whatever happens offline is said with the agent's own words, never "Internal error" alone.
    expect(line('session/new').detail).not.toBe('Internal error (-32603)')
  })

  it('Claude Code with an API key (a local fake of the API, no prompt sent): what its session methods answer', async () => {
    const api = await startFakeAnthropic()
    try {
      const agentId = await addAgent(
        'Claude Code',
        process.execPath,
        [join(modules, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js')],
        {
          ANTHROPIC_BASE_URL: api.url,
          ANTHROPIC_API_KEY: 'sk-ant-fake',
          IS_SANDBOX: '1',
          DISABLE_AUTOUPDATER: '1'
        }
      )
      const line = await checked(agentId, 'claude-code-with-key')
      expect(line('session/new')).toMatchObject({ outcome: 'worked' })
      for (const id of ['session/list', 'session/resume', 'session/load', 'session/close']) {
        expect(line(id), id).toMatchObject({ announced: true, outcome: 'worked' })
      }
      // A session nothing was said in has no history on disk yet: Claude Code announces fork and delete,
      // but cannot find such a session for them; the report says it needs history (a session with a turn forks), not that it failed.
      expect(line('session/fork')).toMatchObject({
        announced: true,
        outcome: 'needs history',
        detail: expect.stringMatching(/^works on a conversation with history.*\(-32002\)/)
      })
      expect(line('modes')).toMatchObject({ outcome: 'worked' })
      expect(line('configOptions').detail).toContain('Model =')
    } finally {
      await api.close()
    }
  })

  it('Codex: session/new needs sign-in, logout announced', async () => {
    requireCodexAdapter()
    const agentId = await addAgent('Codex', process.execPath, [codexAdapter])
    const line = await checked(agentId, 'codex')
    expect(line('session/new')).toMatchObject({ outcome: 'needs sign-in' })
    expect(line('session/list')).toMatchObject({ announced: true, outcome: 'not tried' })
    expect(line('logout')).toMatchObject({ announced: true, outcome: 'not tried' })
  })

  it('Gemini CLI: announces load only; without a key session/new is refused', async () => {
    const agentId = await addAgent('Gemini CLI', process.execPath, [join(modules, '@google', 'gemini-cli', 'bundle', 'gemini.js'), '--acp'], {
      GEMINI_CLI_NO_RELAUNCH: 'true'
    })
    const line = await checked(agentId, 'gemini-cli')
    expect(line('session/load')).toMatchObject({ announced: true })
    for (const id of ['session/list', 'session/resume', 'session/fork', 'session/close']) expect(line(id).announced, id).toBe(false)
    expect(['needs sign-in', 'failed']).toContain(line('session/new').outcome)
    expect(line('session/new').detail).toMatch(/API key|auth/i)
  })
})
