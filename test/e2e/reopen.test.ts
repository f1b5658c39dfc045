import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { runOf, removeDir, scriptedAgent, tempDir } from '../helpers'
import { launchBrowser, RestartableHost, screenshot, watchConsole, chooseAgent } from './browser'

/**
 * What real agents made go wrong, as the user sees it now: a conversation the
 * agent cannot reopen (kept, and continued in a new session given it as
 * context), a turn cancelled while its permission was pending (the tool call
 * reads Cancelled), the tokens a turn used, and a sign-in that takes an API key.
 */

let root: string
let dataDir: string
let projectDir: string
let browser: Browser
const app = new RestartableHost()

beforeAll(async () => {
  browser = await launchBrowser()
})
afterAll(async () => {
  await browser?.close()
})
beforeEach(async () => {
  root = await tempDir('e2e-reopen')
  dataDir = join(root, 'data')
  projectDir = join(root, 'project')
  await mkdir(projectDir, { recursive: true })
})
afterEach(async () => {
  await app.stop()
  await removeDir(root)
})

async function newPage(url: string, colorScheme: 'light' | 'dark' = 'light'): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme })
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(url)
  return { page, problems }
}

describe('real agents’ troubles, in the window', () => {
  it('a conversation its agent cannot reopen stays shown, and continues in a new session given it as context', async () => {
    await app.start(dataDir)
    const project = await app.host.request('projects.add', { cwd: projectDir })
    const agent = await app.host.request('agents.add', scriptedAgent(join(root, 'agent-state'), {}, 'Forgetful'))
    const record = await app.host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await app.host.request('sessions.prompt', { id: record.id, text: 'Plan the release' })
    await app.host.request('sessions.prompt', { id: record.id, text: 'Now the changelog' })
    await app.host.request('agents.update', {
      agentId: agent.id,
      name: 'Forgetful',
      transport: {
        kind: 'process',
        command: runOf(agent).command,
        args: runOf(agent).args,
        env: { ...runOf(agent).env, SCRIPTED_AGENT_LOAD_FAIL: 'No previous sessions found for this project.' }
      }
    })
    await app.stop()

    for (const scheme of ['light', 'dark'] as const) {
      const running = await app.start(dataDir)
      const { page, problems } = await newPage(running.url, scheme)
      await page.getByTestId('session-item').filter({ hasText: 'Plan the release', hasNotText: '(continued)' }).click()
      await page.getByTestId('composer-input').fill('And the announcement')
      await page.getByTestId('send').click()
      const error = page.getByTestId('session-error')
      await error.waitFor()
      expect(await error.textContent()).toContain(
        'Forgetful could not reopen this conversation (session/load: Internal error: No previous sessions found for this project). Everything'
      )
      // Said once, where the way on is offered: no second banner.
      expect(await page.getByTestId('error-banner').count()).toBe(0)
      // Nothing of what was shown went away.
      expect(await page.getByTestId('entry-user').allTextContents()).toEqual(
        expect.arrayContaining([expect.stringContaining('Plan the release'), expect.stringContaining('Now the changelog')])
      )
      await screenshot(page, `e2e-reopen-failed-${scheme}`)

      await page.getByTestId('continue-in-new').click()
      await page.getByTestId('entry-notice').filter({ hasText: 'Continued from' }).waitFor()
      await page.getByTestId('composer-input').fill('And the announcement')
      await page.getByTestId('send').click()
      await page.getByTestId('entry-assistant').filter({ hasText: 'And the announcement' }).waitFor()
      // The user's bubble says what they typed; the agent was given the earlier conversation with it.
      const bubbles = await page.getByTestId('entry-user').allTextContents()
      expect(bubbles.at(-1)?.split('\n')[0]?.trim()).toBe('And the announcement')
      expect(bubbles.join('\n')).not.toContain('[Switchboard]')
      expect(await page.getByTestId('entry-assistant').last().textContent()).toContain('earlier conversation')
      await screenshot(page, `e2e-reopen-continued-${scheme}`)
      expect(problems).toEqual([])
      await page.context().close()
      await app.stop()
    }
  }, 240_000)

  it('a turn cancelled during its permission shows the tool call Cancelled; a turn’s tokens show under it; a key sign-in asks for the key', async () => {
    const running = await app.start(dataDir)
    const project = await app.host.request('projects.add', { cwd: projectDir })
    const agent = await app.host.request(
      'agents.add',
      scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_TURN_USAGE: '1', SCRIPTED_AGENT_LEAVE_PENDING: '1' }, 'Counter')
    )
    const locked = await app.host.request(
      'agents.add',
      scriptedAgent(join(root, 'locked-state'), { SCRIPTED_AGENT_AUTH: '1', SCRIPTED_AGENT_KEY_META: '1' }, 'Keyed')
    )
    for (const scheme of ['light', 'dark'] as const) {
      const session = await app.host.request('sessions.new', { projectId: project.id, agentId: agent.id })
      await app.host.request('sessions.rename', { id: session.id, title: `Cancelled in ${scheme}` })
      const { page, problems } = await newPage(running.url, scheme)
      await page
        .getByTestId('session-item')
        .filter({ hasText: `Cancelled in ${scheme}` })
        .click()
      await page.getByTestId('composer-input').fill('/permission')
      await page.getByTestId('send').click()
      await page.getByTestId('permission').waitFor()
      await page.getByTestId('cancel').click()
      await page.getByTestId('entry-stop').filter({ hasText: 'cancelled' }).waitFor({ timeout: 90_000 })
      expect(await page.getByTestId('tool-call-status').last().textContent()).toContain('Cancelled')
      expect(await page.getByTestId('turn-usage').last().textContent()).toMatch(/^1(\.0)?K in · 250 out · 800 cached tokens$/)
      await screenshot(page, `e2e-cancelled-tool-${scheme}`)
      expect(problems).toEqual([])
      await page.context().close()
    }

    // The agent that wants an API key: its sign-in asks for the key, and the session starts once it is given.
    const pages = await Promise.all((['light', 'dark'] as const).map((scheme) => newPage(running.url, scheme)))
    for (const [i, { page }] of pages.entries()) {
      await chooseAgent(page.getByTestId('project').first(), locked.id)
      await page.getByTestId('new-session').click()
      await page.getByTestId('sign-in-key-pasted-key').waitFor()
      await screenshot(page, `e2e-sign-in-key-${i === 0 ? 'light' : 'dark'}`)
    }
    const { page, problems } = pages[1]!
    await page.getByTestId('sign-in-key-pasted-key').fill('sekret')
    await page.getByTestId('sign-in-pasted-key').click()
    await expect.poll(async () => (await app.host.request('sessions.list', {})).filter((s) => s.agentId === locked.id).length).toBe(1)
    expect(problems).toEqual([])
    expect(pages[0]!.problems).toEqual([])
  }, 240_000)
})
