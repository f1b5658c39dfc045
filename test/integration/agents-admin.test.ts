import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { extname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import { MemorySecretStore, agentEnvKey } from '../../electron/host/storage/secrets'
import { scriptedAgentCommand } from '../agent/spawn'
import { runOf, confirmEverything, entriesOf, fold, recordEvents, removeDir, scriptedAgent, tempDir } from '../helpers'

/** The Agents page's requests: custom agents with secret variables, edit, remove, restart, the stderr log, presets. */

let root: string
let dataDir: string
let host: Host
let secrets: MemorySecretStore
let projectId: string

beforeEach(async () => {
  root = await tempDir('agents-admin')
  dataDir = join(root, 'data')
  await mkdir(join(root, 'project'))
  secrets = new MemorySecretStore()
  host = await Host.open({ dataDir, version: 'test', confirmCommand: confirmEverything, presets: [], secrets, initializeTimeoutMs: 20_000 })
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

/** What the agent says its environment holds, asked in a session. */
async function agentSays(sessionId: string, text: string): Promise<string> {
  await host.request('sessions.prompt', { id: sessionId, text })
  const thread = fold((await host.request('sessions.open', { id: sessionId })).records)
  return (entriesOf(thread, 'assistant').at(-1) as { text: string }).text
}

async function agentState(agentId: string) {
  return (await host.request('agents.states', {})).find((s) => s.agentId === agentId)
}

describe('custom agents', () => {
  it('keeps a secret variable out of db.json and out of every answer, and gives it to the agent', async () => {
    const events = recordEvents(host)
    const agent = await host.request(
      'agents.add',
      scriptedAgent(join(root, 'state'), { PLAIN: 'visible' }, 'Scripted', { secretEnv: { API_TOKEN: 's3cret-value' } })
    )
    expect(runOf(agent).secretEnv).toEqual(['API_TOKEN'])
    expect(runOf(agent).env).toEqual(expect.objectContaining({ PLAIN: 'visible' }))
    expect(await secrets.get(agentEnvKey(agent.id, 'API_TOKEN'))).toBe('s3cret-value')
    await expect.poll(() => events.some((e) => e.type === 'agents.changed' && e.payload.some((a) => a.id === agent.id))).toBe(true)
    expect(JSON.stringify(events)).not.toContain('s3cret-value')

    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    expect(await agentSays(record.id, '/env API_TOKEN')).toBe('API_TOKEN=s3cret-value')
    expect(await agentSays(record.id, '/env PLAIN')).toBe('PLAIN=visible')

    await host.close()
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).not.toContain('s3cret-value')
    host = await Host.open({ dataDir, version: 'test', confirmCommand: confirmEverything, presets: [], secrets })
    expect(JSON.stringify(await host.request('agents.list', {}))).not.toContain('s3cret-value')
  })

  it('edits an agent: a kept secret stays, a replaced one changes, an unlisted one is forgotten; a restart applies it', async () => {
    const agent = await host.request(
      'agents.add',
      scriptedAgent(join(root, 'state'), { MODE: 'one' }, 'Scripted', { secretEnv: { KEEP_ME: 'kept', REPLACE_ME: 'old', DROP_ME: 'dropped' } })
    )
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    const firstPid = (await agentState(agent.id))?.pid

    const updated = await host.request('agents.update', {
      agentId: agent.id,
      name: 'Scripted, edited',
      transport: {
        kind: 'process',
        command: runOf(agent).command,
        args: runOf(agent).args,
        env: { ...runOf(agent).env, MODE: 'two' },
        secretEnv: { KEEP_ME: null, REPLACE_ME: 'new' }
      }
    })
    expect(updated).toMatchObject({ id: agent.id, name: 'Scripted, edited', transport: { secretEnv: ['KEEP_ME', 'REPLACE_ME'] } })
    expect(await secrets.get(agentEnvKey(agent.id, 'DROP_ME'))).toBeUndefined()
    // The running agent keeps its environment until it restarts.
    expect(await agentSays(record.id, '/env MODE')).toBe('MODE=one')

    const restarted = await host.request('agents.restart', { agentId: agent.id })
    expect(restarted.status).toBe('ready')
    expect(restarted.pid).not.toBe(firstPid)
    expect(restarted.agentInfo).toEqual({ name: 'scripted-agent', version: '1.0.0' })
    // Its session was let go by the restart, and comes back (session/load) with the next prompt.
    expect((await host.request('sessions.open', { id: record.id })).state.status).toBe('idle')
    expect(await agentSays(record.id, '/env MODE')).toBe('MODE=two')
    expect(await agentSays(record.id, '/env KEEP_ME')).toBe('KEEP_ME=kept')
    expect(await agentSays(record.id, '/env REPLACE_ME')).toBe('REPLACE_ME=new')
    expect(await agentSays(record.id, '/env DROP_ME')).toBe('DROP_ME is not set')
  })

  it('refuses input it cannot use, saying why, and changes nothing', async () => {
    const base = scriptedAgent(join(root, 'state'))
    const withTransport = (patch: object) => ({ ...base, transport: { ...base.transport, ...patch } })
    expect(await host.handle('agents.add', withTransport({ env: { 'BAD NAME': 'x' } }))).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(/'BAD NAME' is not a valid environment variable name/) }
    })
    expect(await host.handle('agents.add', withTransport({ env: { TOKEN: 'a' }, secretEnv: { TOKEN: 'b' } }))).toMatchObject({
      ok: false,
      error: { message: 'TOKEN is given twice, once as a secret; keep one' }
    })
    expect(await host.handle('agents.add', withTransport({ command: '   ' }))).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(/needs a command/) }
    })
    // The flat shape of before the transport union is refused, saying where the command or the address goes.
    const { command, args, env } = base.transport
    const flat = await host.handle('agents.add', { name: 'Flat', command, args, env, secretEnv: {} })
    expect(flat).toMatchObject({ ok: false, error: { code: 'invalid_params' } })
    expect(!flat.ok && flat.error.message).toMatch(/Unknown keys "command", "args", "env", "secretEnv": .* go in `transport`/)
    const both = { name: 'Both', command: '', remote: { url: 'wss://example.com/acp' }, ssh: { destination: 'example.com' } }
    expect(await host.handle('agents.add', both)).toMatchObject({ ok: false, error: { message: expect.stringContaining('"remote", "ssh"') } })
    expect(await host.request('agents.list', {})).toEqual([])

    const agent = await host.request('agents.add', base)
    expect(
      await host.handle('agents.update', {
        agentId: agent.id,
        name: 'x',
        transport: { kind: 'process', command: runOf(agent).command, args: [], env: {}, secretEnv: { NEVER_SET: null } }
      })
    ).toMatchObject({ ok: false, error: { message: 'NEVER_SET has no stored value yet: type one' } })
    expect(await host.handle('agents.update', { agentId: agent.id, name: 'x', command, args, env })).toMatchObject({
      ok: false,
      error: { code: 'invalid_params', message: expect.stringContaining('go in `transport`') }
    })
    expect((await host.request('agents.list', {}))[0]).toEqual(agent)
  })
})

