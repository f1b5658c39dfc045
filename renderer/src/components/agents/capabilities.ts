import type { AgentCapabilities } from '../../../../shared/domain'

/** What an agent announced in `initialize`, as rows a person can read. */

export interface CapabilityRow {
  id: string
  label: string
  /** The protocol name, for those who look it up. */
  method: string
  supported: boolean
}

export function capabilityRows(c: AgentCapabilities): CapabilityRow[] {
  return [
    { id: 'load', label: 'Reopen past sessions (replayed)', method: 'session/load', supported: c.loadSession },
    { id: 'resume', label: 'Resume sessions without a replay', method: 'session/resume', supported: c.session.resume },
    { id: 'list', label: 'List sessions made in other clients', method: 'session/list', supported: c.session.list },
    { id: 'close', label: 'Close sessions', method: 'session/close', supported: c.session.close },
    { id: 'delete', label: 'Delete sessions', method: 'session/delete', supported: c.session.delete },
    { id: 'fork', label: 'Fork sessions', method: 'session/fork', supported: c.session.fork },
    { id: 'directories', label: 'Additional folders', method: 'additionalDirectories', supported: c.session.additionalDirectories },
    { id: 'system-prompt', label: 'A system prompt from Switchboard', method: 'sessionCapabilities.systemPrompt', supported: c.session.systemPrompt },
    { id: 'image', label: 'Images in prompts', method: 'promptCapabilities.image', supported: c.prompt.image },
    { id: 'audio', label: 'Audio in prompts', method: 'promptCapabilities.audio', supported: c.prompt.audio },
    { id: 'embedded', label: 'Embedded files in prompts', method: 'promptCapabilities.embeddedContext', supported: c.prompt.embeddedContext },
    { id: 'mcp-http', label: 'MCP servers over HTTP', method: 'mcpCapabilities.http', supported: c.mcp.http },
    { id: 'mcp-sse', label: 'MCP servers over SSE', method: 'mcpCapabilities.sse', supported: c.mcp.sse },
    { id: 'logout', label: 'Log out', method: 'logout', supported: c.auth.logout }
  ]
}
