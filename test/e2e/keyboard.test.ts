import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, focusTrace, openBrowserHost, resetWindowSettings, screenshot, traceFocus, watchConsole } from './browser'
import { screenshotBothThemes } from './themes'

/**
 * The keyboard, where the focus is: a permission card's keys never act
 * through a dialog (the shortcut list, the delete confirmation) nor from the
 * sidebar; the card focuses "Allow once", a destructive dialog Cancel; Esc
 * cancels a running turn from the thread or an empty composer; the sidebar's
 * shortcut, the skip link, the pages that take the focus and give it back;
 * focus rings on "↓ Latest" and in the shortcut list, light and dark; the
 * composer's caret at rest after five quiet seconds.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer
let agentId: string
let projectId: string

beforeAll(async () => {
  root = await tempDir('e2e-keyboard')
  await mkdir(join(root, 'webshop'), { recursive: true })
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  projectId = (await host.request('projects.add', { cwd: join(root, 'webshop') })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state'), {}, 'Scripted'))).id
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

beforeEach(async () => {
  await resetWindowSettings(host)
})

const mod = process.platform === 'darwin' ? 'Meta' : 'Control'

interface OpenPage {
  page: Page
  problems: string[]
  /** Every message the page sent the Host, in order. */
  sent: string[]
  close: () => Promise<void>
}

async function openPage(): Promise<OpenPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const problems = watchConsole(page)
  await traceFocus(page)
  const sent: string[] = []
  page.on('websocket', (socket) => socket.on('framesent', (frame) => sent.push(String(frame.payload))))
  await page.goto(server.url)
  await page.getByTestId('project').first().waitFor()
  return { page, problems, sent, close: () => context.close() }
}

/** A new session, titled, opened in the page's pane. */
async function openSession(page: Page, title: string): Promise<string> {
  const { id } = await host.request('sessions.new', { projectId, agentId })
  await host.request('sessions.rename', { id, title })
  await page.getByTestId('session-item').filter({ hasText: title }).click()
  await page.getByTestId('composer-input').waitFor()
  return id
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('send').click()
}

