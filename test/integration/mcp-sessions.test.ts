import { existsSync } from 'node:fs'
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { DB_VERSION } from '../../electron/host/storage/store'
import type { McpProfileInput } from '../../shared/mcp'
import { entriesOf, fold, openHost, recordEvents, removeDir, scriptedAgent, tempDir } from '../helpers'
import { startTinyHttpServer, tinyServerCommand } from '../mcp/tiny-server'

/**
 * MCP profiles reaching agents: the exact `mcpServers` the scripted agent
 * receives on session/new, load and fork (it writes each to
 * mcp-received.jsonl), filtered by what it announces, recorded on the session.
 */

let root: string
let dataDir: string
let stateDir: string
let binDir: string
let projectDir: string
let host: Host
let projectId: string

beforeEach(async () => {
  root = await tempDir('mcp-sessions')
  dataDir = join(root, 'data')
  stateDir = join(root, 'agent-state')
  binDir = join(root, 'bin')
  projectDir = join(root, 'project')
  await mkdir(projectDir)
  await mkdir(binDir)
  // An executable only this PATH knows, to see the command resolved to an absolute path.
  await writeFile(join(binDir, 'files-mcp'), '#!/bin/sh\nexit 0\n')
  await chmod(join(binDir, 'files-mcp'), 0o755)
  host = await openHost(dataDir)
  projectId = (await host.request('projects.add', { cwd: projectDir })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

interface Received {
  method: string
  sessionId: string
  mcpServers: unknown[]
}

async function received(): Promise<Received[]> {
  const file = join(stateDir, 'mcp-received.jsonl')
  if (!existsSync(file)) return []
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Received)
}

function agentWith(env: Record<string, string> = {}, name = 'Scripted') {
  return host.request('agents.add', scriptedAgent(stateDir, env, name))
}

function save(input: McpProfileInput) {
  return host.request('mcp.save', input)
}

const stdioProfile: McpProfileInput = {
  name: 'files',
  transport: 'stdio',
  command: 'files-mcp',
  args: ['--root', '/srv'],
  env: [] // PATH set per test
}

describe('the mcpServers an agent receives', () => {
  it('stdio with an absolute command and an env array, http with headers; SSE left out where not announced, with why', async () => {
    const files = await save({
      ...stdioProfile,
      env: [
        { name: 'PATH', value: binDir },
        { name: 'FILES_TOKEN', value: 'tok-123', secret: true }
      ]
    })
    const remote = await save({
      name: 'remote',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: [{ name: 'Authorization', value: 'Bearer xyz', secret: true }]
    })
    const legacy = await save({ name: 'legacy', transport: 'sse', url: 'http://127.0.0.1:9/sse', headers: [] })

    const httpOnly = await agentWith({ SCRIPTED_AGENT_MCP: 'http' }, 'HTTP agent')
    const session = await host.request('sessions.new', { projectId, agentId: httpOnly.id })
    const [first] = await received()
    expect(first).toEqual({
      method: 'session/new',
      sessionId: session.acpSessionId,
      mcpServers: [
        {
          name: 'files',
          command: join(binDir, 'files-mcp'),
          args: ['--root', '/srv'],
          env: [
            { name: 'PATH', value: binDir },
            { name: 'FILES_TOKEN', value: 'tok-123' }
          ]
        },
        { type: 'http', name: 'remote', url: 'https://mcp.example.com/mcp', headers: [{ name: 'Authorization', value: 'Bearer xyz' }] }
      ]
    })
    expect(session.mcpServers).toEqual([
      { profileId: files.id, version: 1, name: 'files', transport: 'stdio' },
      { profileId: remote.id, version: 1, name: 'remote', transport: 'http' }
    ])
    expect(session.mcpLeftOut).toEqual([
      {
        profileId: legacy.id,
        version: 1,
        name: 'legacy',
        transport: 'sse',
        reason: 'HTTP agent does not take MCP servers over SSE (it does not announce mcpCapabilities.sse)'
      }
    ])

    // An agent that announces neither gets stdio only; one that announces both gets all three.
    await host.request('sessions.new', { projectId, agentId: (await agentWith({}, 'Plain')).id })
    await host.request('sessions.new', { projectId, agentId: (await agentWith({ SCRIPTED_AGENT_MCP: 'http,sse' }, 'Full')).id })
    const [, plain, full] = await received()
    expect(plain.mcpServers.map((s) => (s as { name: string }).name)).toEqual(['files'])
    expect(full.mcpServers).toEqual([
      expect.objectContaining({ name: 'files' }),
      expect.objectContaining({ type: 'http', name: 'remote' }),
      { type: 'sse', name: 'legacy', url: 'http://127.0.0.1:9/sse', headers: [] }
    ])
  })

  it('gives a project the global servers plus its own, minus those switched off for it', async () => {
    const otherDir = join(root, 'other')
    await mkdir(otherDir)
    const other = await host.request('projects.add', { cwd: otherDir })
    const global = await save({ name: 'everywhere', transport: 'http', url: 'https://a.example/mcp' })
    await save({ name: 'only-other', transport: 'http', url: 'https://b.example/mcp', scope: 'projects', projectIds: [other.id] })
    await host.request('mcp.setProjectEnabled', { projectId, profileId: global.id, enabled: false })
    const agent = await agentWith({ SCRIPTED_AGENT_MCP: 'http' })

    await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.new', { projectId: other.id, agentId: agent.id })
    const [here, there] = await received()
    expect(here.mcpServers).toEqual([])
    expect(there.mcpServers.map((s) => (s as { name: string }).name)).toEqual(['everywhere', 'only-other'])
    expect((await host.request('mcp.list', {})).disabled).toEqual({ [projectId]: [global.id] })
  })

  it('refuses to start a session whose stdio command cannot be found, before the agent is started or asked', async () => {
    await save({ name: 'ghost', transport: 'stdio', command: 'no-such-mcp-command' })
    const agent = await agentWith()
    await expect(host.request('sessions.new', { projectId, agentId: agent.id })).rejects.toThrow(
      "MCP server “ghost”: the command 'no-such-mcp-command' was not found (it is not on PATH)."
    )
    // The agent never ran: it makes its state folder as it starts.
    expect(existsSync(stateDir)).toBe(false)
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agent.id)?.status).toBe('stopped')
    expect(await host.request('sessions.list', {})).toEqual([])
  })

  it('keeps what a session started with when a profile changes, and a continued session gets the current version', async () => {
    const profile = await save({ name: 'remote', transport: 'http', url: 'https://v1.example/mcp' })
    const agent = await agentWith({ SCRIPTED_AGENT_MCP: 'http' })
    const session = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: session.id, text: 'hello' })

    const edited = await save({ id: profile.id, name: 'remote', transport: 'http', url: 'https://v2.example/mcp' })
    expect(edited.version).toBe(2)
    const [record] = await host.request('sessions.list', {})
    expect(record.mcpServers).toEqual([{ profileId: profile.id, version: 1, name: 'remote', transport: 'http' }])

    // After a restart the session is loaded again, with the servers as they are now.
    await host.close()
    host = await openHost(dataDir)
    const state = await host.request('sessions.continue', { id: session.id })
    expect(state.mcp).toEqual({ servers: [{ profileId: profile.id, version: 2, name: 'remote', transport: 'http' }], leftOut: [] })
    const loads = (await received()).filter((r) => r.method === 'session/load')
    expect(loads).toEqual([
      {
        method: 'session/load',
        sessionId: session.acpSessionId,
        mcpServers: [{ type: 'http', name: 'remote', url: 'https://v2.example/mcp', headers: [] }]
      }
    ])
    expect((await host.request('sessions.list', {}))[0].mcpServers).toEqual(record.mcpServers)
  })

  it('sends a fork the servers too, and records them on the fork', async () => {
    await save({ name: 'remote', transport: 'http', url: 'https://a.example/mcp' })
    const agent = await agentWith({ SCRIPTED_AGENT_MCP: 'http', SCRIPTED_AGENT_SESSIONS: 'fork' })
    const session = await host.request('sessions.new', { projectId, agentId: agent.id })
    const fork = await host.request('sessions.fork', { id: session.id })
    const forked = (await received()).find((r) => r.method === 'session/fork')
    expect(forked?.mcpServers).toEqual([{ type: 'http', name: 'remote', url: 'https://a.example/mcp', headers: [] }])
    expect(fork.mcpServers?.map((s) => s.name)).toEqual(['remote'])
  })

  it('leaves a server whose last Test connection failed out of new and continued sessions, saying why, until a test passes', async () => {
    const server = await startTinyHttpServer({ token: 'letmein' })
    try {
      const profile = await save({ name: 'guarded', transport: 'http', url: server.url })
      const agent = await agentWith({ SCRIPTED_AGENT_MCP: 'http' })
      // Never tested: given.
      const first = await host.request('sessions.new', { projectId, agentId: agent.id })
      expect(first.mcpServers?.map((s) => s.name)).toEqual(['guarded'])

      const failed = await host.request('mcp.test', { id: profile.id })
      expect(failed.ok).toBe(false)
      const listed = (await host.request('mcp.list', {})).profiles[0]
      expect(listed.lastTest).toMatchObject({ ok: false, error: failed.ok ? '' : failed.error })
      expect(listed.version).toBe(1)

      const second = await host.request('sessions.new', { projectId, agentId: agent.id })
      expect(second.mcpServers).toEqual([])
      expect(second.mcpLeftOut).toEqual([
        expect.objectContaining({ name: 'guarded', reason: expect.stringMatching(/^its last Test connection failed \(.*401.*\): test it again/) })
      ])
      // A session continued now is not given it either.
      await host.request('sessions.close', { id: first.id })
      const continued = await host.request('sessions.continue', { id: first.id })
      expect(continued.mcp?.servers).toEqual([])
      expect(continued.mcp?.leftOut.map((s) => s.name)).toEqual(['guarded'])
      expect((await received()).map((r) => [r.method, r.mcpServers.length])).toEqual([
        ['session/new', 1],
        ['session/new', 0],
        ['session/load', 0]
      ])

      // Renaming keeps the test (it connects the same way); fixing the header forgets it, and a passing test gives it again.
      const renamed = await save({ id: profile.id, name: 'guarded-api', transport: 'http', url: server.url })
      expect(renamed.lastTest?.ok).toBe(false)
      const fixed = await save({
        id: profile.id,
        name: 'guarded-api',
        transport: 'http',
        url: server.url,
        headers: [{ name: 'Authorization', value: 'Bearer letmein', secret: true }]
      })
      expect(fixed.lastTest).toBeUndefined()
      expect((await host.request('mcp.test', { id: profile.id })).ok).toBe(true)
      expect((await host.request('mcp.list', {})).profiles[0].lastTest).toMatchObject({ ok: true })
      const third = await host.request('sessions.new', { projectId, agentId: agent.id })
      expect(third.mcpServers?.map((s) => s.name)).toEqual(['guarded-api'])
      expect(third.mcpLeftOut).toEqual([])
    } finally {
      await server.close()
    }
  })

  it('the /mcp command echoes what the session was given', async () => {
    await save({ name: 'remote', transport: 'http', url: 'https://a.example/mcp', headers: [{ name: 'X-Trace', value: 'on' }] })
    const agent = await agentWith({ SCRIPTED_AGENT_MCP: 'http' })
    const session = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: session.id, text: '/mcp' })
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    const reply = entriesOf(thread, 'assistant').at(-1) as { text: string }
    expect(reply.text.startsWith('mcpServers=')).toBe(true)
    expect(JSON.parse(reply.text.slice('mcpServers='.length))).toEqual([
      { type: 'http', name: 'remote', url: 'https://a.example/mcp', headers: [{ name: 'X-Trace', value: 'on' }] }
    ])
  })
})

