import { cancelIdle, whenIdle } from '../../lazy'
import { warmMarkdown } from '../../markdown'

/**
 * What a conversation's first open meets for the first time in a window, met once when the window is next idle after
 * the thread's code is in (it is fetched ahead, when the window is first idle after its start: lazy.ts): markdown-it's
 * and DOMPurify's code compiled (`warmMarkdown`), jsdiff's (a small diff built, in the diff's own chunk), and the
 * code's font looked up (a hidden line laid out in it: the first layout in a font the page had not used asks the
 * system for each family its stack names). Before, the first open did all of it in the task drawing its rows. Not
 * once a thread is drawn (`threadDrawn`): its open meets all of it anyway, and is not to wait for the warm-up too.
 */
let pending: number | null = null

export function warmUp(): void {
  pending = whenIdle(() => {
    pending = null
    warmMarkdown()
    const line = document.createElement('div')
    line.setAttribute('aria-hidden', 'true')
    line.style.cssText = 'position: fixed; left: -9999px; top: 0; visibility: hidden; font-family: var(--mono); white-space: pre'
    line.innerHTML = '<b>const</b> <i>x</i> = 1 − +'
    document.body.append(line)
    void line.offsetHeight
    line.remove()
    import('../../diff-model')
      .then(({ buildDiff }) => void buildDiff('const a = 1\nconst b = 2\n', 'const a = 1\nconst b = 3\n'))
      .catch(() => undefined)
  })
}

/** A thread is being drawn: the warm-up, if it has not run, is left out. */
export function threadDrawn(): void {
  if (pending !== null) cancelIdle(pending)
  pending = null
}