describe('an agent’s working folder', () => {
  it('starts the agent there, so a relative command and relative arguments resolve in it; kept in db.json', async () => {
    // The folder holds the agent's launcher and its script, named relatively.
    const folder = join(root, 'agent-home')
    await mkdir(folder)
    const { command, args } = scriptedAgentCommand()
    const script = args.at(-1)!
    const relativeScript = `agent${extname(script)}`
    await symlink(script, join(folder, relativeScript))
    const launcher = [command, ...args.slice(0, -1)].map((arg) => JSON.stringify(arg)).join(' ')
    await writeFile(join(folder, 'run-agent'), `#!/bin/sh\nexec ${launcher} "$@"\n`)
    await chmod(join(folder, 'run-agent'), 0o755)
    const agent = await host.request('agents.add', {
      name: 'Relative',
      transport: {
        kind: 'process',
        command: './run-agent',
        args: [relativeScript],
        cwd: folder,
        env: { SCRIPTED_AGENT_STATE_DIR: join(root, 'state') }
      }
    })
    expect(runOf(agent).cwd).toBe(folder)
    expect((await agentState(agent.id))?.installed).toBe(true)
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    expect(await agentSays(record.id, '/process-cwd')).toBe(`process cwd=${folder}`)
    // Each session still works in its own project folder.
    expect(await agentSays(record.id, '/cwd')).toBe(`cwd=${join(root, 'project')}`)
    await host.close()
    const db = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as { agents: { id: string; transport: { cwd?: string } }[] }
    expect(db.agents.find((a) => a.id === agent.id)?.transport.cwd).toBe(folder)
    host = await Host.open({ dataDir, version: 'test', confirmCommand: confirmEverything, presets: [], secrets, initializeTimeoutMs: 20_000 })
    expect(runOf((await host.request('agents.list', {}))[0]).cwd).toBe(folder)
  })

  it('is the home folder by default, and again when emptied', async () => {
    const folder = join(root, 'agent-home')
    await mkdir(folder)
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state'), {}, 'Scripted', { cwd: '  ' }))
    expect(agent).not.toHaveProperty('cwd')
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    expect(await agentSays(record.id, '/process-cwd')).toBe(`process cwd=${homedir()}`)

    const { command, args, env } = runOf(agent)
    const edit = (cwd?: string) => ({
      agentId: agent.id,
      name: agent.name,
      transport: { kind: 'process' as const, command, args, env, ...(cwd === undefined ? {} : { cwd }) }
    })
    expect(runOf(await host.request('agents.update', edit(folder))).cwd).toBe(folder)
    // Not given: left as it is.
    expect(runOf(await host.request('agents.update', edit())).cwd).toBe(folder)
    await host.request('agents.restart', { agentId: agent.id })
    expect(await agentSays(record.id, '/process-cwd')).toBe(`process cwd=${folder}`)
    expect(await host.request('agents.update', edit(''))).not.toHaveProperty('cwd')
    await host.request('agents.restart', { agentId: agent.id })
    expect(await agentSays(record.id, '/process-cwd')).toBe(`process cwd=${homedir()}`)
  })

  it('refuses a folder that is relative, missing or a file, saying why, and changes nothing', async () => {
    const base = scriptedAgent(join(root, 'state'))
    const inFolder = (cwd: string) => ({ ...base, transport: { ...base.transport, cwd } })
    await writeFile(join(root, 'a-file'), 'not a folder')
    expect(await host.handle('agents.add', inFolder('code/agents'))).toMatchObject({
      ok: false,
      error: { message: "The working folder must be an absolute path, like /home/you/code (got 'code/agents')" }
    })
    expect(await host.handle('agents.add', inFolder(join(root, 'nowhere')))).toMatchObject({
      ok: false,
      error: { message: `Working folder not found: ${join(root, 'nowhere')}` }
    })
    expect(await host.handle('agents.add', inFolder(join(root, 'a-file')))).toMatchObject({
      ok: false,
      error: { message: `Working folder is a file, not a folder: ${join(root, 'a-file')}` }
    })
    expect(await host.request('agents.list', {})).toEqual([])
    const agent = await host.request('agents.add', base)
    expect(await host.handle('agents.update', { agentId: agent.id, ...inFolder('../up') })).toMatchObject({ ok: false })
    expect(await host.request('agents.list', {})).toEqual([agent])
  })

  it('says so when the folder has gone since it was chosen', async () => {
    const folder = join(root, 'agent-home')
    await mkdir(folder)
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state'), {}, 'Scripted', { cwd: folder }))
    await removeDir(folder)
    expect(await host.handle('agents.restart', { agentId: agent.id })).toMatchObject({
      ok: false,
      error: { message: `Agent 'Scripted' could not be started: its working folder ${folder} does not exist. Edit the agent to choose another.` }
    })
  })
})

