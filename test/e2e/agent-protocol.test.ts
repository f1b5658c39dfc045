import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, watchConsole, chooseAgent } from './browser'

/**
 * The agent's ACP protocol version in the window: shown beside the agent in the
 * session header with what the agent says it is, and chosen there (version 2,
 * the draft, or 1). Headless Chromium against the built renderer and the host.
 */

let root: string
let projectDir: string
let browser: Browser
let host: Host
let server: RunningServer

beforeAll(async () => {
  root = await tempDir('e2e-protocol')
  projectDir = join(root, 'my-project')
  await mkdir(projectDir, { recursive: true })
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
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

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('send').click()
}

describe('the protocol version in the session header', () => {
  it('shows version 1, switches the agent to version 2 from the header, and continues the conversation over it', async () => {
    const agent = await host.request(
      'agents.add',
      scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_V2: '1', SCRIPTED_AGENT_NAME: 'scripted-two' }, 'Bilingual')
    )
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    const project = page.getByTestId('project').filter({ hasText: 'my-project' })
    await chooseAgent(project, agent.id)
    await project.getByTestId('new-session').click()
    await send(page, 'first over version 1')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('You said: first over version 1')
    expect(await page.getByTestId('agent-protocol-chip').textContent()).toBe('ACP v1')

    // The agent's details: what it says it is, the version it speaks, and the version to ask for.
    await page.getByTestId('agent-status').click()
    const details = page.getByTestId('agent-details')
    expect(await details.getByTestId('agent-info').textContent()).toBe('scripted-two 1.0.0')
    expect(await details.getByTestId('agent-protocol').textContent()).toContain('ACP version 1')
    // The select has the focus: choosing by keyboard.
    await expect.poll(() => page.evaluate('document.activeElement?.dataset?.testid')).toBe('agent-protocol-select')
    await details.getByTestId('agent-protocol-select').selectOption('2')
    await expect.poll(() => details.getByTestId('agent-protocol-saved').textContent()).toContain('Saved')
    expect((await host.request('agents.list', {})).find((a) => a.id === agent.id)?.protocol).toBe(2)

    // Nothing was pending, so the agent was stopped for it: the next message starts it in version 2 and resumes the session.
    await send(page, 'then over version 2')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('You said: then over version 2')
    await expect.poll(() => page.getByTestId('agent-protocol-chip').textContent()).toBe('ACP v2')
    await expect.poll(() => details.getByTestId('agent-protocol').textContent()).toContain('ACP version 2 (draft)')
    // Its version 2 introduction has a title too.
    expect(await details.getByTestId('agent-info').textContent()).toBe('Scripted Agent (scripted-two) 1.0.0')
    expect(await page.getByTestId('entry-user').count()).toBe(2)
    console.log(`screenshot: ${await screenshot(page, 'e2e-agent-protocol-v2')}`)

    const dark = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' })
    const darkPage = await dark.newPage()
    await darkPage.goto(server.url)
    await darkPage.getByTestId('session-item').first().click()
    await darkPage.getByTestId('agent-status').click()
    await darkPage.getByTestId('agent-details').waitFor()
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-agent-protocol-dark')}`)
    // Esc closes the details.
    await darkPage.keyboard.press('Escape')
    await expect.poll(() => darkPage.getByTestId('agent-details').count()).toBe(0)
    await dark.close()

    expect(problems).toEqual([])
    await context.close()
  })

  it('says so when an agent asked for version 2 only speaks version 1', async () => {
    const agent = await host.request('agents.add', { ...scriptedAgent(join(root, 'state'), {}, 'Only one'), protocol: 2 })
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    const project = page.getByTestId('project').filter({ hasText: 'my-project' })
    await chooseAgent(project, agent.id)
    await project.getByTestId('new-session').click()
    await send(page, 'hello')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('You said: hello')
    expect(await page.getByTestId('agent-protocol-chip').textContent()).toBe('ACP v1')
    expect(await page.getByTestId('agent-status').getAttribute('title')).toContain('Asked for ACP protocol version 2')
    await page.getByTestId('agent-status').click()
    expect(await page.getByTestId('agent-protocol-note').textContent()).toBe(
      'Asked for ACP protocol version 2; Only one speaks version 1, so version 1 is used.'
    )
    expect(await page.getByTestId('agent-protocol-select').inputValue()).toBe('2')
    console.log(`screenshot: ${await screenshot(page, 'e2e-agent-protocol-fallback')}`)
    expect(problems).toEqual([])
    await context.close()
  })
})
