import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { McpState } from '../../shared/mcp'
import { validateMcpProfile } from '../../shared/mcp'
import { normaliseInitialize } from '../../electron/host/connection/capabilities'
import { UserEnvironment } from '../../electron/host/child-processes/environment'
import { McpCommandNotFoundError, prepareServers, serversForAgent } from '../../electron/host/mcp/acp-servers'
import { mcpSecretKey, McpProfiles } from '../../electron/host/mcp/profiles'
import { mcpProfileInputSchema, type McpProfileInput } from '../../shared/mcp'
import { MemorySecretStore } from '../../electron/host/storage/secrets'
import { Store } from '../../electron/host/storage/store'
import { Records } from '../../electron/host/storage/records'
import { EventBus } from '../../electron/host/contract/events'
import { removeDir, tempDir } from '../helpers'

let dir: string
let store: Store
let secrets: MemorySecretStore
let profiles: McpProfiles
let changes: McpState[]

beforeEach(async () => {
  dir = await tempDir('mcp-unit')
  store = (await Store.open(dir, [])).store
  store.data.projects.push(
    { id: 'app', name: 'app', cwd: '/code/app', createdAt: '2026-01-01T00:00:00.000Z' },
    { id: 'web', name: 'web', cwd: '/code/web', createdAt: '2026-01-01T00:00:00.000Z' }
  )
  secrets = new MemorySecretStore()
  changes = []
  profiles = new McpProfiles(new Records(store, new EventBus()), secrets, (state) => changes.push(state))
})

afterEach(async () => {
  await removeDir(dir)
})

function save(input: McpProfileInput) {
  return profiles.save(mcpProfileInputSchema.parse(input))
}

/** Finds commands in a fake bin folder: `node` and `uvx` exist, nothing else. */
async function fakeFind(command: string): Promise<string | null> {
  if (command.startsWith('/')) return command === '/opt/tools/server' ? command : null
  return ['node', 'uvx'].includes(command) ? `/fake/bin/${command}` : null
}

const v1 = (mcp: Record<string, boolean> = {}) =>
  normaliseInitialize({ protocolVersion: 1, agentCapabilities: { mcpCapabilities: mcp } }).capabilities

