import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { openHost, processesWithEnv, removeDir, tempDir, waitUntil } from '../helpers'
import { tinyServerCommand } from '../mcp/tiny-server'
import { addCodexAgent, makeCodexHome, type CodexHome } from '../real/codex'
import { startFakeOpenAI, textOfItem, type FakeOpenAI } from '../real/fake-openai'
import { threadReader } from '../real/thread'

/**
 * Real Codex (`@agentclientprotocol/codex-acp` 2.x, offline against
 * test/real/fake-openai.ts, set up by test/real/codex.ts as real-codex.test.ts
 * is) given two MCP servers, one of which exits at start. codex-acp reports the
 * one that failed, with Codex's words, as a failed tool call `mcp__S__startup`;
 * of the one that started it says nothing until one of its tools runs (which
 * Codex 0.166 does from its code mode's `exec`, asking first in Read-only).
 */

let root: string
let codex: CodexHome
let project: string
let dataDir: string
let host: Host
let api: FakeOpenAI
const { answer } = threadReader(() => host, 'Codex')

beforeEach(async () => {
  root = await tempDir('codex')
  project = join(root, 'project')
  dataDir = join(root, 'data')
  await mkdir(project)
  api = await startFakeOpenAI()
  codex = await makeCodexHome(root, api.url)
  host = await openHost(dataDir)
})

afterEach(async () => {
  try {
    await host.close()
    await api.close()
    // Everything Codex started had HOME set to our folder: none of it may remain.
    expect(processesWithEnv(`HOME=${codex.home}`)).toEqual([])
    // Codex called nothing of the API the fake does not serve.
    expect(api.unknown.map((r) => `${r.method} ${r.path}`)).toEqual([])
  } finally {
    await removeDir(root)
  }
})

const mcpRunOf = async (id: string) => (await host.request('sessions.states', {})).find((s) => s.id === id)?.mcpRun

describe('real Codex and MCP servers, one of which exits at start', () => {
  it('the one that failed shows failed with Codex’s words; the other shows started once its tool runs', async () => {
    const agentId = await addCodexAgent(host, codex)
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
    const id = (await host.request('sessions.new', { projectId, agentId })).id
    // Codex reports the failure once its start of the servers ended (which its first turn waits for).
    expect(await host.request('sessions.prompt', { id, text: 'hello' })).toEqual({ stopReason: 'end_turn' })
    await waitUntil('crashy reported', async () => (await mcpRunOf(id))?.servers.find((s) => s.name === 'crashy')?.state !== 'not_reported')
    expect((await mcpRunOf(id))?.servers).toEqual([
      { name: 'tiny', state: 'not_reported', reason: expect.stringContaining('not reported by the agent') },
      {
        name: 'crashy',
        state: 'failed',
        reason: expect.stringMatching(
          /^the agent says it failed to start \(“MCP server `crashy` failed to start: MCP client for `crashy` failed to start: .*connection closed/
        )
      }
    ])

    // The model calls tiny's tool: Codex asks (Read-only), it runs, and tiny shows started.
    const turn = host.request('sessions.prompt', { id, text: 'CALL mcp__tiny__echo {"text":"hi from the model"}' })
    expect((await answer(id, 'allow')).title).toBe('mcp.tiny.echo')
    expect((await turn).stopReason).toBe('end_turn')
    expect((await mcpRunOf(id))?.servers).toEqual([
      { name: 'tiny', state: 'started', reason: 'its tool echo ran' },
      expect.objectContaining({ name: 'crashy', state: 'failed' })
    ])
    // The tool's answer reached the model.
    expect(textOfItem(api.main().at(-1)?.body.input?.at(-1))).toContain('hi from the model')
  }, 120_000)
})
