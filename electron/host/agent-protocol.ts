import {
  methods,
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
  type SetSessionModeRequest
} from '@agentclientprotocol/sdk'
import { methods as unstableMethods, type ForkSessionRequest, type ForkSessionResponse } from '@agentclientprotocol/sdk/unstable'

/**
 * What the Host asks of an agent, whichever ACP protocol version the
 * connection speaks. The Host's own language is protocol version 1: params and
 * answers here have version 1's shapes, and each connection translates (version
 * 1 passes them through; version 2 is `agent-connection-v2.ts`). So the Host
 * never branches on versions; the capabilities (shared/domain.ts) say which
 * optional methods exist on the agent at hand.
 */
export interface AgentProtocol {
  /** The ACP protocol version this connection speaks. */
  readonly version: 1 | 2
  newSession(params: NewSessionRequest): Promise<NewSessionResponse>
  /** Replays the session's history as updates, then answers (v2: session/resume with replay from the start). */
  loadSession(params: LoadSessionRequest, options?: CallOptions): Promise<LoadSessionResponse>
  resumeSession(params: ResumeSessionRequest, options?: CallOptions): Promise<ResumeSessionResponse>
  listSessions(params: ListSessionsRequest): Promise<ListSessionsResponse>
  closeSession(params: CloseSessionRequest): Promise<void>
  deleteSession(params: DeleteSessionRequest): Promise<void>
  forkSession(params: ForkSessionRequest): Promise<ForkSessionResponse>
  /** Runs one turn: resolves when the turn has ended, with why. */
  prompt(params: PromptRequest): Promise<PromptResponse>
  cancel(params: { sessionId: string }): Promise<void>
  setMode(params: SetSessionModeRequest): Promise<void>
  setConfigOption(params: SetSessionConfigOptionRequest): Promise<SetSessionConfigOptionResponse>
  /** `session/set_model`, for agents that announce models the older way. */
  setModel(params: { sessionId: string; modelId: string }): Promise<void>
  authenticate(params: { methodId: string }): Promise<void>
  logout(): Promise<void>
}

export interface CallOptions {
  /** Aborting it sends `$/cancel_request` for the call. */
  cancellationSignal?: AbortSignal
}

/** Protocol version 1: the SDK's main entry, params passed through. */
export class V1Protocol implements AgentProtocol {
  readonly version = 1 as const

  constructor(private readonly agent: () => ClientContext) {}

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

  forkSession(params: ForkSessionRequest): Promise<ForkSessionResponse> {
    return this.agent().request<ForkSessionResponse>(unstableMethods.agent.session.fork, params)
  }

  prompt(params: PromptRequest): Promise<PromptResponse> {
    return this.agent().request(methods.agent.session.prompt, params)
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

  async authenticate(params: { methodId: string }): Promise<void> {
    await this.agent().request(methods.agent.authenticate, params)
  }

  async logout(): Promise<void> {
    await this.agent().request(methods.agent.logout, {})
  }
}
