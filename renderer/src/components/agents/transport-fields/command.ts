import type { TransportInput } from '../../../../../shared/agent-requests'
import { commandOf } from '../../../../../shared/transport'
import type { SplitCommandLine } from '../command-line'
import { argsFromText, envFromRows, rowsOf, type EnvRow } from '../envRows'
import type { DraftPiece } from './drafts'

/**
 * The command block's draft, shared by the parts that run a command (on this computer, over SSH): a command line
 * pasted whole (a new agent) and what it filled, the command, arguments (one a line), working folder and variables.
 */
export interface CommandDraft {
  commandLine: string
  /** The line as split, while it splits; null when it is empty or cannot be run. */
  split: SplitCommandLine | null
  /** Why the line cannot be run ('' when it can, or is empty). */
  lineError: string
  /** The keys of the variable rows the line set, replaced (not added to) when it changes. */
  lineRows: number[]
  command: string
  argsText: string
  cwd: string
  rows: EnvRow[]
}

export const COMMAND_DRAFT: DraftPiece<CommandDraft> = {
  name: 'command',
  start(from) {
    const command = from ? commandOf(from) : null
    return {
      commandLine: '',
      split: null,
      lineError: '',
      lineRows: [],
      command: command?.command ?? '',
      argsText: command?.args.join('\n') ?? '',
      cwd: command?.cwd ?? '',
      rows: rowsOf(command)
    }
  }
}

type CommandInput = Omit<Extract<TransportInput, { kind: 'process' }>, 'kind'>

/** The command as the request wants it; throws a sentence for the form when the line cannot be run or a variable is not complete. */
export function commandInput(draft: CommandDraft): CommandInput {
  if (draft.lineError) throw new Error(`The command line cannot be run: ${draft.lineError}`)
  const variables = envFromRows(draft.rows)
  // The line's own arguments as split (an empty one, one with a line break) while the box still shows them.
  const args = draft.split && draft.argsText === draft.split.args.join('\n') ? draft.split.args : argsFromText(draft.argsText)
  // Empty: the home folder (the Host checks the rest: absolute, and a folder that exists).
  return { command: draft.command, args, cwd: draft.cwd.trim(), env: variables.env, secretEnv: variables.secretEnv }
}
