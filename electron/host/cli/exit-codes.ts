/**
 * The `switchboard` command's exit codes: what a script running it can tell
 * apart without reading its words. A turn's stop reason maps to one of them.
 */
export const EXIT = {
  /** The turn ended as the agent meant it to (`end_turn`), or the command did what it was asked. */
  ok: 0,
  /** The turn failed (the agent failed it, or stopped), or the Host could not do what was asked. */
  failed: 1,
  /** The command line is wrong (an unknown option, agent or preset; a folder or session that does not exist; an empty prompt). */
  usage: 2,
  /** The agent refused the prompt (`refusal`). */
  refused: 3,
  /** The turn was cancelled (Ctrl-C, or from the window). */
  cancelled: 4,
  /** The turn ended, but a permission the agent asked for was denied (by the `--allow` policy, or on the terminal). */
  denied: 5,
  /** The agent stopped at a limit (`max_tokens`, `max_turn_requests`) or for a reason the protocol does not name. */
  stopped: 6,
  /** The data folder is held by a Switchboard this command cannot reach. */
  unavailable: 7,
  /** The agent needs secrets the app keeps in the OS keychain, and the app is not running to unlock them (nor were they passed). */
  secrets: 8
} as const

/** A failure the command reports in one line on stderr, exiting with `code`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: number = EXIT.failed
  ) {
    super(message)
  }
}

/** The exit code for how a turn ended. */
export function exitCodeOf(stopReason: string, denied: boolean): number {
  switch (stopReason) {
    case 'end_turn':
      return denied ? EXIT.denied : EXIT.ok
    case 'refusal':
      return EXIT.refused
    case 'cancelled':
      return EXIT.cancelled
    default:
      return EXIT.stopped
  }
}
