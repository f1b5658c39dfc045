import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AxeResults } from 'axe-core'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { gitIn, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, typeConsoleCode, watchConsole } from './browser'

/**
 * A race in the browser (issue 39, point 3): "Run on several agents…" from the new-session control, by keyboard;
 * the racers side by side in panes; the comparison from a racer's header, with the one that could not start, the
 * project's check command set (confirmed with the console's code), run on all and its output read; keeping one and
 * removing the others; light and dark.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer
const PROMPT = 'Make the cart total include tax'

async function scripted(name: string, script: string, env: Record<string, string> = {}): Promise<string> {
  const scripts = join(root, `${name}.json`)
  await writeFile(scripts, JSON.stringify({ [PROMPT]: script }))
  const definition = scriptedAgent(join(root, `${name}-state`), { SCRIPTED_AGENT_SCRIPTS: scripts, SCRIPTED_AGENT_TURN_USAGE: '1', ...env }, name)
  return (await host.request('agents.add', definition)).id
}

beforeAll(async () => {
  root = await tempDir('e2e-race')
  const shop = join(root, 'shop')
  await mkdir(shop)
  gitIn(shop, 'init', '--quiet', '-b', 'main')
  gitIn(shop, 'config', 'user.name', 'Test User')
  gitIn(shop, 'config', 'user.email', 'test@example.com')
  await writeFile(join(shop, 'cart.js'), 'export const total = (items) => items.reduce((a, i) => a + i.price, 0)\n')
  gitIn(shop, 'add', '-A')
  gitIn(shop, 'commit', '--quiet', '-m', 'start')
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  await resetWindowSettings(host)
  await scripted(
    'Claude (scripted)',
    '/say Tax is added in total().\n/disk cart.js export const TAX = 0.2\\nexport const total = (items) => items.reduce((a, i) => a + i.price, 0) * (1 + TAX)\\n\n/disk cart.test.js // tax\\n\n/cost 0.31 USD'
  )
  await scripted('Codex (scripted)', '/say Done.\n/disk cart.js export const total = (items) => 0\\n\n/cost 0.12 USD')
  await scripted('Gemini (scripted)', '/say never', { SCRIPTED_AGENT_NEW: 'fail' })
  await host.request('projects.add', { cwd: shop, name: 'shop' })
  await mkdir(join(root, 'notes'))
  await host.request('projects.add', { cwd: join(root, 'notes'), name: 'notes' })
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

/** axe-core's serious and critical violations in a part of the page as it is (contrast below WCAG AA among them), one line each. */
async function accessibilityProblems(page: Page, part: string): Promise<string[]> {
  if (!(await page.evaluate('typeof axe !== "undefined"')))
    await page.evaluate(await readFile(createRequire(import.meta.url).resolve('axe-core'), 'utf8'))
  const results = (await page.evaluate(`axe.run(document.querySelector('[data-testid=${part}]'), { resultTypes: ["violations"] })`)) as AxeResults
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')}: ${n.failureSummary ?? v.help}`))
}

async function activeTestId(page: Page): Promise<string | null> {
  return page.evaluate('document.activeElement && document.activeElement.getAttribute("data-testid")') as Promise<string | null>
}

