import { promises as fs } from 'node:fs'
import path from 'node:path'
import type { PermissionOption, RequestPermissionRequest } from '@agentclientprotocol/sdk'
import type { PermissionRule } from '../../../shared/domain'
import { ANY_COMMAND_TOOL, shortCommand, type PermissionScope, type RuleSubject } from '../../../shared/permissions'
import { toolNameOf, type ToolCallEntry } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import { confinePath } from '../local-files/fs-boundary'

/**
 * Remembered permission answers ("always"), narrowed to what the user would
 * recognise as the same request: one agent, one project, one tool (the
 * agent's own name for it; an MCP tool by its server and its name), and the
 * exact command line with its arguments, or files inside the project's
 * folders. A request is asked whenever what it touches cannot be known: it
 * names a path outside those folders (links followed, a hard link counted as
 * outside), a path as a URI, a path only in its title, a path-like value in a
 * field the reader does not know, input nested deeper than it looks, no file
 * at all for a tool that works on files, or a command other than the one the
 * agent announced for the same call. A rule is Switchboard's: a matching request is answered with
 * the agent's *once* option of the same decision, never its *always* (which
 * would let the agent remember, on its own terms, something broader and out
 * of the user's reach).
 */

export type Decision = 'allow' | 'reject'

export function alwaysDecision(kind: string): Decision | null {
  if (kind === 'allow_always') return 'allow'
  if (kind === 'reject_always') return 'reject'
  return null
}

/** The option that carries out a decision once: the agent's `allow_once` / `reject_once`. */
export function onceOption(options: PermissionOption[], decision: Decision): PermissionOption | undefined {
  return options.find((o) => o.kind === `${decision}_once`)
}

/** Kinds whose options are choices of their own, never a rule (Claude Code's "exit plan mode": which mode comes next). */
const NEVER_REMEMBERED = new Set(['switch_mode'])

/** What a permission request is about, from the request and the tool call the agent announced before it. */
export interface RequestSubject {
  tool: string
  toolKind: string
  /** The command line, for a tool that runs one. */
  command?: string
  /** The MCP server of an MCP tool (then `tool` is the tool's name on that server). */
  mcpServer?: string
  /** Every path the request names (locations, diffs, input fields such as file_path, path, cwd, path-like values), as named. */
  paths: string[]
  /** Why what the request touches cannot be known (then it is asked each time, whatever the rules). */
  unknown?: string
}

type RequestToolCall = RequestPermissionRequest['toolCall']

/** Fields of a tool's input that name a file or folder. */
const PATH_KEY =
  /^(file_?path|file_?paths|path|paths|notebook_?path|absolute_?path|dir_?path|dir|directory|cwd|workdir|working_?directory|target_?file|old_?path|new_?path|source|destination)$/i

/** Fields whose text is content, not a place (an edit's old and new text, a file's content, a description). */
const TEXT_KEY = /^(content|contents|text|new_?string|old_?string|new_?text|old_?text|description|prompt|message|plan|reason|title|instructions)$/i

/** A value that reads as a path wherever it is: absolute, from home, relative up or here, a `file:` URI, a Windows drive (a web address is not one). */
const PATH_LIKE = /^(\/|~($|\/)|\.\.?\/|[a-zA-Z]:[\\/]|file:)/i

/** How deep into a tool's input the reader looks; deeper input is not understood, so the request is asked. */
const MAX_INPUT_DEPTH = 8

/** Tool kinds that work on files: without a path, what they touch is unknown. */
const FILE_KINDS = new Set(['read', 'edit', 'delete', 'move'])