describe('conversion to ACP mcpServers', () => {
  it('gives stdio servers an absolute command and an env array, http and sse servers a type and a headers array', async () => {
    const stdio = await save({
      name: 'files',
      transport: 'stdio',
      command: 'uvx',
      args: ['mcp-files', '--root', '/code'],
      env: [
        { name: 'MODE', value: 'ro' },
        { name: 'TOKEN', value: 't0ps3cret', secret: true }
      ]
    })
    const http = await save({
      name: 'remote',
      transport: 'http',
      url: 'https://example.com/mcp',
      headers: [{ name: 'Authorization', value: 'Bearer abc', secret: true }]
    })
    const sse = await save({ name: 'old', transport: 'sse', url: 'http://127.0.0.1:9/sse', headers: [{ name: 'X-Trace', value: 'on' }] })
    const unlocked = await Promise.all([stdio, http, sse].map((p) => profiles.unlock(profiles.profile(p.id))))
    const prepared = await prepareServers(unlocked, UserEnvironment.ofProcess(), fakeFind)
    const all = serversForAgent(prepared, v1({ http: true, sse: true }), 'Agent')
    expect(all.mcpServers).toEqual([
      {
        name: 'files',
        command: '/fake/bin/uvx',
        args: ['mcp-files', '--root', '/code'],
        env: [
          { name: 'MODE', value: 'ro' },
          { name: 'TOKEN', value: 't0ps3cret' }
        ]
      },
      { type: 'http', name: 'remote', url: 'https://example.com/mcp', headers: [{ name: 'Authorization', value: 'Bearer abc' }] },
      { type: 'sse', name: 'old', url: 'http://127.0.0.1:9/sse', headers: [{ name: 'X-Trace', value: 'on' }] }
    ])
    expect(all.given).toEqual([
      { profileId: stdio.id, version: 1, name: 'files', transport: 'stdio' },
      { profileId: http.id, version: 1, name: 'remote', transport: 'http' },
      { profileId: sse.id, version: 1, name: 'old', transport: 'sse' }
    ])
    expect(all.leftOut).toEqual([])
  })

  it('leaves out transports the agent does not announce, saying which capability (v1 and v2 shapes)', async () => {
    await save({ name: 'files', transport: 'stdio', command: 'node' })
    await save({ name: 'remote', transport: 'http', url: 'https://example.com/mcp' })
    await save({ name: 'old', transport: 'sse', url: 'https://example.com/sse' })
    const unlocked = await Promise.all(profiles.forProject('app').map((p) => profiles.unlock(p)))
    const prepared = await prepareServers(unlocked, UserEnvironment.ofProcess(), fakeFind)

    const httpOnly = serversForAgent(prepared, v1({ http: true }), 'Claude Code')
    expect(httpOnly.mcpServers.map((s) => s.name)).toEqual(['files', 'remote'])
    expect(httpOnly.leftOut).toEqual([
      expect.objectContaining({
        name: 'old',
        transport: 'sse',
        reason: 'Claude Code does not take MCP servers over SSE (it does not announce mcpCapabilities.sse)'
      })
    ])

    const v2 = normaliseInitialize({ protocolVersion: 2, capabilities: { session: { mcp: { http: {} } } } }).capabilities
    const v2Servers = serversForAgent(prepared, v2, 'Draft agent')
    expect(v2Servers.mcpServers.map((s) => s.name)).toEqual(['remote'])
    expect(v2Servers.leftOut.map((l) => l.reason)).toEqual([
      'Draft agent does not take MCP servers over stdio (it does not announce session.mcp.stdio)',
      'Draft agent does not take MCP servers over SSE (it does not announce session.mcp.sse)'
    ])
  })

  it('refuses an unresolvable command before anything is sent, naming the server', async () => {
    await save({ name: 'ghost', transport: 'stdio', command: 'not-installed-anywhere' })
    const unlocked = await Promise.all(profiles.forProject('app').map((p) => profiles.unlock(p)))
    const failure = prepareServers(unlocked, UserEnvironment.ofProcess(), fakeFind)
    await expect(failure).rejects.toBeInstanceOf(McpCommandNotFoundError)
    await expect(failure).rejects.toThrow(
      "MCP server “ghost”: the command 'not-installed-anywhere' was not found (it is not on PATH). Install it, or give its absolute path. Or switch the server off for this project on the MCP page."
    )
  })

  it('resolves a relative path against the profile’s folder, and notes that ACP cannot carry the folder', async () => {
    await save({ name: 'local', transport: 'stdio', command: './server', cwd: '/opt/tools' })
    const unlocked = await Promise.all(profiles.forProject('app').map((p) => profiles.unlock(p)))
    const servers = serversForAgent(await prepareServers(unlocked, UserEnvironment.ofProcess(), fakeFind), v1(), 'Agent')
    expect(servers.mcpServers).toEqual([{ name: 'local', command: '/opt/tools/server', args: [], env: [] }])
    expect(servers.given[0].note).toMatch(/ACP cannot pass a working folder/)
  })

  it('leaves out a server whose secret value is gone from the store, saying what to do', async () => {
    const saved = await save({ name: 'files', transport: 'stdio', command: 'node', env: [{ name: 'TOKEN', value: 'x', secret: true }] })
    await secrets.delete(mcpSecretKey(saved.id, 'env', 'TOKEN'))
    const unlocked = await Promise.all(profiles.forProject('app').map((p) => profiles.unlock(p)))
    const servers = serversForAgent(await prepareServers(unlocked, UserEnvironment.ofProcess(), fakeFind), v1(), 'Agent')
    expect(servers.mcpServers).toEqual([])
    expect(servers.leftOut[0].reason).toBe('the secret value of TOKEN is not in the secret store any more: enter it again on the MCP page')
  })
})

