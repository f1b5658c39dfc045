import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import { scriptedAgentCommand } from '../agent/spawn'
import { allowCommands, confirmEverything, entriesOf, fold, removeDir, tempDir } from '../helpers'
import { tinyServerCommand, TINY_SERVER_NAME } from '../mcp/tiny-server'

/**
 * An app started from the Dock or a desktop menu gets a minimal PATH: the Host
 * reads the login shell's environment and gives it to everything it starts.
 * Here the Host runs with a Dock-like PATH and a SHELL that is a script whose
 * "startup files" put a folder on PATH (holding an agent's command, an MCP
 * server and a preset's command) and set a variable.
 */

const MINIMAL_PATH = '/usr/bin:/bin'

let root: string
let bin: string
let projectDir: string
let host: Host
const saved = { PATH: process.env.PATH, SHELL: process.env.SHELL }

const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`

async function executable(path: string, body: string): Promise<string> {
  await writeFile(path, `#!/bin/sh\n${body}\n`)
  await chmod(path, 0o755)
  return path
}

beforeAll(async () => {
  root = await tempDir('user-environment')
  bin = join(root, 'bin')
  projectDir = join(root, 'project')
  await mkdir(bin)
  await mkdir(projectDir)
  const agent = scriptedAgentCommand()
  await executable(join(bin, 'fake-agent'), `exec ${[agent.command, ...agent.args].map(quote).join(' ')} "$@"`)
  const tiny = tinyServerCommand()
  await executable(join(bin, 'tiny-mcp'), `exec ${[tiny.command, ...tiny.args].map(quote).join(' ')} "$@"`)
  // The Claude Code preset's own command, installed where only the shell's PATH reaches.
  await executable(join(bin, 'claude-agent-acp'), 'exit 0')
  const shell = await executable(
    join(root, 'login-shell'),
    [
      'echo "Welcome back! (printed by the profile)"',
      `PATH="${bin}:$PATH"; export PATH`,
      'FROM_PROFILE="set by the profile"; export FROM_PROFILE',
      'for last; do :; done',
      'exec /bin/sh -c "$last"'
    ].join('\n')
  )
  process.env.PATH = MINIMAL_PATH
  process.env.SHELL = shell
  // No presets given: a new database is seeded with the presets as found on this PATH.
  host = await Host.open({
    dataDir: join(root, 'data'),
    version: 'test',
    confirmCommand: confirmEverything,
    initializeTimeoutMs: 20_000,
    loginShell: true
  })
})

afterAll(async () => {
  await host?.close()
  process.env.PATH = saved.PATH
  process.env.SHELL = saved.SHELL
  await removeDir(root)
})

async function reply(sessionId: string, text: string): Promise<string> {
  await host.request('sessions.prompt', { id: sessionId, text })
  const thread = fold((await host.request('sessions.open', { id: sessionId })).records)
  return entriesOf(thread, 'assistant')
    .map((e) => (e as { text: string }).text)
    .join('\n')
}

