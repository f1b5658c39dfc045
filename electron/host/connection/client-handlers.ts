import type {
  CreateElicitationRequest,
  CreateElicitationResponse,
  CreateTerminalRequest,
  CreateTerminalResponse,
  KillTerminalRequest,
  ReadTextFileRequest,
  ReadTextFileResponse,
  ReleaseTerminalRequest,
  RequestPermissionRequest,
  RequestPermissionResponse,
  TerminalOutputRequest,
  TerminalOutputResponse,
  WaitForTerminalExitRequest,
  WaitForTerminalExitResponse,
  WriteTextFileRequest
} from '@agentclientprotocol/sdk'
import type { CheckedNotification } from './updates'

/**
 * What the Host answers when an agent calls back into the client, in
 * protocol version 1's terms whichever version the agent speaks. Both
 * protocol implementations call it; it is types only, so nothing in connection/
 * imports the Host.
 */
export interface ClientHandlers {
  /**
   * Every `session/update` from either protocol version, checked and in
   * version 1's terms, in arrival order: delivered synchronously before the
   * SDK handles the messages that follow (a session/load replay is applied
   * before its answer). What fails the checks arrives as `unsupported`, kept.
   */
  sessionUpdate(agentId: string, notification: CheckedNotification): void
  readTextFile(agentId: string, params: ReadTextFileRequest): Promise<ReadTextFileResponse>
  writeTextFile(agentId: string, params: WriteTextFileRequest): Promise<void>
  requestPermission(agentId: string, params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>
  /** `elicitation/create`: a form or a URL for the user, answered when they do (or cancelled with the request). */
  elicit(agentId: string, params: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse>
  /** `terminal/create`: the command starts once approved (it may wait for the user: `signal` ends the wait with the request). */
  createTerminal(agentId: string, params: CreateTerminalRequest, signal: AbortSignal): Promise<CreateTerminalResponse>
  terminalOutput(agentId: string, params: TerminalOutputRequest): Promise<TerminalOutputResponse>
  waitForTerminalExit(agentId: string, params: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse>
  killTerminal(agentId: string, params: KillTerminalRequest): Promise<void>
  releaseTerminal(agentId: string, params: ReleaseTerminalRequest): Promise<void>
}
