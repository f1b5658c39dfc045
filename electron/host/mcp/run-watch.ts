import type { SessionNotification } from '@agentclientprotocol/sdk'
import type { SessionState } from '../../../shared/domain'
import type { AgentDefinition } from '../../../shared/agent-definition'
import { commandOf, localCommandOf } from '../../../shared/transport'
import type { SessionMcpRun, SessionMcpRunState, SessionMcpServer } from '../../../shared/mcp'
import { toolNameOf } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import type { AgentConnection } from '../connection/connection'
import type { UserEnvironment } from '../child-processes/environment'
import type { RequestContext } from '../contract/handlers'
import type { Records } from '../storage/records'
import { geminiFolderTrust, trustFolderForGemini } from './gemini-trust'

/**
 * Which of a live session's MCP servers its agent actually started, from the
 * best evidence the agent gives: ACP has no message for it, and the agents
 * checked say nothing of it (Gemini CLI 0.61 writes nothing on stderr or over
 * ACP, neither for a folder it does not trust nor for a server that exits at
 * once; Claude Code's adapter does not pass its CLI's MCP status on).
 *
 * - When the session is linked: every given server is `not_reported`, except
 *   under Gemini CLI in a folder it does not trust (gemini-trust.ts), where
 *   all are `not_started` and the session says so, with the folder and
 *   Gemini CLI's trust file.
 * - Claude Code's adapter says when a server given in `session/new` failed to
 *   start or needs authentication (`startupNoticeOf`): `failed`, `not_started`.
 * - Codex's adapter (codex-acp 2.x) reports a server that failed to start
 *   (or whose start was cancelled, or that it skipped for a server of the
 *   same name in Codex's own config) as a failed tool call titled
 *   `mcp__S__startup` with Codex's words (`codexStartupOf`): `failed`,
 *   `not_started`. It passes on nothing of a server that started (its
 *   app-server's `mcpServer/startupStatus/updated` `ready` goes no further):
 *   that one shows `started` once one of its tools runs.
 * - The older codex-acp (0.x, Rust) wrote each server's startup (ready, or
 *   failed with why) on its stderr instead (`startupLinesOf`), read from where
 *   it was before the session was asked for: `started`, `failed`.
 * - Each tool call of a server's tool (Claude Code's `mcp__S__T` tool name,
 *   Gemini CLI's "T (S MCP Server)" title, a raw input naming `server` and
 *   `tool`): one that completes shows it `started`; one that fails with a
 *   connection failure (closed, not connected, exited...) shows it `failed`
 *   with the agent's words: a server that crashes inside the agent leaves this
 *   trace. A tool that answers with its own error still shows it started.
 *
 * The state is `SessionState.mcpRun`, sent to the windows as the rest of it.
 */

export interface McpRunWatchOptions {
  records: Records
  environment: UserEnvironment
  stateOf: (id: string) => SessionState
  setState: (id: string, patch: Partial<SessionState>) => void
}

const NOT_REPORTED = 'not reported by the agent: it says which servers it started only when one of their tools runs'
export const GEMINI_UNTRUSTED = 'Gemini CLI does not start MCP servers in folders it does not trust'
/** Tool calls remembered per session to know the server of a later update (which may name only the call). */
const MAX_CALLS = 500
/** What an agent says of a tool call whose server could not be reached (it exited, never started, closed the pipe). */
const UNREACHABLE =
  /connection closed|not connected|ECONNREFUSED|ECONNRESET|EPIPE|ENOENT|exited|spawn|-32000|disconnected|not running|failed to (start|connect)|crash|closed the connection/i

export class McpRunWatch {
  /** Per session: tool call id → the server and tool it runs. */
  private readonly calls = new Map<string, Map<string, { server: string; tool: string }>>()
  /** Per session: its agent run, and how far its stderr has been read. */
  private readonly logs = new Map<string, { connection: AgentConnection; mark: number }>()

  constructor(private readonly options: McpRunWatchOptions) {}

