import type { EventBus } from './events'

/**
 * The one place an error that nothing else caught in one of the Host's rooms
 * ends (a timer's, an event handler's, a promise no request awaits): it is
 * written to the Host's log with its stack, added to `app.info`'s warnings,
 * told to the windows (`app.warning`), and the room that threw is reset (the
 * search index rebuilt, ...) instead of the error reaching the process and
 * stopping the Host with every agent and window it serves.
 */
export class RoomErrors {
  constructor(
    private readonly deps: {
      events: EventBus
      /** `app.info`'s warnings: what is added here is shown as the others are. */
      warnings: string[]
      log?: (line: string) => void
    }
  ) {}

  /**
   * Reports `error`, thrown in `room`, and runs `reset` (which says what it
   * does, for the user: "it is rebuilding"). A reset that throws too is
   * reported as such, never thrown.
   */
  report(room: string, error: unknown, reset?: { says: string; run: () => void }): void {
    const cause = error instanceof Error ? error.message : String(error)
    const message = `${room} had an internal error${reset ? `; ${reset.says}` : ''}: ${cause}`
    this.tell(room, message, error instanceof Error ? (error.stack ?? cause) : cause)
    if (!reset) return
    try {
      reset.run()
    } catch (resetError) {
      const again = `${room} could not be reset after its error: ${(resetError as Error).message ?? String(resetError)}`
      this.tell(room, again, (resetError as Error).stack ?? '')
    }
  }

  /** A problem of `room`'s that is not a thrown error (a file it could not read, set aside): told as an error is, without a stack. */
  warn(room: string, message: string): void {
    this.tell(room, message)
  }

  /** Written to the log (with `detail`, a stack), added to `app.info`'s warnings, told to the windows. */
  private tell(room: string, message: string, detail?: string): void {
    const log = this.deps.log ?? ((line: string) => console.error(line))
    log(detail ? `${message}\n${detail}` : message)
    this.deps.warnings.push(message)
    this.deps.events.emit('app.warning', { room, message })
  }

  /** `run`, with what it throws reported for `room` (for timers and event handlers: nothing above them catches). */
  guarded(room: string, run: () => void, reset?: { says: string; run: () => void }): void {
    try {
      run()
    } catch (error) {
      this.report(room, error, reset)
    }
  }
}
