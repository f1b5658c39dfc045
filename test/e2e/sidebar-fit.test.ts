import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Locator, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, typeConsoleCode, watchConsole } from './browser'

/**
 * A sidebar that fits real use: its width set by dragging or the keyboard and
 * kept; a project's sessions right under its row, its other tools in its menu
 * (importing, worktrees, extra folders); rows that hold still under the
 * pointer and the focus; a worktree session's title before its branch.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer
let agentId: string

beforeAll(async () => {
  root = await tempDir('e2e-sidebar-fit')
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  const stateDir = join(root, 'agent-state')
  await mkdir(stateDir, { recursive: true })
  agentId = (await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: 'list' }, 'Scripted'))).id
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

beforeEach(async () => {
  await resetWindowSettings(host)
})

async function open(width = 1280, height = 860): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width, height } })
  const page = await context.newPage()
  page.setDefaultTimeout(15_000)
  const problems = watchConsole(page)
  await page.goto(server.url)
  return { page, problems, close: () => context.close() }
}

async function newProject(name: string): Promise<string> {
  const cwd = join(root, name)
  await mkdir(cwd, { recursive: true })
  return (await host.request('projects.add', { cwd })).id
}

async function newSession(projectId: string, title: string): Promise<string> {
  const record = await host.request('sessions.new', { projectId, agentId })
  await host.request('sessions.rename', { id: record.id, title })
  return record.id
}

function projectRows(page: Page, projectId: string): Locator {
  return page.locator(`[data-project-id="${projectId}"]`)
}

async function sidebarWidth(page: Page): Promise<number> {
  return Math.round((await page.locator('aside.sidebar').boundingBox())!.width)
}

/** Returns once the window has heard every event the Host sent before now: they come in order, and the project renamed now is the last. */
let barriers = 0
async function barrier(page: Page, projectId: string): Promise<void> {
  const name = `steady ${++barriers}`
  await host.request('projects.rename', { projectId, name })
  await projectRows(page, projectId).getByTestId('project-name').getByText(name, { exact: true }).waitFor()
}

async function titles(page: Page, projectId: string): Promise<string[]> {
  return projectRows(page, projectId).getByTestId('session-item-title').allTextContents()
}