export function subjectOf(toolCall: RequestToolCall, announced: ToolCallEntry | undefined): RequestSubject {
  const toolKind = toolCall.kind ?? announced?.toolKind ?? 'other'
  const title = toolCall.title ?? announced?.title ?? ''
  const rawInputs = [toolCall.rawInput, announced?.rawInput].filter((r) => r !== undefined && r !== null)
  const unknown: string[] = []
  // The command the request asks for, and the one the agent announced for the same call: they must agree.
  const asked = commandIn(toolCall.rawInput)
  const shown = commandIn(announced?.rawInput)
  if (asked !== undefined && shown !== undefined && asked !== shown) {
    unknown.push(`the agent announced the command “${shortCommand(shown)}” but asks for “${shortCommand(asked)}”`)
  }
  const command = asked ?? shown ?? (toolKind === 'execute' && title.trim() ? title : undefined)
  // An MCP tool: named by its server and its name, never by the request's title (Codex titles them all alike).
  const mcpAsked = mcpToolIn(toolCall.rawInput)
  const mcpShown = mcpToolIn(announced?.rawInput)
  const mcp = mcpAsked ?? mcpShown
  if (mcpAsked?.tool && mcpShown?.tool && (mcpAsked.server !== mcpShown.server || mcpAsked.tool !== mcpShown.tool)) {
    unknown.push(`the agent announced the MCP tool ${mcpShown.server}/${mcpShown.tool} but asks for ${mcpAsked.server}/${mcpAsked.tool}`)
  }
  const mcpTool = mcpAsked?.tool ?? mcpShown?.tool ?? null
  if (mcp && !mcpTool) unknown.push(`it does not say which tool of the MCP server ${mcp.server} it runs`)
  const tool = mcpTool ?? toolNameOf(toolCall._meta) ?? announced?.toolName ?? (command !== undefined ? ANY_COMMAND_TOOL : titleTool(title, toolKind))
  const paths = new Set<string>()
  for (const location of [...(toolCall.locations ?? []), ...(announced?.locations ?? [])]) paths.add(location.path)
  for (const content of [...(toolCall.content ?? []), ...(announced?.content ?? [])]) if (content.type === 'diff') paths.add(content.path)
  let tooDeep = false
  for (const raw of rawInputs) tooDeep = collectPaths(raw, paths, 0) || tooDeep
  if (tooDeep) unknown.push(`its input is nested deeper than Switchboard looks (${MAX_INPUT_DEPTH} levels)`)
  // A path only in the title: the request itself does not say it, so what it touches is not known.
  if (command === undefined) {
    const named = [...paths]
    const onlyInTitle = pathsInText(title).filter((p) => !named.some((n) => n === p || n.endsWith(p) || p.endsWith(n)))
    if (onlyInTitle.length > 0) unknown.push(`its title names ${onlyInTitle[0]}, which the request itself does not`)
  }
  return {
    tool,
    toolKind,
    ...(command !== undefined ? { command } : {}),
    ...(mcp ? { mcpServer: mcp.server } : {}),
    paths: [...paths],
    ...(unknown.length > 0 ? { unknown: unknown.join('; ') } : {})
  }
}

/** Paths a text (a title) names as words: absolute ones, from home, Windows drives, `file:` URIs (not web addresses). */
function pathsInText(text: string): string[] {
  const found: string[] = []
  for (const match of text.matchAll(/(?:^|[\s"'`(<[=])((?:\/|~\/|file:|[a-zA-Z]:[\\/])[^\s"'`)>\]]*)/gi)) {
    const candidate = (match[1] ?? '').replace(/[.,:;!?]+$/, '')
    if (candidate.length > 1) found.push(candidate)
  }
  return found
}

/**
 * The MCP tool a request or an announced call is about: Codex's approval
 * (its raw input is the elicitation event: `server_name`, and the tool's name
 * in `request.message`, 'Allow the S MCP server to run tool "T"?'), or the
 * invocation it announces (`server`, `tool`). `tool` is null when the server
 * is known and the tool is not.
 */
export function mcpToolIn(raw: unknown): { server: string; tool: string | null } | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined
  const r = raw as Record<string, unknown>
  if (typeof r.server === 'string' && typeof r.tool === 'string' && r.server && r.tool) return { server: r.server, tool: r.tool }
  if (typeof r.server_name !== 'string' || !r.server_name) return undefined
  const request = (typeof r.request === 'object' && r.request !== null ? r.request : {}) as Record<string, unknown>
  const meta = (typeof request._meta === 'object' && request._meta !== null ? request._meta : {}) as Record<string, unknown>
  if (meta.codex_approval_kind !== undefined && meta.codex_approval_kind !== 'mcp_tool_call') return undefined
  const message = typeof request.message === 'string' ? request.message : ''
  const named = /\brun tool "([^"]+)"/.exec(message)?.[1]
  return { server: r.server_name, tool: named ?? null }
}

