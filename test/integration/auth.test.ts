import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { HostEvents } from '../../shared/contract'
import { MemorySecretStore } from '../../electron/host/storage/secrets'
import { Host as HostClass } from '../../electron/host/host'
import { confirmEverything, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

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
  host = await HostClass.open({ dataDir, version: 'test', confirmCommand: confirmEverything, presets: [], secrets })
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
          'Locked needs you to sign in first (Authentication required). Sign in with: Log in with the browser, Use SCRIPTED_KEY, Log in from a terminal.',
        // The same, in the parts the window shows once (the first-contact panel).
        problem: {
          agentId,
          kind: 'sign_in',
          summary: 'Locked needs you to sign in first.',
          detail: 'Authentication required',
          lines: [],
          found: false,
          at: expect.any(String)
        }
      }
    })
    const state = (await host.request('agents.states', {})).find((s) => s.agentId === agentId)
    // Its process runs, but it cannot start a session: the state says so (the Agents page reads "needs sign-in").
    expect(state).toMatchObject({ status: 'ready', problem: { kind: 'sign_in' } })
    expect(state?.sessionStarted).toBeUndefined()
    expect(state?.authMethods).toEqual([
      { id: 'browser', name: 'Log in with the browser', description: 'The agent opens a login page', type: 'agent' },
      { id: 'api-key', name: 'Use SCRIPTED_KEY', type: 'env_var', vars: ['SCRIPTED_KEY'] },
      { id: 'cli-login', name: 'Log in from a terminal', type: 'terminal', args: ['--login'], env: { SCRIPTED_LOGIN_CODE: '4242' } }
    ])

    await expect(host.request('agents.authenticate', { agentId, methodId: 'nope' })).rejects.toThrow(/offers no sign-in method 'nope'/)
    // A terminal method is never sent to authenticate (the spec): it runs in a terminal instead.
    await expect(host.request('agents.authenticate', { agentId, methodId: 'cli-login' })).rejects.toThrow(/signs in from a terminal/)
    await host.request('agents.authenticate', { agentId, methodId: 'browser' })
    const record = await host.request('sessions.new', { projectId, agentId })
    const signedIn = (await host.request('agents.states', {})).find((s) => s.agentId === agentId)
    expect(signedIn).toMatchObject({ status: 'ready', sessionStarted: true })
    expect(signedIn?.problem).toBeUndefined()
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
    const { agents } = JSON.parse(db) as { agents: { id: string; transport: { secretEnv?: string[] } }[] }
    expect(agents.find((a) => a.id === agentId)?.transport.secretEnv).toEqual(['SCRIPTED_KEY'])
  })

  it('a method that takes an API key in _meta (as Gemini CLI): asked for, passed in authenticate, given again at each start, kept out of db.json', async () => {
    const keyed = (
      await host.request('agents.add', scriptedAgent(join(root, 'keyed'), { SCRIPTED_AGENT_AUTH: '1', SCRIPTED_AGENT_KEY_META: '1' }, 'Keyed'))
    ).id
    await host.handle('sessions.new', { projectId, agentId: keyed })
    const method = (await host.request('agents.states', {})).find((s) => s.agentId === keyed)?.authMethods?.find((m) => m.id === 'pasted-key')
    expect(method).toMatchObject({ type: 'agent', apiKey: { provider: 'scripted' }, meta: { 'api-key': { provider: 'scripted' } } })
    await expect(host.request('agents.authenticate', { agentId: keyed, methodId: 'pasted-key' })).rejects.toThrow(/needs an API key/)
    await expect(host.request('agents.authenticate', { agentId: keyed, methodId: 'pasted-key', values: { 'api-key': 'wrong' } })).rejects.toThrow(
      /API key refused/
    )
    await host.request('agents.authenticate', { agentId: keyed, methodId: 'pasted-key', values: { 'api-key': 'sekret' } })
    const record = await host.request('sessions.new', { projectId, agentId: keyed })
    expect((await host.request('sessions.prompt', { id: record.id, text: 'hello' })).stopReason).toBe('end_turn')
    // The agent keeps the key in its process only: a new process is given it again from the secret store.
    await host.request('agents.restart', { agentId: keyed })
    await host.request('sessions.new', { projectId, agentId: keyed })
    expect(await secrets.get(`agent:${keyed}:api-key:pasted-key`)).toBe('sekret')
    await host.close()
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).not.toContain('sekret')

    // A Host whose secret store forgot everything (serve restarted): said on the agent page and in the refusal.
    host = await HostClass.open({ dataDir, version: 'test', confirmCommand: confirmEverything, presets: [], secrets: new MemorySecretStore() })
    const refused = await host.handle('sessions.new', { projectId, agentId: keyed })
    expect(refused).toMatchObject({
      ok: false,
      error: { code: 'auth_required', message: expect.stringContaining('the API key of "Paste an API key" was not kept across the restart') }
    })
  })

  it('a secret variable the store forgot at a restart is shown as lost, and the refusal says to enter it again', async () => {
    await host.request('agents.authenticate', { agentId, methodId: 'api-key', values: { SCRIPTED_KEY: 'sekret' } })
    await host.request('sessions.new', { projectId, agentId })
    await host.close()
    host = await HostClass.open({ dataDir, version: 'test', confirmCommand: confirmEverything, presets: [], secrets: new MemorySecretStore() })
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agentId)?.missingSecrets).toEqual(['SCRIPTED_KEY'])
    const refused = await host.handle('sessions.new', { projectId, agentId })
    expect(refused).toMatchObject({
      ok: false,
      error: {
        code: 'auth_required',
        message: expect.stringContaining(
          '(Authentication required). SCRIPTED_KEY was not kept across the restart (this Switchboard keeps secrets in memory only): enter it again.'
        )
      }
    })
    await host.request('agents.authenticate', { agentId, methodId: 'api-key', values: { SCRIPTED_KEY: 'sekret' } })
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agentId)?.missingSecrets).toBeUndefined()
  })

  it('runs a terminal sign-in in a real terminal the user types into; exit 0 signs in and the agent restarts with it', async () => {
    await host.handle('sessions.new', { projectId, agentId }) // auth_required: the methods are known now
    const output = new Map<string, string>()
    const exits: HostEvents['agent.login.exit'][] = []
    host.events.subscribe((events) => {
      for (const event of events) {
        if (event.type === 'agent.login.output') output.set(event.payload.loginId, (output.get(event.payload.loginId) ?? '') + event.payload.data)
        if (event.type === 'agent.login.exit') exits.push(event.payload)
      }
    })
    const until = async (check: () => boolean): Promise<void> => void (await waitUntil('the login terminal', check))

    // A wrong code: the login program exits 1, nothing changes.
    const wrong = await host.request('agents.login.start', { agentId, methodId: 'cli-login', cols: 80, rows: 24 })
    expect(wrong.command).toMatch(/scripted-agent\.(ts|mjs) --login$/)
    await until(() => (output.get(wrong.loginId) ?? '').includes('Enter the code'))
    await host.request('agents.login.input', { loginId: wrong.loginId, data: '1111\r' })
    await until(() => exits.some((e) => e.loginId === wrong.loginId))
    expect(exits.find((e) => e.loginId === wrong.loginId)).toMatchObject({ agentId, methodId: 'cli-login', exitCode: 1, ok: false })
    expect(output.get(wrong.loginId)).toContain('Wrong code.')
    expect(await host.handle('sessions.new', { projectId, agentId })).toMatchObject({ ok: false, error: { code: 'auth_required' } })

    // The right code, typed into the pseudo-terminal (the program refuses to run without one).
    const login = await host.request('agents.login.start', { agentId, methodId: 'cli-login', cols: 80, rows: 24 })
    await until(() => (output.get(login.loginId) ?? '').includes('Enter the code'))
    await host.request('agents.login.resize', { loginId: login.loginId, cols: 120, rows: 30 })
    await host.request('agents.login.input', { loginId: login.loginId, data: '4242\r' })
    await until(() => exits.some((e) => e.loginId === login.loginId))
    expect(exits.find((e) => e.loginId === login.loginId)).toMatchObject({ exitCode: 0, ok: true })
    expect(output.get(login.loginId)).toContain('4242') // the terminal echoed what was typed
    expect(output.get(login.loginId)).toContain('Signed in.')
    await expect(host.request('agents.login.input', { loginId: login.loginId, data: 'x' })).rejects.toThrow(/already ended/)

    const record = await host.request('sessions.new', { projectId, agentId })
    const signedIn = (await host.request('agents.states', {})).find((s) => s.agentId === agentId)
    expect(signedIn).toMatchObject({ status: 'ready', sessionStarted: true })
    expect(signedIn?.problem).toBeUndefined()
    expect((await host.request('sessions.prompt', { id: record.id, text: 'hello' })).stopReason).toBe('end_turn')
  })

  it('stops a terminal sign-in the user abandons, and refuses methods that are not terminal ones', async () => {
    await host.handle('sessions.new', { projectId, agentId })
    await expect(host.request('agents.login.start', { agentId, methodId: 'browser' })).rejects.toThrow(/not a terminal sign-in/)
    const exits: HostEvents['agent.login.exit'][] = []
    host.events.subscribe((events) => {
      for (const event of events) if (event.type === 'agent.login.exit') exits.push(event.payload)
    })
    const login = await host.request('agents.login.start', { agentId, methodId: 'cli-login' })
    await host.request('agents.login.stop', { loginId: login.loginId })
    await waitUntil('the login to exit', () => exits.length > 0)
    expect(exits[0]).toMatchObject({ loginId: login.loginId, ok: false })
    expect(await host.handle('sessions.new', { projectId, agentId })).toMatchObject({ ok: false, error: { code: 'auth_required' } })
  })
})
