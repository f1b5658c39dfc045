import type {
  CloseSessionRequest,
  DeleteSessionRequest,
  ListSessionsRequest,
  ListSessionsResponse,
  LoadSessionRequest,
  LoadSessionResponse,
  NewSessionRequest,
  NewSessionResponse,
  PromptRequest,
  PromptResponse,
  ResumeSessionRequest,
  ResumeSessionResponse,
  SetSessionConfigOptionRequest,
  SetSessionConfigOptionResponse,
  SetSessionModeRequest
} from '@agentclientprotocol/sdk'
import type { ForkSessionRequest, ForkSessionResponse, SystemPrompt } from '@agentclientprotocol/sdk/unstable'

/** A system prompt for the session (unstable in SDK 2.4: its stable request types do not have the field yet). */
export interface WithSystemPrompt {
  systemPrompt?: SystemPrompt
}

/**
 * What the Host asks of an agent, whichever ACP protocol version the
 * connection speaks. The Host's own language is protocol version 1: params and
 * answers here have version 1's shapes, and each connection translates (version
 * 1 passes them through, protocol-v1.ts; version 2 translates, protocol-v2.ts). So the Host
 * never branches on versions; the capabilities (shared/domain.ts) say which
 * optional methods exist on the agent at hand.
 */
export interface AgentProtocol {
  /** The ACP protocol version this connection speaks. */
  readonly version: 1 | 2
  newSession(params: NewSessionRequest & WithSystemPrompt): Promise<NewSessionResponse>
  /** Replays the session's history as updates, then answers (v2: session/resume with replay from the start). */
  loadSession(params: LoadSessionRequest & WithSystemPrompt, options?: CallOptions): Promise<LoadSessionResponse>
  resumeSession(params: ResumeSessionRequest & WithSystemPrompt, options?: CallOptions): Promise<ResumeSessionResponse>
  listSessions(params: ListSessionsRequest): Promise<ListSessionsResponse>
  closeSession(params: CloseSessionRequest): Promise<void>
  deleteSession(params: DeleteSessionRequest): Promise<void>
  /**
   * `answered` is called as the agent's answer comes in, before any message the agent sent after it is taken in: what
   * the client holds of the session at that moment is what the agent's fork holds (a running turn's updates included).
   */
  forkSession(params: ForkSessionRequest, answered?: () => void): Promise<ForkSessionResponse>
  /** Runs one turn: resolves when the turn has ended, with why. */
  prompt(params: PromptRequest): Promise<PromptResponse>
  /**
   * Hands a follow-up to the running turn (`_session/steering`, for an agent
   * whose capabilities say `steering`): `injected` when the turn took it,
   * `promptRequired` when no turn was running (nothing was sent to the model).
   */
  steer(params: { sessionId: string; prompt: PromptRequest['prompt'] }): Promise<SteerOutcome>
  cancel(params: { sessionId: string }): Promise<void>
  setMode(params: SetSessionModeRequest): Promise<void>
  setConfigOption(params: SetSessionConfigOptionRequest): Promise<SetSessionConfigOptionResponse>
  /** `session/set_model`, for agents that announce models the older way. */
  setModel(params: { sessionId: string; modelId: string }): Promise<void>
  authenticate(params: { methodId: string; _meta?: Record<string, unknown> }): Promise<void>
  logout(): Promise<void>
}

export type SteerOutcome = 'injected' | 'promptRequired'

export interface CallOptions {
  /** Aborting it sends `$/cancel_request` for the call. */
  cancellationSignal?: AbortSignal
}
