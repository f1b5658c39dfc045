import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, CDPSession, Locator, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { pathologicalText } from '../agent/pathological'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { clipboardText, closeBrowserHost, openBrowserHost, rendererRssMb, resetWindowSettings, screenshot, watchConsole } from './browser'
import { screenshotBothThemes } from './themes'

/**
 * Agent text that froze the window before it was bounded (a 5 MB line, 2,000
 * nested quotes, a 2,000-level list, 100,000 `[`, 30,000 `*a **b`), sent by
 * the scripted agent (`/payload`) into the real renderer in Chromium: keys
 * typed meanwhile reach the composer, each text is shown bounded with the
 * raw text one click away, and the page's memory stays bounded. Timings are
 * the benchmark's (`npm run bench`, BENCH_ONLY=costly): here only generous
 * bounds, the machine being shared. Screenshots in test-results/.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer

beforeAll(async () => {
  root = await tempDir('e2e-costly')
  await mkdir(join(root, 'my-project'))
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  await host.request('agents.add', scriptedAgent(join(root, 'agent-state'), {}, 'Scripted'))
  await host.request('projects.add', { cwd: join(root, 'my-project') })
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

beforeEach(async () => {
  await resetWindowSettings(host)
})

async function newContext(colorScheme: 'light' | 'dark' = 'light'): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url).origin })
  return context
}

async function newSession(page: Page): Promise<void> {
  await page.goto(server.url)
  await page.getByTestId('project').filter({ hasText: 'my-project' }).getByTestId('new-session').click()
  await page.getByTestId('composer-input').waitFor()
  await expect.poll(() => page.getByTestId('composer-input').isEnabled()).toBe(true)
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('send').click()
}

/**
 * Types a letter into the composer every ~50 ms until `done` (checked
 * between keys), then checks every letter arrived, in order. A page that
 * froze would take none of them; a key lost would show here.
 */
async function typeUntil(page: Page, done: () => Promise<boolean>, what: string, timeoutMs = 240_000): Promise<number> {
  const composer = page.getByTestId('composer-input')
  await composer.fill('')
  let typed = ''
  const deadline = Date.now() + timeoutMs
  // A key first, then the check: a short text can be shown before the first look, and the keys typed would be none.
  do {
    if (Date.now() > deadline) throw new Error(`${what}: not shown within ${timeoutMs / 1000} s`)
    // A permission card takes the focus for its options: the key goes to the composer, as a person would click it first.
    await composer.focus()
    const key = String.fromCharCode(97 + (typed.length % 26))
    await page.keyboard.press(key)
    typed += key
    await page.waitForTimeout(50)
  } while (!(await done()))
  expect(await composer.inputValue(), `every key typed while ${what}`).toBe(typed)
  await composer.fill('')
  return typed.length
}

/** The page's JS heap after a garbage collection, in MB. */
async function heapMb(cdp: CDPSession): Promise<number> {
  await cdp.send('HeapProfiler.collectGarbage')
  return ((await cdp.send('Runtime.getHeapUsage')) as { usedSize: number }).usedSize / 1024 / 1024
}

/** How many characters of text an element holds in the page (its DOM, not its source). */
function domChars(locator: Locator): Promise<number> {
  return locator.evaluate((el: { textContent: string | null }) => (el.textContent ?? '').length)
}

/** The page, as a function run in it sees it: what a button said is noted there (see the copy below). */
interface NotingPage {
  copySaid: (string | null)[]
  MutationObserver: new (changed: () => void) => { observe(node: unknown, options: object): void }
  document: { body: unknown; querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }> }
}

const finalMessage = (page: Page, kind: string): Locator => page.getByTestId('entry-assistant').filter({ hasText: `payload ${kind}:` })