describe('profiles: scoping, versions, secrets', () => {
  it('gives a project the global profiles plus its own, minus those switched off there or everywhere', async () => {
    const global = await save({ name: 'everywhere', transport: 'stdio', command: 'node' })
    const own = await save({ name: 'only-app', transport: 'stdio', command: 'node', scope: 'projects', projectIds: ['app'] })
    const off = await save({ name: 'off', transport: 'stdio', command: 'node', enabled: false })
    expect(profiles.forProject('app').map((p) => p.name)).toEqual(['everywhere', 'only-app'])
    expect(profiles.forProject('web').map((p) => p.name)).toEqual(['everywhere'])

    await profiles.setProjectEnabled('app', global.id, false)
    expect(profiles.forProject('app').map((p) => p.name)).toEqual(['only-app'])
    expect(profiles.forProject('web').map((p) => p.name)).toEqual(['everywhere'])
    await profiles.setProjectEnabled('app', own.id, false)
    await profiles.setProjectEnabled('app', global.id, true)
    expect(profiles.forProject('app').map((p) => p.name)).toEqual(['everywhere'])
    // Switching per project is not an edit: versions stay.
    expect(profiles.profile(global.id).version).toBe(1)
    await expect(profiles.setProjectEnabled('web', own.id, true)).rejects.toThrow(/not attached to this project/)
    expect(off.enabled).toBe(false)
    expect(changes.at(-1)?.disabled).toEqual({ app: [own.id] })
  })

  it('bumps the version on every edit and keeps the creation time', async () => {
    const first = await save({ name: 'files', transport: 'stdio', command: 'node' })
    const second = await save({ id: first.id, name: 'files', transport: 'stdio', command: 'node', args: ['server.js'] })
    expect([first.version, second.version]).toEqual([1, 2])
    expect(second.createdAt).toBe(first.createdAt)
    expect(second.args).toEqual(['server.js'])
  })

  it('keeps secret values out of db.json, keeps a secret when it is sent without a value, and forgets removed ones', async () => {
    const saved = await save({
      name: 'remote',
      transport: 'http',
      url: 'https://example.com/mcp',
      headers: [
        { name: 'Authorization', value: 'Bearer very-secret-value', secret: true },
        { name: 'X-Plain', value: 'visible' }
      ]
    })
    await store.save()
    const db = await readFile(join(dir, 'db.json'), 'utf8')
    expect(db).not.toContain('very-secret-value')
    expect(db).toContain('visible')
    expect(saved.headers).toEqual([
      { name: 'Authorization', value: '', secret: true },
      { name: 'X-Plain', value: 'visible', secret: false }
    ])
    expect(await secrets.get(mcpSecretKey(saved.id, 'header', 'Authorization'))).toBe('Bearer very-secret-value')

    // An edit that leaves the secret's value out keeps it.
    await save({ id: saved.id, name: 'remote', transport: 'http', url: 'https://example.com/v2', headers: [{ name: 'Authorization', secret: true }] })
    expect((await profiles.unlock(profiles.profile(saved.id))).headers).toEqual([{ name: 'Authorization', value: 'Bearer very-secret-value' }])

    // A plain value marked secret moves into the store.
    const plain = await save({ name: 'files', transport: 'stdio', command: 'node', env: [{ name: 'TOKEN', value: 'plain-then-secret' }] })
    await save({ id: plain.id, name: 'files', transport: 'stdio', command: 'node', env: [{ name: 'TOKEN', secret: true }] })
    expect(await secrets.get(mcpSecretKey(plain.id, 'env', 'TOKEN'))).toBe('plain-then-secret')
    expect(profiles.profile(plain.id).env).toEqual([{ name: 'TOKEN', value: '', secret: true }])

    // Switching to stdio drops the headers, and their secrets with them.
    await save({ id: saved.id, name: 'remote', transport: 'stdio', command: 'node' })
    expect(await secrets.get(mcpSecretKey(saved.id, 'header', 'Authorization'))).toBeUndefined()
    await profiles.remove(plain.id)
    expect(await secrets.get(mcpSecretKey(plain.id, 'env', 'TOKEN'))).toBeUndefined()
  })

  it('refuses invalid profiles with what to fix, and changes nothing', async () => {
    await save({ name: 'files', transport: 'stdio', command: 'node' })
    await expect(save({ name: 'FILES', transport: 'stdio', command: 'node' })).rejects.toThrow('Another server is already called “FILES”.')
    await expect(save({ name: 'x', transport: 'http', url: 'ftp://example.com' })).rejects.toThrow(/must start with http:\/\/ or https:\/\//)
    await expect(save({ name: 'x', transport: 'stdio', command: 'node', env: [{ name: '1BAD', value: 'v' }] })).rejects.toThrow(
      /not a valid environment variable name/
    )
    await expect(save({ name: 'x', transport: 'stdio', command: 'node', env: [{ name: 'KEY', secret: true }] })).rejects.toThrow(
      'The variable KEY is marked secret but has no value: enter it.'
    )
    await expect(save({ name: 'x', transport: 'stdio', command: 'node', scope: 'projects', projectIds: ['nope'] })).rejects.toThrow(
      "No project with id 'nope'"
    )
    expect(profiles.profiles.map((p) => p.name)).toEqual(['files'])
  })

  it('validates the form the same way as the Host', () => {
    expect(validateMcpProfile({ name: '', transport: 'stdio', command: '' }, [])).toEqual({
      name: 'Give the server a name (agents show it beside its tools).',
      command: 'Which command starts the server? (e.g. npx, uvx, or a path)'
    })
    expect(
      validateMcpProfile(
        { name: 'a', transport: 'http', url: 'https://x.dev/mcp', headers: [{ name: 'A' }, { name: 'a' }], scope: 'projects', projectIds: [] },
        []
      )
    ).toEqual({ headers: 'The header a is set twice.', projectIds: 'Pick at least one project, or make the server available to all projects.' })
    expect(validateMcpProfile({ name: 'a', transport: 'stdio', command: 'x', cwd: 'relative' }, [])).toEqual({
      cwd: 'The working folder must be an absolute path.'
    })
  })
})
