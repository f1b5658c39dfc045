/**
 * A typed internal event a room tells and any number of others follow (a
 * turn is over, a session left memory, an agent ended). Where one room must
 * act on another's news, host.ts adds the listener as it composes them: no
 * room sets a hook on another, and a second listener never replaces the first.
 */
export class Listeners<Args extends unknown[]> {
  private readonly all = new Set<(...args: Args) => void>()

  /** Follows the event from now on; returns what stops following it. */
  add(listener: (...args: Args) => void): () => void {
    this.all.add(listener)
    return () => this.all.delete(listener)
  }

  /** Tells every listener, in the order they were added; one that throws does not keep the others from hearing it (the first error is thrown after). */
  tell(...args: Args): void {
    let failed: { error: unknown } | null = null
    for (const listener of [...this.all]) {
      try {
        listener(...args)
      } catch (error) {
        failed ??= { error }
      }
    }
    if (failed) throw failed.error
  }
}
