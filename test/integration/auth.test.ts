import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { MemorySecretStore } from '../../electron/host/secrets'
import { Host as HostClass } from '../../electron/host/host'
import { removeDir, scriptedAgent, tempDir } from '../helpers'

/** Authentication: auth_required leads to the agent's sign-in methods; secrets stay out of db.json. */

let root: string
let dataDir: string
let host: Host
let secrets: MemorySecretStore
let projectId: string
let agentId: string

beforeEach(async () => {
  root = await tempDir('auth')
  dataDir = join(root, 'data')
  await mkdir(join(root, 'project'))
  secrets = new MemorySecretStore()
  host = await HostClass.open({ dataDir, version: 'test', presets: [], secrets })
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_AUTH: '1' }, 'Locked'))).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

describe('authentication', () => {
  it('answers auth_required with the ways to sign in, then works after signing in, until logout', async () => {
    const refused = await host.handle('sessions.new', { projectId, agentId })
    expect(refused).toEqual({
      ok: false,
      error: {
        code: 'auth_required',
        message:
          'Locked needs you to sign in first (Authentication required). Sign in with: Log in with the browser, Use SCRIPTED_KEY, Log in from a terminal.'
      }
    })
    const state = (await host.request('agents.states', {})).find((s) => s.agentId === agentId)
    expect(state?.authMethods).toEqual([
      { id: 'browser', name: 'Log in with the browser', description: 'The agent opens a login page', type: 'agent' },
      { id: 'api-key', name: 'Use SCRIPTED_KEY', type: 'env_var', vars: ['SCRIPTED_KEY'] },
      { id: 'cli-login', name: 'Log in from a terminal', type: 'terminal', args: ['--login'] }
    ])

    await expect(host.request('agents.authenticate', { agentId, methodId: 'nope' })).rejects.toThrow(/offers no sign-in method 'nope'/)
    await expect(host.request('agents.authenticate', { agentId, methodId: 'cli-login' })).rejects.toThrow(
      /terminal login.*run `.*scripted-agent\.ts --login` in a terminal/
    )
    await host.request('agents.authenticate', { agentId, methodId: 'browser' })
    const record = await host.request('sessions.new', { projectId, agentId })
    expect((await host.request('sessions.prompt', { id: record.id, text: 'hello' })).stopReason).toBe('end_turn')

    await host.request('agents.logout', { agentId })
    expect(await host.handle('sessions.new', { projectId, agentId })).toMatchObject({ ok: false, error: { code: 'auth_required' } })
  })

  it('keeps an env_var sign-in in the secret store and restarts the agent with it; db.json never sees it', async () => {
    await expect(host.request('agents.authenticate', { agentId, methodId: 'api-key' })).rejects.toThrow(/needs SCRIPTED_KEY/)
    await expect(host.request('agents.authenticate', { agentId, methodId: 'api-key', values: { SCRIPTED_KEY: 'wrong' } })).rejects.toThrow(
      /SCRIPTED_KEY is missing or wrong/
    )
    await host.request('agents.authenticate', { agentId, methodId: 'api-key', values: { SCRIPTED_KEY: 'sekret' } })
    await host.request('sessions.new', { projectId, agentId })
    expect(await secrets.get(`agent:${agentId}:env:SCRIPTED_KEY`)).toBe('sekret')
    await host.close()
    const db = await readFile(join(dataDir, 'db.json'), 'utf8')
    expect(db).not.toContain('sekret')
    expect(JSON.parse(db).agents.find((a: { id: string }) => a.id === agentId).secretEnv).toEqual(['SCRIPTED_KEY'])
  })
})
