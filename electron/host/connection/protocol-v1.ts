import {
  client,
  methods,
  PROTOCOL_VERSION,
  type AnyMessage,
  type ClientConnection,
  type ClientContext,
  type CloseSessionRequest,
  type DeleteSessionRequest,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionRequest,
  type LoadSessionResponse,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  type ResumeSessionRequest,
  type ResumeSessionResponse,
  type SetSessionConfigOptionRequest,
  type SetSessionConfigOptionResponse,
  type SetSessionModeRequest,
  type Stream
} from '@agentclientprotocol/sdk'
import { methods as unstableMethods, type ForkSessionRequest, type ForkSessionResponse } from '@agentclientprotocol/sdk/unstable'
import type { CallOptions, SteerOutcome } from './protocol'
import type { ProtocolOptions, WireProtocol } from './wire'
import { tapOutgoing } from './link-run'
import { checkNotification } from './updates'

/**
 * ACP protocol version 1, the SDK's main entry: params and answers pass
 * through, and the client methods only version 1 has (fs, terminals) go to the
 * Host's handlers. Session updates are taken from the raw message stream
 * (`receive`), not the SDK's parsed copy, because the SDK drops an update it
 * cannot parse: each is checked here and handed on, well-formed or kept as
 * `unsupported`.
 */
export class V1Protocol implements WireProtocol {
  readonly version = 1 as const
  readonly connection: ClientConnection

