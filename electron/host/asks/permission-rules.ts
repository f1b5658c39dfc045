import path from 'node:path'
import type { PermissionOption, RequestPermissionRequest } from '@agentclientprotocol/sdk'
import type { PermissionRule } from '../../../shared/domain'
import type { PermissionScope, RuleSubject } from '../../../shared/permissions'
import { toolNameOf, type ToolCallEntry } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import { confinePath } from '../fs-boundary'

/**
 * Remembered permission answers ("always"), narrowed to what the user would
 * recognise as the same request: one agent, one project, one tool (the
 * agent's own name for it), and the exact command line, or files inside the
 * project's folders. A request that names any path outside those folders is
 * always asked. A rule is Switchboard's: a matching request is answered with
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
  /** Every path the request names (locations, diffs, input fields such as file_path, path, cwd), as named. */
  paths: string[]
}

type RequestToolCall = RequestPermissionRequest['toolCall']

/** Fields of a tool's input that name a file or folder. */
const PATH_KEY =
  /^(file_?path|file_?paths|path|paths|notebook_?path|absolute_?path|dir_?path|dir|directory|cwd|workdir|working_?directory|target_?file|old_?path|new_?path|source|destination)$/i

export function subjectOf(toolCall: RequestToolCall, announced: ToolCallEntry | undefined): RequestSubject {
  const toolKind = toolCall.kind ?? announced?.toolKind ?? 'other'
  const title = toolCall.title ?? announced?.title ?? ''
  const rawInputs = [toolCall.rawInput, announced?.rawInput].filter((r) => r !== undefined && r !== null)
  const command = rawInputs.map(commandIn).find((c) => c !== undefined) ?? (toolKind === 'execute' && title.trim() ? title : undefined)
  const tool = toolNameOf(toolCall._meta) ?? announced?.toolName ?? (command !== undefined ? 'Command' : titleTool(title, toolKind))
  const paths = new Set<string>()
  for (const location of [...(toolCall.locations ?? []), ...(announced?.locations ?? [])]) paths.add(location.path)
  for (const content of [...(toolCall.content ?? []), ...(announced?.content ?? [])]) if (content.type === 'diff') paths.add(content.path)
  for (const raw of rawInputs) collectPaths(raw, paths, 0)
  return { tool, toolKind, ...(command !== undefined ? { command } : {}), paths: [...paths] }
}

/** The tool a title names when the agent gives no tool name ("Edit notes.md" → Edit); else the whole title, else the kind. */
function titleTool(title: string, kind: string): string {
  const first = /^([A-Za-z][\w-]*)\s+\S/.exec(title.trim())
  return first?.[1] ?? (title.trim() || kind)
}

/** The command line in a tool's input: `command` as a string, or as a list of arguments (quoted where needed). */
function commandIn(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined
  const command = (raw as { command?: unknown }).command
  if (typeof command === 'string' && command.trim()) return command
  if (Array.isArray(command) && command.length > 0 && command.every((a) => typeof a === 'string')) {
    return command.map((a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ')
  }
  return undefined
}

function collectPaths(value: unknown, into: Set<string>, depth: number): void {
  if (depth > 4 || typeof value !== 'object' || value === null) return
  if (Array.isArray(value)) {
    for (const item of value) collectPaths(item, into, depth + 1)
    return
  }
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    if (PATH_KEY.test(key)) {
      if (typeof field === 'string' && field) into.add(field)
      else if (Array.isArray(field)) for (const item of field as unknown[]) if (typeof item === 'string' && item) into.add(item)
    } else if (key === 'changes' && typeof field === 'object' && field !== null && !Array.isArray(field)) {
      // A patch as a map of path → change (Codex's apply_patch).
      for (const changed of Object.keys(field as Record<string, unknown>)) into.add(changed)
    }
    collectPaths(field, into, depth + 1)
  }
}

/**
 * The paths a request names that are not inside the folders (after links
 * are followed); a relative path is taken from `cwd`. A path that cannot be
 * shown to be inside (`~/…`, a malformed one) counts as outside.
 */
export async function pathsOutside(paths: string[], folders: string[], cwd: string): Promise<string[]> {
  const outside: string[] = []
  for (const named of paths) {
    if (named.startsWith('~')) {
      outside.push(named)
      continue
    }
    const absolute = path.isAbsolute(named) ? named : path.resolve(cwd, named)
    try {
      await confinePath(absolute, folders)
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
  if (outside.length > 0) {
    const more = outside.length > 1 ? ` (and ${outside.length - 1} more)` : ''
    return { ok: false, reason: `it names ${outside[0]}${more}, outside ${project}'s folders, so it is asked each time` }
  }
  const scope: PermissionScope =
    subject.command !== undefined ? { kind: 'command', command: subject.command } : subject.paths.length > 0 ? { kind: 'files' } : { kind: 'tool' }
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

/** Whether a rule answers this request: same agent and project (checked by the caller), tool, kind and command. */
export function ruleMatches(rule: PermissionRule, subject: RuleSubject): boolean {
  if (rule.tool !== subject.tool || rule.toolKind !== subject.toolKind) return false
  if (rule.scope.kind === 'command' || subject.scope.kind === 'command') {
    return rule.scope.kind === 'command' && subject.scope.kind === 'command' && rule.scope.command === subject.scope.command
  }
  return true
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