/** The tool a title names when the agent gives no tool name ("Edit notes.md" → Edit); else the whole title, else the kind. */
function titleTool(title: string, kind: string): string {
  const first = /^([A-Za-z][\w-]*)\s+\S/.exec(title.trim())
  if (first?.[1]) return first[1]
  // A title that is not "Tool what" (Gemini CLI titles an edit "hello.txt: old => new") names no tool: the kind does.
  return KIND_TOOLS[kind] ?? (title.trim() || kind)
}

/** The tool a request of a kind is, when its title names none. */
const KIND_TOOLS: Record<string, string> = { read: 'Read', edit: 'Edit', delete: 'Delete', move: 'Move', search: 'Search', fetch: 'Fetch' }

/** A word of a command line, quoted for a POSIX shell where needed. */
function quoteWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}

/**
 * The whole command line in a tool's input: `command` as a string, or as a
 * list of words, followed by `args` when there are any (a command and its
 * arguments apart, as terminal/create takes them): the arguments are part of
 * what a rule covers.
 */
function commandIn(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined
  const { command, args } = raw as { command?: unknown; args?: unknown }
  const words = (list: unknown): string[] | undefined =>
    Array.isArray(list) && list.every((a) => typeof a === 'string') ? (list as string[]) : undefined
  const listed = words(command)
  let line: string | undefined
  if (typeof command === 'string' && command.trim()) line = command
  else if (listed && listed.length > 0) line = listed.map(quoteWord).join(' ')
  if (line === undefined) return undefined
  if (args === undefined || args === null) return line
  const extra = words(args)
  // Arguments in another shape still count: the line is not the bare command.
  if (extra === undefined) return `${line} ${JSON.stringify(args)}`
  return extra.length > 0 ? `${line} ${extra.map(quoteWord).join(' ')}` : line
}

/** Adds the paths `value` names to `into`; true when it is nested deeper than the reader looks. */
function collectPaths(value: unknown, into: Set<string>, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (depth > MAX_INPUT_DEPTH) return true
  let tooDeep = false
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item === 'string') addIfPathLike(item, into)
      else tooDeep = collectPaths(item, into, depth + 1) || tooDeep
    }
    return tooDeep
  }
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    if (PATH_KEY.test(key)) {
      if (typeof field === 'string' && field) into.add(field)
      else if (Array.isArray(field)) for (const item of field as unknown[]) if (typeof item === 'string' && item) into.add(item)
    } else if (key === 'changes' && typeof field === 'object' && field !== null && !Array.isArray(field)) {
      // A patch as a map of path → change (Codex's apply_patch).
      for (const changed of Object.keys(field as Record<string, unknown>)) into.add(changed)
    } else if (typeof field === 'string' && !TEXT_KEY.test(key) && key !== 'command') {
      // A field the reader does not know that holds a path still names it.
      addIfPathLike(field, into)
    }
    tooDeep = collectPaths(field, into, depth + 1) || tooDeep
  }
  return tooDeep
}

function addIfPathLike(value: string, into: Set<string>): void {
  if (!value.includes('\n') && PATH_LIKE.test(value.trim())) into.add(value.trim())
}

/**
 * The paths a request names that are not inside the folders (after links
 * are followed); a relative path is taken from `cwd`. A path that cannot be
 * shown to be inside (`~/…`, a malformed one) counts as outside.
 */
