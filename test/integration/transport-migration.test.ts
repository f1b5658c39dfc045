import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import { DB_VERSION } from '../../electron/host/storage/store'
import { startNetworkAgent, type NetworkAgent } from '../agent/network-agent'
import { scriptedAgentCommand } from '../agent/spawn'
import { confirmEverything, entriesOf, fold, readDbJson, removeDir, tempDir } from '../helpers'
import { startSshd, type TestSshd } from '../ssh/sshd'

/**
 * A db.json of version 5 (an agent's command, arguments, variables and folder
 * with `remote?` or `ssh?` beside them) opened by this Host: each kind of
 * agent (a process, one over SSH, one over the network) is listed and started
 * as before, and the file is written again with each agent's `transport`.
 */

let sshd: TestSshd
let root: string
let dataDir: string
let projectDir: string
let stateDir: string
let server: NetworkAgent
const hosts: Host[] = []
const at = '2026-01-01T00:00:00.000Z'

beforeAll(async () => {
  sshd = await startSshd()
})

afterAll(async () => {
  await sshd?.close()
})

beforeEach(async () => {
  root = await tempDir('transport-migration')
  dataDir = join(root, 'data')
  projectDir = join(root, 'project')
  stateDir = join(root, 'agent-state')
  await mkdir(projectDir, { recursive: true })
  await mkdir(dataDir, { recursive: true })
  server = await startNetworkAgent({ env: { SCRIPTED_AGENT_STATE_DIR: stateDir } })
})

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()))
  await server.close()
  await removeDir(root)
})

async function openHost(): Promise<Host> {
  const host = await Host.open({ dataDir, version: 'test', presets: [], initializeTimeoutMs: 30_000, confirmCommand: confirmEverything })
  hosts.push(host)
  return host
}

/** Starts a session of the agent in the project and has it stream a reply: it runs. */
async function runsASession(host: Host, agentId: string, projectId: string): Promise<string> {
  const record = await host.request('sessions.new', { projectId, agentId })
  const result = await host.request('sessions.prompt', { id: record.id, text: '/stream 3' })
  expect(result.stopReason).toBe('end_turn')
  return (entriesOf(fold((await host.request('sessions.open', { id: record.id })).records), 'assistant')[0] as { text: string }).text
}

describe('a version 5 db.json', () => {
  it('keeps every agent listed and started as before, each kind, and is written again with their transports', async () => {
    const { command, args } = scriptedAgentCommand()
    const target = sshd.target()
    const sshHost = `127.0.0.1:${sshd.port}`
    const v5 = {
      version: 5,
      projects: [
        { id: 'here', name: 'here', cwd: projectDir, createdAt: at },
        { id: 'there', name: 'there', cwd: projectDir, sshHost, createdAt: at }
      ],
      agents: [
        { id: 'local', name: 'Local', command, args, env: { SCRIPTED_AGENT_STATE_DIR: stateDir }, secretEnv: [], protocol: 2 },
        { id: 'far', name: 'Far', command, args, env: { SCRIPTED_AGENT_STATE_DIR: stateDir }, cwd: projectDir, ssh: target },
        { id: 'net', name: 'Net', command: '', args: [], env: {}, secretEnv: [], remote: { url: server.wsUrl } }
      ],
      sessions: [],
      permissionRules: [],
      mcpProfiles: [],
      mcpDisabled: {}
    }
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(v5))
    const host = await openHost()
    expect((await host.request('app.info', {})).warnings).toEqual([])

    const local = { kind: 'process', command, args, env: { SCRIPTED_AGENT_STATE_DIR: stateDir } }
    const far = { kind: 'ssh', ...target, command, args, env: { SCRIPTED_AGENT_STATE_DIR: stateDir }, cwd: projectDir }
    const net = { kind: 'network', url: server.wsUrl }
    expect(await host.request('agents.list', {})).toEqual([
      { id: 'local', name: 'Local', protocol: 2, transport: local },
      { id: 'far', name: 'Far', transport: far },
      { id: 'net', name: 'Net', transport: net }
    ])
    const written = await readDbJson(dataDir)
    expect(written.version).toBe(DB_VERSION)
    expect((written.agents as unknown[]).map((a) => (a as { transport: unknown }).transport)).toEqual([local, far, net])
    // Nothing of the old shape beside it.
    for (const agent of written.agents as Record<string, unknown>[])
      expect(Object.keys(agent).filter((k) => ['remote', 'ssh', 'command', 'args', 'env', 'cwd'].includes(k))).toEqual([])
    expect(JSON.parse(await readFile(join(dataDir, 'db.v5.backup.json'), 'utf8'))).toEqual(v5)

    // Each runs as before: here, on the host over SSH (in the project there), and over the network.
    expect(await runsASession(host, 'local', 'here')).toBe('chunk 1 chunk 2 chunk 3 ')
    expect(await runsASession(host, 'far', 'there')).toBe('chunk 1 chunk 2 chunk 3 ')
    expect(await runsASession(host, 'net', 'here')).toBe('chunk 1 chunk 2 chunk 3 ')
    const states = await host.request('agents.states', {})
    expect(states.map((s) => [s.agentId, s.status])).toEqual([
      ['local', 'ready'],
      ['far', 'ready'],
      ['net', 'ready']
    ])
    // Its protocol setting kept too: asked for version 2, the scripted agent answers 1.
    expect(states[0].protocolNote).toMatch(/^Asked for ACP protocol version 2/)
    // Only the agent over SSH works in the project on its host.
    await expect(host.request('sessions.new', { projectId: 'there', agentId: 'local' })).rejects.toThrow(
      /runs on this computer, and there is on 127\.0\.0\.1/
    )
  })

  it('with an agent whose old fields mean no one transport: says which and why, and loses nothing', async () => {
    const { command, args } = scriptedAgentCommand()
    const v5 = {
      version: 5,
      projects: [{ id: 'here', name: 'here', cwd: projectDir, createdAt: at }],
      agents: [
        { id: 'local', name: 'Local', command, args, env: { SCRIPTED_AGENT_STATE_DIR: stateDir } },
        { id: 'both', name: 'Both', command, args, env: {}, ssh: sshd.target(), remote: { url: server.wsUrl } }
      ],
      sessions: [
        {
          id: 's1',
          acpSessionId: 'x',
          agentId: 'both',
          projectId: 'here',
          cwd: projectDir,
          title: 'Kept',
          titleSource: 'user',
          createdAt: at,
          updatedAt: at
        }
      ],
      permissionRules: [],
      mcpProfiles: [],
      mcpDisabled: {}
    }
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(v5))
    const host = await openHost()
    const { warnings } = await host.request('app.info', {})
    expect(warnings).toEqual([
      `An agent could not be carried over to this version of Switchboard and was left out: “Both” (both): it has both a network address and an SSH host, and an agent is reached one way. ` +
        `Its definition is kept in ${join(dataDir, 'db.v5.backup.json')}; add it again on the Agents page under the same name to continue its sessions.`
    ])
    expect((await host.request('agents.list', {})).map((a) => a.id)).toEqual(['local'])
    // The rest of db.json as it was: the project, the session (of the agent left out), the other agent, which runs.
    expect(await host.request('projects.list', {})).toEqual(v5.projects)
    expect((await host.request('sessions.list', {})).map((s) => [s.id, s.title])).toEqual([['s1', 'Kept']])
    expect(JSON.parse(await readFile(join(dataDir, 'db.v5.backup.json'), 'utf8'))).toEqual(v5)
    expect(await runsASession(host, 'local', 'here')).toBe('chunk 1 chunk 2 chunk 3 ')
  })
})
