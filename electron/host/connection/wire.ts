import type { AnyMessage } from '@agentclientprotocol/sdk'
import type { ClientHandlers } from './client-handlers'
import type { AgentProtocol } from './protocol'

/** What a protocol implementation needs from the connection that runs it. */
export interface ProtocolOptions {
  agentId: string
  handlers: ClientHandlers
  clientVersion: string
  /** Terminal sign-ins run the agent's command here: not announced to an agent over the network, which has none here. */
  terminalAuth: boolean
}

/** A protocol implementation as the connection drives it: its own initialize, and a look at every raw message. */
export interface WireProtocol extends AgentProtocol {
  /** The SDK connection: closed when the process ends, aborted when the stream does. */
  readonly connection: { close(error?: unknown): void; readonly signal: AbortSignal }
  initialize(): Promise<{ protocolVersion: number }>
  /** Every message from the agent as it arrived and in order, before the SDK parses it; true when taken whole (the SDK does not get it). */
  receive(message: AnyMessage): boolean
}