describe('secrets', () => {
  it('never writes a secret value to db.json, the transcripts or an export, while the agent gets the real value', async () => {
    const events = recordEvents(host)
    const secretEnv = 'env-secret-4b1d7c'
    const secretHeader = 'Bearer header-secret-93ac0e'
    const files = await save({
      ...stdioProfile,
      env: [
        { name: 'PATH', value: binDir },
        { name: 'API_KEY', value: secretEnv, secret: true }
      ]
    })
    const remote = await save({
      name: 'remote',
      transport: 'http',
      url: 'https://a.example/mcp',
      headers: [{ name: 'Authorization', value: secretHeader, secret: true }]
    })
    const agent = await agentWith({ SCRIPTED_AGENT_MCP: 'http' })
    const session = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: session.id, text: 'hi' })
    const exported = await host.request('mcp.export', { path: join(projectDir, '.mcp.json'), profileIds: [files.id, remote.id] })
    await host.close()

    expect(JSON.stringify(await received())).toContain(secretEnv)
    expect(JSON.stringify(await received())).toContain(secretHeader)
    const written = [
      await readFile(join(dataDir, 'db.json'), 'utf8'),
      ...(await Promise.all((await readdir(join(dataDir, 'transcripts'))).map((f) => readFile(join(dataDir, 'transcripts', f), 'utf8')))),
      await readFile(join(projectDir, '.mcp.json'), 'utf8'),
      JSON.stringify(events)
    ].join('\n')
    expect(written).not.toContain('env-secret-4b1d7c')
    expect(written).not.toContain('header-secret-93ac0e')
    expect(exported.secretPlaceholders).toEqual(['API_KEY', 'AUTHORIZATION'])
    expect(JSON.parse(await readFile(join(projectDir, '.mcp.json'), 'utf8')).mcpServers.remote.headers).toEqual({ Authorization: '${AUTHORIZATION}' })
    host = await openHost(dataDir)
  })

  it('imports a file’s servers with the chosen values in the secret store, not in db.json', async () => {
    const file = join(root, 'claude_desktop_config.json')
    await writeFile(
      file,
      JSON.stringify({ mcpServers: { gh: { command: 'files-mcp', env: { PATH: binDir, GITHUB_TOKEN: 'ghp_importedsecret0123456789abcd' } } } })
    )
    const preview = await host.request('mcp.importPreview', { path: file })
    expect(preview.candidates[0].env).toEqual([
      { name: 'PATH', value: binDir, secretSuggested: false },
      { name: 'GITHUB_TOKEN', value: 'ghp••••••bcd', secretSuggested: true }
    ])
    const { imported } = await host.request('mcp.importApply', {
      path: file,
      format: preview.format,
      items: [{ key: 'gh', name: 'github', secretEnv: ['GITHUB_TOKEN'] }]
    })
    expect(imported[0].env).toEqual([
      { name: 'PATH', value: binDir, secret: false },
      { name: 'GITHUB_TOKEN', value: '', secret: true }
    ])
    const agent = await agentWith()
    await host.request('sessions.new', { projectId, agentId: agent.id })
    expect((await received())[0].mcpServers).toEqual([
      {
        name: 'github',
        command: join(binDir, 'files-mcp'),
        args: [],
        env: [
          { name: 'PATH', value: binDir },
          { name: 'GITHUB_TOKEN', value: 'ghp_importedsecret0123456789abcd' }
        ]
      }
    ])
    await host.close()
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).not.toContain('importedsecret')
    host = await openHost(dataDir)
    // The headless host keeps secrets in memory only: after a restart the value is gone, and the page says so.
    const [profile] = (await host.request('mcp.list', {})).profiles
    expect(profile.missingSecrets).toEqual(['GITHUB_TOKEN'])
  })
})