describe('costly agent text', () => {
  it('keeps the window answering while each held-out text arrives as a message, and shows each bounded with its raw text one click away', async () => {
    const context = await newContext()
    const page = await context.newPage()
    const problems = watchConsole(page)
    const cdp = await context.newCDPSession(page)
    await newSession(page)
    const before = await heapMb(cdp)
    const reasons: Record<string, string> = {
      line: 'it is 5.0 MB long',
      quotes: 'it is nested more than 18 levels deep',
      list: 'it is 4.0 MB long',
      brackets: 'a paragraph holds more than 1,000 “[”',
      emphasis: 'it is 180 KB long'
    }
    let peakRss = rendererRssMb()
    for (const kind of ['line', 'quotes', 'list', 'brackets', 'emphasis']) {
      await send(page, `/payload ${kind}`)
      const keys = await typeUntil(
        page,
        async () => {
          peakRss = Math.max(peakRss, rendererRssMb())
          return (await finalMessage(page, kind).count()) > 0
        },
        `/payload ${kind} arrived`
      )
      expect(keys).toBeGreaterThan(0)
      // The payload's entry: plain text, saying why, a bounded part of it in the page, the rest and the raw text a click away.
      const entry = page
        .getByTestId('entry-assistant')
        .filter({ has: page.getByTestId('plain-note') })
        .last()
      await expect.poll(() => entry.getByTestId('plain-note').textContent()).toContain(`Shown as plain text: ${reasons[kind]}`)
      await expect.poll(() => entry.getByTestId('plain-copy').isVisible()).toBe(true)
      expect(await domChars(entry)).toBeLessThan(20_000)
      if (kind === 'line') {
        await screenshot(page, 'costly-text-message-light')
        // Megabytes shown in full on request, a few pieces a frame: the window keeps answering meanwhile.
        await entry.getByTestId('plain-show-all').click()
        await typeUntil(page, async () => (await entry.getByText('Showing', { exact: false }).count()) === 0, 'all of the 5 MB line was shown')
        expect(await domChars(entry)).toBeGreaterThanOrEqual(5_000_000)
        expect(await entry.getByTestId('plain-show-all').count()).toBe(0)
      }
      if (kind === 'brackets') {
        // The raw text is one click away: Copy gives all of it (the Clipboard API writes only for the focused page).
        await page.bringToFront()
        // Under load the page may take a moment to have the focus: click once it has (else the write is refused).
        await expect.poll(() => page.evaluate('document.hasFocus()')).toBe(true)
        // "Copied" shows for 1.5 s. This process runs the Host and Playwright's side too, and under load it can be held
        // up that long (a second and more, measured), so a poll from here could look before and after it: what the
        // button says is noted in the page, as it changes, and read from there.
        // Noted from the whole page, not from one button: the thread may draw the entry again (a new button) meanwhile.
        const copy = entry.getByTestId('plain-copy')
        await page.evaluate(() => {
          const window = globalThis as unknown as NotingPage
          window.copySaid = []
          new window.MutationObserver(() => {
            for (const button of Array.from(window.document.querySelectorAll('[data-testid="plain-copy"]'))) window.copySaid.push(button.textContent)
          }).observe(window.document.body, { characterData: true, childList: true, subtree: true })
        })
        // From the keyboard, as a reader does: focus the entry's Copy, Enter. A click failed once in a full suite: every
        // button still said "Copy raw text" 15 s on while a Copy button had the focus, so the press landed on it and no
        // click followed. Traced under load (the button's place each frame, and every pointer event): as the new entry
        // settles, the thread keeps its end in view and the button moves within ~100 ms of showing (385 → 446 → 705 px
        // down), and the test's click came during it, twice of three before the first move. A press and a release on
        // either side of a move are no click; the keys go to the button focused, wherever it is drawn.
        await copy.focus()
        await page.keyboard.press('Enter')
        await expect
          .poll(() => page.evaluate('window.copySaid'))
          .toContain('Copied')
          .catch(async (error: Error) => {
            const seen = JSON.stringify(
              await page.evaluate('[window.copySaid, document.hasFocus(), document.activeElement?.outerHTML.slice(0, 200)]')
            )
            const ours = await copy.evaluate((el) => el === el.ownerDocument.activeElement).catch(() => 'gone')
            throw new Error(
              `${error.message}\nwhat the buttons said, whether the page had the focus, what had it: ${seen}; this entry's Copy has it: ${ours}`
            )
          })
        await expect.poll(() => clipboardText(page)).toBe(pathologicalText('brackets'))
      }
    }

    const after = await heapMb(cdp)
    peakRss = Math.max(peakRss, rendererRssMb())
    // Unbounded, the first of these took the renderer from 2.4 GB to 7.8 GB. The texts themselves are about 10 MB.
    expect(after - before).toBeLessThan(200)
    expect(peakRss).toBeLessThan(1024)
    expect(problems).toEqual([])
    await context.close()
  }, 300_000)

  it('keeps a 5 MB line bounded as a thought, a tool call, a plan entry and a permission request', async () => {
    const context = await newContext('dark')
    const page = await context.newPage()
    const problems = watchConsole(page)
    await newSession(page)
    let peakRss = rendererRssMb()
    const watch = async (check: () => Promise<boolean>): Promise<boolean> => {
      peakRss = Math.max(peakRss, rendererRssMb())
      return check()
    }

    await send(page, '/payload line in=thought')
    await typeUntil(page, () => watch(async () => (await finalMessage(page, 'line').count()) > 0), 'a thought of 5 MB arrived')
    const thought = page.getByTestId('entry-thought').last()
    expect(await domChars(thought)).toBeLessThan(1_000)
    await thought.locator('summary').click()
    await expect.poll(() => thought.getByTestId('plain-note').textContent()).toContain('Shown as plain text: it is 5.0 MB long')
    expect(await domChars(thought)).toBeLessThan(20_000)

    await newSession(page)
    await send(page, '/payload line in=tool')
    await typeUntil(page, () => watch(async () => (await finalMessage(page, 'line').count()) > 0), 'a tool call of 5 MB arrived')
    const tool = page.getByTestId('entry-tool-call').last()
    await expect.poll(() => tool.getByTestId('plain-show-all').textContent()).toContain('5.0 MB')
    // Its title (5 MB too) is cut, the whole in its tooltip's first characters.
    expect(await domChars(tool)).toBeLessThan(20_000)
    await screenshot(page, 'costly-text-tool-dark')

    await newSession(page)
    await send(page, '/payload line in=plan')
    await typeUntil(page, () => watch(async () => (await finalMessage(page, 'line').count()) > 0), 'a plan entry of 5 MB arrived')
    const plan = page.getByTestId('entry-plan').last()
    expect(await domChars(plan)).toBeLessThan(2_000)
    await expect.poll(() => plan.getByTestId('agent-text-more').textContent()).toContain('5.0 MB')
    await expect.poll(() => plan.textContent()).toContain('A short step after it')
    await screenshot(page, 'costly-text-plan-dark')

    await newSession(page)
    await send(page, '/payload line in=permission')
    await typeUntil(page, () => watch(async () => (await page.getByTestId('permission-option').count()) > 0), 'a permission request of 5 MB arrived')
    const card = page.getByTestId('permission')
    expect(await domChars(card)).toBeLessThan(5_000)
    await screenshot(page, 'costly-text-permission-dark')
    // The card fits its pane (a name of a megabyte wraps, cut): its options can be clicked.
    const box = await card.boundingBox()
    expect(box?.width ?? Infinity).toBeLessThanOrEqual(1280)
    await page.getByTestId('permission-option').first().click()
    await typeUntil(
      page,
      async () => (await page.getByTestId('entry-assistant').filter({ hasText: 'permission: allow' }).count()) > 0,
      'the permission was answered'
    )

    expect(peakRss).toBeLessThan(1024)
    expect(problems).toEqual([])
    await context.close()
  }, 300_000)

  it('shows what hides in agent text and file names, keeps foreign hosts and escaped HTML inert, and wraps unbreakable strings, in light and dark', async () => {
    const RLO = '\u202E'
    const context = await newContext()
    const page = await context.newPage()
    const problems = watchConsole(page)
    await newSession(page)
    const message =
      `Open invoice${RLO}txt.exe now. See [report${RLO}fdp.exe](file:///tmp/report%E2%80%AEfdp.exe) ` +
      'and [notes](file://fileserver/share/notes.txt). Escaped: <b>http://evil.example/x</b>, a real link: https://example.com/ok'
    await send(page, `/sayjson ${JSON.stringify(message)}`)
    const said = page.getByTestId('entry-assistant').filter({ hasText: 'Open invoice' })
    await said.waitFor()
    // The override is shown where it is, so the text cannot read "exe.txt".
    expect(await said.locator('.hidden-char').first().textContent()).toBe('RLO')
    const chips = said.locator('.file-link')
    await expect.poll(() => chips.allTextContents()).toEqual(['reportRLOfdp.exe', 'notes'])
    expect(await chips.evaluateAll((els) => els.map((el) => (el as unknown as { dataset: { path: string } }).dataset.path))).toEqual([
      `/tmp/report${RLO}fdp.exe`,
      '//fileserver/share/notes.txt'
    ])
    expect(await said.locator('a').evaluateAll((els) => els.map((el) => el.getAttribute('href')))).toEqual(['https://example.com/ok'])
    await screenshotBothThemes(page, 'agent-text-hidden-chars-message')

    const word = 'x'.repeat(3_000)
    await send(page, `/plan Rename ${RLO}txt.exe;${word}`)
    const plan = page.getByTestId('entry-plan').last()
    await plan.waitFor()
    expect(await plan.locator('bdi .hidden-char').first().textContent()).toBe('RLO')
    await screenshotBothThemes(page, 'agent-text-hidden-chars-thread')

    await send(
      page,
      `/permission-call ${JSON.stringify({ tool: 'Y'.repeat(2_000), kind: 'execute', title: `Delete ${RLO}txt.exe ${'z'.repeat(2_000)}` })}`
    )
    const card = page.getByTestId('permission')
    await card.waitFor()
    expect(await card.locator('.title bdi .hidden-char').first().textContent()).toBe('RLO')
    // Nothing runs past its card, and the thread does not scroll sideways: in either theme.
    const bounded = async (): Promise<void> => {
      const cardBox = await card.boundingBox()
      for (const option of await page.getByTestId('permission-option').all()) {
        const box = await option.boundingBox()
        expect(box!.x + box!.width).toBeLessThanOrEqual(cardBox!.x + cardBox!.width + 1)
      }
      const planBox = await plan.boundingBox()
      const thread = page.getByTestId('thread')
      const threadBox = await thread.boundingBox()
      expect(planBox!.x + planBox!.width).toBeLessThanOrEqual(threadBox!.x + threadBox!.width + 1)
      const overflow = await thread.evaluate((el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth - el.clientWidth)
      expect(overflow).toBeLessThanOrEqual(1)
    }
    await screenshotBothThemes(page, 'agent-text-hidden-chars-permission', bounded)
    await page.getByTestId('permission-dismiss').click()
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)
})
