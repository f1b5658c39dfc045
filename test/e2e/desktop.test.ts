import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { scriptedAgentCommand } from '../agent/spawn'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, screenshot, typeConsoleCode, watchConsole } from './browser'

/**
 * The Agents page, the theme, the shortcut list and notifications, by clicking
 * and typing in the built renderer (headless Chromium) against `serve`'s Host
 * and the scripted agent.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer
let context: BrowserContext
let page: Page
let problems: string[]

const SECRET = 'sekret-token-4711'

beforeAll(async () => {
  root = await tempDir('e2e-desktop')
  await mkdir(join(root, 'my-project'), { recursive: true })
  await mkdir(join(root, 'agent-home'), { recursive: true })
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  await host.request('projects.add', { cwd: join(root, 'my-project') })
  // Reduced motion: no transitions half-way in a screenshot.
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', reducedMotion: 'reduce' })
  // Notifications are recorded instead of shown, and the test decides whether the window has the focus.
  await context.addInitScript(`(() => {
    window.__notes = []
    window.__away = false
    class RecordedNotification {
      static permission = 'granted'
      static requestPermission() { return Promise.resolve('granted') }
      constructor(title, options) { this.title = title; this.body = options && options.body; this.data = options && options.data; window.__notes.push(this) }
      close() {}
    }
    window.Notification = RecordedNotification
    document.hasFocus = () => !window.__away
  })()`)
  page = await context.newPage()
  page.setDefaultTimeout(15_000)
  problems = watchConsole(page)
  await page.goto(server.url)
})

afterAll(async () => {
  await context?.close()
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

function backgroundColour(): Promise<string> {
  return page.evaluate('getComputedStyle(document.body).backgroundColor') as Promise<string>
}

describe('the desktop around the conversations', () => {
  it('says what to do when no agent is set up, and adds a custom agent with a secret on the Agents page', async () => {
    await expect.poll(() => page.getByTestId('empty-no-agents').textContent()).toContain('none is set up yet')
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-no-agents')}`)
    await page.getByTestId('empty-open-agents').click()
    await page.getByTestId('agents-page').waitFor()
    expect(await page.getByTestId('agents-empty').textContent()).toContain('No agents set up yet')
    await expect.poll(() => page.getByTestId('preset-row').count()).toBe(3)

    await page.getByTestId('add-agent').click()
    // Incomplete input is refused with a reason, and nothing is lost.
    await page.getByTestId('agent-form-name').fill('Scripted')
    await page.getByTestId('agent-form-save').click()
    await expect.poll(() => page.getByTestId('agent-form-error').textContent()).toMatch(/needs a command/)

    const { command, args } = scriptedAgentCommand()
    await page.getByTestId('agent-form-command').fill(command)
    await page.getByTestId('agent-form-args').fill(args.join('\n'))
    await page.getByTestId('env-add').click()
    await page.getByTestId('env-name').nth(0).fill('SCRIPTED_AGENT_STATE_DIR')
    await page.getByTestId('env-value').nth(0).fill(join(root, 'agent-state'))
    await page.getByTestId('env-add').click()
    await page.getByTestId('env-name').nth(1).fill('API_TOKEN')
    await page.getByTestId('env-secret').nth(1).check()
    await page.getByTestId('env-value').nth(1).fill(SECRET)
    // A working folder that is not absolute is refused with a reason, and nothing typed is lost.
    await page.getByTestId('agent-form-cwd').fill('agent-home')
    await page.getByTestId('agent-form-save').click()
    await expect
      .poll(() => page.getByTestId('agent-form-error').textContent())
      .toBe("The working folder must be an absolute path, like /home/you/code (got 'agent-home')")
    expect(await page.getByTestId('env-value').nth(1).inputValue()).toBe(SECRET)
    await page.getByTestId('agent-form-cwd').fill(join(root, 'agent-home'))
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-agent-form')}`)
    await page.getByTestId('agent-form-save').click()
    // Added once confirmed with the code serve printed (test/e2e/confirm-code.test.ts looks at that dialog).
    await typeConsoleCode(page, server)

    await page.getByTestId('agent-details').waitFor()
    expect(await page.getByTestId('agent-details-name').textContent()).toBe('Scripted')
    expect(await page.getByTestId('agent-cwd').textContent()).toBe(join(root, 'agent-home'))
    expect(await page.getByTestId('agent-secret-var').textContent()).toMatch(/API_TOKEN\s+•••• set/)
    expect(await page.getByTestId('agent-info').textContent()).toContain('Known once it has started')
    // The secret never comes back to the window.
    expect(await page.content()).not.toContain(SECRET)
    expect(await page.getByTestId('agent-row').allTextContents()).toEqual([expect.stringContaining('Scripted')])
  })

  it('starts the agent and shows its version, protocol and capabilities from initialize', async () => {
    await page.getByTestId('agent-restart').click()
    await expect.poll(() => page.getByTestId('agent-info').textContent()).toContain('scripted-agent version 1.0.0')
    expect(await page.getByTestId('agent-protocol').textContent()).toContain('ACP version 1')
    // Its process runs; it is "ready" only once it has started a session.
    expect(await page.getByTestId('agent-details-status').textContent()).toContain('running')
    const supported = (id: string) => page.locator(`[data-capability=${id}]`).getAttribute('data-supported')
    expect(await supported('load')).toBe('true')
    expect(await supported('embedded')).toBe('true')
    expect(await supported('image')).toBe('false')
    expect(await supported('fork')).toBe('false')
    expect(await page.getByTestId('agent-restart').textContent()).toContain('Restart')
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-agents-light')}`)
  })

  it('follows the agent’s stderr log as it writes, and restarts it', async () => {
    // A session with the new agent: opening it leaves the Agents page.
    const project = page.getByTestId('project').filter({ hasText: 'my-project' })
    await project.getByTestId('new-session').click()
    await page.getByTestId('composer-input').waitFor()
    expect(await page.getByTestId('agents-page').count()).toBe(0)
    await page.getByTestId('composer-input').fill('/stderr complaint number one\n/env API_TOKEN')
    await page.getByTestId('send').click()
    await page.getByTestId('entry-stop').first().waitFor()
    // The secret reached the agent's environment.
    expect(await page.getByTestId('entry-assistant').last().textContent()).toContain(`API_TOKEN=${SECRET}`)

    // Back to the Agents page by its shortcut, from outside any text field.
    await page.getByTestId('session-title').click()
    await page.keyboard.press('Control+Shift+A')
    await page.getByTestId('agents-page').waitFor()
    await expect.poll(() => page.getByTestId('agent-log').textContent()).toContain('complaint number one')
    const pid = await page.getByTestId('agent-pid').textContent()
    expect(pid).toMatch(/^pid \d+$/)

    // Written while the page is open: the log follows.
    const sessionId = (await host.request('sessions.list', {}))[0].id
    await host.request('sessions.prompt', { id: sessionId, text: '/stderr complaint number two' })
    await expect.poll(() => page.getByTestId('agent-log').textContent()).toContain('complaint number two')

    await page.getByTestId('agent-restart').click()
    await expect.poll(() => page.getByTestId('agent-log').textContent()).toMatch(/--- exited[\s\S]*starting/)
    // A new process, which has started no session yet.
    await expect.poll(() => page.getByTestId('agent-details-status').textContent()).toContain('running')
    await expect.poll(() => page.getByTestId('agent-pid').textContent()).toMatch(/^pid \d+$/)
    expect(await page.getByTestId('agent-pid').textContent()).not.toBe(pid)
    await page.getByTestId('agent-log').scrollIntoViewIfNeeded()
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-agent-log')}`)
  })

  it('signs in to an agent with a key it asks for, and logs out', async () => {
    await host.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_AUTH: '1' }, 'Locked'))
    const row = page.getByTestId('agent-row').filter({ hasText: 'Locked' })
    await row.click()
    await page.getByTestId('agent-restart').click()
    await page.getByTestId('sign-in').waitFor()
    expect(await page.getByTestId('sign-in').textContent()).toContain('Log in with the browser')
    // A wrong key: the agent's refusal is shown, nothing is lost.
    await page.getByTestId('sign-in-var-SCRIPTED_KEY').fill('wrong')
    await page.getByTestId('sign-in-api-key').click()
    await expect.poll(() => page.getByTestId('sign-in-error').textContent()).toContain('SCRIPTED_KEY is missing or wrong')
    await page.getByTestId('sign-in-var-SCRIPTED_KEY').fill('sekret')
    await page.getByTestId('sign-in-api-key').click()
    await expect.poll(() => page.getByTestId('agent-sign-in-note').textContent()).toBe('Signed in to Locked.')
    // The key is kept as the agent's secret, shown only as set.
    expect(await page.getByTestId('agent-secret-var').textContent()).toMatch(/SCRIPTED_KEY\s+•••• set/)
    await page.getByTestId('sign-in').scrollIntoViewIfNeeded()
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-sign-in')}`)

    await page.getByTestId('agent-logout').click()
    await expect.poll(() => page.getByTestId('agent-sign-in-note').textContent()).toBe('Logged out of Locked.')
    await expect.poll(() => page.getByTestId('agent-secret-var').count()).toBe(0)
  })

  it('switches between light and dark, keeps the choice, and follows the system by default', async () => {
    expect(await backgroundColour()).toBe('rgb(246, 247, 249)')
    await page.getByTestId('theme-dark').click()
    await expect.poll(backgroundColour).toBe('rgb(21, 23, 29)')
    expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('dark')
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-agents-dark')}`)
    // The form, with the working folder, in the dark.
    await page.getByTestId('agent-row').filter({ hasText: 'Scripted' }).click()
    await page.getByTestId('agent-edit').click()
    expect(await page.getByTestId('agent-form-cwd').inputValue()).toBe(join(root, 'agent-home'))
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-agent-form-dark')}`)
    await page.getByTestId('agent-form-cancel').click()

    await page.reload()
    await page.getByTestId('theme-switch').waitFor()
    expect(await backgroundColour()).toBe('rgb(21, 23, 29)')
    expect(await page.getByTestId('theme-dark').getAttribute('aria-checked')).toBe('true')

    await page.getByTestId('theme-light').click()
    await expect.poll(backgroundColour).toBe('rgb(246, 247, 249)')
    // System: follows the OS setting, also when it changes.
    await page.getByTestId('theme-system').click()
    await page.emulateMedia({ colorScheme: 'dark' })
    await expect.poll(backgroundColour).toBe('rgb(21, 23, 29)')
    await page.emulateMedia({ colorScheme: 'light' })
    await expect.poll(backgroundColour).toBe('rgb(246, 247, 249)')
    // The choice is kept by the Host, in the data folder, not in this browser's storage. The window shows a choice
    // at once and sends it on its link, which may still be opening after the reload: the Host has it soon after.
    await expect.poll(async () => (await host.request('settings.get', {})).settings.theme).toBe('system')
  })

  it('lists the keyboard shortcuts on ?, but not while typing', async () => {
    await page.getByTestId('session-item').first().click()
    await page.getByTestId('composer-input').fill('')
    await page.getByTestId('composer-input').press('?')
    expect(await page.getByTestId('composer-input').inputValue()).toBe('?')
    expect(await page.getByTestId('shortcuts-overlay').count()).toBe(0)
    await page.getByTestId('composer-input').fill('')

    await page.getByTestId('session-title').click()
    await page.keyboard.press('?')
    await page.getByTestId('shortcuts-overlay').waitFor()
    const keys = await page.getByTestId('shortcuts-overlay').textContent()
    expect(keys).toContain('Send the message')
    expect(keys).toContain('Show keyboard shortcuts')
    expect(await page.getByTestId('shortcut-keys').first().textContent()).toMatch(/\?\s*or\s*Ctrl\s*\//)
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-shortcuts-light')}`)
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByTestId('shortcuts-overlay').count()).toBe(0)

    // Esc also leaves the Agents page.
    await page.getByTestId('nav-agents').click()
    await page.getByTestId('agents-page').waitFor()
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByTestId('agents-page').count()).toBe(0)

    await page.evaluate("document.querySelector('[data-testid=theme-dark]').click()")
    await page.getByTestId('open-shortcuts').click()
    await page.getByTestId('shortcuts-overlay').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-desktop-shortcuts-dark')}`)
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByTestId('shortcuts-overlay').count()).toBe(0)
  })

  it('notifies when a turn ends or a permission waits while the window is in the background; a click opens the session', async () => {
    const [session] = await host.request('sessions.list', {})
    // Somewhere else in the app, then away from the window.
    await page.getByTestId('nav-agents').click()
    await page.getByTestId('agents-page').waitFor()
    await page.evaluate('window.__away = true')

    await host.request('sessions.prompt', { id: session.id, text: 'are you done?' })
    await expect.poll(() => page.evaluate('window.__notes.map((n) => n.title)')).toEqual(['Scripted finished'])

    const turn = host.request('sessions.prompt', { id: session.id, text: '/permission' })
    await expect.poll(() => page.evaluate('window.__notes.length')).toBe(2)
    expect(await page.evaluate('window.__notes[1].title')).toBe('Scripted asks for permission')
    expect(await page.evaluate('window.__notes[1].body')).toContain('Run dangerous command')
    // It carries the session's switchboard:// link, which the click follows (as a link from outside goes).
    const sessionId = String(await page.evaluate(`window.__notes[1].data.replace('switchboard://session/', '')`))
    expect((await host.request('sessions.get', { ids: [sessionId] })).map((s) => s.id)).toEqual([sessionId])

    // The click brings the session back, with the request to answer.
    await page.evaluate('window.__away = false; window.__notes[1].onclick()')
    await page.getByTestId('permission').waitFor()
    expect(await page.getByTestId('agents-page').count()).toBe(0)
    await page.keyboard.press('1')
    expect((await turn).stopReason).toBe('end_turn')
    // In front of the window: no notification for this turn's end.
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permission: allow')
    await expect.poll(() => page.getByTestId('session-status').textContent()).toBe('Ready')
    expect(await page.evaluate('window.__notes.length')).toBe(2)
    expect(problems).toEqual([])
  })

  it('starts a new session in the current project with Ctrl+N, showing progress meanwhile', async () => {
    expect(await page.getByTestId('session-item').count()).toBe(1)
    await page.getByTestId('session-title').click()
    // Whatever the progress note said, however briefly it showed.
    await page.evaluate(`window.__activity = null
      new MutationObserver(() => {
        const note = document.querySelector('[data-testid=activity]')
        if (note) window.__activity = note.textContent
      }).observe(document.body, { childList: true, subtree: true })`)
    await page.keyboard.press('Control+n')
    await expect.poll(() => page.getByTestId('session-item').count()).toBe(2)
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('New session')
    expect(await page.evaluate('window.__activity')).toBe('Starting a session with Scripted in my-project…')
    await expect.poll(() => page.getByTestId('activity').count()).toBe(0)
    expect(problems).toEqual([])
  })
})
