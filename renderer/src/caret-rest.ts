/**
 * The text caret rests: after CARET_REST_MS with no key, click or input in the window, the root takes the class
 * `caret-rest`, under which styles.css gives text fields `caret-animation: manual`: Chromium then shows the caret
 * steadily instead of blinking it. Any key, click, touch or input takes the class away, and the caret blinks as
 * before. GNOME's text fields do the same (their blink stops 10 s after the last key), and WCAG 2.2.2 asks that
 * anything blinking stop after 5 s.
 *
 * Why: each blink is a paint and a frame (the renderer's compositor and the GPU process drawing it), twice a
 * second, for as long as the window is open with the composer focused (it keeps the focus, keyboard first): about
 * half a percent of a core of a window that does nothing (issue 40's goal "nothing when nothing happens").
 *
 * One timer at a time, armed by activity, never more often than once per CARET_REST_MS while someone types.
 */
export const CARET_REST_MS = 5000
export const CARET_REST_CLASS = 'caret-rest'

/** What wakes the caret: a person doing something in the window. */
const WAKING = ['keydown', 'pointerdown', 'input', 'compositionstart', 'focusin'] as const

export function restCaret(options: { root?: HTMLElement; restMs?: number; now?: () => number } = {}): () => void {
  const root = options.root ?? document.documentElement
  const restMs = options.restMs ?? CARET_REST_MS
  const now = options.now ?? (() => performance.now())
  const target = root.ownerDocument.defaultView ?? window
  let last = now()
  let timer: ReturnType<typeof setTimeout> | undefined
  const arm = (ms: number): void => {
    timer = setTimeout(check, ms)
  }
  // A timer due while someone still types comes early: it waits the rest of the time, from the last activity.
  function check(): void {
    timer = undefined
    const quiet = now() - last
    if (quiet >= restMs) root.classList.add(CARET_REST_CLASS)
    else arm(restMs - quiet)
  }
  const wake = (): void => {
    last = now()
    if (root.classList.contains(CARET_REST_CLASS)) root.classList.remove(CARET_REST_CLASS)
    if (timer === undefined) arm(restMs)
  }
  for (const name of WAKING) target.addEventListener(name, wake, { capture: true, passive: true })
  arm(restMs)
  return () => {
    for (const name of WAKING) target.removeEventListener(name, wake, { capture: true })
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    root.classList.remove(CARET_REST_CLASS)
  }
}
