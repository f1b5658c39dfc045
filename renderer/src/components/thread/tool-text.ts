import type { ToolKind } from '@agentclientprotocol/sdk'
import { knownLanguage } from '../../highlight'

/**
 * How a tool call's text content is shown. What a read, a command or a search
 * gives back is a file's text or a program's output, where spaces and line
 * breaks are the content: it is shown as code (monospace, every line kept,
 * highlighted by the file's type when known). Other tools' text is the
 * agent's prose, shown as markdown.
 */

/** Kinds whose text content is file text or program output. */
const CODE_KINDS = new Set<string>(['read', 'execute', 'search'])

/** Already a fenced code block (as Claude Code sends a file it read): markdown shows it as code. */
const FENCED = /^\s*(`{3,}|~{3,})[^\n]*\n[\s\S]*\n\1\s*$/

/** Lines that start with a line number (`  12→`, `12\t`, `12:`, `12|`): a file as an agent quotes it. */
const NUMBERED_LINE = /^\s*\d+\s*(→|\t|:|\|)/

export function isCodeText(kind: ToolKind | string, text: string): boolean {
  if (FENCED.test(text)) return false
  if (CODE_KINDS.has(kind)) return true
  const lines = text.split('\n').filter((line) => line.trim())
  return lines.length >= 2 && lines.filter((line) => NUMBERED_LINE.test(line)).length >= lines.length * 0.8
}

/** The language to highlight a file in, from its name (`app.ts`, `Dockerfile`), if known. */
export function languageOfPath(path: string | undefined): string {
  const name = (path ?? '').split(/[\\/]/).pop() ?? ''
  const dot = name.lastIndexOf('.')
  const candidate = dot > 0 ? name.slice(dot + 1) : name
  return knownLanguage(candidate) ?? ''
}

/** The text as one fenced block, the fence longer than any run of backticks inside, so nothing in it ends the block. */
export function asCodeFence(text: string, language = ''): string {
  // A loop, not Math.max(...runs): a text of a hundred thousand runs would overflow the stack as arguments.
  let longest = 2
  for (const run of text.matchAll(/`{3,}/g)) longest = Math.max(longest, run[0].length)
  const fence = '`'.repeat(longest + 1)
  return `${fence}${language}\n${text.replace(/\n$/, '')}\n${fence}`
}