describe('db.json migration to version 3 and on', () => {
  for (const version of [1, 2]) {
    it(`adds MCP profiles and per-project switches to a version ${version} database, keeping a backup`, async () => {
      await host.close()
      const old = {
        version,
        projects: [{ id: 'p1', name: 'old', cwd: projectDir, createdAt: '2026-01-01T00:00:00.000Z' }],
        agents: [],
        sessions: [],
        ...(version === 2 ? { permissionRules: [] } : {})
      }
      await writeFile(join(dataDir, 'db.json'), JSON.stringify(old))
      host = await openHost(dataDir)
      const migrated = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8'))
      expect(migrated).toEqual({ ...old, version: DB_VERSION, permissionRules: [], mcpProfiles: [], mcpDisabled: {} })
      expect(JSON.parse(await readFile(join(dataDir, `db.v${version}.backup.json`), 'utf8'))).toEqual(old)
      expect(await host.request('mcp.list', {})).toEqual({ profiles: [], disabled: {}, secretsPersistent: false })
      await save({ name: 'remote', transport: 'http', url: 'https://a.example/mcp', scope: 'projects', projectIds: ['p1'] })
      expect((await host.request('mcp.list', {})).profiles.map((p) => [p.name, p.projectIds])).toEqual([['remote', ['p1']]])
    })
  }
})

