import type { ChildProcess } from 'node:child_process'
import { homedir } from 'node:os'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { McpListedItem, McpProfile, McpTestResult } from '../../../shared/mcp'
import type { UserEnvironment } from '../child-processes/environment'
import { killProcessTree, newProcessMark, PROCESS_MARK_ENV } from '../child-processes/process-tree'
import { commandNotFound, findProfileCommand } from './acp-servers'
import type { UnlockedProfile } from './profiles'

/**
 * "Test connection": connects to a profile's server the way an agent would
 * (stdio spawn, Streamable HTTP, or SSE, with the MCP SDK's client), lists its
 * tools, prompts and resources, and closes. A failure is answered, not thrown,
 * with the exact problem: a command not found, the exit code and the end of
 * stderr, the HTTP status, or the timeout. A stdio server's process is gone
 * (with whatever it started) before the answer is given, whatever happened.
 */

export interface TestConnectionOptions {
  timeoutMs: number
  clientVersion: string
  /** What a stdio server starts with, before the profile's own variables. */
  environment: UserEnvironment
  /** The start of the mark the server's process carries (see child-processes/process-tree.ts). */
  markPrefix?: string
}

const STDERR_TAIL_CHARS = 4000
const STDIN_GRACE_MS = 500
const KILL_GRACE_MS = 2000
const MAX_LIST_PAGES = 20

export async function testMcpConnection(unlocked: UnlockedProfile, options: TestConnectionOptions): Promise<McpTestResult> {
  const started = Date.now()
  const elapsed = (): number => Date.now() - started
  const { profile } = unlocked
  if (unlocked.missingSecrets.length) {
    return {
      ok: false,
      error: `The secret value of ${unlocked.missingSecrets.join(', ')} is not in the secret store any more: edit the server and enter it again.`,
      durationMs: elapsed()
    }
  }

  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs)
  const process = new ProcessWatch(newProcessMark(options.markPrefix))
  let client: Client | null = null
  try {
    const transport = await createTransport(unlocked, process, options.environment)
    client = new Client({ name: 'switchboard', title: 'Switchboard', version: options.clientVersion })
    const requestOptions = () => ({ signal: deadline.signal, timeout: Math.max(1, options.timeoutMs - elapsed()) })
    await client.connect(transport, requestOptions())
    const c = client
    const capabilities = c.getServerCapabilities() ?? {}
    const tools = capabilities.tools
      ? await listAll((cursor) => c.listTools({ cursor }, requestOptions()).then((r) => ({ items: r.tools, next: r.nextCursor })))
      : []
    const prompts = capabilities.prompts
      ? await listAll((cursor) => c.listPrompts({ cursor }, requestOptions()).then((r) => ({ items: r.prompts, next: r.nextCursor })))
      : []
    const resources = capabilities.resources
      ? await listAll((cursor) => c.listResources({ cursor }, requestOptions()).then((r) => ({ items: r.resources, next: r.nextCursor })))
      : []
    const server = c.getServerVersion()
    return {
      ok: true,
      server: { name: server?.name ?? profile.name, version: server?.version ?? '' },
      tools: tools.map(item),
      prompts: prompts.map(item),
      resources: resources.map((r) => ({ ...item(r), uri: r.uri })),
      notOffered: (['tools', 'prompts', 'resources'] as const).filter((k) => !capabilities[k]),
      durationMs: elapsed()
    }
  } catch (error) {
    return describeFailure(error, {
      profileName: profile.name,
      timedOut: deadline.signal.aborted,
      timeoutMs: options.timeoutMs,
      process,
      durationMs: elapsed()
    })
  } finally {
    clearTimeout(timer)
    await client?.close().catch(() => undefined)
    // The SDK's close does not wait for the process when the handshake failed (its own close, started by the
    // failed connect, is under way with unref'd timers, which a host quitting never sees fire): end it here.
    await process.stop()
  }
}

async function createTransport(unlocked: UnlockedProfile, watch: ProcessWatch, environment: UserEnvironment): Promise<Transport> {
  const { profile } = unlocked
  if (profile.transport === 'http' || profile.transport === 'sse') {
    const url = new URL(profile.url)
    const requestInit: RequestInit = { headers: Object.fromEntries(unlocked.headers.map((h) => [h.name, h.value])) }
    return profile.transport === 'http' ? new StreamableHTTPClientTransport(url, { requestInit }) : new SSEClientTransport(url, { requestInit })
  }
  // The whole environment, as an agent gives its servers (the SDK alone would pass only HOME, PATH, SHELL, TERM, USER…).
  const env = environment.forChild(Object.fromEntries(unlocked.env.map((e) => [e.name, e.value])), { [PROCESS_MARK_ENV]: watch.mark })
  const command = await findProfileCommand(profile, unlocked.env, environment)
  if (!command) throw new CommandNotFound(profile)
  const transport = new StdioClientTransport({ command, args: profile.args, env, cwd: profile.cwd || homedir(), stderr: 'pipe' })
  transport.stderr?.on('data', (chunk: Buffer) => watch.stderr(chunk.toString('utf8')))
  const start = transport.start.bind(transport)
  transport.start = async () => {
    await start()
    // The SDK's transport does not tell how its process ended; the exit code is what the user needs to see.
    watch.attach((transport as unknown as { _process?: ChildProcess })._process)
  }
  return transport
}

