import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import {
  chooseAgent,
  closeBrowserHost,
  focusTrace,
  holdDialogCloseUntilKey,
  openBrowserHost,
  resetWindowSettings,
  screenshot,
  traceFocus,
  watchConsole
} from './browser'

/**
 * Session presets by keyboard: made on the Agents page's form, chosen in a project's New session split button
 * (opened with its shortcut), started; the session's details show the system prompt that was sent. And the
 * form says why the system prompt is not sent to an agent that does not take one.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer

beforeAll(async () => {
  root = await tempDir('e2e-presets')
  await mkdir(join(root, 'shop'), { recursive: true })
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

beforeEach(async () => {
  await resetWindowSettings(host)
})

/** The element that has the focus, by its test id. */
const focused = (page: Page): Promise<string | null> => page.evaluate("document.activeElement?.getAttribute('data-testid') ?? null")

describe('session presets in the browser', () => {
  it('are made on the Agents page and started from the New session menu, by keyboard', async () => {
    const agent = await host.request(
      'agents.add',
      scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_SESSION_STATE: '1', SCRIPTED_AGENT_SYSTEM_PROMPT: '1' }, 'Scripted')
    )
    await host.request('projects.add', { cwd: join(root, 'shop') })
    // Once started, the agent's capabilities are known: the form then says the system prompt is sent.
    await host.request('agents.restart', { agentId: agent.id })

    for (const scheme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: scheme })
      const page = await context.newPage()
      const problems = watchConsole(page)
      await traceFocus(page)
      // The project's system prompt dialog's close event comes only after the Home below, as under CI's load once.
      await holdDialogCloseUntilKey(page, 'Home')
      await page.goto(server.url)
      await page.getByTestId('project').first().waitFor()

      if (scheme === 'light') {
        // The Agents page: a new preset, typed in by keyboard.
        await page.keyboard.press('Control+Shift+A')
        await page.getByTestId('new-session-preset').focus()
        await page.keyboard.press('Enter')
        await expect.poll(() => focused(page)).toBe('preset-name')
        await page.keyboard.type('Careful reviewer')
        await page.keyboard.press('Tab')
        expect(await focused(page)).toBe('preset-agent')
        await page.keyboard.press('Tab')
        await page.keyboard.type('code')
        await page.keyboard.press('Tab')
        await page.keyboard.type('smart')
        await page.getByTestId('preset-option-add').focus()
        await page.keyboard.press('Enter')
        await page.getByTestId('preset-option-id').focus()
        await page.keyboard.type('verbose')
        await page.keyboard.press('Tab')
        await page.keyboard.type('true')
        await page.getByTestId('preset-system-prompt').focus()
        await page.keyboard.type('Review the change; never push.')
        expect(await page.getByTestId('preset-system-prompt-hint').textContent()).toContain('Sent after the project')
        console.log(`screenshot: ${await screenshot(page, 'e2e-preset-form-light')}`)
        await page.getByTestId('preset-save').focus()
        await page.keyboard.press('Enter')
        await page.getByTestId('session-preset-row').waitFor()
        // The focus is back on the preset's row, whose line says what it sets.
        expect(await focused(page)).toBe('session-preset-row')
        expect(await page.getByTestId('session-preset-row').textContent()).toContain(
          'Scripted · mode code · model smart · verbose true · system prompt'
        )
        await page.keyboard.press('Escape')

        // The project's own system prompt, from the end of its New session menu, by keyboard.
        await page.getByTestId('project').first().waitFor()
        await page.keyboard.press('Control+Shift+N')
        await page.getByTestId('new-session-options').waitFor()
        await page.keyboard.press('End')
        expect(await focused(page)).toBe('new-session-project-prompt')
        await page.keyboard.press('Enter')
        await expect.poll(() => focused(page)).toBe('project-system-prompt')
        await page.keyboard.type('Shop uses pnpm.')
        console.log(`screenshot: ${await screenshot(page, 'e2e-project-system-prompt-light')}`)
        await page.keyboard.press('Tab')
        await page.keyboard.press('Enter')
        await page.getByTestId('project-system-prompt-dialog').waitFor({ state: 'hidden' })
        expect(await focused(page)).toBe('new-session')
      } else {
        await page.getByTestId('nav-agents').click()
        await page.getByTestId('session-preset-row').click()
        await page.getByTestId('preset-form').waitFor()
        console.log(`screenshot: ${await screenshot(page, 'e2e-preset-form-dark')}`)
        await page.keyboard.press('Escape')
      }
      await page.getByTestId('project').first().waitFor()

      // The shortcut opens the project's New session menu, the focus on the current choice; Esc closes it, the focus on the button.
      const menu = page.getByTestId('new-session-options')
      await page.keyboard.press('Control+Shift+N')
      await menu.waitFor()
      await page.keyboard.press('Escape')
      await menu.waitFor({ state: 'detached' })
      expect(await focused(page)).toBe('new-session')
      await page.keyboard.press('ArrowDown')
      await menu.waitFor()
      expect(await page.evaluate("document.activeElement?.getAttribute('aria-checked')")).toBe('true')
      expect(await menu.getByRole('menuitemradio').allTextContents()).toEqual(['Scripted', expect.stringContaining('Careful reviewer')])
      if (scheme === 'dark') expect(await menu.getByTestId('new-session-project-prompt').textContent()).toContain('Shop uses pnpm.')
      console.log(`screenshot: ${await screenshot(page, `e2e-new-session-menu-${scheme}`)}`)
      // The second time round the preset is the choice already: Home, then down to it, either way.
      await page.keyboard.press('Home')
      await page.keyboard.press('ArrowDown')
      // Once failed in CI on the agent: the dialog's late close event had put the focus back on the New session button
      // between these two keys (holdDialogCloseUntilKey above makes that happen every time; ModalDialog gives it back as it closes).
      const onPreset = await focused(page)
      expect(onPreset, onPreset === 'new-session-preset-option' ? '' : await focusTrace(page)).toBe('new-session-preset-option')
      await page.keyboard.press('Enter')
      await menu.waitFor({ state: 'detached' })
      // Chosen: the focus is on the main part, which now says the preset; Enter starts it.
      expect(await focused(page)).toBe('new-session')
      expect(await page.getByTestId('new-session-choice').textContent()).toContain('Careful reviewer')
      await page.keyboard.press('Enter')
      await page.getByTestId('composer-input').waitFor()

      const details = page.getByTestId('session-system-prompt')
      await expect.poll(() => details.textContent()).toContain('Preset: Careful reviewer · system prompt sent')
      await details.locator('summary').click()
      expect(await page.getByTestId('session-system-prompt-text').textContent()).toBe('Shop uses pnpm.\n\nReview the change; never push.')
      await page.getByTestId('composer-input').fill('/state')
      await page.keyboard.press('Enter')
      await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('mode=code model=smart verbose=true')
      console.log(`screenshot: ${await screenshot(page, `e2e-preset-session-${scheme}`)}`)
      expect(problems).toEqual([])
      await context.close()
    }
  })

  it('say on the form when the agent does not take a system prompt, and the field is off', async () => {
    const plain = await host.request('agents.add', scriptedAgent(join(root, 'plain-state'), {}, 'Plain'))
    await host.request('agents.restart', { agentId: plain.id })
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const page = await context.newPage()
    await page.goto(server.url)
    await page.getByTestId('nav-agents').click()
    await page.getByTestId('new-session-preset').click()
    await page.getByTestId('preset-agent').selectOption(plain.id)
    expect(await page.getByTestId('preset-system-prompt').isDisabled()).toBe(true)
    expect(await page.getByTestId('preset-system-prompt-hint').textContent()).toContain(
      'Plain does not take a system prompt from Switchboard (it does not announce sessionCapabilities.systemPrompt)'
    )
    await page.getByTestId('preset-cancel').click()
    await page.keyboard.press('Escape')

    // The project's system prompt (set in the test above) is not sent to it: the session's header says why.
    const project = page.getByTestId('project').first()
    await chooseAgent(project, plain.id)
    await project.getByTestId('new-session').click()
    await page.getByTestId('composer-input').waitFor()
    await expect
      .poll(() => page.getByTestId('session-system-prompt-left-out').textContent())
      .toContain('Plain does not take a system prompt from Switchboard')
    console.log(`screenshot: ${await screenshot(page, 'e2e-system-prompt-left-out-light')}`)
    await context.close()
  })
})