describe('which servers the agent started (SessionState.mcpRun)', () => {
  const mcpRunOf = async (id: string) => (await host.request('sessions.states', {})).find((s) => s.id === id)?.mcpRun

  it('not reported until a tool of the server runs; a server that exits inside the agent shows failed with the agent’s words', async () => {
    const tiny = tinyServerCommand()
    await save({ name: 'tiny', transport: 'stdio', command: tiny.command, args: tiny.args, env: [] })
    // Exits with code 2 at start: no token.
    await save({ name: 'crashy', transport: 'stdio', command: tiny.command, args: tiny.args, env: [{ name: 'TINY_REQUIRE_TOKEN', value: 'wanted' }] })
    const agent = await agentWith()
    const { id } = await host.request('sessions.new', { projectId, agentId: agent.id })
    // Given is not started: nothing is claimed before the agent shows it.
    expect((await mcpRunOf(id))?.servers).toEqual([
      { name: 'tiny', state: 'not_reported', reason: expect.stringMatching(/^not reported by the agent/) },
      { name: 'crashy', state: 'not_reported', reason: expect.stringMatching(/^not reported by the agent/) }
    ])
    await host.request('sessions.prompt', { id, text: '/mcp-call tiny echo' })
    await host.request('sessions.prompt', { id, text: '/mcp-call crashy echo' })
    const run = await mcpRunOf(id)
    expect(run?.servers).toEqual([
      { name: 'tiny', state: 'started', reason: 'its tool echo ran' },
      {
        name: 'crashy',
        state: 'failed',
        reason: expect.stringMatching(/^its tool echo could not reach it: MCP server 'crashy': .*Connection closed/)
      }
    ])
    expect(run?.untrustedFolder).toBeUndefined()
    // The agent ends: nothing of it runs any more, and nothing is claimed.
    await host.request('agents.restart', { agentId: agent.id })
    expect(await mcpRunOf(id)).toBeUndefined()
  }, 60_000)
})
