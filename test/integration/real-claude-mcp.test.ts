import { describe, expect, it } from 'vitest'
import { waitUntil } from '../helpers'
import { tinyServerCommand } from '../mcp/tiny-server'
import { addClaudeAgent, offlineClaudePerTest } from '../real/claude'

/**
 * Real Claude Code (claude-agent-acp, offline against test/real/fake-anthropic.ts)
 * given two MCP servers, one of which exits at start: the adapter says which
 * failed (a notice), and the session shows it failed, with the agent's words;
 * the other is not claimed started until a tool of it runs.
 */

const run = offlineClaudePerTest('claude-mcp')

const mcpRunOf = async (id: string) => (await run.host.request('sessions.states', {})).find((s) => s.id === id)?.mcpRun

describe('real Claude Code and an MCP server that crashes', () => {
  it('the server that exits at start shows failed, in the agent’s words; the other is not claimed started', async () => {
    const agentId = await addClaudeAgent(run)
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
    // Claude Code reports its servers when its first turn starts.
    expect(await run.host.request('sessions.prompt', { id, text: 'hello' })).toEqual({ stopReason: 'end_turn' })
    await waitUntil('the crashed server shown failed', async () => (await mcpRunOf(id))?.servers.find((s) => s.name === 'crashy')?.state === 'failed')
    expect((await mcpRunOf(id))?.servers).toEqual([
      { name: 'tiny', state: 'not_reported', reason: expect.stringMatching(/^not reported by the agent/) },
      { name: 'crashy', state: 'failed', reason: expect.stringContaining('MCP server "crashy" failed to start') }
    ])
    const offered = JSON.stringify(run.api.main().at(-1) ?? {})
    expect(offered).toContain('mcp__tiny__echo')
    expect(offered).not.toContain('mcp__crashy__')
  }, 120_000)
})
