import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, screenshot, typeConsoleCode, watchConsole } from './browser'

/**
 * What an agent asks of the user, in the browser: a terminal sign-in typed
 * into xterm.js (the login program runs in a pseudo-terminal on the Host), and
 * a form the agent sends mid-turn (elicitation).
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer

beforeAll(async () => {
  root = await tempDir('e2e-asks')
  await mkdir(join(root, 'project'), { recursive: true })
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('send').click()
}

describe('what an agent asks of the user', () => {
  it('signs in through a terminal the user types into, then answers a form the agent sends', async () => {
    await host.request('projects.add', { cwd: join(root, 'project') })
    await host.request('agents.add', scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_AUTH: '1' }, 'Locked agent'))
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)

    await page.getByTestId('new-session').click()
    await page.getByTestId('sign-in').waitFor()
    await page.getByTestId('sign-in-cli-login').click()
    // The sign-in program runs once confirmed with the code serve printed (as under `npm run serve`).
    await typeConsoleCode(page, server)
    const dialog = page.getByTestId('login-terminal')
    await dialog.waitFor()
    // The login program's prompt, drawn by xterm.js.
    await expect.poll(() => dialog.locator('.xterm-rows').textContent(), { timeout: 15_000 }).toContain('Enter the code 4242')
    expect(await dialog.textContent()).toMatch(/scripted-agent\.(ts|mjs) --login/)
    // The theme changed while it is open (here the OS's): the terminal takes the new background, as its frame does.
    const backgrounds = (): Promise<string[]> =>
      page.evaluate(`[document.querySelector('.screen-frame'), document.querySelector('[data-testid=login-screen] .xterm-scrollable-element')]
        .map((el) => getComputedStyle(el).backgroundColor)`)
    const [lightFrame, lightScreen] = await backgrounds()
    expect(lightScreen).toBe(lightFrame)
    await page.emulateMedia({ colorScheme: 'dark' })
    // Once the frame's colour has changed (its transition run out), the terminal's is the same.
    await expect
      .poll(async () => backgrounds().then(([frame, screen]) => ({ frameChanged: frame !== lightFrame, same: screen === frame })))
      .toEqual({
        frameChanged: true,
        same: true
      })
    console.log(`screenshot: ${await screenshot(page, 'e2e-terminal-sign-in-dark')}`)
    await page.emulateMedia({ colorScheme: 'light' })

    // A wrong code first: the dialog says how it ended and offers another try.
    await page.locator('.xterm-helper-textarea').focus()
    await page.keyboard.type('1111')
    await page.keyboard.press('Enter')
    await page.getByTestId('login-failed').waitFor()
    expect(await page.getByTestId('login-failed').textContent()).toContain('exit code 1')
    await page.getByTestId('login-retry').click()
    await typeConsoleCode(page, server)
    await expect.poll(() => dialog.locator('.xterm-rows').textContent(), { timeout: 15_000 }).toContain('Enter the code 4242')
    await page.locator('.xterm-helper-textarea').focus()
    await page.keyboard.type('4242')
    console.log(`screenshot: ${await screenshot(page, 'e2e-terminal-sign-in')}`)
    await page.keyboard.press('Enter')

    // Signed in: the session the user asked for starts.
    await page.getByTestId('composer-input').waitFor({ timeout: 15_000 })
    expect(await page.getByTestId('login-terminal').count()).toBe(0)

    await send(page, '/elicit')
    const form = page.getByTestId('elicitation')
    await form.waitFor()
    expect(await form.textContent()).toContain('Which deployment should I use?')
    // Submitting without the required fields: the Host says what is missing, nothing reaches the agent.
    await page.getByTestId('elicitation-accept').click()
    await expect.poll(() => page.getByTestId('elicitation-error').textContent()).toBe('Target is required')
    await form.locator('select').selectOption('production')
    await page.getByTestId('elicitation-field-regions').getByLabel('eu').check()
    await page.getByTestId('elicitation-field-contact').locator('input').fill('ops@example.com')
    console.log(`screenshot: ${await screenshot(page, 'e2e-elicitation')}`)
    await page.getByTestId('elicitation-accept').click()
    await expect
      .poll(() => page.getByTestId('entry-assistant').last().textContent())
      .toContain('elicitation: accept {"target":"production","replicas":2,"contact":"ops@example.com","dryRun":true,"regions":["eu"]}')
    expect(await page.getByTestId('elicitation').count()).toBe(0)
    expect(await page.getByTestId('entry-elicitation').textContent()).toMatch(/Answered: Which deployment.*target: production/s)

    const dark = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' })
    const darkPage = await dark.newPage()
    await darkPage.goto(server.url)
    await darkPage.getByTestId('session-item').first().click()
    await darkPage.getByTestId('composer-input').waitFor()
    await send(darkPage, '/elicit')
    await darkPage.getByTestId('elicitation').waitFor()
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-elicitation-dark')}`)
    await darkPage.getByTestId('elicitation-decline').click()
    await expect.poll(() => darkPage.getByTestId('entry-assistant').last().textContent()).toContain('elicitation: decline')
    // A page to open: its address is shown whole, a right-to-left override in it as a mark, not obeyed.
    await send(darkPage, '/elicit-url https://example.com/connect/\u202Efdp.exe')
    await darkPage.getByTestId('elicitation-url').waitFor()
    expect(await darkPage.getByTestId('elicitation-url').textContent()).toBe('https://example.com/connect/RLOfdp.exe')
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-elicitation-url-dark')}`)
    await darkPage.getByTestId('elicitation-decline').click()
    await expect.poll(() => darkPage.getByTestId('entry-assistant').last().textContent()).toContain('elicitation: decline')

    expect(problems).toEqual([])
    await dark.close()
    await context.close()
  })
})