  /** A session was linked to a run of its agent with these servers: what that run is known to start. */
  async attached(
    id: string,
    given: SessionMcpServer[],
    connection: AgentConnection,
    definition: AgentDefinition,
    cwd: string,
    /** Where the agent's stderr was before the session was asked for (what it says of its servers comes after). */
    mark = connection.stderrMark()
  ): Promise<void> {
    this.calls.delete(id)
    this.logs.delete(id)
    if (!given.length) {
      this.options.setState(id, { mcpRun: undefined })
      return
    }
    this.logs.set(id, { connection, mark })
    // What cannot be read of the agent's trust says nothing: the session is not held up by it.
    const untrusted = await this.untrustedFolder(connection, definition, cwd).catch(() => undefined)
    const servers: SessionMcpRun[] = given.map((s) =>
      untrusted
        ? { name: s.name, state: 'not_started', reason: `${GEMINI_UNTRUSTED} (${untrusted.why})` }
        : { name: s.name, state: 'not_reported', reason: NOT_REPORTED }
    )
    this.options.setState(id, {
      mcpRun: { servers: untrusted ? servers : this.fromStderr(id, servers), ...(untrusted ? { untrustedFolder: untrusted } : {}) }
    })
  }

  /** The session is no longer linked to its agent: nothing of it runs any more. */
  detached(id: string): void {
    this.calls.delete(id)
    this.logs.delete(id)
    if (this.options.stateOf(id).mcpRun) this.options.setState(id, { mcpRun: undefined })
  }

  /** Records written to a session: its tool calls are the evidence. */
  noteRecords(id: string, records: TranscriptRecord[]): void {
    const run = this.options.stateOf(id).mcpRun
    if (!run) return
    let servers = run.untrustedFolder ? run.servers : this.fromStderr(id, run.servers)
    for (const record of records) {
      if (record.t !== 'update' || record.child) continue
      const next = this.evidence(id, record.update, servers)
      if (next) servers = next
    }
    if (servers !== run.servers) this.options.setState(id, { mcpRun: { ...run, servers } })
  }

  /**
   * `sessions.trustFolderForMcp`: trusts the session's folder in Gemini CLI's
   * own trust file, once the user confirmed it outside the window. The running
   * agent read the file when it started: the servers start once it restarts.
   */
  async trustFolder(id: string, request: RequestContext): Promise<{ file: string }> {
    const run = this.options.stateOf(id).mcpRun
    const untrusted = run?.untrustedFolder
    if (!run || !untrusted) throw new Error('Its agent does not refuse this session’s folder: there is nothing to trust')
    if (untrusted.restartNeeded) throw new Error(`${untrusted.agent} trusts the folder already: restart it to start the servers`)
    if (!untrusted.file) throw new Error(`Gemini CLI’s trust file cannot trust this folder: ${untrusted.why}`)
    const record = this.options.records.session(id)
    const definition = this.options.records.agent(record.agentId)
    await request.confirm({
      action: `Trust the folder ${untrusted.folder} for ${untrusted.agent}`,
      confirm: 'Trust folder',
      programs: [],
      reach: [
        `${untrusted.agent} will start the MCP servers it is given, and use this folder's own .gemini settings, commands, hooks and agents, in ${untrusted.folder} and every folder inside it (written to ${untrusted.file}).`
      ]
    })
    const { file } = await trustFolderForGemini(this.options.environment.forChild(commandOf(definition.transport)?.env ?? {}), untrusted.folder)
    const restart = `${untrusted.agent} trusts the folder now, and reads that when it starts: restart it to start the servers`
    this.options.setState(id, {
      mcpRun: { servers: run.servers.map((s) => ({ ...s, reason: restart })), untrustedFolder: { ...untrusted, why: restart, restartNeeded: true } }
    })
    return { file }
  }

  /** What the agent wrote to stderr since last read, about the session's servers (Codex's startup events). */
  private fromStderr(id: string, servers: SessionMcpRun[]): SessionMcpRun[] {
    const log = this.logs.get(id)
    if (!log) return servers
    const text = log.connection.stderrSince(log.mark)
    // Whole lines only: the rest is read once its line ends.
    const end = text.lastIndexOf('\n') + 1
    if (end === 0) return servers
    log.mark += end
    let next = servers
    for (const seen of startupLinesOf(text.slice(0, end), servers)) next = next.map((s) => (s.name === seen.name ? seen : s))
    return next
  }

