import { FIRST_LOAD } from './first-load'
import { openEarlyLink } from './host/early-link'
import { applyTheme, resolveTheme, type ThemeChoice } from './theme'
import './styles.css'

/**
 * The page's first script. It asks the Host at once (early-link.ts), in one
 * request (`app.firstScreen`), for the window's first load and for its first
 * screen, which the Host draws from those answers with the window's own
 * components (first-screen.ts): that is put in place as soon as
 * it comes, and painted, before the window's code (Vue, the stores, the
 * views: open-window.ts, which index.html preloads, so it arrives and is
 * compiled meanwhile) runs. The window then mounts over it, with the same
 * first load, so its first frame looks the same and works. It waits at most
 * FIRST_LOAD_WAIT_MS (a second): a Host slow to answer (or not there) gets the window
 * mounted without them, filled in as they come (or saying what is wrong with
 * the link); a drawing that comes while the window's code still loads is put
 * in place all the same.
 */
const FIRST_LOAD_WAIT_MS = 1000
const SETTINGS = FIRST_LOAD.findIndex(([method]) => method === 'settings.get')

const early = openEarlyLink([['app.firstScreen', { height: Math.round(innerHeight), requests: FIRST_LOAD }]])
let windowStarted = false
let answered = false
void early.answered.then((all) => (answered = all))
const drawn = early.result(0).then(async (result) => {
  const { html, answers } = (result ?? {}) as { html?: unknown; answers?: unknown }
  const app = document.getElementById('app')
  if (typeof html !== 'string' || !app || windowStarted) return
  // In the user's theme from its first paint (the window's theme store sets the same once it runs).
  const settings = Array.isArray(answers) ? (answers[SETTINGS] as { result?: { settings?: { theme?: ThemeChoice } } } | undefined) : undefined
  applyTheme(
    document.documentElement,
    resolveTheme(settings?.result?.settings?.theme ?? 'system', matchMedia('(prefers-color-scheme: dark)').matches)
  )
  putInPlace(app, html)
  // One frame, so that it is painted before the window's code takes the page's thread.
  return new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve)))
})
const waited = new Promise<void>((resolve) => {
  const timer = setTimeout(resolve, FIRST_LOAD_WAIT_MS)
  void Promise.all([early.answered, drawn]).then(() => {
    clearTimeout(timer)
    resolve()
  })
})

/**
 * Puts the Host's rendering of the window's components (Vue escapes what they show) in the page. The page's CSP
 * runs no script from it; the styles the components set (the list's rows' places) come as data-first-style and
 * are set through each element's style, as Vue sets them in the window (the CSP takes no style attribute).
 */
function putInPlace(app: HTMLElement, html: string): void {
  const template = document.createElement('template')
  template.innerHTML = html
  for (const element of template.content.querySelectorAll<HTMLElement>('[data-first-style]')) {
    element.style.cssText = element.dataset.firstStyle ?? ''
    delete element.dataset.firstStyle
  }
  app.replaceChildren(template.content)
}

// A drawing that comes after the wait, while the window's code is still loading, is still put in place: the window
// starts (and the drawing is no longer wanted) once that code has come.
void waited
  .then(() => import('./open-window'))
  .then(
    ({ openWindow }) => {
      windowStarted = true
      return openWindow(early.link, answered)
    },
    (error: unknown) => {
      console.error('Could not load the window', error)
      const message = document.createElement('p')
      message.className = 'load-failure'
      message.textContent = `Switchboard could not load its window: ${error instanceof Error ? error.message : String(error)}. Reload to try again.`
      document.getElementById('app')?.replaceChildren(message)
    }
  )