describe.skipIf(process.platform === 'win32')('the login shell’s environment, with a minimal PATH', () => {
  it('sets up a preset installed on the shell’s PATH to run directly, and says it is installed', async () => {
    const claude = (await host.request('agents.list', {})).find((a) => a.id === 'claude-code')
    expect(claude).toMatchObject({ transport: { kind: 'process', command: 'claude-agent-acp', args: [] } })
    const presets = await host.request('agents.presets', {})
    expect(presets.find((p) => p.id === 'claude-code')).toMatchObject({ installed: true, command: 'claude-agent-acp' })
    expect(presets.find((p) => p.id === 'codex')).toMatchObject({ installed: false, command: 'npx' })
    const states = await host.request('agents.states', {})
    expect(states.find((s) => s.agentId === 'claude-code')).toMatchObject({ installed: true })
  })

  it('starts an agent whose command is only on the shell’s PATH, with the shell’s variables; its terminals get them too', async () => {
    const agent = await host.request('agents.add', {
      name: 'Fake',
      transport: { kind: 'process', command: 'fake-agent', env: { SCRIPTED_AGENT_STATE_DIR: join(root, 'state') } }
    })
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agent.id)).toMatchObject({ installed: true })
    const project = await host.request('projects.add', { cwd: projectDir })
    const session = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    allowCommands(host)
    const text = await reply(session.id, '/env FROM_PROFILE\n/env PATH\n/terminal printenv FROM_PROFILE; command -v fake-agent')
    expect(text).toContain('FROM_PROFILE=set by the profile')
    expect(text).toContain(`PATH=${bin}:${MINIMAL_PATH}`)
    expect(text).toContain(`exit=0 signal=none truncated=false output=${JSON.stringify(`set by the profile\n${join(bin, 'fake-agent')}\n`)}`)
  })

  it('finds an MCP server’s command on the shell’s PATH, for Test connection and for sessions', async () => {
    const profile = await host.request('mcp.save', { name: 'tiny', transport: 'stdio', command: 'tiny-mcp' })
    // A long deadline: the server is TypeScript run through tsx, slow to start on a busy machine.
    expect(await host.request('mcp.test', { id: profile.id, timeoutMs: 90_000 })).toMatchObject({ ok: true, server: { name: TINY_SERVER_NAME } })
    const agent = (await host.request('agents.list', {})).find((a) => a.name === 'Fake')!
    const project = (await host.request('projects.list', {}))[0]
    const session = await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    expect(await reply(session.id, '/mcp')).toContain(`"command":${JSON.stringify(join(bin, 'tiny-mcp'))}`)
    await host.request('mcp.delete', { id: profile.id })
  })
})

describe.skipIf(process.platform === 'win32')('a login shell that cannot be read', () => {
  it('prints garbage: the Host uses its own environment and says why', async () => {
    const dir = await tempDir('garbage-shell')
    const shell = await executable(join(dir, 'garbage-shell'), 'echo "PATH=/somewhere {not json"')
    const other = await Host.open({
      dataDir: join(dir, 'data'),
      version: 'test',
      confirmCommand: confirmEverything,
      presets: [],
      loginShell: { shell, timeoutMs: 20_000 }
    })
    try {
      const { warnings } = await other.request('app.info', {})
      expect(warnings).toEqual([
        expect.stringContaining(
          `could not read your login shell's environment (${shell} exited with code 0 without printing an environment Switchboard could read)`
        )
      ])
      const agent = await other.request('agents.add', { name: 'Fake', transport: { kind: 'process', command: 'fake-agent' } })
      expect((await other.request('agents.states', {})).find((s) => s.agentId === agent.id)).toMatchObject({ installed: false })
    } finally {
      await other.close()
      await removeDir(dir)
    }
  })

  it('hangs: after the timeout the Host uses its own environment and says why', async () => {
    const dir = await tempDir('hanging-shell')
    const shell = await executable(join(dir, 'hanging-shell'), 'sleep 600')
    const other = await Host.open({
      dataDir: join(dir, 'data'),
      version: 'test',
      confirmCommand: confirmEverything,
      presets: [],
      loginShell: { shell, timeoutMs: 1000 }
    })
    try {
      const { warnings } = await other.request('app.info', {})
      expect(warnings).toEqual([
        expect.stringContaining(`could not read your login shell's environment (${shell} did not print its environment within 1 s)`)
      ])
      const agent = await other.request('agents.add', { name: 'Fake', transport: { kind: 'process', command: 'fake-agent' } })
      const state = (await other.request('agents.states', {})).find((s) => s.agentId === agent.id)
      expect(state).toMatchObject({
        installed: false,
        message: "Fake: the command 'fake-agent' was not found. Install it, or fix the agent's command."
      })
    } finally {
      await other.close()
      await removeDir(dir)
    }
  })
})
