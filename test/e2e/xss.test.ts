import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { XSS_CORPUS } from '../agent/xss-corpus'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot } from './browser'

/**
 * Hostile agent output in the real renderer: the scripted agent streams the
 * XSS corpus (test/agent/xss-corpus.ts) into a session, through every way text
 * reaches the thread. Every payload that runs calls `window.__xss(name)`.
 * The thread is walked from top to bottom (it is virtualised, so every entry
 * must be brought into the page), with the thought opened, raw tool output
 * shown, both diff layouts, the commands list, and every link clicked; at
 * each step the DOM is checked for anything that could run.
 *
 * Twice: with the page's CSP, and with the CSP switched off, so the
 * sanitiser alone is shown to hold (the CSP would block inline handlers
 * anyway). A canary in each run shows the detector sees what it looks for.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer

beforeAll(async () => {
  root = await tempDir('e2e-xss')
  const projectDir = join(root, 'project')
  await mkdir(projectDir, { recursive: true })
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))
  await host.request('projects.add', { cwd: projectDir })
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

// Each test's new window starts as a first window, not with the panes and choices the previous test left.
beforeEach(async () => {
  await resetWindowSettings(host)
})

/** Runs in the page before the app: the marker payloads call, and the dialogs they might open. */
const MARKER = `
  window.__hits = [];
  window.__xss = (name) => window.__hits.push(String(name));
  window.alert = window.confirm = window.prompt = (what) => window.__hits.push('dialog:' + String(what));
  window.__violations = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
`

/** Everything in the app's DOM that could run script or load a foreign document. */
const AUDIT = `(() => {
  const found = [];
  const app = document.getElementById('app');
  for (const el of app.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase();
    if (['script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'base', 'meta', 'link', 'style', 'template', 'noscript'].includes(tag)) found.push('<' + tag + '>');
    // The app has forms of its own (composer, sidebar); none belongs where agent content shows.
    if (tag === 'form' && el.closest('[data-testid=thread], .completion, .session-head')) found.push('<form>');
    for (const name of el.getAttributeNames()) {
      const value = (el.getAttribute(name) || '').replace(/[\\u0000-\\u0020]/g, '').toLowerCase();
      if (name.toLowerCase().startsWith('on')) found.push(tag + '[' + name + ']');
      if (['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'srcdoc', 'poster', 'background'].includes(name) && /^(javascript|vbscript|data:text|data:image\\/svg)/.test(value)) found.push(tag + '[' + name + '=' + value.slice(0, 30) + ']');
    }
  }
  for (const el of app.querySelectorAll('.markdown [style], .markdown svg, .markdown math, .markdown img:not([src^="data:image/png"]):not([src^="data:image/jpeg"]):not([src^="data:image/gif"]):not([src^="data:image/webp"])')) {
    found.push('markdown:' + el.tagName.toLowerCase() + (el.getAttribute('style') ? '[style]' : ''));
  }
  const scripts = [...document.querySelectorAll('script')].filter((s) => !(s.src && s.src.startsWith(location.origin + '/assets/')));
  for (const s of scripts) found.push('document script: ' + (s.src || s.textContent.slice(0, 30)));
  return found;
})()`

interface Run {
  executions: string[]
  violations: string[]
  problems: string[]
  rendered: number
  linksClicked: number
}

async function streamCorpus(page: Page): Promise<void> {
  await page.goto(server.url)
  await page.getByTestId('project').first().getByTestId('new-session').click()
  await page.getByTestId('composer-input').waitFor()
  await page.getByTestId('composer-input').fill('/xss')
  await page.getByTestId('send').click()
  await page.getByText(`xss corpus: ${XSS_CORPUS.length} payloads`).waitFor({ timeout: 30_000 })
  await expect.poll(() => page.getByTestId('session-status').textContent()).toBe('Ready')
}

