import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { fold, removeDir, scriptedAgent, tempDir } from '../helpers'
import { launchBrowser, RestartableHost, screenshot, watchConsole } from './browser'

/**
 * The session's mode in the window: a new session starts in the mode that asks (the scripted agent
 * announces Claude Code 0.101's modes and starts in `auto`, as it does); choosing a mode that skips
 * permissions asks once for the agent, and the header and the sidebar row then mark it, light and dark;
 * the mode a session is in can be made the agent's starting mode.
 */

let root: string
let browser: Browser
const app = new RestartableHost()

beforeAll(async () => {
  root = await tempDir('e2e-modes')
  await mkdir(join(root, 'project'), { recursive: true })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await app.stop()
  await removeDir(root)
})

describe('the mode a session is in', () => {
  it('starts asking; a mode that skips permissions is confirmed once per agent and marked in the header and the sidebar', async () => {
    const started = await app.start(join(root, 'data'))
    const agent = await app.host.request(
      'agents.add',
      scriptedAgent(join(root, 'agent-state'), {
        SCRIPTED_AGENT_SESSION_STATE: '1',
        SCRIPTED_AGENT_MODES: 'auto:default,acceptEdits,plan,auto,bypassPermissions'
      })
    )
    const project = await app.host.request('projects.add', { cwd: join(root, 'project') })
    await app.host.request('sessions.new', { projectId: project.id, agentId: agent.id })

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(started.url)
    await page.getByTestId('session-item').first().click()
    const select = page.getByTestId('mode-select')
    await select.waitFor()
    expect(await select.inputValue()).toBe('default')
    expect(await page.getByTestId('mode-skips').count()).toBe(0)
    expect(await page.getByTestId('session-mode-skips').count()).toBe(0)

    // The first mode that skips permissions is asked about; "Keep asking" changes nothing.
    await select.selectOption('bypassPermissions')
    const dialog = page.getByTestId('confirm-dialog')
    await dialog.getByTestId('skip-permissions-message').waitFor()
    expect(await dialog.getByTestId('skip-permissions-message').textContent()).toContain('acts without asking')
    await dialog.getByTestId('confirm-cancel').click()
    await expect.poll(() => dialog.isVisible()).toBe(false)
    expect(await select.inputValue()).toBe('default')

    await select.selectOption('bypassPermissions')
    await dialog.getByTestId('confirm-skip-permissions').click()
    await expect.poll(() => select.inputValue()).toBe('bypassPermissions')
    await expect.poll(() => page.getByTestId('mode-skips').textContent()).toContain('acts without asking')
    await expect.poll(() => page.getByTestId('session-mode-skips').textContent()).toContain('No asking')
    console.log(`screenshot: ${await screenshot(page, 'e2e-mode-skips-light')}`)

    // Confirmed once for the agent: another such mode is not asked about.
    await select.selectOption('acceptEdits')
    await expect.poll(() => select.inputValue()).toBe('acceptEdits')
    await expect.poll(() => page.getByTestId('mode-skips').textContent()).toContain('edits without asking')
    await expect.poll(() => page.getByTestId('session-mode-skips').textContent()).toContain('Edits unasked')
    expect(await dialog.isVisible()).toBe(false)

    const dark = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' })
    const darkPage = await dark.newPage()
    await darkPage.goto(started.url)
    await darkPage.getByTestId('session-item').first().click()
    await darkPage.getByTestId('mode-skips').waitFor()
    await darkPage.getByTestId('session-mode-skips').waitFor()
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-mode-skips-dark')}`)

    // Back to a mode that asks: the marks go.
    await select.selectOption('default')
    await expect.poll(() => page.getByTestId('mode-skips').count()).toBe(0)
    await expect.poll(() => page.getByTestId('session-mode-skips').count()).toBe(0)

    // "Start new sessions in this mode": the agent's next session starts in it.
    await select.selectOption('plan')
    await expect.poll(() => select.inputValue()).toBe('plan')
    await page.getByTestId('mode-start-here').click()
    await expect.poll(() => page.getByTestId('mode-start-here').count()).toBe(0)
    expect((await app.host.request('agents.list', {})).find((a) => a.id === agent.id)?.startingMode).toBe('plan')
    const next = await app.host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    const { records } = await app.host.request('sessions.open', { id: next.id })
    expect(fold(records).modes?.currentModeId).toBe('plan')
    expect(problems).toEqual([])
    await dark.close()
    await context.close()
  })
})
