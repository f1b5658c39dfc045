import type { TranscriptRecord } from '../../../shared/transcript'
import type { AgentConnection } from '../connection/connection'

/**
 * A fork of a session that ends at one of the agent's messages: the native
 * way to continue a conversation from an earlier point, where an agent offers
 * one. ACP has none yet (the `session/fork` `messageId` of the upstream RFD
 * "session-fork-at-message", `session.fork.atMessageId`, is not in the schema
 * or the SDK 2.4; "session-rewind" proposes `session/rewind` and
 * `session/edit_prompt`). What exists is JetBrains AIR's extension:
 * `session/fork` with `_meta.jetbrains.air.fork = {version: 1, messageId}`,
 * the fork holding the conversation up to and including that agent message
 * (its `messageId` in `agent_message_chunk`). claude-agent-acp (0.101) reads
 * it (`fork-session.js`, the Claude Agent SDK's `forkSession(…, {upToMessageId})`)
 * whether or not the client is AIR; codex-acp (2.6) reads the same key
 * (`thread/fork` with `lastTurnId`). Neither announces it: an agent that does
 * not read the key forks the whole conversation and says nothing, so the fork
 * is used only with the agents and versions it was tested with (Claude Code;
 * test/integration/real-claude-edit.test.ts), and every other agent gets a new
 * session given the conversation as context (edit-resend.ts).
 */

/** Agents (`agentInfo.name`) known to fork at a message, from this version on. */
const FORKS_AT_MESSAGE: Record<string, string> = {
  '@agentclientprotocol/claude-agent-acp': '0.101.0'
}

export function forksAtMessage(connection: AgentConnection): boolean {
  const info = connection.state.agentInfo
  const since = info ? FORKS_AT_MESSAGE[info.name] : undefined
  // Over version 2 there is no session/fork yet (protocol-v2.ts).
  const { session, protocolVersion } = connection.capabilities
  return Boolean(session.fork && protocolVersion === 1 && since && info?.version && atLeast(info.version, since))
}

/** `session/fork`'s `_meta` for a fork that ends with the agent message `messageId`. */
export function forkPointMeta(messageId: string): Record<string, unknown> {
  return { jetbrains: { air: { fork: { version: 1, messageId } } } }
}

/** The id of the last agent message in `records` (where a fork before the next user message ends), if the agent gave ids. */
export function lastAgentMessageId(records: TranscriptRecord[]): string | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]
    if (record?.t === 'prompt') return undefined
    if (record?.t === 'update' && !record.child && record.update.sessionUpdate === 'agent_message_chunk') {
      return record.update.messageId ?? undefined
    }
  }
  return undefined
}

/** `version` is `since` or later (dotted numbers; a pre-release tag is read as its numbers). */
export function atLeast(version: string, since: string): boolean {
  const parts = (v: string) => v.split(/[.+-]/).map((p) => Number.parseInt(p, 10) || 0)
  const a = parts(version)
  const b = parts(since)
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0)
  }
  return true
}