describe('an agent’s process', () => {
  it('shows the end of its stderr log, across runs', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
    expect(await host.request('agents.log', { agentId: agent.id })).toMatchObject({ text: '', truncated: false })
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: '/stderr \u001b[31mfirst run complaint\u001b[0m' })
    const first = await host.request('agents.log', { agentId: agent.id })
    expect(first.path).toBe(join(dataDir, 'logs', `${agent.id}.log`))
    // Colours are taken out; the line is there as soon as the turn ended.
    expect(first.text).toContain('\nfirst run complaint\n')
    expect(first.text).toMatch(/--- .* starting /)

    await host.request('agents.restart', { agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: '/stderr second run complaint' })
    const second = await host.request('agents.log', { agentId: agent.id })
    expect(second.text.indexOf('first run complaint')).toBeLessThan(second.text.indexOf('second run complaint'))
    expect(second.text).toMatch(/--- exited/)
  })

  it('keeps writing one log across a rename (running, and after a restart), and the log viewer reads it', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state'), {}, 'Before'))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: '/stderr said before the rename' })
    const { command, args, env } = runOf(agent)
    expect(
      await host.request('agents.update', { agentId: agent.id, name: 'After', transport: { kind: 'process', command, args, env } })
    ).toMatchObject({ id: agent.id, name: 'After' })
    // The running process goes on under its new name; a restart starts it again with it.
    await host.request('sessions.prompt', { id: record.id, text: '/stderr said by the running agent after the rename' })
    await host.request('agents.restart', { agentId: agent.id })
    await host.request('sessions.prompt', { id: record.id, text: '/stderr said after the restart' })
    const log = await host.request('agents.log', { agentId: agent.id })
    expect(log.path).toBe(join(dataDir, 'logs', `${agent.id}.log`))
    const said = ['said before the rename', 'said by the running agent after the rename', 'said after the restart'].map((line) =>
      log.text.indexOf(line)
    )
    expect(said.every((at) => at >= 0)).toBe(true)
    expect(said).toEqual([...said].sort((a, b) => a - b))
    expect(await readdir(join(dataDir, 'logs'))).toEqual([`${agent.id}.log`])
  })

  it('an agent removed and added again under the same name starts with a log of its own', async () => {
    const first = await host.request('agents.add', scriptedAgent(join(root, 'state'), {}, 'Twin'))
    const record = await host.request('sessions.new', { projectId, agentId: first.id })
    await host.request('sessions.prompt', { id: record.id, text: '/stderr said by the first twin' })
    await host.request('agents.check', { agentId: first.id })
    expect((await host.request('agents.log', { agentId: first.id })).text).toContain('said by the first twin')
    await host.request('sessions.delete', { id: record.id })
    await host.request('agents.remove', { agentId: first.id })
    // Its logs went with it (and its check's).
    expect(await readdir(join(dataDir, 'logs'))).toEqual([])
    const second = await host.request('agents.add', scriptedAgent(join(root, 'state'), {}, 'Twin'))
    expect(second.id).toBe(first.id)
    expect((await host.request('agents.log', { agentId: second.id })).text).toBe('')
  })

  it('starts an agent that is not running, and says why one cannot start', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state')))
    expect((await agentState(agent.id))?.status).toBe('stopped')
    const started = await host.request('agents.restart', { agentId: agent.id })
    expect(started).toMatchObject({ status: 'ready', capabilities: { protocolVersion: 1, loadSession: true } })

    const missing = await host.request('agents.add', {
      name: 'Missing',
      transport: { kind: 'process', command: join(root, 'no-such-agent'), args: [], env: {} }
    })
    const refused = await host.handle('agents.restart', { agentId: missing.id })
    expect(refused).toMatchObject({ ok: false, error: { message: expect.stringMatching(/was not found/) } })
    expect((await agentState(missing.id))?.status).toBe('error')
  })

  it('removes an agent only when no session uses it, with its secrets and remembered permissions', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state'), {}, 'Scripted', { secretEnv: { TOKEN: 'x' } }))
    const record = await host.request('sessions.new', { projectId, agentId: agent.id })
    const turn = host.request('sessions.prompt', { id: record.id, text: '/permission-always execute' })
    await expect.poll(async () => (await host.request('sessions.open', { id: record.id })).state.permissions?.[0]?.requestId).toBeTruthy()
    const [permission] = (await host.request('sessions.open', { id: record.id })).state.permissions ?? []
    await host.request('sessions.respondPermission', { id: record.id, requestId: permission.requestId, optionId: 'allow-always' })
    await turn
    expect(await host.request('permissions.list', {})).toHaveLength(1)
    expect(await host.handle('agents.remove', { agentId: agent.id })).toMatchObject({
      ok: false,
      error: { message: 'Scripted has 1 session; delete it first to remove the agent' }
    })
    await host.request('sessions.delete', { id: record.id })
    await host.request('agents.remove', { agentId: agent.id })
    expect(await host.request('agents.list', {})).toEqual([])
    expect(await host.request('agents.states', {})).toEqual([])
    expect(await secrets.get(agentEnvKey(agent.id, 'TOKEN'))).toBeUndefined()
    expect(await host.request('permissions.list', {})).toEqual([])
  })
})

describe('presets', () => {
  it('lists the built-in agents, which can be added once', async () => {
    const presets = await host.request('agents.presets', {})
    expect(presets.map((p) => [p.id, p.added])).toEqual([
      ['claude-code', false],
      ['gemini', false],
      ['codex', false]
    ])
    expect(presets.every((p) => p.installHint.startsWith('npm install -g '))).toBe(true)
    const added = await host.request('agents.addPreset', { presetId: 'gemini' })
    expect(added).toMatchObject({ id: 'gemini', name: 'Gemini CLI' })
    expect(await host.request('agents.addPreset', { presetId: 'gemini' })).toEqual(added)
    expect((await host.request('agents.list', {})).map((a) => a.id)).toEqual(['gemini'])
    expect((await host.request('agents.presets', {})).find((p) => p.id === 'gemini')?.added).toBe(true)
    expect(await host.handle('agents.addPreset', { presetId: 'nope' })).toMatchObject({ ok: false, error: { message: "No preset 'nope'" } })
  })
})
