import { parse } from 'shell-quote'

/**
 * A command line as a shell would split it (quotes, backslashes, `#` comments),
 * with the variables set in front of it (`FOO=1 my-agent --acp`) taken out as
 * its environment: what an agent definition runs, from a line pasted out of an
 * agent's README. Nothing is expanded (`$HOME` stays `$HOME`, `*` stays `*`):
 * the program receives exactly what is shown. A line that needs a shell (a
 * pipe, `&&`, a redirection) is refused with why: Switchboard runs one program.
 */
export interface SplitCommandLine {
  command: string
  args: string[]
  env: Record<string, string>
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/

export function splitCommandLine(line: string): SplitCommandLine {
  const words: string[] = []
  // Called for each $NAME: giving it back as written keeps it unexpanded.
  for (const token of parse(line, (name) => `$${name}`)) {
    if (typeof token === 'string') words.push(token)
    else if ('comment' in token) break
    else if (token.op === 'glob') words.push(token.pattern)
    else throw new Error(`'${token.op}' needs a shell, and Switchboard runs one program: paste the command of the agent alone`)
  }
  const env: Record<string, string> = {}
  let at = 0
  for (; at < words.length; at++) {
    const assignment = ASSIGNMENT.exec(words[at])
    if (!assignment) break
    env[assignment[1]] = assignment[2]
  }
  if (at >= words.length) throw new Error(words.length ? 'The line sets variables but names no program to run' : 'The line is empty')
  return { command: words[at], args: words.slice(at + 1), env }
}
