import { describe, expect, it } from 'vitest'
import { codexStartupOf, mcpToolOf, startupLinesOf, startupNoticeOf } from '../../electron/host/mcp/run-watch'

/** How the Host tells which given MCP server an agent's update is about (electron/host/mcp/run-watch.ts). */

const servers = [{ name: 'tiny' }, { name: 'my files' }]

describe('mcpToolOf', () => {
  it('reads Claude Code’s tool names (its server names with spaces made _), Gemini CLI’s titles, and raw server/tool inputs', () => {
    expect(mcpToolOf({ toolCallId: 'a', _meta: { claudeCode: { toolName: 'mcp__tiny__echo' } } }, servers)).toEqual({ server: 'tiny', tool: 'echo' })
    expect(mcpToolOf({ toolCallId: 'b', _meta: { claudeCode: { toolName: 'mcp__my_files__read' } } }, servers)).toEqual({
      server: 'my files',
      tool: 'read'
    })
    expect(mcpToolOf({ toolCallId: 'c', title: 'echo (tiny MCP Server)' }, servers)).toEqual({ server: 'tiny', tool: 'echo' })
    expect(mcpToolOf({ toolCallId: 'd', rawInput: { server: 'tiny', tool: 'echo' } }, servers)).toEqual({ server: 'tiny', tool: 'echo' })
  })

  it('a server the session was not given, or a tool of the agent’s own, is nobody’s', () => {
    expect(mcpToolOf({ toolCallId: 'e', _meta: { claudeCode: { toolName: 'mcp__other__echo' } } }, servers)).toBeUndefined()
    expect(mcpToolOf({ toolCallId: 'f', title: 'echo (other MCP Server)' }, servers)).toBeUndefined()
    expect(mcpToolOf({ toolCallId: 'g', title: 'Read notes.md', _meta: { claudeCode: { toolName: 'Read' } } }, servers)).toBeUndefined()
  })
})

describe('startupNoticeOf', () => {
  it('Claude Code’s notice of a server that failed to start, or its transcript line for a client without notices', () => {
    const notice = {
      sessionUpdate: 'notice',
      severity: 'warning',
      title: 'MCP server "tiny" failed to start',
      description: 'Run /mcp for the error.'
    }
    expect(startupNoticeOf(notice as never, servers)).toEqual({
      name: 'tiny',
      state: 'failed',
      reason: 'the agent says it failed to start (“MCP server "tiny" failed to start: Run /mcp for the error.”)'
    })
    const line = {
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: '**MCP server "my files" needs authentication**' },
      _meta: { claudeCode: { kind: 'mcpServerStatus', server: 'my files', status: 'needs-auth' } }
    }
    expect(startupNoticeOf(line as never, servers)).toMatchObject({ name: 'my files', state: 'not_started' })
    // Another server's, or any other notice: nothing.
    const other = { ...notice, title: 'MCP server "other" failed to start' }
    const unrelated = { ...notice, title: 'Context compacted' }
    expect(startupNoticeOf(other as never, servers)).toBeUndefined()
    expect(startupNoticeOf(unrelated as never, servers)).toBeUndefined()
  })
})

describe('codexStartupOf', () => {
  /** A report as codex-acp 2.6 sends it (its McpStartupReporter). */
  const report = (server: string, text: string, status = 'failed') => ({
    sessionUpdate: 'tool_call',
    toolCallId: `mcp_startup.${encodeURIComponent(server)}.169c93a5-ebfb-4f2b-ba3c-3e5f398f0cc0`,
    kind: 'other',
    title: `mcp__${server}__startup`,
    status,
    content: [{ type: 'content', content: { type: 'text', text } }]
  })

  it('codex-acp 2.x’s failed `mcp__S__startup` tool call: failed with Codex’s words, or not started when it skipped the server', () => {
    const failed = report(
      'tiny',
      '[codex-acp forwarded startup error] MCP server `tiny` failed to start: MCP client for `tiny` failed to start: MCP startup failed: handshaking with MCP server failed: connection closed: initialize response'
    )
    expect(codexStartupOf(failed as never, servers)).toEqual({
      name: 'tiny',
      state: 'failed',
      reason:
        'the agent says it failed to start (“MCP server `tiny` failed to start: MCP client for `tiny` failed to start: MCP startup failed: handshaking with MCP server failed: connection closed: initialize response”)'
    })
    // Its server names have whitespace made _.
    const cancelled = report('my_files', '[codex-acp forwarded startup error] MCP server `my_files` startup was cancelled.')
    expect(codexStartupOf(cancelled as never, servers)).toEqual({
      name: 'my files',
      state: 'failed',
      reason: 'the agent says it failed to start (“MCP server `my_files` startup was cancelled.”)'
    })
    const skipped = report(
      'tiny',
      '[codex-acp] MCP server `tiny` was not started, because the Codex config already defines an MCP server with this name. Codex uses its own entry, or no server if that entry is disabled.'
    )
    expect(codexStartupOf(skipped as never, servers)).toMatchObject({
      name: 'tiny',
      state: 'not_started',
      reason: expect.stringContaining('Codex config already defines')
    })
  })

  it('another server’s report, a tool call not of codex-acp’s start, or one that did not fail: nothing', () => {
    const failed = report('tiny', '[codex-acp forwarded startup error] MCP server `tiny` failed to start: boom')
    expect(codexStartupOf(report('other', 'failed to start') as never, servers)).toBeUndefined()
    const notStartup = { ...failed, toolCallId: 'call_1' }
    const completed = { ...failed, status: 'completed' }
    const text = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'mcp__tiny__startup' } }
    for (const update of [notStartup, completed, text]) expect(codexStartupOf(update as never, servers)).toBeUndefined()
  })
})

describe('startupLinesOf', () => {
  it('the older Codex adapter’s startup events in its log (lines as codex-acp 0.137 writes them): ready, or failed with why', () => {
    const log = [
      '2026-11-28T18:50:32.812611Z  WARN codex_acp::thread: Received event for unknown submission ID:  McpStartupUpdate(McpStartupUpdateEvent { server: "crashy", status: Starting })',
      '2026-11-28T18:50:34.959832Z  WARN codex_acp::thread: Received event for unknown submission ID:  McpStartupUpdate(McpStartupUpdateEvent { server: "tiny", status: Ready })',
      '2026-11-28T18:50:35.203590Z  WARN codex_acp::thread: Received event for unknown submission ID:  McpStartupUpdate(McpStartupUpdateEvent { server: "crashy", status: Failed { error: "MCP client for `crashy` failed to start: MCP startup failed: handshaking with MCP server failed: connection closed: \\"initialize\\" response" } })',
      '2026-11-28T18:50:35.203622Z  WARN codex_acp::thread: Received event for unknown submission ID:  McpStartupUpdate(McpStartupUpdateEvent { server: "other", status: Ready })'
    ].join('\n')
    expect(startupLinesOf(log, [{ name: 'tiny' }, { name: 'crashy' }])).toEqual([
      { name: 'tiny', state: 'started', reason: 'the agent’s log says it is ready' },
      {
        name: 'crashy',
        state: 'failed',
        reason:
          'the agent’s log says it failed: MCP client for `crashy` failed to start: MCP startup failed: handshaking with MCP server failed: connection closed: "initialize" response'
      }
    ])
  })
})
