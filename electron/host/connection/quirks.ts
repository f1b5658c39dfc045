import type { SessionUpdate } from '@agentclientprotocol/sdk'

/**
 * What the Host does differently for agents that misread a part of the
 * protocol, named by the `agentInfo.name` they give in `initialize`. Each entry
 * says what the agent does and why the Host's usual answer fails it; remove it
 * once the agent is fixed.
 */

/**
 * Agents that cannot tell a missing file from other read errors, so a new file
 * can never be written: Gemini CLI (0.61) reads a path before `write_file`, and
 * takes "does not exist" only from an `Error` whose message says so, while its
 * bundled SDK rejects with the plain JSON-RPC error object (`String(err)` is
 * "[object Object]"); the tool then fails with "Error checking existing file".
 * They are answered an empty file for a path that does not exist yet (inside
 * the session's folders only; the boundary is checked first).
 */
const MISSING_FILE_AS_EMPTY = new Set(['gemini-cli'])

export function readsMissingFileAsEmpty(agentName: string | undefined): boolean {
  return agentName !== undefined && MISSING_FILE_AS_EMPTY.has(agentName)
}

/**
 * Agents that announce an API-key sign-in alike (`_meta: {"api-key":
 * {provider}}` on the method) but read the key from `authenticate`'s
 * `_meta["api-key"]` differently: Gemini CLI (0.61) as a string, codex-acp
 * 2.x as an object `{apiKey}` (a string it does not read, and refuses with
 * "CODEX_API_KEY or OPENAI_API_KEY is not set").
 */
const API_KEY_IN_OBJECT = new Set(['@agentclientprotocol/codex-acp'])

/** `authenticate`'s `_meta` carrying an API key, as the agent reads it. */
export function apiKeyMeta(agentName: string | undefined, key: string): { 'api-key': string | { apiKey: string } } {
  return { 'api-key': agentName !== undefined && API_KEY_IN_OBJECT.has(agentName) ? { apiKey: key } : key }
}

/**
 * Causes of a failure that an agent does not pass on, recognised by the
 * agent's name and what it did say.
 *
 * Claude Code as root: claude-agent-acp takes any IS_SANDBOX in its
 * environment to mean a sandbox and starts Claude Code allowed to skip
 * permissions, which Claude Code refuses to the root user unless IS_SANDBOX
 * is exactly `1` ("--dangerously-skip-permissions cannot be used with
 * root/sudo privileges for security reasons"); the adapter does not pass the
 * CLI's stderr on, so all the Host hears is "Claude Code process exited with
 * code 1" (0.101 passes the CLI's own words on, which say the cause but not
 * the way out). (Without IS_SANDBOX the adapter does not ask, and Claude Code runs.)
 */
export function knownCause(
  agentName: string | undefined,
  said: string,
  agentEnv: Record<string, string> = {},
  env: NodeJS.ProcessEnv = process.env,
  uid = process.getuid?.()
): string | undefined {
  const refusedRoot = /Claude Code process exited with code 1\b|--dangerously-skip-permissions cannot be used with root/.test(said)
  if (agentName === '@agentclientprotocol/claude-agent-acp' && refusedRoot) {
    const sandbox = agentEnv.IS_SANDBOX ?? env.IS_SANDBOX
    if (uid === 0 && sandbox !== undefined && sandbox !== '1') {
      return `Claude Code refuses to run as root with IS_SANDBOX=${sandbox}: it allows the root user only IS_SANDBOX=1. Give the agent the variable IS_SANDBOX=1 (in a container or sandbox), or run Switchboard as a normal user.`
    }
  }
  return undefined
}

/**
 * How an agent says, mid-turn, that the turn failed when its prompt's answer
 * will not. Codex (codex-acp 2.x over protocol version 1; its typed failures
 * need JetBrains' AIR extension, its `stopReason: "error"` protocol version 2)
 * reports a model request that failed (the API refused it, a server error) as
 * its thread's status turning `systemError` (`session_info_update`,
 * `_meta.codex.threadStatus.type`), then the reason as agent text (an HTTP
 * error body as the JSON text it is, or Codex's own words), and answers the
 * prompt `end_turn`. 'failed' for that status; 'recovered' when the thread is
 * active again within the turn; null for any other update.
 */
export function turnFailureSignal(update: SessionUpdate): 'failed' | 'recovered' | null {
  if (update.sessionUpdate !== 'session_info_update') return null
  const status = (update._meta as { codex?: { threadStatus?: { type?: unknown } } } | null | undefined)?.codex?.threadStatus?.type
  if (status === 'systemError') return 'failed'
  if (status === 'active') return 'recovered'
  return null
}
