import { describe, expect, it } from 'vitest'
import { waitUntil } from '../helpers'
import { tinyServerCommand } from '../mcp/tiny-server'
import { offlineCodexPerTest, addCodexAgent } from '../real/codex'
import { textOfItem } from '../real/fake-openai'
import { threadReader } from '../real/thread'

/**
 * Real Codex (`@agentclientprotocol/codex-acp` 2.x, offline against
 * test/real/fake-openai.ts, set up by test/real/codex.ts as real-codex.test.ts
 * is) given two MCP servers, one of which exits at start. codex-acp reports the
 * one that failed, with Codex's words, as a failed tool call `mcp__S__startup`;
 * of the one that started it says nothing until one of its tools runs (which
 * Codex 0.166 does from its code mode's `exec`, asking first in Read-only).
 */

const run = offlineCodexPerTest()
const { answer } = threadReader(() => run.host, 'Codex')

const mcpRunOf = async (id: string) => (await run.host.request('sessions.states', {})).find((s) => s.id === id)?.mcpRun

describe('real Codex and MCP servers, one of which exits at start', () => {
  it('the one that failed shows failed with Codex’s words; the other shows started once its tool runs', async () => {
    const agentId = await addCodexAgent(run.host, run.codex)
    const projectId = (await run.host.request('projects.add', { cwd: run.project })).id
    const tiny = tinyServerCommand()
    await run.host.request('mcp.save', { name: 'tiny', transport: 'stdio', command: tiny.command, args: tiny.args, env: [] })
    await run.host.request('mcp.save', {
      name: 'crashy',
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      env: [{ name: 'TINY_REQUIRE_TOKEN', value: 'wanted' }]
    })
    const id = (await run.host.request('sessions.new', { projectId, agentId })).id
    // Codex reports the failure once its start of the servers ended (which its first turn waits for).
    expect(await run.host.request('sessions.prompt', { id, text: 'hello' })).toEqual({ stopReason: 'end_turn' })
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
    const turn = run.host.request('sessions.prompt', { id, text: 'CALL mcp__tiny__echo {"text":"hi from the model"}' })
    expect((await answer(id, 'allow')).title).toBe('mcp.tiny.echo')
    expect((await turn).stopReason).toBe('end_turn')
    expect((await mcpRunOf(id))?.servers).toEqual([
      { name: 'tiny', state: 'started', reason: 'its tool echo ran' },
      expect.objectContaining({ name: 'crashy', state: 'failed' })
    ])
    // The tool's answer reached the model.
    expect(textOfItem(run.api.main().at(-1)?.body.input?.at(-1))).toContain('hi from the model')
  }, 120_000)
})
