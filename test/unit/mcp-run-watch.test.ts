import { describe, expect, it } from 'vitest'
import { mcpToolOf, startupLinesOf, startupNoticeOf } from '../../electron/host/mcp/run-watch'

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

describe('startupLinesOf', () => {
  it('Codex’s startup events in its log (lines as codex-acp 0.137 writes them): ready, or failed with why', () => {
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
