import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { openHost, processesWithEnv, removeDir, tempDir, waitUntil } from '../helpers'
import { tinyServerCommand } from '../mcp/tiny-server'
import { startFakeAnthropic, type FakeAnthropic } from '../real/fake-anthropic'

/**
 * Real Claude Code (claude-agent-acp, offline against test/real/fake-anthropic.ts)
 * given two MCP servers, one of which exits at start: the adapter says which
 * failed (a notice), and the session shows it failed, with the agent's words;
 * the other is not claimed started until a tool of it runs.
 */

const modules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules')
const adapter = join(modules, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js')

let root: string
let home: string
let project: string
let host: Host
let api: FakeAnthropic

beforeEach(async () => {
  root = await tempDir('claude-mcp')
  home = join(root, 'home')
  project = join(root, 'project')
  await mkdir(home)
  await mkdir(project)
  api = await startFakeAnthropic()
  host = await openHost(join(root, 'data'))
})

afterEach(async () => {
  try {
    await host.close()
    await api.close()
    expect(processesWithEnv(`HOME=${home}`)).toEqual([])
  } finally {
    await removeDir(root)
  }
})

const mcpRunOf = async (id: string) => (await host.request('sessions.states', {})).find((s) => s.id === id)?.mcpRun

describe('real Claude Code and an MCP server that crashes', () => {
  it('the server that exits at start shows failed, in the agent’s words; the other is not claimed started', async () => {
    const agent = await host.request('agents.add', {
      name: 'Claude Code',
      command: process.execPath,
      args: [adapter],
      env: {
        HOME: home,
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: 'sk-ant-fake',
        IS_SANDBOX: '1',
        CLAUDE_CODE_MAX_RETRIES: '0',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_ENABLE_TELEMETRY: '0'
      }
    })
    const projectId = (await host.request('projects.add', { cwd: project })).id
    const tiny = tinyServerCommand()
    await host.request('mcp.save', { name: 'tiny', transport: 'stdio', command: tiny.command, args: tiny.args, env: [] })
    await host.request('mcp.save', {
      name: 'crashy',
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      env: [{ name: 'TINY_REQUIRE_TOKEN', value: 'wanted' }]
    })
    const id = (await host.request('sessions.new', { projectId, agentId: agent.id })).id
    // Claude Code reports its servers when its first turn starts.
    expect(await host.request('sessions.prompt', { id, text: 'hello' })).toEqual({ stopReason: 'end_turn' })
    await waitUntil('the crashed server shown failed', async () => (await mcpRunOf(id))?.servers.find((s) => s.name === 'crashy')?.state === 'failed')
    expect((await mcpRunOf(id))?.servers).toEqual([
      { name: 'tiny', state: 'not_reported', reason: expect.stringMatching(/^not reported by the agent/) },
      { name: 'crashy', state: 'failed', reason: expect.stringContaining('MCP server "crashy" failed to start') }
    ])
    const offered = JSON.stringify(api.main().at(-1) ?? {})
    expect(offered).toContain('mcp__tiny__echo')
    expect(offered).not.toContain('mcp__crashy__')
  }, 120_000)
})
