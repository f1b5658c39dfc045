import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Locator, Page } from 'playwright-core'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { scriptedAgentCommand } from '../agent/spawn'
import { launchBrowser, RestartableHost, screenshot, watchConsole } from './browser'

/**
 * Pane headers that keep their title: four panes side by side, each with a
 * long title and a status, still show each title (and its project) readably,
 * the status as a compact badge and the actions in the pane's menu. A session
 * at rest after a restart looks at rest: no "Not connected", no call to
 * action, no "exited" for an agent Switchboard stopped; sending starts the
 * agent, said quietly while it starts. An agent that exits on its own says
 * so with what it wrote on stderr. Turns end in words.
 */

let root: string
let dataDir: string
let projectDir: string
let stateDir: string
let browser: Browser
const app = new RestartableHost()

const TITLES = [
  'Tidy the release notes for the autumn version of the billing service',
  'Migrate the billing tables to the new schema and backfill the ledger',
  'Find out why the nightly export job times out on large customers',
  'Review the pull request that moves the search index to its own host'
]

beforeAll(async () => {
  browser = await launchBrowser()
})
afterAll(async () => {
  await browser?.close()
})
beforeEach(async () => {
  root = await tempDir('e2e-pane-headers')
  dataDir = join(root, 'data')
  projectDir = join(root, 'shop')
  stateDir = join(root, 'agent-state')
  await mkdir(projectDir, { recursive: true })
})
afterEach(async () => {
  await app.stop()
  await removeDir(root)
})

async function newPage(url: string, width: number, colorScheme: 'light' | 'dark' = 'light'): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 860 }, colorScheme })
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(url)
  return { page, problems }
}

function pane(page: Page, index: number): Locator {
  return page.getByTestId('pane').nth(index)
}

/**
 * How many characters of an element's text are on screen, not cut by its
 * ellipsis: those whose right edge is left of where the ellipsis begins.
 */
function visibleCharacters(element: Locator): Promise<number> {
  // Written as a function's text: the page runs it, and this file is not typed for the DOM.
  const count = new Function(
    'el',
    `
    const box = el.getBoundingClientRect()
    const cut = el.scrollWidth > el.clientWidth
    // The ellipsis is drawn in the element's font at its right edge.
    const probe = document.createElement('span')
    probe.style.font = getComputedStyle(el).font
    probe.textContent = '…'
    document.body.append(probe)
    const ellipsis = probe.getBoundingClientRect().width
    probe.remove()
    const limit = box.left + el.clientWidth - (cut ? ellipsis : 0)
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT)
    const range = document.createRange()
    let shown = 0
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? ''
      for (let i = 0; i < text.length; i++) {
        range.setStart(node, i)
        range.setEnd(node, i + 1)
        if (range.getBoundingClientRect().right > limit + 0.5) return shown
        shown++
      }
    }
    return shown
  `
  ) as (el: unknown) => number
  return element.evaluate(count)
}

/** Four sessions of the scripted agent with long titles, made before the window opens (the agent then stopped, as after a restart). */
async function fourSessions(): Promise<string[]> {
  const project = await app.host.request('projects.add', { cwd: projectDir })
  // With modes, a model and options: a short pane has settings to put behind its button.
  const agent = await app.host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSION_STATE: '1' }))
  const ids: string[] = []
  for (const title of TITLES) {
    const record = await app.host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await app.host.request('sessions.prompt', { id: record.id, text: 'Hello' })
    await app.host.request('sessions.rename', { id: record.id, title })
    ids.push(record.id)
  }
  return ids
}

/** Opens the sessions in panes, one pane each, split from the last. */
async function openInPanes(page: Page, ids: string[]): Promise<void> {
  for (const [i, id] of ids.entries()) {
    if (i > 0) {
      await pane(page, i - 1)
        .getByTestId('pane-split')
        .click()
      await expect.poll(() => page.getByTestId('pane').count()).toBe(i + 1)
    }
    await page.locator(`[data-testid=session-item][data-session-id="${id}"]`).click()
    await expect.poll(() => pane(page, i).getByTestId('session-title').textContent()).toBe(TITLES[i])
  }
}