  private async untrustedFolder(
    connection: AgentConnection,
    definition: AgentDefinition,
    cwd: string
  ): Promise<SessionMcpRunState['untrustedFolder']> {
    // Only a Gemini CLI on this computer: the trust file of one elsewhere is not ours to read.
    const local = localCommandOf(definition.transport)
    if (connection.state.agentInfo?.name !== 'gemini-cli' || !local) return undefined
    const trust = await geminiFolderTrust(this.options.environment.forChild(local.env), cwd)
    if (trust.trusted !== false) return undefined
    return { agent: definition.name, folder: cwd, why: trust.why, ...(trust.file ? { file: trust.file } : {}) }
  }

  private evidence(id: string, update: SessionNotification['update'], servers: SessionMcpRun[]): SessionMcpRun[] | null {
    const told = startupNoticeOf(update, servers) ?? codexStartupOf(update, servers)
    if (told) return servers.map((s) => (s.name === told.name ? told : s))
    if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') return null
    let calls = this.calls.get(id)
    const named = mcpToolOf(update, servers)
    if (named) {
      if (!calls) {
        calls = new Map<string, { server: string; tool: string }>()
        this.calls.set(id, calls)
      }
      calls.set(update.toolCallId, named)
      if (calls.size > MAX_CALLS) calls.delete(calls.keys().next().value as string)
    }
    const call = named ?? calls?.get(update.toolCallId)
    if (!call || (update.status !== 'completed' && update.status !== 'failed')) return null
    const said = textOf(update.content)
    const failed = update.status === 'failed' && UNREACHABLE.test(said)
    const seen: SessionMcpRun = failed
      ? { name: call.server, state: 'failed', reason: `its tool ${call.tool} could not reach it: ${said.slice(0, 500)}` }
      : { name: call.server, state: 'started', reason: `its tool ${call.tool} ${update.status === 'completed' ? 'ran' : 'answered'}` }
    return servers.map((s) => (s.name === call.server ? seen : s))
  }
}

/**
 * What Claude Code's adapter (claude-agent-acp) tells of a server given in
 * `session/new` that its CLI's `system/init` reports `failed` or `needs-auth`:
 * a `notice` titled 'MCP server "S" failed to start' (or '… needs
 * authentication'), or, to a client without notices, an agent message with
 * `_meta.claudeCode` `{ kind: 'mcpServerStatus', server, status }`.
 */
export function startupNoticeOf(update: SessionNotification['update'], servers: { name: string }[]): SessionMcpRun | undefined {
  const loose = update as { sessionUpdate: string; title?: unknown; description?: unknown; _meta?: unknown }
  let server: string | undefined
  let status: string | undefined
  let said = ''
  const meta = (loose._meta as { claudeCode?: { kind?: unknown; server?: unknown; status?: unknown } } | undefined)?.claudeCode
  if (meta?.kind === 'mcpServerStatus' && typeof meta.server === 'string' && typeof meta.status === 'string') {
    server = meta.server
    status = meta.status
  } else if (loose.sessionUpdate === 'notice' && typeof loose.title === 'string') {
    const m = /^MCP server "(.+)" (failed to start|needs authentication)$/.exec(loose.title)
    server = m?.[1]
    status = m?.[2] === 'failed to start' ? 'failed' : 'needs-auth'
    said = [loose.title, typeof loose.description === 'string' ? loose.description : ''].filter(Boolean).join(': ')
  }
  const name = server === undefined ? undefined : servers.find((s) => s.name === server)?.name
  if (!name) return undefined
  if (status === 'failed') return { name, state: 'failed', reason: `the agent says it failed to start${said ? ` (“${said}”)` : ''}` }
  if (status === 'needs-auth') return { name, state: 'not_started', reason: 'the agent says it needs authentication (sign in to it in the agent)' }
  return undefined
}

