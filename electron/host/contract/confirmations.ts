import { changeLines, commandLineOf, MAX_CONFIRMATION_CHARS, type CommandChange, type ProgramToRun } from '../../../shared/confirmation'
import { HostError } from './errors'
import type { RequestContext } from './handlers'

/**
 * The Host's confirmation port: a change that would run a program (an agent's
 * command, arguments, folder or variables; an MCP stdio server's; a sign-in
 * command; an agent from a preset or the ACP Registry; servers imported from
 * another app) is made only once the user confirmed it outside the page. The
 * Host does not know how: the Electron shell asks in a native dialog
 * (electron/confirm-dialog.ts), `serve` with a code it prints on its console
 * (console-codes.ts). Without a port, every such change is refused.
 */

export type ConfirmAnswer =
  | { confirmed: true }
  | {
      confirmed: false
      /** `confirmation_required`: ask the user for the code and send the request again with it. */
      code: 'confirmation_required' | 'confirmation_refused'
      /** What the window says. */
      message: string
    }

/**
 * Asks the user to confirm `change`. `code` is what the page sent with the
 * request (`confirmationCode`): `serve`'s console code; a dialog ignores it.
 */
export type ConfirmCommand = (change: CommandChange, code: string | undefined) => Promise<ConfirmAnswer>

/** The port when none is given: nothing that runs a program is changed, and the window is told why. */
export const refuseCommands: ConfirmCommand = async () => ({
  confirmed: false,
  code: 'confirmation_refused',
  message: 'This Switchboard has no way to ask you outside the window to confirm a command, so nothing that would run one is changed.'
})

/**
 * Confirms a change through `port`, with the code the request carried; throws
 * a HostError (carrying what was asked, for the page to show beside its code
 * field) unless the user confirmed it. A change too long to show is refused.
 */
export async function requireConfirmation(port: ConfirmCommand, change: CommandChange, code: string | undefined): Promise<void> {
  const length = changeLines(change).join('\n').length
  if (length > MAX_CONFIRMATION_CHARS) {
    throw new HostError(
      'confirmation_refused',
      `What this would run is too long to show for confirmation (${length} characters; at most ${MAX_CONFIRMATION_CHARS}): shorten the command, its arguments or its variables. Nothing was changed.`
    )
  }
  const answer = await port(change, code)
  if (answer.confirmed) return
  throw new HostError(answer.code, answer.message, undefined, answer.code === 'confirmation_required' ? change : undefined)
}

/**
 * A request's params without the code `serve` printed (the handlers never see
 * it: it travels with the request it confirms), and the request's way to confirm.
 */
export function withConfirmation(params: unknown, port: ConfirmCommand): { data: unknown; request: RequestContext } {
  const { confirmationCode: code, ...data } = params as { confirmationCode?: string }
  return { data, request: { confirm: (change) => requireConfirmation(port, change, code) } }
}

/** What a program is to the confirmation: its exact command line, folder and variables (secrets by name only). */
export function programToRun(
  label: string,
  run: { command: string; args: readonly string[]; cwd?: string; env?: Record<string, string>; download?: string },
  secrets: Record<string, 'new' | 'kept'> = {}
): ProgramToRun {
  return {
    label,
    commandLine: commandLineOf(run.command, run.args),
    ...(run.cwd ? { cwd: run.cwd } : {}),
    env: [
      ...Object.entries(run.env ?? {}).map(([name, value]) => ({ name, value })),
      ...Object.entries(secrets).map(([name, secret]) => ({ name, value: '', secret }))
    ],
    ...(run.download ? { download: run.download } : {})
  }
}
