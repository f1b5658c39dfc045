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
    const log = this.deps.log ?? ((line: string) => console.error(line))
    log(`${message}\n${error instanceof Error ? (error.stack ?? cause) : cause}`)
    this.deps.warnings.push(message)
    this.deps.events.emit('app.warning', { room, message })
    if (!reset) return
    try {
      reset.run()
    } catch (resetError) {
      const again = `${room} could not be reset after its error: ${(resetError as Error).message ?? String(resetError)}`
      log(`${again}\n${(resetError as Error).stack ?? ''}`)
      this.deps.warnings.push(again)
      this.deps.events.emit('app.warning', { room, message: again })
    }
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