/** What has the focus, as the test reads it: its test id, else its tag and text. */
function focused(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const element = document.activeElement
    if (!element || element === document.body) return 'body'
    return element.dataset.testid ?? element.tagName.toLowerCase() + (element.id ? '#' + element.id : '')
  })()`) as Promise<string>
}

const focusedText = (page: Page): Promise<string> => page.evaluate('document.activeElement?.textContent?.trim() ?? ""') as Promise<string>

/** The focused element's box-shadow: the focus ring (styles.css) is its 4px spread. */
const focusedShadow = (page: Page): Promise<string> => page.evaluate('getComputedStyle(document.activeElement).boxShadow') as Promise<string>

describe('the keyboard where the focus is', () => {
  it('a permission card focuses Allow once, and its keys act neither through a dialog nor from the sidebar', async () => {
    const { page, problems, close } = await openPage()
    await openSession(page, 'Clean the build folder')
    // The agent offers "Always allow" first: the card shows "Allow" first, and focuses it.
    await send(page, '/permission-always execute')
    const card = page.getByTestId('permission')
    await card.waitFor()
    expect(await card.getByTestId('permission-option').allTextContents()).toEqual(['1 Allow', '2 Always allow', '3 Reject', '4 Always reject'])
    await expect.poll(() => focusedText(page)).toBe('1 Allow')

    // The shortcut list over it: a digit is not an answer, Esc closes the list and the request still waits.
    await page.keyboard.press('?')
    const overlay = page.getByTestId('shortcuts-overlay')
    await overlay.waitFor()
    await page.keyboard.press('1')
    await page.keyboard.press('Escape')
    await expect.poll(() => overlay.count()).toBe(0)
    expect(await card.count()).toBe(1)
    // The focus is back on the card's option, where it was.
    expect(await focusedText(page)).toBe('1 Allow')
    // The focus is given back as the list closes, not a moment later: by then the user may have moved it (here, to the
    // sidebar, as soon as the list has left the page), and it stays where they put it.
    await page.keyboard.press('?')
    await overlay.waitFor()
    // (In the page's own terms: this file is compiled without the DOM's types.)
    const movedTo = await page.evaluate(`(async () => {
      const list = document.querySelector('[data-testid=shortcuts-overlay]')
      const row = document.querySelector('[data-testid=session-open]')
      await new Promise((gone) => {
        new MutationObserver((_, observer) => {
          if (list.isConnected) return
          observer.disconnect()
          row.focus()
          gone()
        }).observe(document.body, { childList: true, subtree: true })
        list.dispatchEvent(new Event('cancel', { cancelable: true }))
      })
      await new Promise((later) => setTimeout(later, 100))
      return document.activeElement?.getAttribute('data-testid')
    })()`)
    expect(movedTo).toBe('session-open')
    expect(await card.count()).toBe(1)
    await card.getByTestId('permission-option').first().focus()

    // The delete confirmation over it: Cancel has the focus; a digit is not an answer, Esc cancels.
    await page.getByTestId('session-item').filter({ hasText: 'Clean the build folder' }).getByTestId('session-open').focus()
    await page.keyboard.press('Delete')
    const dialog = page.getByTestId('confirm-dialog')
    // (Once seen not to open under two runs at once, not reproduced since: the page's own record of the focus says why.)
    await dialog
      .getByTestId('confirm-delete')
      .waitFor()
      .catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await focusTrace(page)}`)
      })
    expect(await focused(page)).toBe('confirm-cancel')
    await page.keyboard.press('2')
    await page.keyboard.press('Escape')
    await expect.poll(() => dialog.getByTestId('confirm-delete').count()).toBe(0)
    expect(await focused(page)).toBe('session-open')
    // From the sidebar, the card's keys are the sidebar's: Esc and digits there answer nothing.
    await page.keyboard.press('Escape')
    await page.keyboard.press('1')
    expect(await card.count()).toBe(1)
    expect(await page.getByTestId('session-item').count()).toBe(1)

    // In its pane, the keys answer it: "Allow" is 1.
    await card.getByTestId('permission-option').first().focus()
    await page.keyboard.press('1')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permission: allow')
    expect(problems).toEqual([])
    await close()
  })

  it('Esc cancels the running turn from the thread or an empty composer, never from one holding text', async () => {
    const { page, problems, sent, close } = await openPage()
    await openSession(page, 'Wait for the deploy')
    const stops = page.getByTestId('entry-stop').filter({ hasText: 'cancelled' })
    await send(page, '/sleep 600000')
    await page.getByTestId('cancel').waitFor()

    // Words in the composer: Esc leaves them and the turn alone. (Queued and cleared: the Host has had everything the
    // page sent until then, and no cancel among it.)
    const composer = page.getByTestId('composer-input')
    await composer.fill('keep this')
    await composer.press('Escape')
    expect(await composer.inputValue()).toBe('keep this')
    await composer.press('Enter')
    await page.getByTestId('queued-prompt').waitFor()
    await page.getByTestId('queue-clear').click()
    await expect.poll(() => page.getByTestId('queue').count()).toBe(0)
    expect(sent.filter((message) => message.includes('sessions.cancel'))).toEqual([])
    expect(await page.getByTestId('session-status').textContent()).toBe('Working…')
    expect(await stops.count()).toBe(0)

    // Empty: Esc cancels the turn, which ends Cancelled.
    await composer.focus()
    await composer.press('Escape')
    await expect.poll(() => stops.count()).toBe(1)
    await expect.poll(() => page.getByTestId('cancel').count()).toBe(0)

    // The thread has the focus: Esc cancels too.
    await send(page, '/sleep 600000')
    await page.getByTestId('cancel').waitFor()
    await page.getByTestId('thread-scroll').focus()
    await page.keyboard.press('Escape')
    await expect.poll(() => stops.count()).toBe(2)
    expect(problems).toEqual([])
    await close()
  })

  it('a skip link past the sidebar, a shortcut to it, and pages that take the focus and give it back', async () => {
    const { page, problems, close } = await openPage()
    // The first Tab stop skips the sidebar: the focus goes to the main area (here an empty pane).
    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('skip-link')
    console.log(`screenshot: ${await screenshot(page, 'e2e-keyboard-skip-link')}`)
    await page.keyboard.press('Enter')
    expect(await page.evaluate("Boolean(document.activeElement?.closest('main'))")).toBe(true)
    expect(await focused(page)).toBe('pane')

    // From the composer, the sidebar's shortcut goes to the open conversation's row.
    await openSession(page, 'Rename the checkout step')
    await page.getByTestId('composer-input').focus()
    await page.keyboard.press(`${mod}+Shift+KeyE`)
    expect(await focused(page)).toBe('session-open')
    expect(await focusedText(page)).toContain('Rename the checkout step')

    // A page opened by its shortcut has the focus on its heading; Esc gives it back to the composer.
    await page.getByTestId('composer-input').focus()
    await page.keyboard.press(`${mod}+Shift+KeyA`)
    await page.getByTestId('agents-page').waitFor()
    await expect.poll(() => focused(page)).toBe('h1#agents-title')
    console.log(`screenshot: ${await screenshot(page, 'e2e-keyboard-agents-page-focused')}`)
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByTestId('agents-page').count()).toBe(0)
    expect(await focused(page)).toBe('composer-input')
    // Opened from the sidebar, the same: back on the sidebar's button.
    await page.getByTestId('nav-spend').click()
    await expect.poll(() => focused(page)).toBe('h1#spend-title')
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByTestId('spend-page').count()).toBe(0)
    expect(await focused(page)).toBe('nav-spend')
    expect(problems).toEqual([])
    await close()
  })

  it('the composer’s caret stops blinking after five quiet seconds and shows steadily; a key makes it blink again', async () => {
    const { page, problems, close } = await openPage()
    await openSession(page, 'Let the caret rest')
    const composer = page.getByTestId('composer-input')
    await composer.focus()
    const caretAnimation = (): Promise<string> =>
      page.evaluate("getComputedStyle(document.querySelector('[data-testid=composer-input]')).caretAnimation") as Promise<string>
    const resting = (): Promise<boolean> => page.evaluate("document.documentElement.classList.contains('caret-rest')") as Promise<boolean>
    // Nothing pressed for five seconds (caret-rest.ts): the caret rests.
    await expect.poll(resting, { timeout: 15_000 }).toBe(true)
    expect(await caretAnimation()).toBe('manual')
    // Steady and shown: the composer looks the same at five moments over more than a blink's period, and not as it
    // does without the caret.
    const shots: string[] = []
    for (let i = 0; i < 5; i++) {
      shots.push((await composer.screenshot({ caret: 'initial' })).toString('base64'))
      await page.waitForTimeout(150)
    }
    expect(new Set(shots).size).toBe(1)
    expect((await composer.screenshot({ caret: 'hide' })).toString('base64')).not.toBe(shots[0])
    // A key: blinking again, and the key typed.
    await page.keyboard.press('a')
    expect(await resting()).toBe(false)
    expect(await caretAnimation()).toBe('auto')
    expect(await composer.inputValue()).toBe('a')
    expect(problems).toEqual([])
    await close()
  })

  it('keeps the focus on a control of a row the view moves far from (the list does not let go of that row)', async () => {
    const { page, problems, close } = await openPage()
    await openSession(page, 'Keep the focus where it is')
    await send(page, Array.from({ length: 40 }, (_, i) => `/tool step ${i + 1}`).join('\n'))
    await expect.poll(() => page.getByTestId('entry-stop').count()).toBe(1)
    const scroll = page.getByTestId('thread-scroll')
    await scroll.evaluate((element) => element.scrollTo({ top: 0 }))
    // The first row's first control (the question's own), focused as Tab would.
    const focusFirst = `(() => {
      const control = document.querySelector('[data-testid=thread] .row[data-index="0"]')?.querySelector('button, a[href]')
      control?.focus()
      return control ? control.closest('.row').dataset.entryId : null
    })()`
    // (Once the list has drawn the first row again, after the scroll.)
    await expect.poll(() => page.evaluate(focusFirst)).not.toBeNull()
    const entryId = (await page.evaluate('document.activeElement?.closest(".row")?.dataset.entryId ?? null')) as string | null
    expect(entryId).not.toBeNull()
    // Far from it (the list draws the rows near the view only): the control keeps the focus, its row in the page.
    await scroll.evaluate((element) => element.scrollTo({ top: element.scrollHeight }))
    await expect.poll(() => page.evaluate('document.querySelectorAll("[data-testid=thread] .row").length')).toBeLessThan(40)
    expect(await page.evaluate('document.activeElement?.closest(".row")?.dataset.entryId ?? null')).toBe(entryId)
    expect(problems).toEqual([])
    await close()
  })

  it('shows the focus ring on ↓ Latest and in the shortcut list, in light and dark', async () => {
    const { page, problems, close } = await openPage()
    await openSession(page, 'A long answer')
    await send(page, Array.from({ length: 40 }, (_, i) => `/tool step ${i + 1}`).join('\n'))
    await expect.poll(() => page.getByTestId('entry-stop').count()).toBe(1)
    await page.getByTestId('thread-scroll').evaluate((element) => element.scrollTo({ top: 0 }))
    const latest = page.getByTestId('to-latest')
    // (Once seen not to show, the view taken back to the end: thread.test's "before the scroll's event". Where the view is says which.)
    await latest.waitFor().catch(async (error: Error) => {
      const where = await page.getByTestId('thread-scroll').evaluate((el) => `scrollTop ${el.scrollTop} of ${el.scrollHeight - el.clientHeight}`)
      throw new Error(`${error.message}\n${where}`)
    })
    // Reached by the keyboard (the last key pressed, not a click): its ring shows.
    await page.keyboard.press('Shift')
    await latest.focus()
    const ringOn = (testId: string) => async (): Promise<void> => {
      expect(await focused(page)).toBe(testId)
      expect(await focusedShadow(page)).toContain('0px 0px 0px 4px')
    }
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-keyboard-latest', ringOn('to-latest'))).join(', ')}`)

    // The shortcut list scrolls: Tab reaches the list itself, and its ring shows.
    await page.keyboard.press('?')
    await page.getByTestId('shortcuts-overlay').waitFor()
    expect(await page.evaluate('document.activeElement.getAttribute("aria-label")')).toBe('Close')
    expect(await focusedShadow(page)).toContain('0px 0px 0px 4px')
    for (let tab = 0; tab < 4 && (await focused(page)) !== 'shortcuts-overlay'; tab++) await page.keyboard.press('Tab')
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-keyboard-shortcuts', ringOn('shortcuts-overlay'))).join(', ')}`)
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByTestId('shortcuts-overlay').count()).toBe(0)

    // The safe defaults as they look: "Allow" focused on the card, Cancel in the delete dialog.
    // Sent from the keyboard: the card takes the focus with its ring.
    await page.getByTestId('composer-input').fill('/permission-always execute')
    await page.getByTestId('composer-input').press('Enter')
    await page.getByTestId('permission').waitFor()
    await expect.poll(() => focusedText(page)).toBe('1 Allow')
    const allowRing = async (): Promise<void> => {
      expect(await focusedText(page)).toBe('1 Allow')
      expect(await focusedShadow(page)).toContain('0px 0px 0px 4px')
    }
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-keyboard-permission', allowRing)).join(', ')}`)
    await page.getByTestId('session-item').filter({ hasText: 'A long answer' }).getByTestId('session-open').focus()
    await page.keyboard.press('Delete')
    await page.getByTestId('confirm-delete').waitFor()
    const cancelFocused = async (): Promise<void> => expect(await focused(page)).toBe('confirm-cancel')
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-keyboard-delete', cancelFocused)).join(', ')}`)
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByTestId('confirm-delete').count()).toBe(0)
    expect(await page.getByTestId('session-item').filter({ hasText: 'A long answer' }).count()).toBe(1)
    await page.getByTestId('permission-option').first().click()
    await expect.poll(() => page.getByTestId('permission').count()).toBe(0)
    expect(problems).toEqual([])
    await close()
  })
})
