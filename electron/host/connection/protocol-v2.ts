import type * as v1 from '@agentclientprotocol/sdk'
import type { ForkSessionResponse } from '@agentclientprotocol/sdk/unstable'
import {
  client,
  methods,
  RequestError,
  type AnyMessage,
  type ClientConnection,
  type ContentBlock,
  type InitializeResponse,
  type McpServer,
  type RequestPermissionRequest,
  type Stream
} from '@agentclientprotocol/sdk/experimental/v2'
import type { CallOptions } from './protocol'
import { checkNotification, type CheckedNotification } from './updates'
import type { ProtocolOptions, WireProtocol } from './wire'
import { sessionAnswer, toV1ConfigOptions } from './v2-forms'
import { toV1PermissionRequest, V2SessionAdapter, type Adapted } from './v2-adapter'

/**
 * ACP protocol version 2 (the draft, through the SDK's `/experimental/v2`
 * entry) behind the Host's protocol-neutral AgentProtocol. What the Host asks
 * in version 1's terms is sent as version 2 and the answers come back as
 * version 1; session updates go through one V2SessionAdapter per session.
 *
 * The one real difference in flow is the prompt: version 2 answers
 * `session/prompt` as soon as the message is inserted (with its messageId),
 * and a turn ends with an `idle` `state_update` carrying the stop reason. So
 * `prompt` resolves on that idle state (after work started), or rejects when
 * it reports an error or the connection ends.
 *
 * Version 2 has no `fs/*` or `terminal/*` client methods (the agent reads,
 * writes and runs commands itself, and reports its terminals through updates),
 * no `session/load` (resume with replay from the start does it), no modes and
 * no `session/fork` in its stable set.
 */

const V2_PROTOCOL_VERSION = 2

interface Turn {
  /** A `running` (or `requires_action`) state was reported since the prompt went out. */
  sawWork: boolean
  done: Promise<string>
  resolve(stopReason: string): void
  reject(error: unknown): void
}

export class V2Protocol implements WireProtocol {
  readonly version = 2 as const
  readonly connection: ClientConnection
  private readonly adapters = new Map<string, V2SessionAdapter>()
  private readonly turns = new Map<string, Turn>()

