import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Locator, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { makeDataset } from '../../bench/data'
import { openHost, removeDir, scriptedAgent, tempDir } from '../helpers'
import {
  clipboardText,
  closeBrowserHost,
  openBrowserHost,
  resetWindowSettings,
  screenshot,
  serve,
  typeConsoleCode,
  watchConsole,
  chooseAgent
} from './browser'

/**
 * The sidebar by mouse and keyboard: projects added, renamed, reordered and
 * removed; conversations renamed, forked and deleted (by the agent where it
 * can, else only here), filtered by agent.
 */

let root: string
let dataDir: string
let browser: Browser
let host: Host
let server: RunningServer

beforeAll(async () => {
  root = await tempDir('e2e-sidebar')
  dataDir = join(root, 'data')
  for (const name of ['alpha', 'beta', 'gamma']) await mkdir(join(root, name), { recursive: true })
  ;({ browser, host, server } = await openBrowserHost(dataDir))
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

// Each test's new window starts as a first window, not with the panes and choices the previous test left.
beforeEach(async () => {
  await resetWindowSettings(host)
})

function project(page: Page, name: string): Locator {
  return page.getByTestId('project').filter({ has: page.getByTestId('project-name').getByText(name, { exact: true }) })
}

async function projectNames(page: Page): Promise<string[]> {
  return page.getByTestId('project-name').allTextContents()
}

function item(page: Page, title: string): Locator {
  return page.getByTestId('session-item').filter({ has: page.getByTestId('session-item-title').getByText(title, { exact: true }) })
}

async function menu(page: Page, target: Locator, testid: 'session-menu' | 'project-menu', choice: string): Promise<void> {
  await target.hover()
  await target.getByTestId(testid).first().click()
  await page.getByTestId(`menu-${choice}`).click()
}

/** Adds a project by its path, confirmed with the code serve printed, as the user does. */
async function addProject(page: Page, path: string): Promise<void> {
  await page.getByTestId('add-project-path').fill(path)
  await page.getByTestId('add-project-submit').click()
  await typeConsoleCode(page, server)
}

describe('the sidebar', () => {
  it('adds, renames, reorders and removes projects', async () => {
    // Tall enough for three projects (each with its "no sessions yet" hint) to be dragged onto one another without scrolling.
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
    const page = await context.newPage()
    page.setDefaultTimeout(15_000)
    const problems = watchConsole(page)
    await page.goto(server.url)
    for (const name of ['alpha', 'beta', 'gamma']) {
      await addProject(page, join(root, name))
      await project(page, name).waitFor()
    }
    expect(await projectNames(page)).toEqual(['alpha', 'beta', 'gamma'])

    // Rename from the menu; Esc leaves a rename without changing anything.
    await menu(page, project(page, 'beta'), 'project-menu', 'rename')
    await page.getByTestId('project-rename-input').fill('Beta service')
    await page.keyboard.press('Enter')
    await project(page, 'Beta service').waitFor()
    await project(page, 'gamma').getByTestId('project-head').focus()
    await page.keyboard.press('F2')
    await page.getByTestId('project-rename-input').fill('not this')
    await page.keyboard.press('Escape')
    expect(await projectNames(page)).toEqual(['alpha', 'Beta service', 'gamma'])

    // Move with the keyboard (the focus stays on the moved project), and from the menu.
    await project(page, 'gamma').getByTestId('project-head').focus()
    await page.keyboard.press('Alt+ArrowUp')
    await expect.poll(() => projectNames(page)).toEqual(['alpha', 'gamma', 'Beta service'])
    await page.keyboard.press('Alt+ArrowUp')
    await expect.poll(() => projectNames(page)).toEqual(['gamma', 'alpha', 'Beta service'])
    expect(await page.evaluate('document.activeElement?.textContent')).toContain('gamma')
    await menu(page, project(page, 'Beta service'), 'project-menu', 'up')
    await expect.poll(() => projectNames(page)).toEqual(['gamma', 'Beta service', 'alpha'])
    // And by dragging one onto the top of another.
    await project(page, 'alpha')
      .getByTestId('project-head')
      .dragTo(project(page, 'gamma').getByTestId('project-head'), {
        targetPosition: { x: 40, y: 2 }
      })
    await expect.poll(() => projectNames(page)).toEqual(['alpha', 'gamma', 'Beta service'])

    // The order and names are the Host's: a reload shows the same.
    await page.reload()
    await expect.poll(() => projectNames(page)).toEqual(['alpha', 'gamma', 'Beta service'])

    // Remove asks first, says what is kept, and the folder stays.
    await menu(page, project(page, 'gamma'), 'project-menu', 'remove')
    const dialog = page.getByTestId('confirm-dialog')
    await expect.poll(() => dialog.textContent()).toContain('is not touched')
    console.log(`screenshot: ${await screenshot(page, 'e2e-remove-project')}`)
    await page.getByTestId('confirm-remove-project').click()
    await expect.poll(() => projectNames(page)).toEqual(['alpha', 'Beta service'])
    await expect.poll(() => page.getByTestId('toast').last().textContent()).toContain('gamma was removed')
    expect(existsSync(join(root, 'gamma'))).toBe(true)
    expect(problems).toEqual([])
    await context.close()
  })

  it('renames, forks and deletes conversations, and filters them by agent', async () => {
    const stateDir = join(root, 'agent-state')
    const a = await host.request(
      'agents.add',
      scriptedAgent(stateDir, { SCRIPTED_AGENT_NAME: 'scripted-agent-a', SCRIPTED_AGENT_SESSIONS: 'fork,delete' }, 'Scripted agent A')
    )
    const b = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_NAME: 'scripted-agent-b' }, 'Scripted agent B'))
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    page.setDefaultTimeout(15_000)
    const problems = watchConsole(page)
    await page.goto(server.url)

    const alpha = project(page, 'alpha')
    await chooseAgent(alpha, a.id)
    await alpha.getByTestId('new-session').click()
    await page.getByTestId('composer-input').fill('Plan the release of version two')
    await page.getByTestId('send').click()
    // The first prompt names the conversation at once.
    await item(page, 'Plan the release of version two').waitFor()
    await expect.poll(() => page.getByTestId('entry-stop').count()).toBe(1)

    // F2 renames in place; the header follows.
    await item(page, 'Plan the release of version two').getByTestId('session-open').focus()
    await page.keyboard.press('F2')
    await page.getByTestId('session-rename-input').fill('Release checklist')
    await page.keyboard.press('Enter')
    await item(page, 'Release checklist').waitFor()
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('Release checklist')
    // An empty title is refused, saying why.
    await page.keyboard.press('F2')
    await page.getByTestId('session-rename-input').fill('   ')
    await page.keyboard.press('Enter')
    const renaming = page.getByTestId('session-item').filter({ has: page.getByTestId('session-rename-input') })
    await expect.poll(() => renaming.getByRole('alert').textContent()).toContain('cannot be empty')
    await page.keyboard.press('Escape')

    // Copy link: the conversation's switchboard:// link on the clipboard, and said.
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url).origin })
    const releaseId = await item(page, 'Release checklist').getAttribute('data-session-id')
    await item(page, 'Release checklist').hover()
    await item(page, 'Release checklist').getByTestId('session-menu').first().click()
    await page.getByTestId('menu-copy-link').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-session-menu-copy-link')}`)
    await page.emulateMedia({ colorScheme: 'dark' })
    console.log(`screenshot: ${await screenshot(page, 'e2e-session-menu-copy-link-dark')}`)
    await page.emulateMedia({ colorScheme: 'light' })
    await page.getByTestId('menu-copy-link').click()
    await expect.poll(() => page.getByTestId('toast').last().textContent()).toContain(`Copied switchboard://session/${releaseId}`)
    await expect.poll(() => clipboardText(page)).toBe(`switchboard://session/${releaseId}`)

    // Fork from the menu: the fork opens beside its parent, with the conversation so far.
    await menu(page, item(page, 'Release checklist'), 'session-menu', 'fork')
    await expect.poll(() => page.getByTestId('pane').count()).toBe(2)
    const forkPane = page.getByTestId('pane').nth(1)
    await expect.poll(() => forkPane.getByTestId('session-title').textContent()).toBe('Fork of Release checklist')
    expect(await forkPane.getByTestId('entry-user').first().textContent()).toContain('Plan the release of version two')
    await item(page, 'Fork of Release checklist').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-fork-beside')}`)

    // Delete where the agent supports session/delete: it says so; the transcript is kept unless asked.
    const forkId = await item(page, 'Fork of Release checklist').getAttribute('data-session-id')
    await item(page, 'Fork of Release checklist').getByTestId('session-open').focus()
    await page.keyboard.press('Delete')
    const dialog = page.getByTestId('confirm-dialog')
    await expect.poll(() => dialog.textContent()).toContain('Scripted agent A deletes its own copy too')
    expect(await page.getByTestId('delete-transcript').isChecked()).toBe(false)
    console.log(`screenshot: ${await screenshot(page, 'e2e-delete-dialog')}`)
    await page.getByTestId('confirm-delete').click()
    await expect.poll(() => item(page, 'Fork of Release checklist').count()).toBe(0)
    await expect.poll(() => page.getByTestId('toast').last().textContent()).toContain('deleted here and by the agent')
    expect(existsSync(join(dataDir, 'deleted-transcripts', `${forkId}.jsonl`))).toBe(true)
    // Its pane is left empty, saying how to fill it.
    await expect.poll(() => forkPane.getByTestId('empty-state').count()).toBe(1)

    // Another agent, without session/delete, in the second project.
    const beta = project(page, 'Beta service')
    await chooseAgent(beta, b.id)
    await beta.getByTestId('new-session').click()
    await expect.poll(() => forkPane.getByTestId('agent-status').textContent()).toContain('Scripted agent B')
    await forkPane.getByTestId('composer-input').fill('/title Scratch notes')
    await forkPane.getByTestId('send').click()
    await item(page, 'Scratch notes').waitFor()

    // The agent filter shows one agent's conversations.
    await page.getByTestId('agent-filter').selectOption(b.id)
    await expect.poll(() => page.getByTestId('session-item-title').allTextContents()).toEqual(['Scratch notes'])
    expect(await alpha.textContent()).toContain('No conversations with Scripted agent B here')
    console.log(`screenshot: ${await screenshot(page, 'e2e-agent-filter')}`)
    await page.getByTestId('agent-filter').selectOption('')
    await expect.poll(() => page.getByTestId('session-item').count()).toBe(2)

    // Deleting it keeps the agent's copy, and here the transcript goes too when asked.
    const scratchId = await item(page, 'Scratch notes').getAttribute('data-session-id')
    await menu(page, item(page, 'Scratch notes'), 'session-menu', 'delete')
    await expect.poll(() => dialog.textContent()).toContain('Scripted agent B keeps its own copy')
    await page.getByTestId('delete-transcript').check()
    await page.getByTestId('confirm-delete').click()
    await expect.poll(() => item(page, 'Scratch notes').count()).toBe(0)
    // The row goes with the Host's news of the change, which may come before its answer to the delete: the toast
    // says the answer came (and with it the transcript's removal).
    await expect.poll(() => page.getByTestId('toast').last().textContent()).toContain('removed from Switchboard; the agent keeps its own copy')
    expect(existsSync(join(dataDir, 'transcripts', `${scratchId}.jsonl`))).toBe(false)
    expect(existsSync(join(dataDir, 'deleted-transcripts', `${scratchId}.jsonl`))).toBe(false)

    // Esc cancels a delete.
    await item(page, 'Release checklist').getByTestId('session-open').focus()
    await page.keyboard.press('Delete')
    await dialog.waitFor()
    await page.keyboard.press('Escape')
    await expect.poll(() => dialog.isVisible()).toBe(false)
    expect(await item(page, 'Release checklist').count()).toBe(1)
    expect(problems).toEqual([])
    await context.close()
  })

  it("lists each agent's newest conversations of a busy project, the rest a click away", async () => {
    const busy = join(root, 'busy')
    await mkdir(busy, { recursive: true })
    const projectId = (await host.request('projects.add', { cwd: busy })).id
    const agentId = (await host.request('agents.add', scriptedAgent(join(root, 'busy-state'), {}, 'Busy agent'))).id
    for (let i = 1; i <= 12; i++) {
      const record = await host.request('sessions.new', { projectId, agentId })
      await host.request('sessions.rename', { id: record.id, title: `Busy ${String(i).padStart(2, '0')}` })
    }
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
    const page = await context.newPage()
    await page.goto(server.url)
    // The project's rows (the sidebar is one virtual list: its sessions are rows under the project's own).
    const rows = page.locator(`[data-project-id="${projectId}"]`)
    await rows.getByTestId('session-item').first().waitFor()
    // The newest eight, newest first; the four oldest behind the button. It is the last project: scrolled to the end
    // of the list (which grows a little as its rows are measured), all its rows are in the page.
    const toEnd = async (): Promise<number> => {
      await page.evaluate("document.querySelector('[data-testid=project-list]').scrollTop = 1e9")
      return rows.getByTestId('session-item').count()
    }
    await expect.poll(toEnd).toBe(8)
    expect(await rows.getByTestId('session-item').first().textContent()).toContain('Busy 12')
    expect(await rows.getByTestId('show-more-sessions').textContent()).toContain('Show 4 more of 12')
    await rows.getByTestId('show-more-sessions').click()
    await expect.poll(toEnd).toBe(12)
    expect(await rows.getByTestId('show-more-sessions').count()).toBe(0)
    expect(await rows.getByTestId('session-item').last().textContent()).toContain('Busy 01')
    await context.close()
  })

  it('lists two thousand conversations a page at a time: the keyboard across rows, "Show more", search and a restored pane', async () => {
    const many = await tempDir('e2e-sidebar-many')
    const { dataDir: manyData } = await makeDataset(many, { projects: 2, sessions: 2000, turnsPerSession: 1 })
    const manyHost = await openHost(manyData)
    const manyServer = await serve(manyHost)
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    try {
      const page = await context.newPage()
      page.setDefaultTimeout(15_000)
      const problems = watchConsole(page)
      const focusedRow = (): Promise<unknown> => page.evaluate("document.activeElement?.closest('[data-row-key]')?.dataset.rowKey")
      await page.goto(manyServer.url)
      const first = page.locator('[data-project-id="project-0"]').getByTestId('session-item')
      await first.first().waitFor()
      // project-0 has the even sessions, newest (1998) first; a page of eight, the rest counted.
      expect(await first.first().textContent()).toContain('Session 1998')
      const more = page.locator('[data-row-key="more:project-0:bench-agent"]').getByTestId('show-more-sessions')
      expect(await more.textContent()).toContain('Show 50 more of 1,000')
      // The page holds a screenful of rows, not the thousands.
      expect(await page.getByTestId('session-item').count()).toBeLessThan(40)

      // ↓ from the first session to "Show more", Enter loads the next page, and ↓ goes on into it and down the list.
      await first.first().getByTestId('session-open').focus()
      for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowDown')
      await expect.poll(focusedRow).toBe('more:project-0:bench-agent')
      await page.keyboard.press('Enter')
      // The focus stays on "Show more", which the list follows down past the new rows.
      await expect.poll(() => first.filter({ hasText: 'Session 1884:' }).isVisible()).toBe(true)
      await expect.poll(focusedRow).toBe('more:project-0:bench-agent')
      await page.keyboard.press('ArrowUp')
      await expect.poll(focusedRow).toBe('session:s-1884')
      // Up through rows that had left the page when the list scrolled down to "Show more".
      for (let i = 0; i < 30; i++) await page.keyboard.press('ArrowUp')
      await expect.poll(focusedRow).toBe('session:s-1944')
      console.log(`screenshot: ${await screenshot(page, 'e2e-sidebar-many-light')}`)
      await page.emulateMedia({ colorScheme: 'dark' })
      console.log(`screenshot: ${await screenshot(page, 'e2e-sidebar-many-dark')}`)
      await page.emulateMedia({ colorScheme: 'light' })
      // End: the last row of all; the first sessions have left the page, the focus did not get lost on the way.
      await page.keyboard.press('End')
      await expect.poll(focusedRow).toBe('more:project-1:bench-agent')
      await expect.poll(() => first.filter({ hasText: 'Session 1998:' }).count()).toBe(0)
      expect(await page.getByTestId('session-item').count()).toBeLessThan(60)

      // A conversation no page has loaded, found by search: it opens, and is listed in its place under its project.
      await page.keyboard.press(`${process.platform === 'darwin' ? 'Meta' : 'Control'}+K`)
      await page.getByTestId('search-input').fill('Session 1500:')
      await page.getByTestId('search-result').first().waitFor()
      await page.keyboard.press('Enter')
      await expect.poll(() => page.getByTestId('session-title').textContent()).toContain('Session 1500:')
      // Right after the page loaded above (58 rows down project-0): scrolled there, it is in the list.
      await page.evaluate("document.querySelector('[data-testid=project-list]').scrollTop = 1900")
      const pinned = page.locator('[data-row-key="session:s-1500"]')
      await pinned.waitFor()
      expect(await page.locator('[data-row-key="session:s-1884"] + [data-row-key="session:s-1500"] + [data-row-key^="more:project-0"]').count()).toBe(
        1
      )
      // Opened again from the kept panes after a reload: asked for by id.
      await page.reload()
      await expect.poll(() => page.getByTestId('session-title').textContent(), { timeout: 30_000 }).toContain('Session 1500:')
      expect(problems).toEqual([])
    } finally {
      await context.close()
      await manyServer.close()
      await manyHost.close()
      await removeDir(many)
    }
  })
})
