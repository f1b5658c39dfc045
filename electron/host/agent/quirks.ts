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