describe('a race in the window', () => {
  it('starts from the new-session control by keyboard, opens side by side, compares, checks and keeps one', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: 'light' })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    const project = page.getByTestId('project').filter({ hasText: 'shop' })
    await project.hover()

    // The menu by keyboard: ↓ opens it, ↓ walks to "Run on several agents…", Enter opens the dialog.
    await project.getByTestId('new-session-menu').focus()
    await page.keyboard.press('ArrowDown')
    await page.getByTestId('new-session-options').waitFor()
    for (let i = 0; i < 12 && (await activeTestId(page)) !== 'new-session-race'; i++) await page.keyboard.press('ArrowDown')
    expect(await activeTestId(page)).toBe('new-session-race')
    await page.keyboard.press('Enter')
    const dialog = page.getByTestId('race-dialog')
    await dialog.waitFor()
    // The focus starts on the first choice; Space ticks, Tab goes on.
    await expect.poll(() => activeTestId(page)).toBe('race-choice')
    await page.keyboard.press('Space')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Space')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Space')
    await page.keyboard.press('Tab')
    expect(await activeTestId(page)).toBe('race-prompt')
    // Ctrl+Enter without a prompt says what is missing and starts nothing.
    await page.keyboard.press('Control+Enter')
    expect(await dialog.getByTestId('race-error').textContent()).toBe('Type the prompt every agent gets.')
    await page.keyboard.type(PROMPT)
    expect(await dialog.getByTestId('race-start').textContent()).toContain('Start 3 sessions')
    console.log(`screenshot: ${await screenshot(page, 'e2e-race-dialog-light')}`)
    expect(await accessibilityProblems(page, 'race-dialog')).toEqual([])
    await page.keyboard.press('Control+Enter')
    await dialog.waitFor({ state: 'hidden' })

    // Two started, side by side; the third could not, and the toast says where to read why.
    const panes = page.getByTestId('pane')
    await expect.poll(() => panes.count()).toBe(2)
    await expect.poll(async () => (await page.getByTestId('session-title').allTextContents()).length).toBe(2)
    expect(await page.getByTestId('toast').first().textContent()).toContain('Gemini (scripted) could not start')
    const raceId = (await host.request('races.list', {}))[0]?.id ?? ''
    await waitUntil('both racers done', async () => {
      const race = (await host.request('races.list', {}))[0]
      return race?.racers.filter((r) => r.state === 'done').length === 2
    })
    await expect.poll(async () => (await page.getByTestId('session-race').count()) >= 2).toBe(true)
    console.log(`screenshot: ${await screenshot(page, 'e2e-race-panes-light')}`)

    // The comparison from a racer's header.
    await page.getByTestId('session-race').first().click()
    const racePage = page.getByTestId('race-page')
    await racePage.waitFor()
    const rows = racePage.getByTestId('race-row')
    await expect.poll(() => rows.count()).toBe(3)
    await expect.poll(() => rows.nth(0).getByTestId('race-changes').textContent()).toMatch(/2 files\s*\+3\s*−1/)
    expect(await rows.nth(0).getByTestId('race-cost').textContent()).toBe('$0.31')
    expect(await rows.nth(1).getByTestId('race-changes').textContent()).toMatch(/1 file\s*\+1\s*−1/)
    expect(await rows.nth(2).getByTestId('race-state').textContent()).toBe('Failed')
    expect(await rows.nth(2).getByTestId('race-why').textContent()).toMatch(
      /^Gemini \(scripted\) could not start a session: The workspace index could not be opened/
    )

    // The check command, confirmed with the console's code, then run on all: one passes, one fails.
    await racePage.getByTestId('race-check-command-input').fill('grep -q TAX cart.js && echo tax found')
    await racePage.getByTestId('race-check-command-save').click()
    await typeConsoleCode(page, server)
    await expect.poll(() => racePage.getByTestId('race-check-command-text').textContent()).toBe('grep -q TAX cart.js && echo tax found')
    await racePage.getByTestId('race-run-all').click()
    await expect.poll(() => rows.nth(0).getByTestId('race-check').textContent()).toMatch(/^Passed in \d+ s$/)
    await expect.poll(() => rows.nth(1).getByTestId('race-check').textContent()).toMatch(/^Failed in \d+ s: Exited with code 1$/)
    await rows.nth(0).getByTestId('race-output').click()
    await expect.poll(() => rows.nth(0).getByTestId('race-output-text').textContent()).toBe('tax found\n')
    console.log(`screenshot: ${await screenshot(page, 'e2e-race-compare-light')}`)
    expect(await accessibilityProblems(page, 'race-page')).toEqual([])

    // Another window, dark: the comparison from the sidebar, a racer's menu.
    const dark = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: 'dark' })
    const darkPage = await dark.newPage()
    const darkProblems = watchConsole(darkPage)
    await darkPage.goto(server.url)
    await expect.poll(async () => (await darkPage.getByTestId('session-race').count()) >= 2).toBe(true)
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-race-panes-dark')}`)
    const darkShop = darkPage.getByTestId('project').filter({ hasText: 'shop' })
    await darkShop.hover()
    await darkShop.getByTestId('new-session-menu').click()
    await darkPage.getByTestId('new-session-race').click()
    await darkPage.getByTestId('race-dialog').getByTestId('race-choice').nth(1).check()
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-race-dialog-dark')}`)
    expect(await accessibilityProblems(darkPage, 'race-dialog')).toEqual([])
    await darkPage.keyboard.press('Escape')
    await darkPage.getByTestId('race-dialog').waitFor({ state: 'hidden' })
    const racer = darkPage.getByTestId('session-item').filter({ hasText: PROMPT }).first()
    await racer.hover()
    await racer.getByTestId('session-menu').click()
    await darkPage.getByTestId('menu-race').click()
    await expect.poll(() => darkPage.getByTestId('race-row').nth(1).getByTestId('race-check').textContent()).toMatch(/^Failed/)
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-race-compare-dark')}`)
    expect(await accessibilityProblems(darkPage, 'race-page')).toEqual([])
    expect(darkProblems).toEqual([])
    await dark.close()

    // A check that hangs: its time counts, and Cancel ends it.
    await racePage.getByTestId('race-check-command-edit').click()
    await racePage.getByTestId('race-check-command-input').fill('echo waiting; sleep 600')
    await racePage.getByTestId('race-check-command-save').click()
    await typeConsoleCode(page, server)
    await expect.poll(() => racePage.getByTestId('race-check-command-text').textContent()).toBe('echo waiting; sleep 600')
    await rows.nth(1).getByTestId('race-run-check').click()
    await expect.poll(() => rows.nth(1).getByTestId('race-check').textContent()).toMatch(/^Running… \d+ s$/)
    await rows.nth(1).getByTestId('race-cancel-check').click()
    await expect.poll(() => rows.nth(1).getByTestId('race-check').textContent()).toMatch(/^Cancelled in \d+ s$/)

    // Keep the one that passed: merged; the others' worktrees go once confirmed.
    await rows.nth(0).getByTestId('race-keep').click()
    const removal = page.getByTestId('race-remove-dialog')
    await removal.waitFor()
    expect(await removal.textContent()).toContain('Codex (scripted)')
    console.log(`screenshot: ${await screenshot(page, 'e2e-race-remove-light')}`)
    await removal.getByTestId('race-remove-confirm').click()
    await removal.waitFor({ state: 'hidden' })
    await expect.poll(() => racePage.getByTestId('race-kept').textContent()).toMatch(/Kept Claude \(scripted\): merged into main/)
    await expect.poll(() => rows.nth(1).getByTestId('race-changes').textContent()).toBe('Its worktree and branch were removed')
    expect(gitIn(join(root, 'shop'), 'show', 'main:cart.js')).toContain('TAX')
    expect((await host.request('races.compare', { raceId })).race.kept?.into).toBe('main')

    // A project that is not a git repository: the dialog says a race needs one, and what the user typed stays.
    // (Esc leaves the comparison, as it leaves the other pages.)
    const notes = page.getByTestId('project').filter({ hasText: 'notes' })
    await racePage.getByTestId('race-run-all').focus()
    await page.keyboard.press('Escape')
    await racePage.waitFor({ state: 'detached' })
    await notes.hover()
    await notes.getByTestId('new-session-menu').click()
    await page.getByTestId('new-session-race').click()
    await dialog.waitFor()
    await dialog.getByTestId('race-not-git').waitFor()
    await dialog.getByTestId('race-choice').nth(0).check()
    await dialog.getByTestId('race-choice').nth(1).check()
    await dialog.getByTestId('race-prompt').fill('Tidy the notes')
    await dialog.getByTestId('race-start').click()
    await expect
      .poll(() => dialog.getByTestId('race-error').textContent())
      .toMatch(/^A race gives each agent its own worktree and branch, so notes must be a git repository/)
    expect(await dialog.getByTestId('race-prompt').inputValue()).toBe('Tidy the notes')
    console.log(`screenshot: ${await screenshot(page, 'e2e-race-not-git-light')}`)
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    expect(problems).toEqual([])
    await context.close()
  })
})
