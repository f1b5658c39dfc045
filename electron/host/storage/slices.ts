/**
 * Long work in slices: what reads many files or a long one (the search
 * index's build, a transcript read from its start) gives the event loop a
 * turn every `SLICE_MS`, so that what waits (I/O, a window's request, an
 * agent's stream) is not held behind it. Work in the background may also
 * give way to the window's requests (`Pause`): at each turn it waits while
 * the Host is answering one.
 */

/** The longest the Host is held by one slice of long work before what waits goes first. */
export const SLICE_MS = 8

/** A wait before background work goes on (the Host answering a window's request), or null when it need not wait. */
export type Pause = () => Promise<void> | null

/** Waits out `pause` (again and again, as long as it asks: a request may come while another is answered). */
export async function givenWay(pause: Pause | undefined): Promise<void> {
  for (let wait = pause?.(); wait; wait = pause?.()) await wait
}

/** A turn of the event loop (setImmediate: what waits, I/O and requests, goes first), then `pause` waited out. */
export async function turn(pause?: Pause): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve))
  await givenWay(pause)
}

/**
 * Returns a function to call often during long work: it yields to the event
 * loop (through setImmediate: what waits, I/O and requests, goes first) once
 * `SLICE_MS` have passed since the last yield, then waits out `pause`, and
 * otherwise does nothing (null).
 */
export function slicer(pause?: Pause): () => Promise<void> | null {
  let since = performance.now()
  return () => {
    if (performance.now() - since < SLICE_MS) return null
    return turn(pause).then(() => {
      since = performance.now()
    })
  }
}