describe('pane headers', () => {
  it('four panes at 1280 wide keep each title readable (≥ 12 characters, the whole in a tooltip), the status a compact badge', async () => {
    const running = await app.start(dataDir)
    const ids = await fourSessions()
    // Each pane in a state of its own: idle (agent stopped), working, waiting for a permission, failed.
    await app.host.request('agents.restart', { agentId: 'scripted' })
    const gate = join(root, 'gate')
    const turns = [
      app.host.request('sessions.prompt', { id: ids[1], text: `/stream 2\n/await ${gate}` }),
      app.host.request('sessions.prompt', { id: ids[2], text: '/permission' }),
      app.host.request('sessions.prompt', { id: ids[3], text: '/fail The model is overloaded' })
    ].map((turn) => turn.catch(() => undefined))

    for (const scheme of ['light', 'dark'] as const) {
      const { page, problems } = await newPage(running.url, 1280, scheme)
      await openInPanes(page, ids)
      await expect
        .poll(() => page.getByTestId('session-status').evaluateAll((els) => els.map((el) => el.getAttribute('data-kind'))))
        .toEqual(['idle', 'running', 'waiting', 'error'])
      for (let i = 0; i < 4; i++) {
        const title = pane(page, i).getByTestId('session-title')
        expect(await visibleCharacters(title), `pane ${i + 1}'s title`).toBeGreaterThanOrEqual(12)
        expect(await title.getAttribute('title')).toBe(TITLES[i])
        // The project's name whole, not "h." beside a status.
        const project = pane(page, i).getByTestId('session-project')
        expect(await project.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true)
        expect(await project.textContent()).toBe('shop')
      }
      // The badges in their short words; the whole in their tooltip.
      expect(await page.getByTestId('session-status').allTextContents()).toEqual(['', 'Working…', 'Needs you', 'Error'])
      for (let i = 1; i < 4; i++) {
        const badge = pane(page, i).getByTestId('session-status')
        expect(await visibleCharacters(badge), `pane ${i + 1}'s badge`).toBe((await badge.textContent())?.length)
      }
      expect(await pane(page, 2).getByTestId('session-status').getAttribute('title')).toBe('Waiting for you')
      // The actions are in the pane's menu: the failed session's Continue among them.
      await pane(page, 3).getByTestId('session-more').click()
      expect(await page.getByTestId('action-menu').getByRole('menuitem').allTextContents()).toEqual([
        'Continue',
        'Changes',
        'Fork',
        'Continue with…',
        'Delete…'
      ])
      await page.keyboard.press('Escape')
      expect(await page.getByText('Not connected').count()).toBe(0)
      // Half the window high, a pane keeps the conversation's room: its settings lines wait behind Settings, and the
      // permission card is whole above the composer, the thread still in sight above it.
      expect(await page.getByTestId('mode-select').filter({ visible: true }).count()).toBe(0)
      expect(await page.getByTestId('settings-toggle').filter({ visible: true }).count()).toBe(4)
      const asking = pane(page, 2)
      const [card, composer, thread] = await Promise.all(
        [asking.getByTestId('permission'), asking.getByTestId('composer-input'), asking.getByTestId('thread')].map((l) => l.boundingBox())
      )
      expect(
        card && composer && card.y + card.height <= composer.y,
        `the card ${JSON.stringify(card)}, the composer ${JSON.stringify(composer)}`
      ).toBe(true)
      expect(await asking.getByTestId('permission').evaluate((el) => el.scrollHeight <= el.clientHeight + 1)).toBe(true)
      expect(thread?.height ?? 0, 'the thread above the card').toBeGreaterThanOrEqual(60)
      console.log(`screenshot: ${await screenshot(page, `e2e-pane-headers-4-1280-${scheme}`)}`)
      // Settings shows them in that pane alone, and says so.
      await pane(page, 3).getByTestId('settings-toggle').click()
      expect(await pane(page, 3).getByTestId('settings-toggle').getAttribute('aria-expanded')).toBe('true')
      expect(await pane(page, 3).getByTestId('mode-select').isVisible()).toBe(true)
      expect(await pane(page, 1).getByTestId('mode-select').isVisible()).toBe(false)
      console.log(`screenshot: ${await screenshot(page, `e2e-pane-headers-4-settings-${scheme}`)}`)
      await pane(page, 3).getByTestId('settings-toggle').click()
      expect(await pane(page, 3).getByTestId('mode-select').isVisible()).toBe(false)

      // Wider, the same four: the badges in full words, the actions beside the title.
      await page.setViewportSize({ width: 1920, height: 1000 })
      await expect.poll(() => page.getByTestId('session-status').allTextContents()).toEqual(['Idle', 'Working…', 'Waiting for you', 'Error'])
      // At a quarter of a wide screen the actions stay in the menu: the titles have the room.
      expect(await pane(page, 0).getByTestId('fork-session').count()).toBe(0)
      for (let i = 0; i < 4; i++) expect(await visibleCharacters(pane(page, i).getByTestId('session-title'))).toBeGreaterThanOrEqual(30)
      console.log(`screenshot: ${await screenshot(page, `e2e-pane-headers-4-1920-${scheme}`)}`)

      // Two panes, then one, at 1280.
      await page.setViewportSize({ width: 1280, height: 860 })
      // Three in a row, the narrowest panes there are.
      await pane(page, 3).getByTestId('pane-close').click()
      await expect.poll(() => page.getByTestId('pane').count()).toBe(3)
      console.log(`screenshot: ${await screenshot(page, `e2e-pane-headers-3-1280-${scheme}`)}`)
      // The badges are their coloured dots (their words in tooltip and label), not words cut short.
      expect(await page.getByTestId('session-status').allTextContents()).toEqual(['', '', ''])
      expect(await page.getByTestId('session-status').evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')))).toEqual([
        'Idle',
        'Working…',
        'Waiting for you'
      ])
      for (let i = 0; i < 3; i++) expect(await visibleCharacters(pane(page, i).getByTestId('session-title'))).toBeGreaterThanOrEqual(12)
      // The whole window high, each pane shows its settings at once: no Settings button.
      expect(await page.getByTestId('settings-toggle').filter({ visible: true }).count()).toBe(0)
      expect(await pane(page, 1).getByTestId('mode-select').isVisible()).toBe(true)
      await pane(page, 2).getByTestId('pane-close').click()
      await expect.poll(() => page.getByTestId('pane').count()).toBe(2)
      for (let i = 0; i < 2; i++) expect(await visibleCharacters(pane(page, i).getByTestId('session-title'))).toBeGreaterThanOrEqual(12)
      console.log(`screenshot: ${await screenshot(page, `e2e-pane-headers-2-1280-${scheme}`)}`)
      await pane(page, 1).getByTestId('pane-close').click()
      await expect.poll(() => page.getByTestId('pane').count()).toBe(1)
      expect(await page.getByTestId('session-title').textContent()).toBe(TITLES[0])
      // One pane has the room for its actions beside the title; an idle session's menu starts its agent, or hands it to another.
      // The header learns its new width from a ResizeObserver, a frame or more after the pane closed: wait for it.
      await page.getByTestId('fork-session').waitFor()
      expect(await page.getByTestId('continue-session').count()).toBe(0)
      await page.getByTestId('session-more').click()
      expect(await page.getByTestId('action-menu').getByRole('menuitem').allTextContents()).toEqual(['Start Scripted now', 'Continue with…'])
      await page.keyboard.press('Escape')
      console.log(`screenshot: ${await screenshot(page, `e2e-pane-headers-1-1280-${scheme}`)}`)
      expect(problems).toEqual([])
      await page.context().close()
    }
    // The working turn ends; the one waiting for a permission ends with the Host.
    await writeFile(gate, '')
    await turns[0]
  })
})