describe('the sidebar fits real use', () => {
  it('is made wider and narrower by dragging and by the keyboard, and keeps its width', async () => {
    const { page, problems, close } = await open()
    const separator = page.getByRole('separator', { name: 'Width of the sidebar' })
    await separator.waitFor()
    expect(await sidebarWidth(page)).toBe(300)
    expect(await separator.getAttribute('aria-valuenow')).toBe('300')

    // Dragged with the mouse.
    const box = (await separator.boundingBox())!
    const y = box.y + box.height / 2
    await page.mouse.move(box.x + box.width / 2, y)
    await page.mouse.down()
    await page.mouse.move(box.x + box.width / 2 + 120, y, { steps: 6 })
    await page.mouse.up()
    await expect.poll(() => sidebarWidth(page)).toBe(420)
    expect(await separator.getAttribute('aria-valuenow')).toBe('420')
    // Never past its limits, however far it is dragged.
    await page.mouse.move(box.x + box.width / 2 + 120, y)
    await page.mouse.down()
    await page.mouse.move(1200, y, { steps: 4 })
    await page.mouse.up()
    await expect.poll(() => sidebarWidth(page)).toBe(560)

    // The keyboard: ←/→ in steps, Shift for bigger ones, Home and End for the limits, Enter for the first width.
    await separator.focus()
    await page.keyboard.press('Home')
    await expect.poll(() => sidebarWidth(page)).toBe(240)
    await page.emulateMedia({ colorScheme: 'dark' })
    console.log(`screenshot: ${await screenshot(page, 'e2e-sidebar-narrowest-dark')}`)
    await page.emulateMedia({ colorScheme: 'light' })
    await page.keyboard.press('ArrowRight')
    await expect.poll(() => sidebarWidth(page)).toBe(256)
    await page.keyboard.press('Shift+ArrowRight')
    await expect.poll(() => sidebarWidth(page)).toBe(320)
    await page.keyboard.press('ArrowLeft')
    await expect.poll(() => separator.getAttribute('aria-valuenow')).toBe('304')
    console.log(`screenshot: ${await screenshot(page, 'e2e-sidebar-resize-focus-light')}`)
    await page.keyboard.press('End')
    await expect.poll(() => sidebarWidth(page)).toBe(560)
    // A double click puts the first width back.
    await separator.dblclick()
    await expect.poll(() => sidebarWidth(page)).toBe(300)

    // Kept: a reload (a new window) starts at the width left.
    await separator.focus()
    await page.keyboard.press('Shift+ArrowRight')
    await expect.poll(() => sidebarWidth(page)).toBe(364)
    await expect.poll(async () => (await host.request('settings.get', {})).settings.sidebarWidth).toBe(364)
    await page.reload()
    await separator.waitFor()
    await expect.poll(() => sidebarWidth(page)).toBe(364)
    expect(problems).toEqual([])
    await close()
  })

  it("puts a project's sessions right under it, and its other tools in its menu", async () => {
    const projectId = await newProject('shop')
    await newSession(projectId, 'Fix the basket total')
    // A conversation the agent has and this window does not: importing brings it.
    await writeFile(
      join(root, 'agent-state', 'sess-from-terminal.meta.json'),
      JSON.stringify({ cwd: join(root, 'shop'), title: 'Asked in the terminal', updatedAt: new Date(0).toISOString() })
    )
    await writeFile(join(root, 'agent-state', 'sess-from-terminal.json'), '[]')
    const { page, problems, close } = await open()
    const rows = projectRows(page, projectId)
    await rows.getByTestId('session-item').first().waitFor()

    // Nothing between the project's new-session controls and its first conversation but the agent's name.
    const controls = (await rows.getByTestId('new-session').boundingBox())!
    const first = (await rows.getByTestId('session-item').first().boundingBox())!
    expect(first.y - (controls.y + controls.height)).toBeLessThanOrEqual(40)
    expect(await rows.getByTestId('extra-folders').count()).toBe(0)
    console.log(`screenshot: ${await screenshot(page, 'e2e-sidebar-fit-light')}`)
    await page.emulateMedia({ colorScheme: 'dark' })
    console.log(`screenshot: ${await screenshot(page, 'e2e-sidebar-fit-dark')}`)
    await page.emulateMedia({ colorScheme: 'light' })

    const project = page.getByTestId('project').filter({ has: page.getByTestId('project-name').getByText('shop', { exact: true }) })
    const menu = async (choice: string): Promise<void> => {
      await project.hover()
      await project.getByTestId('project-menu').click()
      await page.getByTestId(`menu-${choice}`).click()
    }

    // Import, from the menu.
    await project.hover()
    await project.getByTestId('project-menu').click()
    await expect.poll(() => page.getByTestId('menu-import').textContent()).toContain('Import sessions from Scripted')
    console.log(`screenshot: ${await screenshot(page, 'e2e-project-menu-light')}`)
    await page.getByTestId('menu-import').click()
    await expect.poll(() => project.getByTestId('import-note').textContent()).toBe('Imported 1 session.')
    await expect.poll(() => titles(page, projectId)).toEqual(['Fix the basket total', 'Asked in the terminal'])

    // Extra folders, from the menu: a panel under the row, the path typed, added; Esc closes it.
    const extra = join(root, 'shared-lib')
    await mkdir(extra, { recursive: true })
    await menu('folders')
    const panel = page.getByTestId('project-panel-folders')
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('data-testid')")).toBe('extra-folder-path')
    await page.keyboard.type(extra)
    await page.keyboard.press('Enter')
    await typeConsoleCode(page, server)
    await expect.poll(async () => (await host.request('projects.list', {})).find((p) => p.id === projectId)?.additionalDirectories).toEqual([extra])
    await expect.poll(() => panel.textContent()).toContain('Extra folders (1)')
    console.log(`screenshot: ${await screenshot(page, 'e2e-project-extra-folders-light')}`)
    await panel.getByTestId('extra-folder-path').focus()
    await page.keyboard.press('Escape')
    await expect.poll(() => panel.count()).toBe(0)
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('data-testid')")).toBe('project-head')

    // Worktrees: in a folder that is no git repository, the menu says why there are none.
    await project.hover()
    await project.getByTestId('project-menu').click()
    await expect.poll(() => page.getByTestId('menu-worktrees').getAttribute('title')).toBe('The folder is not a git repository')
    await page.keyboard.press('Escape')
    expect(problems).toEqual([])
    await close()
  })

  it("lists a worktree's sessions, title first and branch under it, from the project's menu", async () => {
    const repo = join(root, 'repo')
    await mkdir(repo, { recursive: true })
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' })
    git('init', '--quiet', '-b', 'main')
    git('config', 'user.name', 'E2E')
    git('config', 'user.email', 'e2e@example.com')
    await writeFile(join(repo, 'README.md'), 'hello\n')
    git('add', '-A')
    git('commit', '--quiet', '-m', 'start')
    const projectId = (await host.request('projects.add', { cwd: repo })).id
    const record = await host.request('sessions.new', { projectId, agentId, isolation: 'worktree', branch: 'feature/checkout-flow-rework' })
    await host.request('sessions.rename', { id: record.id, title: 'Checkout' })

    const { page, problems, close } = await open()
    const row = projectRows(page, projectId).getByTestId('session-item')
    await row.waitFor()
    // The title reads whole, and the branch is under it, not beside it.
    const title = row.getByTestId('session-item-title')
    expect(await title.textContent()).toBe('Checkout')
    expect(await title.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true)
    const titleBox = (await title.boundingBox())!
    const branchBox = (await row.getByTestId('session-item-branch').boundingBox())!
    expect(branchBox.y).toBeGreaterThanOrEqual(titleBox.y + titleBox.height - 1)
    expect(await row.getByTestId('session-item-branch').textContent()).toContain('feature/checkout-flow-rework')

    // The project's worktrees, from its menu: the session's title first, its branch under it.
    const project = page.getByTestId('project').filter({ has: page.getByTestId('project-name').getByText('repo', { exact: true }) })
    await project.hover()
    await project.getByTestId('project-menu').click()
    await expect.poll(() => page.getByTestId('menu-worktrees').textContent()).toContain('Worktrees (1)')
    await page.getByTestId('menu-worktrees').click()
    const tree = page.getByTestId('project-worktree')
    await expect.poll(() => tree.textContent()).toMatch(/^Checkout.*feature\/checkout-flow-rework/)
    console.log(`screenshot: ${await screenshot(page, 'e2e-project-worktrees-light')}`)
    await page.emulateMedia({ colorScheme: 'dark' })
    console.log(`screenshot: ${await screenshot(page, 'e2e-project-worktrees-dark')}`)
    await page.getByTestId('project-panel-close').click()
    await expect.poll(() => tree.count()).toBe(0)
    expect(problems).toEqual([])
    await close()
  })

  it('holds the rows still while the pointer or the focus is on the list; the new order comes once they leave', async () => {
    const projectId = await newProject('steady')
    // Named by the agent (a title the user gave would not change with a turn): each turn's `/title` renames it.
    const named = async (title: string): Promise<string> => {
      const { id } = await host.request('sessions.new', { projectId, agentId })
      await host.request('sessions.prompt', { id, text: `/title ${title}` })
      return id
    }
    const older = await named('Older conversation')
    await named('Newer conversation')
    const { page, problems, close } = await open()
    await expect.poll(() => titles(page, projectId)).toEqual(['Newer conversation', 'Older conversation'])

    // The pointer on the list: a new turn in the older conversation (it renames it) does not move it up.
    const list = (await page.getByTestId('project-list').boundingBox())!
    await page.mouse.move(list.x + list.width / 2, list.y + list.height - 20)
    await host.request('sessions.prompt', { id: older, text: '/title Older, just answered' })
    await expect.poll(() => titles(page, projectId)).toEqual(['Newer conversation', 'Older, just answered'])
    // Still so once everything the turn sent has arrived: the window hears of a project added after it.
    await barrier(page, projectId)
    expect(await titles(page, projectId)).toEqual(['Newer conversation', 'Older, just answered'])
    // The pointer leaves: the newest first again.
    await page.mouse.move(list.x + list.width + 300, list.y + 40)
    await expect.poll(() => titles(page, projectId)).toEqual(['Older, just answered', 'Newer conversation'])

    // The focus on a row holds it too, wherever the pointer is.
    await projectRows(page, projectId).getByTestId('session-open').first().focus()
    const newerId = await projectRows(page, projectId).getByTestId('session-item').nth(1).getAttribute('data-session-id')
    await host.request('sessions.prompt', { id: newerId!, text: '/title Newer, just answered' })
    await expect.poll(() => titles(page, projectId)).toEqual(['Older, just answered', 'Newer, just answered'])
    await barrier(page, projectId)
    expect(await titles(page, projectId)).toEqual(['Older, just answered', 'Newer, just answered'])
    await page.getByTestId('open-search').focus()
    await expect.poll(() => titles(page, projectId)).toEqual(['Newer, just answered', 'Older, just answered'])
    expect(problems).toEqual([])
    await close()
  })
})