/** A stdio server's process: how it ended, the last of what it wrote to stderr, and its end. */
class ProcessWatch {
  exit: { code: number | null; signal: string | null } | null = null
  private tail = ''
  private child: ChildProcess | undefined
  private exited: Promise<void> = Promise.resolve()

  /** `mark`: in the server's environment, inherited by what it starts (see child-processes/process-tree.ts). */
  constructor(readonly mark: string) {}

  attach(child: ChildProcess | undefined): void {
    if (!child) return
    this.child = child
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve()
      child.once('exit', (code, signal) => {
        this.exit = { code, signal }
        resolve()
      })
    })
  }

  /** Ends the server and what it started: stdin closed, SIGTERM after a moment, SIGKILL after another. */
  async stop(): Promise<void> {
    const child = this.child
    if (!child?.pid) return
    const exitedWithin = (ms: number): Promise<boolean> =>
      Promise.race([this.exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))])
    const ended = (): boolean => child.exitCode !== null || child.signalCode !== null
    if (!ended()) {
      child.stdin?.end()
      if (!(await exitedWithin(STDIN_GRACE_MS))) {
        const asked = killProcessTree({ pid: child.pid, mark: this.mark }, 'SIGTERM')
        if (!(await exitedWithin(KILL_GRACE_MS))) killProcessTree({ pid: child.pid, mark: this.mark, also: asked }, 'SIGKILL')
        await this.exited
      }
    }
    // Whatever it started and left running goes with it.
    killProcessTree({ pid: child.pid, mark: this.mark, reaped: true }, 'SIGKILL')
  }

  stderr(text: string): void {
    this.tail = (this.tail + text).slice(-STDERR_TAIL_CHARS)
  }

  get stderrTail(): string {
    return this.tail.trim()
  }
}

class CommandNotFound extends Error {
  constructor(profile: McpProfile) {
    const text = commandNotFound(profile)
    super(text[0].toUpperCase() + text.slice(1))
  }
}

async function listAll<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const all: T[] = []
  let cursor: string | undefined
  for (let n = 0; n < MAX_LIST_PAGES; n++) {
    const { items, next } = await page(cursor)
    all.push(...items)
    if (!next) break
    cursor = next
  }
  return all
}

function item(value: { name: string; title?: string; description?: string }): McpListedItem {
  const listed: McpListedItem = { name: value.name }
  if (value.title) listed.title = value.title
  if (value.description) listed.description = value.description
  return listed
}

function describeFailure(
  error: unknown,
  context: { profileName: string; timedOut: boolean; timeoutMs: number; process: ProcessWatch; durationMs: number }
): McpTestResult {
  const { process, durationMs } = context
  const stderrTail = process.stderrTail || undefined
  const base = { ok: false as const, durationMs, ...(stderrTail ? { stderrTail } : {}) }
  if (error instanceof CommandNotFound) return { ...base, error: error.message }
  if (process.exit) {
    const how = process.exit.signal ? `was killed by ${process.exit.signal}` : `exited with code ${process.exit.code}`
    return {
      ...base,
      error: `The server ${how} before it answered.${stderrTail ? '' : ' It wrote nothing to stderr.'}`,
      exitCode: process.exit.code,
      signal: process.exit.signal
    }
  }
  const timedOut = context.timedOut || (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
  if (timedOut) {
    return {
      ...base,
      timedOut: true,
      error: `No answer within ${Math.round(context.timeoutMs / 1000)} s: the server started but did not complete the MCP handshake.`
    }
  }
  if (error instanceof StreamableHTTPError || error instanceof SseError) {
    const status = error.code
    if (status)
      return { ...base, httpStatus: status, error: `The server answered HTTP ${status}${httpHint(status)}. ${detail(error.message)}`.trim() }
  }
  const code = (error as NodeJS.ErrnoException)?.code ?? (error as { cause?: NodeJS.ErrnoException })?.cause?.code
  if (code === 'ECONNREFUSED') return { ...base, error: 'Connection refused: nothing is listening at that address and port.' }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { ...base, error: 'The host name could not be resolved.' }
  if (code === 'ENOENT') return { ...base, error: 'The command could not be started: not found.' }
  if (code === 'EACCES') return { ...base, error: 'The command could not be started: permission denied (is it executable?).' }
  const message = (error as Error)?.message ?? String(error)
  const cause = (error as { cause?: Error })?.cause?.message
  return { ...base, error: cause && !message.includes(cause) ? `${message}: ${cause}` : message }
}

function httpHint(status: number): string {
  if (status === 401) return ' Unauthorized (check the authorization header or token)'
  if (status === 403) return ' Forbidden'
  if (status === 404) return ' Not Found (check the URL’s path)'
  if (status === 405) return ' Method Not Allowed (is this the right transport for the URL?)'
  if (status >= 500) return ' (a server error)'
  return ''
}

function detail(message: string): string {
  // The SDK's messages carry the response body; keep it short.
  const trimmed = message.replace(/\s+/g, ' ').trim()
  return trimmed.length > 300 ? `${trimmed.slice(0, 297)}…` : trimmed
}
