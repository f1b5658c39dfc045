import type { TransportInput } from '../../../shared/agent-requests'
import type { ProgramToRun } from '../../../shared/confirmation'
import type { AgentCommand } from '../../../shared/transport'
import { programToRun } from '../contract/confirmations'
import { checkedFolder } from '../local-files/folders'

/**
 * What the kinds that run a command (process.ts, ssh.ts) share: the check of
 * the command, arguments, variables and secret variables typed, what the
 * confirmation shows of them, and what counts as a change of them.
 */

type CommandInput = Omit<Extract<TransportInput, { kind: 'process' }>, 'kind'>

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The command, arguments, variables and secret variables as typed, checked; `kept`: the secret variables stored before. */
export function checkCommand(
  input: CommandInput,
  cwd: string | undefined,
  kept: readonly string[]
): { command: AgentCommand; secretValues: Record<string, string> } {
  const command = input.command.trim()
  if (!command) throw new Error('The agent needs a command to run (a name on PATH, or an absolute path)')
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(input.env)) {
    const variable = key.trim()
    if (!ENV_NAME.test(variable)) throw new Error(badName(key))
    env[variable] = value
  }
  const secretValues: Record<string, string> = {}
  const secretEnv: string[] = []
  for (const [key, value] of Object.entries(input.secretEnv)) {
    const variable = key.trim()
    if (!ENV_NAME.test(variable)) throw new Error(badName(key))
    if (variable in env) throw new Error(`${variable} is given twice, once as a secret; keep one`)
    if (value === null) {
      if (!kept.includes(variable)) throw new Error(`${variable} has no stored value yet: type one`)
    } else {
      if (!value.trim()) throw new Error(`${variable} is marked secret but has no value`)
      secretValues[variable] = value
    }
    secretEnv.push(variable)
  }
  return { command: { command, args: input.args, env, ...(secretEnv.length ? { secretEnv } : {}), ...(cwd ? { cwd } : {}) }, secretValues }
}

/** The agent's working folder as typed: empty means the home folder (undefined); else an absolute path to a folder that exists. */
export async function checkWorkingFolder(typed: string): Promise<string | undefined> {
  if (!typed.trim()) return undefined
  return checkedFolder(
    typed,
    (got) =>
      `The working folder must be an absolute path, like ${process.platform === 'win32' ? 'C:\\Users\\you\\code' : '/home/you/code'} (got '${got}')`,
    'Working folder'
  )
}

/** What the confirmation shows of a command: its line, folder and variables (a secret with a value typed is new, one sent as null kept). */
export function commandProgram(label: string, command: AgentCommand, secretValues: Record<string, string>): ProgramToRun {
  const secrets = Object.fromEntries((command.secretEnv ?? []).map((n) => [n, n in secretValues ? 'new' : 'kept'] as const))
  return programToRun(label, { command: command.command, args: command.args, cwd: command.cwd, env: command.env }, secrets)
}

/** Whether the command changes: its line, folder, variables (names or values, plain or secret); a secret kept as it is does not. */
export function commandChanges(next: AgentCommand, was: AgentCommand, secretValues: Record<string, string>): boolean {
  const envOf = (env: Record<string, string>): string[] => Object.entries(env).map(([k, v]) => JSON.stringify([k, v]))
  return (
    next.command !== was.command ||
    JSON.stringify(next.args) !== JSON.stringify(was.args) ||
    (next.cwd ?? '') !== (was.cwd ?? '') ||
    !sameSet(envOf(next.env), envOf(was.env ?? {})) ||
    !sameSet(next.secretEnv ?? [], was.secretEnv ?? []) ||
    Object.keys(secretValues).length > 0
  )
}

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x))
}

function badName(name: string): string {
  return `'${name}' is not a valid environment variable name (letters, digits and _, not starting with a digit)`
}