  constructor(
    stream: Stream,
    private readonly options: ProtocolOptions
  ) {
    const { agentId, handlers } = options
    const app = client({ name: 'switchboard' })
      // Updates are taken from the raw stream (receive, below) and do not reach the SDK.
      .onNotification(methods.client.session.update, () => undefined)
      .onRequest(methods.client.fs.readTextFile, ({ params }) => handlers.readTextFile(agentId, params))
      .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
        await handlers.writeTextFile(agentId, params)
        return {}
      })
      .onRequest(methods.client.session.requestPermission, ({ params, signal }) => handlers.requestPermission(agentId, params, signal))
      .onRequest(methods.client.elicitation.create, ({ params, signal }) => handlers.elicit(agentId, params, signal))
      // A URL elicitation's flow finished on the agent's side: nothing is waiting for it here any more.
      .onNotification(methods.client.elicitation.complete, () => undefined)
      .onRequest(methods.client.terminal.create, ({ params, signal }) => handlers.createTerminal(agentId, params, signal))
      .onRequest(methods.client.terminal.output, ({ params }) => handlers.terminalOutput(agentId, params))
      .onRequest(methods.client.terminal.waitForExit, ({ params }) => handlers.waitForTerminalExit(agentId, params))
      .onRequest(methods.client.terminal.kill, async ({ params }) => {
        await handlers.killTerminal(agentId, params)
        return {}
      })
      .onRequest(methods.client.terminal.release, async ({ params }) => {
        await handlers.releaseTerminal(agentId, params)
        return {}
      })
    // The requests going out are seen on their way (a fork's id, to know its answer when it comes: forkSession).
    this.connection = app.connect({ readable: stream.readable, writable: tapOutgoing(stream.writable, (message) => this.sending(message)) })
  }

  /** Forks asked for, oldest first, waiting for their request to go out; then by request id, waiting for the answer. */
  private readonly forksToSend: (() => void)[] = []
  private readonly forksAsked = new Map<string | number, () => void>()

  private sending(message: AnyMessage): void {
    if (!('method' in message) || message.method !== unstableMethods.agent.session.fork || !('id' in message)) return
    const answered = this.forksToSend.shift()
    if (answered && message.id !== null) this.forksAsked.set(message.id, answered)
  }

  /** `initialize` with version 1's shape: `clientInfo` and `clientCapabilities` (fs, terminals, terminal sign-in, elicitation, notices, compaction). */
  initialize(): Promise<{ protocolVersion: number }> {
    return this.connection.agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {
        fs: { readTextFile: true, writeTextFile: true },
        terminal: true,
        // Terminal sign-in methods run in a pseudo-terminal the user sees (login-terminals.ts).
        auth: { terminal: this.options.terminalAuth },
        elicitation: { form: {}, url: {} },
        // Notices are shown as notices (dismissable, with their severity) and compactions as such (shared/thread.ts).
        session: { notices: {}, compaction: {} },
        // Subagents' child sessions are shown nested under the tool call that launched them (shared/thread.ts).
        subagents: {}
      },
      clientInfo: { name: 'switchboard', title: 'Switchboard', version: this.options.clientVersion }
    })
  }

  /**
   * Every message from the agent as it arrived, before the SDK: session
   * updates are checked and handed on in order, and taken (true): the SDK
   * would only parse each again to hand it to a handler that ignores it.
   */
  receive(message: AnyMessage): boolean {
    if (!('method' in message) && 'id' in message && message.id !== null && this.forksAsked.size > 0) {
      const answered = this.forksAsked.get(message.id)
      this.forksAsked.delete(message.id)
      answered?.()
      return false
    }
    if (!('method' in message) || message.method !== methods.client.session.update || 'id' in message) return false
    const checked = checkNotification(message.params)
    if (checked) this.options.handlers.sessionUpdate(this.options.agentId, checked) // no sessionId: nothing to attach it to
    return true
  }

  private agent(): ClientContext {
    return this.connection.agent
  }

  newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    return this.agent().request(methods.agent.session.new, params)
  }

  loadSession(params: LoadSessionRequest, options?: CallOptions): Promise<LoadSessionResponse> {
    return this.agent().request(methods.agent.session.load, params, options)
  }

  resumeSession(params: ResumeSessionRequest, options?: CallOptions): Promise<ResumeSessionResponse> {
    return this.agent().request(methods.agent.session.resume, params, options)
  }

  listSessions(params: ListSessionsRequest): Promise<ListSessionsResponse> {
    return this.agent().request(methods.agent.session.list, params)
  }

  async closeSession(params: CloseSessionRequest): Promise<void> {
    await this.agent().request(methods.agent.session.close, params)
  }

  async deleteSession(params: DeleteSessionRequest): Promise<void> {
    await this.agent().request(methods.agent.session.delete, params)
  }

  forkSession(params: ForkSessionRequest, answered?: () => void): Promise<ForkSessionResponse> {
    // Requests go out in the order asked: this fork's mark is matched to its request as it is sent (sending, above).
    this.forksToSend.push(answered ?? (() => undefined))
    return this.agent().request<ForkSessionResponse>(unstableMethods.agent.session.fork, params)
  }

  prompt(params: PromptRequest): Promise<PromptResponse> {
    return this.agent().request(methods.agent.session.prompt, params)
  }

  /** The steering extension: the host keeps a prompt the agent could not inject (`promptRequired`) and sends it as a prompt. */
  async steer(params: { sessionId: string; prompt: PromptRequest['prompt'] }): Promise<SteerOutcome> {
    const answer = await this.agent().request<{ outcome?: unknown }>('_session/steering', {
      ...params,
      _meta: { steering: { idleBehavior: 'promptRequired' } }
    })
    if (answer?.outcome === 'injected' || answer?.outcome === 'promptRequired') return answer.outcome
    throw new Error(`The agent answered the steering request with an unknown outcome (${JSON.stringify(answer?.outcome)})`)
  }

  cancel(params: { sessionId: string }): Promise<void> {
    return this.agent().notify(methods.agent.session.cancel, params)
  }

  async setMode(params: SetSessionModeRequest): Promise<void> {
    await this.agent().request(methods.agent.session.setMode, params)
  }

  setConfigOption(params: SetSessionConfigOptionRequest): Promise<SetSessionConfigOptionResponse> {
    return this.agent().request(methods.agent.session.setConfigOption, params)
  }

  async setModel(params: { sessionId: string; modelId: string }): Promise<void> {
    await this.agent().request('session/set_model', params)
  }

  async authenticate(params: { methodId: string; _meta?: Record<string, unknown> }): Promise<void> {
    await this.agent().request(methods.agent.authenticate, params)
  }

  async logout(): Promise<void> {
    await this.agent().request(methods.agent.logout, {})
  }
}