/**
 * What Codex's adapter (codex-acp 2.x, its McpStartupReporter) tells of a
 * server given in `session/new` that did not start, once Codex's start of
 * them ended: a `tool_call` titled `mcp__S__startup` (S the server's name
 * with whitespace made _), id `mcp_startup.<S>.<uuid>`, status `failed`, its
 * text "[codex-acp forwarded startup error] MCP server `S` failed to start:
 * <Codex's error>" (or "… startup was cancelled."), or "[codex-acp] MCP server
 * `S` was not started, because the Codex config already defines an MCP server
 * with this name…".
 */
export function codexStartupOf(update: SessionNotification['update'], servers: { name: string }[]): SessionMcpRun | undefined {
  if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') return undefined
  if (update.status !== 'failed') return undefined
  const server = /^mcp__(.+)__startup$/.exec(update.title ?? '')?.[1]
  if (server === undefined || !update.toolCallId.startsWith('mcp_startup.')) return undefined
  const name = servers.find((s) => s.name === server || s.name.replace(/\s/g, '_') === server)?.name
  if (!name) return undefined
  const said = textOf(update.content)
    .replace(/^\[codex-acp[^\]]*\]\s*/, '')
    .slice(0, 500)
  if (/ was not started, because /.test(said)) return { name, state: 'not_started', reason: `the agent says: ${said}` }
  return { name, state: 'failed', reason: `the agent says it failed to start (“${said || 'no reason given'}”)` }
}

/**
 * What the older Codex adapter (codex-acp 0.x) writes on stderr of each MCP server it starts (its
 * startup events, logged at WARN, which its default log level shows):
 * `McpStartupUpdate(McpStartupUpdateEvent { server: "S", status: Ready })`,
 * or `status: Failed { error: "…" }`.
 */
export function startupLinesOf(text: string, servers: { name: string }[]): SessionMcpRun[] {
  const seen: SessionMcpRun[] = []
  const event = /McpStartupUpdateEvent \{ server: "((?:[^"\\]|\\.)*)", status: (Ready|Failed \{ error: "((?:[^"\\]|\\.)*)" \})/g
  for (const m of text.matchAll(event)) {
    const name = servers.find((s) => s.name === unescapeRust(m[1] ?? ''))?.name
    if (!name) continue
    if (m[2] === 'Ready') seen.push({ name, state: 'started', reason: 'the agent’s log says it is ready' })
    else seen.push({ name, state: 'failed', reason: `the agent’s log says it failed: ${unescapeRust(m[3] ?? '').slice(0, 500)}` })
  }
  return seen
}

function unescapeRust(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
}

/** The given server (and tool) a tool call runs, by the names agents give MCP tools. */
export function mcpToolOf(
  update: { _meta?: unknown; title?: string | null; rawInput?: unknown; toolCallId: string },
  servers: { name: string }[]
): { server: string; tool: string } | undefined {
  const byName = (name: string): string | undefined => servers.find((s) => s.name === name || sanitized(s.name) === name)?.name
  // Claude Code: mcp__<server>__<tool>, the server's name with other characters than [A-Za-z0-9_-] made _.
  const claude = /^mcp__(.+?)__(.+)$/.exec(toolNameOf(update._meta) ?? '')
  if (claude?.[1] && claude[2]) {
    const server = byName(claude[1])
    if (server) return { server, tool: claude[2] }
  }
  // Gemini CLI: the title is the tool's display name, "<tool> (<server> MCP Server)".
  const gemini = /^(.+) \((.+) MCP Server\)$/.exec(update.title ?? '')
  if (gemini?.[1] && gemini[2]) {
    const server = byName(gemini[2])
    if (server) return { server, tool: gemini[1] }
  }
  const raw = update.rawInput as { server?: unknown; tool?: unknown } | null | undefined
  if (raw && typeof raw.server === 'string' && typeof raw.tool === 'string') {
    const server = byName(raw.server)
    if (server) return { server, tool: raw.tool }
  }
  return undefined
}

function sanitized(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_')
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return ''
  return content
    .flatMap((c: { type?: string; content?: { type?: string; text?: string } }) =>
      c?.type === 'content' && c.content?.type === 'text' && typeof c.content.text === 'string' ? [c.content.text] : []
    )
    .join('\n')
    .trim()
}