export async function pathsOutside(paths: string[], folders: string[], cwd: string): Promise<string[]> {
  const outside: string[] = []
  for (const named of paths) {
    // The home folder the agent expands, and a URI (file:// or any other): not a path shown to be inside.
    if (named.startsWith('~') || (/^[a-zA-Z][\w+.-]*:/.test(named) && !/^[a-zA-Z]:[\\/]/.test(named))) {
      outside.push(named)
      continue
    }
    const absolute = path.isAbsolute(named) ? named : path.resolve(cwd, named)
    try {
      const real = await confinePath(absolute, folders)
      // A hard link inside may be a file outside under another name.
      const stat = await fs.lstat(real).catch(() => null)
      if (stat?.isFile() && stat.nlink > 1) outside.push(`${named} (a file with ${stat.nlink} hard links)`)
    } catch {
      outside.push(named)
    }
  }
  return outside
}

/** What "always" on this request would remember, or why nothing can be. */
export type Rememberable = { ok: true; subject: RuleSubject } | { ok: false; reason: string } | { ok: false; reason: null }

export function rememberable(subject: RequestSubject, outside: string[], project: string): Rememberable {
  if (NEVER_REMEMBERED.has(subject.toolKind)) return { ok: false, reason: null }
  if (subject.unknown) return { ok: false, reason: `${subject.unknown}, so it is asked each time` }
  if (outside.length > 0) {
    const more = outside.length > 1 ? ` (and ${outside.length - 1} more)` : ''
    return { ok: false, reason: `it names ${outside[0]}${more}, outside ${project}'s folders, so it is asked each time` }
  }
  let scope: PermissionScope
  if (subject.command !== undefined) scope = { kind: 'command', command: subject.command }
  else if (subject.mcpServer !== undefined) scope = { kind: 'mcp', server: subject.mcpServer }
  else if (subject.paths.length > 0) scope = { kind: 'files' }
  else if (FILE_KINDS.has(subject.toolKind)) {
    return { ok: false, reason: 'it names no file, so what it would touch is not known; it is asked each time' }
  } else scope = { kind: 'tool' }
  return { ok: true, subject: { tool: subject.tool, toolKind: subject.toolKind, scope } }
}

/**
 * How much of an agent's strings a permission request carries to the window
 * and into the transcript: a pending request travels with every change of
 * its session's state, and a title of megabytes (a command, a file's text)
 * would go each time. The whole of it is in the tool call the request is
 * about, shown in the thread (bounded there).
 */
export const PERMISSION_TEXT = { title: 10_000, option: 1_000 }

/** `text` cut to `max` characters (never inside a surrogate pair), saying how much was left out. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text
  const end = text.charCodeAt(max - 1) >= 0xd800 && text.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max
  return `${text.slice(0, end)}… (${(text.length - end).toLocaleString('en-US')} more characters)`
}

/**
 * Whether a rule answers this request: same agent and project (checked by the
 * caller), tool, kind, and scope: the same command line, the same MCP server,
 * files (each one known and inside), or a tool that names no file.
 */
export function ruleMatches(rule: PermissionRule, subject: RuleSubject): boolean {
  return rule.tool === subject.tool && rule.toolKind === subject.toolKind && JSON.stringify(rule.scope) === JSON.stringify(subject.scope)
}

/** An "always" option the agent offers for this session only (Codex: "Allow for this session"): kept in memory, for that session. */
export function sessionScoped(option: PermissionOption): boolean {
  const meta = option._meta as Record<string, unknown> | null | undefined
  return /\bsession\b/i.test(option.name) || /session/i.test(option.optionId) || meta?.persist === 'session'
}

export function sameSubject(a: RuleSubject, b: RuleSubject): boolean {
  return a.tool === b.tool && a.toolKind === b.toolKind && JSON.stringify(a.scope) === JSON.stringify(b.scope)
}

export function permissionRecord(
  title: string,
  sent: PermissionOption | null,
  how: { remembered: boolean; name?: string; kind?: string; rule?: string },
  toolCallId?: string
): TranscriptRecord {
  return {
    t: 'permission',
    at: new Date().toISOString(),
    title,
    optionId: sent?.optionId ?? null,
    optionName: how.name ?? (sent ? cutText(sent.name, PERMISSION_TEXT.option) : undefined),
    optionKind: how.kind ?? sent?.kind,
    remembered: how.remembered,
    ...(how.rule ? { rule: how.rule } : {}),
    ...(toolCallId ? { toolCallId } : {})
  }
}
