import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { TAIL_RECORDS } from '../shared/thread-fold'
import { joinWire, wireFrameCount, wireHeader } from '../shared/wire-pieces'
import { copyWindowStyles, MOVE_STYLES, PAGE_SOCKET, withPastSessionListed } from './ui'

/**
 * The open's picture: what no window could do without when a past session is opened, as the listing's picture
 * (`writePicturePage`) is for a start. The window is captured twice on the same data folder: as listed before the
 * click (the whole page), and its pane once the session is open and settled (the thread at its end). The picture's
 * page is the first, with no script of the window's; at the press on a session row its one small script asks the same
 * Host for the session (`sessions.open`, the window's own request, over the same WebSocket), and once the answer is in
 * and parsed puts the opened pane's elements in at once in place of the empty one, and scrolls its thread where the
 * window's was. What is left of the window's open is its own script: the stores, the components' mount, the rows
 * measured and placed, the markdown rendered.
 *
 * The styles the window set on elements (the rows' places, the list's height) are moved to a stylesheet, as the page's
 * CSP allows no inline style; the stylesheet is in the page from the start, as the window's are.
 */

/** Before the click: the window's whole page as listed, its scripts taken out and the picture's put in. */
const CAPTURE_LISTED = `(() => {
  ${MOVE_STYLES}
  const rules = []
  const copy = document.documentElement.cloneNode(true)
  moveStyles(copy, 'b', rules)
  copy.querySelectorAll('script, link[rel=modulepreload]').forEach((element) => element.remove())
  // The stylesheets the window's code put in (those of its views fetched ahead) are named by the page's address.
  copy.querySelectorAll('link[href^="' + location.origin + '/"]').forEach((link) => link.setAttribute('href', '.' + link.getAttribute('href').slice(location.origin.length)))
  const head = copy.querySelector('head')
  head.append(
    Object.assign(document.createElement('link'), { rel: 'stylesheet', href: './picture.css' }),
    Object.assign(document.createElement('script'), { type: 'module', src: './picture.js' })
  )
  return { html: '<!doctype html>' + copy.outerHTML, rules }
})()`

/** Once the session is open: its pane's elements, each scrolled element marked with where it was scrolled to. */
const CAPTURE_OPENED = `(() => {
  ${MOVE_STYLES}
  const pane = document.querySelector('[data-testid=pane]')
  const live = [pane, ...pane.querySelectorAll('*')]
  const copy = pane.cloneNode(true)
  const copied = [copy, ...copy.querySelectorAll('*')]
  live.forEach((element, index) => {
    if (element.scrollTop > 0) copied[index].dataset.pictureScroll = String(element.scrollTop)
  })
  const rules = []
  moveStyles(copy, 'a', rules)
  // The stylesheets the window had by then (a view's own come with its code).
  const sheets = [...document.querySelectorAll('link[rel=stylesheet]')].map((link) => link.getAttribute('href').replace(location.origin + '/', './'))
  return { html: copy.outerHTML, rules, sheets, scrolled: copy.querySelectorAll('[data-picture-scroll]').length }
})()`

/** The picture's script: the press on a session row asks for the session, then the opened pane goes in. */
function pictureScript(sessionId: string, openedPane: string): string {
  return `
const OPENED = ${JSON.stringify(openedPane)}
${PAGE_SOCKET}
${wireHeader.toString()}
${wireFrameCount.toString()}
${joinWire.toString()}
// A long answer comes in frames (shared/wire-pieces.ts), joined as the window's transport does.
let header = null
let frames = []
const take = (message) => {
  if (message.kind === 'response') waiting.get(message.id)?.(message)
}
socket.onmessage = (event) => {
  if (header) {
    frames.push(event.data)
    if (frames.length < wireFrameCount(header)) return
    const message = joinWire(header, frames)
    header = null
    frames = []
    return take(message)
  }
  header = wireHeader(event.data)
  if (!header) take(JSON.parse(event.data))
}
let asked = 0
document.addEventListener('pointerdown', async (event) => {
  if (!event.target.closest('[data-testid=session-item]')) return
  const answer = await ask(++asked, 'sessions.open', { id: ${JSON.stringify(sessionId)}, tail: ${TAIL_RECORDS} })
  if (!answer.result) throw new Error('the picture: sessions.open answered ' + JSON.stringify(answer.error))
  document.querySelector('[data-testid=pane]').outerHTML = OPENED
  for (const element of document.querySelectorAll('[data-picture-scroll]')) element.scrollTop = Number(element.dataset.pictureScroll)
}, true)
`
}

/**
 * Writes into `dir` the open's picture of the session `sessionId` (titled `title`, its tail saying `tail`) on
 * `dataDir`, from this build's window; served as a window's `rendererDir`, a press on the session's row opens it.
 */
export async function writeOpenPicture(
  browser: Browser,
  dataDir: string,
  sessionId: string,
  title: string,
  tail: string,
  dir: string
): Promise<void> {
  const { listed, opened } = await withPastSessionListed(browser, dataDir, title, '', async (page, item) => {
    await page.waitForLoadState('networkidle')
    const listed = (await page.evaluate(CAPTURE_LISTED)) as { html: string; rules: string[] }
    await item.click()
    await page.getByText(tail).waitFor({ timeout: 300_000 })
    // Settled: the rows measured and placed, the code highlighted, the thread at its end.
    await page.waitForLoadState('networkidle')
    await page.waitForTimeout(1_000)
    const opened = (await page.evaluate(CAPTURE_OPENED)) as { html: string; rules: string[]; sheets: string[]; scrolled: number }
    if (opened.scrolled === 0) throw new Error("writeOpenPicture: no element of the opened pane was scrolled (the thread's end not found)")
    return { listed, opened }
  })
  await copyWindowStyles(dir)
  // The stylesheets the window had once open, all in the page from the start (a window could load them ahead too).
  const links = opened.sheets.filter((href) => !listed.html.includes(`href="${href}"`)).map((href) => `<link rel="stylesheet" href="${href}">`)
  await writeFile(join(dir, 'index.html'), listed.html.replace('</head>', `${links.join('')}</head>`))
  await writeFile(join(dir, 'picture.css'), [...listed.rules, ...opened.rules].join('\n'))
  await writeFile(join(dir, 'picture.js'), pictureScript(sessionId, opened.html))
}