/** Walks the whole thread, opening and clicking what there is, auditing at each step. */
async function walk(page: Page): Promise<Run> {
  const problems = new Set<string>()
  const seen = new Set<number>()
  let linksClicked = 0
  const audit = async (): Promise<void> => {
    for (const problem of (await page.evaluate(AUDIT)) as string[]) problems.add(problem)
  }
  const clicked = new Set<string>()
  const scroller = page.getByTestId('thread-scroll')
  await scroller.evaluate((el: any) => (el.scrollTop = 0))
  // Scrolled forward only: clicking brings a link into view, which may move the view back.
  let position = 0
  for (let step = 0; step < 400; step++) {
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    for (const index of (await page
      .locator('[data-testid=thread] .row')
      .evaluateAll((rows: any[]) => rows.map((r) => Number(r.dataset.index)))) as number[])
      seen.add(index)
    // Open what is closed, show what is hidden.
    for (const summary of await page.locator('[data-testid=entry-thought]:not([open]) summary').all()) await summary.click()
    for (const card of await page
      .locator('[data-testid=thread] .row')
      .filter({ has: page.getByTestId('raw-input') })
      .all()) {
      const key = (await card.getAttribute('data-entry-id')) ?? ''
      if (clicked.has(key)) continue
      clicked.add(key)
      await card.getByTestId('raw-input').click()
      await audit()
      await card.getByTestId('raw-output').click()
      await audit()
    }
    await audit()
    // Click every link and mention in view: nothing may run, the page may not leave.
    const links = page.locator('[data-testid=thread] .markdown a, [data-testid=thread] .file-link')
    const inView = (await links.evaluateAll((elements: any[]) => {
      const view = (globalThis as any).document.querySelector('[data-testid=thread-scroll]').getBoundingClientRect()
      return elements.map((el, i) => {
        const box = el.getBoundingClientRect()
        const row = el.closest('.row')
        const siblings = [...row.querySelectorAll('.markdown a, .file-link')]
        return { i, key: row.dataset.entryId + '#' + siblings.indexOf(el), shown: box.height > 0 && box.top >= view.top && box.bottom <= view.bottom }
      })
    })) as { i: number; key: string; shown: boolean }[]
    for (const link of inView) {
      if (!link.shown || clicked.has(link.key)) continue
      clicked.add(link.key)
      await links.nth(link.i).click({ timeout: 5_000 })
      linksClicked++
      expect(new URL(page.url()).origin).toBe(new URL(server.url).origin)
    }
    const done = await scroller.evaluate((el: any, from: number) => {
      const atEnd = from + el.clientHeight >= el.scrollHeight - 1
      el.scrollTop = from + el.clientHeight * 0.6
      return { atEnd, next: from + el.clientHeight * 0.6 }
    }, position)
    position = done.next
    if (done.atEnd) break
  }
  // Both diff layouts, and the commands the agent announced (their descriptions are payloads).
  for (const layout of ['diff-split', 'diff-unified']) {
    const toggle = page.getByTestId(layout).first()
    if (await toggle.count()) {
      await toggle.click()
      await audit()
    }
  }
  await page.getByTestId('composer-input').fill('')
  await page.getByTestId('composer-input').click()
  await page.keyboard.type('/')
  await expect.poll(() => page.getByTestId('completion-option').count()).toBe(8)
  await audit()
  await page.keyboard.press('Escape')

  const indexes = [...seen].sort((a, b) => a - b)
  expect(indexes[0]).toBe(0)
  expect(indexes).toEqual(indexes.map((_, i) => i))
  return {
    executions: (await page.evaluate('window.__hits')) as string[],
    violations: (await page.evaluate('window.__violations')) as string[],
    problems: [...problems],
    rendered: indexes.length,
    linksClicked
  }
}

describe('hostile agent output', () => {
  it(`runs none of the ${XSS_CORPUS.length} payloads, under the page's CSP`, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await context.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort())
    await context.addInitScript(MARKER)
    const page = await context.newPage()
    // Links open in a new window (target=_blank); those windows are closed at once.
    page.on('popup', (popup) => void popup.close())

    // The page forbids inline script, by header and by meta tag.
    const response = await page.goto(server.url)
    const header = response?.headers()['content-security-policy'] ?? ''
    const meta = (await page.locator('meta[http-equiv=Content-Security-Policy]').getAttribute('content')) ?? ''
    for (const policy of [header, meta]) {
      const scriptSrc = /script-src([^;]*)/.exec(policy)?.[1] ?? /default-src([^;]*)/.exec(policy)?.[1] ?? ''
      expect(scriptSrc.trim()).toBe("'self'")
      expect(policy).toMatch(/object-src 'none'/)
    }

    await streamCorpus(page)
    console.log(`screenshot: ${await screenshot(page, 'xss-csp')}`)
    const run = await walk(page)
    expect(run.problems).toEqual([])
    expect(run.violations).toEqual([])
    expect(run.executions).toEqual([])
    console.log(
      `XSS corpus (CSP on): ${XSS_CORPUS.length} payloads, ${run.rendered} entries rendered, ${run.linksClicked} links clicked, ${run.executions.length} executions`
    )

    // Canary: an inline handler put in the page by hand is blocked, and the CSP says so.
    await page.evaluate(`document.getElementById('app').insertAdjacentHTML('beforeend', '<img src="x" onerror="window.__xss(\\'canary\\')">')`)
    await expect.poll(() => page.evaluate('window.__violations.length')).toBeGreaterThan(0)
    expect(await page.evaluate('window.__hits')).toEqual([])
    await context.close()
  })

  it(`runs none of them with the CSP switched off: the sanitiser alone holds`, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true })
    await context.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort())
    await context.addInitScript(MARKER)
    const page = await context.newPage()
    // Links open in a new window (target=_blank); those windows are closed at once.
    page.on('popup', (popup) => void popup.close())
    await streamCorpus(page)
    const run = await walk(page)
    expect(run.problems).toEqual([])
    expect(run.executions).toEqual([])
    console.log(
      `XSS corpus (CSP off): ${XSS_CORPUS.length} payloads, ${run.rendered} entries rendered, ${run.linksClicked} links clicked, ${run.executions.length} executions`
    )

    // Canary: here an inline handler put in the page by hand does run, and is counted.
    await page.evaluate(`document.getElementById('app').insertAdjacentHTML('beforeend', '<img src="x" onerror="window.__xss(\\'canary\\')">')`)
    await expect.poll(() => page.evaluate('window.__hits')).toEqual(['canary'])
    await context.close()
  })
})
