/**
 * What a remembered permission answer ("always") covers, said the same way
 * wherever the user sees it: on the permission card before choosing, in the
 * thread after, and in the list of remembered permissions.
 *
 * A rule is Switchboard's, never the agent's: it names one tool (the agent's
 * own name for it, e.g. Claude Code's `Bash`, `Edit`, `Write`) and
 *
 * - `command`: that exact command line, its arguments included, and no other;
 * - `mcp`: that tool of that MCP server (an MCP tool is named by its server and its name);
 * - `files`: that tool on files inside the project's folders, when every path it names is known and inside;
 * - `tool`: that tool when it names no file outside the project's folders
 *   (a tool that named no file when it was remembered: a web fetch, an MCP tool).
 *
 * Whatever the scope, a request that names a path outside the project's
 * folders is always asked.
 */

export type PermissionScope = { kind: 'command'; command: string } | { kind: 'mcp'; server: string } | { kind: 'files' } | { kind: 'tool' }

export interface RuleSubject {
  /** The agent's name for the tool (Claude Code: Bash, Edit, Write, …), else the tool its title names. */
  tool: string
  /** The ACP kind the tool was asked with (edit, execute, …). */
  toolKind: string
  scope: PermissionScope
}

/** A command line of at most this many characters is shown whole in a sentence; a longer one is cut. */
const COMMAND_SHOWN = 120

export function shortCommand(command: string): string {
  const oneLine = command.replace(/\s*\n\s*/g, ' ⏎ ')
  return oneLine.length > COMMAND_SHOWN ? `${oneLine.slice(0, COMMAND_SHOWN - 1)}…` : oneLine
}

/** The tool's name for a command when the agent names no tool of its own (the rule is still for that one command). */
export const ANY_COMMAND_TOOL = 'Command'

/** What the rule covers, without the decision, in plain words: "running “npm test” with Bash (that exact command only)". */
export function describeScope(subject: RuleSubject, project: string): string {
  const { tool, scope } = subject
  if (scope.kind === 'command')
    return `running “${shortCommand(scope.command)}”${tool === ANY_COMMAND_TOOL ? '' : ` with ${tool}`} (that exact command only)`
  if (scope.kind === 'mcp') return `the tool ${tool} of the MCP server ${scope.server}, and no other`
  if (scope.kind === 'files') return `${tool} on any file inside ${project}`
  return `${tool}, as long as it touches no file outside ${project}`
}

/** The decision and what it covers: "Always allow running “npm test” with Bash (that exact command only)". */
export function describeRule(subject: RuleSubject & { decision: 'allow' | 'reject' }, project: string): string {
  return `Always ${subject.decision} ${describeScope(subject, project)}`
}

/**
 * What choosing "always" on a pending request would do. `remembered: false`:
 * nothing can be remembered for it (it names a path outside the project's
 * folders, say), and why; the card then offers no "always".
 */
export type PermissionAlways =
  | ({ remembered: true; /** The project's name. */ project: string; /** describeScope's sentence. */ description: string } & RuleSubject)
  | { remembered: false; reason: string }