describe('a session at rest, and an agent that stops', () => {
  it('after a restart an idle session looks idle and nothing says "exited"; sending starts the agent, said while it starts; an agent that exits on its own says so with its stderr', async () => {
    await app.start(dataDir)
    const project = await app.host.request('projects.add', { cwd: projectDir })
    // The agent waits at its start until the gate file is there: the test sees it starting, with no timing to guess.
    const gate = join(root, 'gate')
    await writeFile(gate, '')
    const { command, args } = scriptedAgentCommand()
    const agent = await app.host.request('agents.add', {
      name: 'Scripted',
      transport: {
        kind: 'process',
        command: '/bin/sh',
        args: ['-c', `while [ ! -f '${gate}' ]; do sleep 0.05; done; exec "$0" "$@"`, command, ...args],
        env: { SCRIPTED_AGENT_STATE_DIR: stateDir }
      }
    })
    const record = await app.host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    await app.host.request('sessions.rename', { id: record.id, title: TITLES[0] })
    // Quitting mid-turn: Switchboard stops the agent.
    const turn = app.host.request('sessions.prompt', { id: record.id, text: '/stream 2\n/sleep 60000' }).catch((error: Error) => error.message)
    await expect.poll(async () => (await app.host.request('sessions.states', {})).find((s) => s.id === record.id)?.status).toBe('running')
    await app.stop()
    expect(await turn).toBe('The turn was interrupted: Switchboard stopped Scripted')

    const running = await app.start(dataDir)
    for (const scheme of ['light', 'dark'] as const) {
      const { page, problems } = await newPage(running.url, 1280, scheme)
      await page.locator(`[data-testid=session-item][data-session-id="${record.id}"]`).click()
      await expect.poll(() => page.getByTestId('session-status').textContent()).toBe('Idle')
      expect(await page.getByText('Not connected').count()).toBe(0)
      expect(await page.getByTestId('continue-session').count()).toBe(0)
      expect(await page.getByTestId('entry-error').count()).toBe(0)
      expect(await page.getByTestId('agent-notice').count()).toBe(0)
      expect(await page.getByTestId('thread').textContent()).not.toMatch(/exited/)
      expect(await page.getByTestId('entry-stop').last().textContent()).toBe('Interrupted: Switchboard stopped the agent')
      console.log(`screenshot: ${await screenshot(page, `e2e-idle-after-restart-${scheme}`)}`)
      await page.context().close()
      expect(problems).toEqual([])
    }

    const { page, problems } = await newPage(running.url, 1280)
    await page.locator(`[data-testid=session-item][data-session-id="${record.id}"]`).click()
    await rm(gate)
    await page.getByTestId('composer-input').fill('Hello again')
    await page.getByTestId('send').click()
    await expect.poll(() => page.getByTestId('session-status').textContent()).toBe('Starting Scripted…')
    console.log(`screenshot: ${await screenshot(page, 'e2e-idle-starting')}`)
    await writeFile(gate, '')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('You said: Hello again')
    await expect.poll(() => page.getByTestId('entry-stop').last().textContent()).toBe('Finished')

    // On its own, the agent exits: that is said, with what it wrote on stderr.
    await page.getByTestId('composer-input').fill('/stderr scripted-agent: the quota for this month is used up\n/exit 0')
    await page.getByTestId('send').click()
    const error = page.getByTestId('entry-error')
    await error.waitFor()
    expect(await error.textContent()).toMatch(/Agent 'Scripted' exited with code 0; stderr: .*the quota for this month is used up/s)
    // Said once: the notice above the thread offers the agent's log without repeating it.
    await expect.poll(() => page.getByTestId('agent-notice').textContent()).toMatch(/^\s*Scripted exited\.\s*Open its log\s*$/)
    await expect.poll(() => page.getByTestId('session-status').textContent()).toBe('Agent exited')
    console.log(`screenshot: ${await screenshot(page, 'e2e-agent-exited-on-its-own')}`)
    expect(problems).toEqual([])
    await page.context().close()
  })
})
