import { z } from 'zod'

/**
 * A change that would make Switchboard run a program (an agent's command, an
 * MCP stdio server, a sign-in command, a registry download), or widen what
 * agents reach (a project folder, extra folders, another tool's MCP file, the
 * registry agents are installed from), is never made on the window's word alone: the user confirms it outside the page, in a dialog
 * of the Electron main process or, under `npm run serve`, by typing a code
 * that only `serve`'s console shows. This is what such a confirmation shows,
 * and how it is written, the same in both places.
 */

/** One program the change would run, as it would be started. */
export interface ProgramToRun {
  /** Whose program it is: `Agent “Claude Code”`, `MCP server “files”`. */
  label: string
  /** The exact command line: each argument quoted as a POSIX shell reads it, invisible characters written out (`quoteArg`). */
  commandLine: string
  /** The folder it starts in, when not the default one. */
  cwd?: string
  /** Variables it is given besides the user's environment. A secret's value is never shown: `secret` says whether it is a new one. */
  env: { name: string; value: string; secret?: 'new' | 'kept' }[]
  /** Downloaded first, from this address (a registry agent's archive). */
  download?: string
}

/** What the user is asked to confirm. */
export interface CommandChange {
  /** What the change does, as a title: `Add the agent “Foo”`. */
  action: string
  /** The confirming button's words: `Add agent`. */
  confirm: string
  programs: ProgramToRun[]
  /**
   * What else the change gives agents, one sentence each (a folder they may
   * read, write and run commands in; a file another tool reads): a change that
   * widens what agents reach is confirmed like one that runs a program.
   */
  reach?: string[]
  /** What the dialog says under it, in place of its warning about running with the user's rights (a restart to update). */
  note?: string
}

/** Its schema is with the wire envelope that carries it (shared/wire-envelope.ts, zod/mini: it is in the window's first script). */
export { commandChangeSchema } from './wire-envelope'

/**
 * The code `serve` printed, sent again with the request it confirms. Requests
 * that can make a change that runs a program take it; the Electron app asks in
 * a native dialog instead and ignores it.
 */
export const confirmationCodeParam = { confirmationCode: z.string().max(32).optional() }

/** Longest text a confirmation may show (beyond it, the change is refused as too long to read). */
export const MAX_CONFIRMATION_CHARS = 16_000

/**
 * Characters that do not show as themselves: controls, format characters
 * (bidirectional overrides and isolates, zero-width characters), line and
 * paragraph separators. In a confirmation they are written out as `\u{…}`, so
 * nothing can hide or reorder what is shown.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu
const IS_INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u

/** Text as shown in a confirmation: every invisible character written out. */
export function visible(text: string): string {
  return text.replace(INVISIBLE, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`)
}

const PLAIN_ARG = /^[\w@%+=:,./-]+$/u

/**
 * One argument as a POSIX shell would read it back: as it is when it is
 * plain, else in single quotes; with invisible characters, in `$'…'` with
 * those characters escaped, so the line is exact and nothing in it is hidden.
 */
export function quoteArg(arg: string): string {
  if (arg === '') return "''"
  if (PLAIN_ARG.test(arg) && !/^[~=]/.test(arg)) return arg
  if (!IS_INVISIBLE.test(arg)) return `'${arg.replace(/'/g, `'\\''`)}'`
  let out = ''
  for (const c of arg) {
    if (c === '\\' || c === "'") out += `\\${c}`
    else if (c === '\n') out += '\\n'
    else if (c === '\t') out += '\\t'
    else if (c === '\r') out += '\\r'
    else if (IS_INVISIBLE.test(c)) {
      const point = c.codePointAt(0) ?? 0
      out += point <= 0xff ? `\\x${hex(point, 2)}` : point <= 0xffff ? `\\u${hex(point, 4)}` : `\\U${hex(point, 8)}`
    } else out += c
  }
  return `$'${out}'`
}

function hex(n: number, width: number): string {
  return n.toString(16).toUpperCase().padStart(width, '0')
}

/** A command and its arguments as one exact line. */
export function commandLineOf(command: string, args: readonly string[]): string {
  return [command, ...args].map(quoteArg).join(' ')
}

/** What one program is, in lines: whose, the command line, where it starts, its variables, a download. */
export function programLines(program: ProgramToRun): string[] {
  const lines = [`${visible(program.label)} will run:`, `  ${program.commandLine}`]
  if (program.download) lines.push(`  after downloading ${visible(program.download)}`)
  if (program.cwd) lines.push(`  in ${visible(program.cwd)}`)
  if (program.env.length) {
    lines.push('  with')
    for (const v of program.env) {
      const value = v.secret ? (v.secret === 'new' ? '(secret, new value)' : '(secret, unchanged)') : quoteArg(v.value)
      lines.push(`    ${visible(v.name)}=${value}`)
    }
  }
  return lines
}

/** The whole confirmation as text: the action, what it gives agents, then each program. */
export function changeLines(change: CommandChange): string[] {
  const reach = change.reach?.length ? ['', ...change.reach.map(visible)] : []
  return [visible(change.action), ...reach, ...change.programs.flatMap((p) => ['', ...programLines(p)])]
}