  constructor(
    stream: Stream,
    private readonly options: ProtocolOptions
  ) {
    const app = client({ name: 'switchboard' })
      // Updates are taken from the raw stream (receive, below) and do not reach the SDK.
      .onNotification(methods.client.session.update, () => undefined)
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) => this.requestPermission(params, signal))
      // Elicitation has the same shape in both versions: the Host's form handling serves both.
      .onRequest(
        methods.client.elicitation.create,
        ({ params, signal }) => this.options.handlers.elicit(this.options.agentId, params as unknown as v1.CreateElicitationRequest, signal) as never
      )
      .onNotification(methods.client.elicitation.complete, () => undefined)
    this.connection = app.connect(stream)
    this.connection.signal.addEventListener('abort', () => {
      const reason = new Error('The connection to the agent closed')
      for (const turn of this.turns.values()) turn.reject(reason)
    })
  }

  /** `initialize` with version 2's shape: `info` and `capabilities` (what the Host supports of them). */
  initialize(): Promise<InitializeResponse> {
    return this.connection.agent.request(methods.agent.initialize, {
      protocolVersion: V2_PROTOCOL_VERSION,
      info: { name: 'switchboard', title: 'Switchboard', version: this.options.clientVersion },
      // Terminal sign-in runs the agent's own command in a pseudo-terminal (login-terminals.ts);
      // elicitation forms and URLs are shown to the user (elicitation.ts).
      capabilities: { auth: this.options.terminalAuth ? { terminal: {} } : {}, elicitation: { form: {}, url: {} } }
    })
  }

  /**
   * Every message from the agent, as it arrived and in order (a tap on the raw
   * stream, so nothing the SDK would drop is lost): session updates, and the
   * tool call a permission request carries, which applies before the prompt shows.
   * Session updates are taken (true): the SDK would only parse each again to
   * hand it to a handler that ignores it.
   */
  receive(message: AnyMessage): boolean {
    if (!('method' in message)) return false
    const params = message.params as Record<string, unknown> | undefined
    if (message.method === methods.client.session.update && !('id' in message)) {
      if (!params || typeof params.sessionId !== 'string') return true // nothing to attach it to
      const sessionId = params.sessionId
      for (const item of this.adapterFor(sessionId).adapt(params.update)) this.deliver(sessionId, item, params.update)
      return true
    } else if (message.method === methods.client.session.requestPermission && 'id' in message) {
      const subject = params?.subject as Record<string, unknown> | undefined
      if (typeof params?.sessionId !== 'string' || subject?.type !== 'tool_call' || typeof subject.toolCall !== 'object' || !subject.toolCall)
        return false
      for (const item of this.adapterFor(params.sessionId).toolCall(subject.toolCall as Record<string, unknown>)) {
        this.deliver(params.sessionId, item, subject.toolCall)
      }
    }
    // The SDK answers requests (the permission request too) and gets every other message.
    return false
  }

  async newSession(params: v1.NewSessionRequest): Promise<v1.NewSessionResponse> {
    const response = await this.connection.agent.request(methods.agent.session.new, {
      cwd: params.cwd,
      mcpServers: toV2McpServers(params.mcpServers),
      ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {})
    })
    this.adapters.set(response.sessionId, new V2SessionAdapter())
    return { sessionId: response.sessionId, ...this.answer(response.sessionId, response) }
  }

  loadSession(params: v1.LoadSessionRequest, options?: CallOptions): Promise<v1.LoadSessionResponse> {
    // The replay rebuilds the view from nothing: so does the adapter.
    this.adapters.set(params.sessionId, new V2SessionAdapter())
    return this.resume(params, { type: 'start' }, options)
  }

  resumeSession(params: v1.ResumeSessionRequest, options?: CallOptions): Promise<v1.ResumeSessionResponse> {
    return this.resume(params, null, options)
  }

  async listSessions(params: v1.ListSessionsRequest): Promise<v1.ListSessionsResponse> {
    const response = await this.connection.agent.request(methods.agent.session.list, { cwd: params.cwd, cursor: params.cursor })
    return {
      sessions: response.sessions.map((s) => ({ sessionId: s.sessionId, cwd: s.cwd, title: s.title, updatedAt: s.updatedAt })),
      nextCursor: response.nextCursor
    }
  }

  async closeSession(params: v1.CloseSessionRequest): Promise<void> {
    await this.connection.agent.request(methods.agent.session.close, { sessionId: params.sessionId })
    this.adapters.delete(params.sessionId)
  }

  async deleteSession(params: v1.DeleteSessionRequest): Promise<void> {
    await this.connection.agent.request(methods.agent.session.delete, { sessionId: params.sessionId })
    this.adapters.delete(params.sessionId)
  }

  forkSession(): Promise<ForkSessionResponse> {
    return Promise.reject(notInV2('Forking a session (session/fork)'))
  }

  async prompt(params: v1.PromptRequest): Promise<v1.PromptResponse> {
    const { sessionId } = params
    if (this.turns.has(sessionId)) throw new Error('A turn is already running in this session')
    const adapter = this.adapterFor(sessionId)
    let resolve!: (stopReason: string) => void
    let reject!: (error: unknown) => void
    const done = new Promise<string>((res, rej) => ((resolve = res), (reject = rej)))
    done.catch(() => undefined)
    const turn: Turn = { sawWork: false, done, resolve, reject }
    this.turns.set(sessionId, turn)
    // The agent echoes the prompt as a user message; the Host already has it as the prompt record.
    adapter.promptPending = true
    try {
      const response = await this.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: params.prompt as ContentBlock[] })
      adapter.noteOwnMessage(response.messageId)
      adapter.promptPending = false
      return { stopReason: (await turn.done) as v1.StopReason }
    } finally {
      adapter.promptPending = false
      this.turns.delete(sessionId)
    }
  }

  steer(): Promise<never> {
    return Promise.reject(notInV2('Steering a running turn (_session/steering)'))
  }

  cancel(params: { sessionId: string }): Promise<void> {
    return this.connection.agent.notify(methods.agent.session.cancel, { sessionId: params.sessionId })
  }

  setMode(): Promise<void> {
    return Promise.reject(notInV2('Session modes (session/set_mode)'))
  }

  async setConfigOption(params: v1.SetSessionConfigOptionRequest): Promise<v1.SetSessionConfigOptionResponse> {
    const { sessionId, configId } = params
    const response = await this.connection.agent.request(
      methods.agent.session.setConfigOption,
      typeof params.value === 'boolean'
        ? { sessionId, configId, type: 'boolean', value: params.value }
        : { sessionId, configId, type: 'id', value: params.value }
    )
    return { configOptions: toV1ConfigOptions(response.configOptions) }
  }

  setModel(): Promise<void> {
    return Promise.reject(notInV2('Choosing a model with session/set_model'))
  }

  async authenticate(params: { methodId: string; _meta?: Record<string, unknown> }): Promise<void> {
    await this.connection.agent.request(methods.agent.auth.login, params)
  }

  async logout(): Promise<void> {
    await this.connection.agent.request(methods.agent.auth.logout, {})
  }

  private async resume(
    params: v1.ResumeSessionRequest,
    replayFrom: { type: 'start' } | null,
    options?: CallOptions
  ): Promise<v1.ResumeSessionResponse> {
    const response = await this.connection.agent.request(
      methods.agent.session.resume,
      {
        sessionId: params.sessionId,
        cwd: params.cwd,
        mcpServers: toV2McpServers(params.mcpServers),
        ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories } : {}),
        ...(replayFrom ? { replayFrom } : {})
      },
      options
    )
    return this.answer(params.sessionId, response)
  }

  /** A session/new or resume answer: configuration options as version 1's; commands as the update version 1 sends them in. */
  private answer(sessionId: string, response: unknown): { configOptions?: v1.SessionConfigOption[] } {
    const { configOptions, commands } = sessionAnswer(response)
    if (commands)
      this.deliver(sessionId, { kind: 'update', update: { sessionUpdate: 'available_commands_update', availableCommands: commands } }, response)
    return configOptions ? { configOptions } : {}
  }

  private requestPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<v1.RequestPermissionResponse> {
    const request = toV1PermissionRequest(params as unknown as Record<string, unknown>, this.adapterFor(params.sessionId))
    return this.options.handlers.requestPermission(this.options.agentId, request, signal)
  }

  private adapterFor(sessionId: string): V2SessionAdapter {
    let adapter = this.adapters.get(sessionId)
    if (!adapter) this.adapters.set(sessionId, (adapter = new V2SessionAdapter()))
    return adapter
  }

  private deliver(sessionId: string, item: Adapted, raw: unknown): void {
    const notify = (checked: CheckedNotification): void => this.options.handlers.sessionUpdate(this.options.agentId, checked)
    switch (item.kind) {
      case 'update': {
        // The same checks as version 1's updates; what fails them is kept as the agent sent it.
        const checked = checkNotification({ sessionId, update: item.update })
        if (checked && 'update' in checked) notify(checked)
        else notify({ sessionId, unsupported: raw, reason: checked && 'reason' in checked ? checked.reason : 'malformed update' })
        return
      }
      case 'unsupported':
        notify({ sessionId, unsupported: item.raw, reason: item.reason })
        return
      case 'terminal': {
        const { kind: _, ...terminal } = item
        notify({ sessionId, terminal })
        return
      }
      case 'state':
        this.onState(sessionId, item)
        return
    }
  }

  /** How a turn ends in version 2: the session goes idle after working on it. */
  private onState(sessionId: string, state: Adapted & { kind: 'state' }): void {
    const turn = this.turns.get(sessionId)
    if (!turn) return
    if (state.state === 'running' || state.state === 'requires_action') {
      turn.sawWork = true
      return
    }
    // An idle snapshot before any work on this prompt is the previous state repeated, not its end.
    if (state.state !== 'idle' || !turn.sawWork) return
    if (state.stopReason === 'error') {
      turn.reject(new RequestError(state.error?.code ?? -32603, state.error?.message ?? 'The agent reported an error and stopped', state.error?.data))
    } else {
      turn.resolve(state.stopReason ?? 'end_turn')
    }
  }
}

/** Version 1's MCP server list in version 2's shape (every server names its transport). */
function toV2McpServers(servers: v1.McpServer[] | undefined): McpServer[] {
  return (servers ?? []).flatMap((server): McpServer[] => {
    if ('type' in server && server.type === 'http') return [server]
    if ('type' in server) return [] // sse: not in version 2
    return [{ type: 'stdio', name: server.name, command: server.command, args: server.args, env: server.env }]
  })
}

function notInV2(what: string): Error {
  return new Error(`${what} is not part of ACP protocol version 2, which this agent speaks`)
}
