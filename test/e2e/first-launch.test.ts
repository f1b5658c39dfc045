import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Locator, Page } from 'playwright-core'
import { allowCommands, fold, removeDir, scriptedAgent, tempDir } from '../helpers'
import { launchBrowser, RestartableHost, screenshot, watchConsole, chooseAgent } from './browser'

/**
 * What a first launch showed wrong, as the user sees it in Chromium: a
 * settings change taken for activity, and the looks of tool output, search
 * results, terminals, selects, dialogs and menus, in light and dark.
 */

let root: string
let dataDir: string
let projectDir: string
let browser: Browser
const app = new RestartableHost()

beforeAll(async () => {
  root = await tempDir('e2e-first-launch')
  dataDir = join(root, 'data')
  projectDir = join(root, 'shop')
  await mkdir(projectDir, { recursive: true })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await app.stop()
  await removeDir(root)
})

function item(page: Page, title: string): Locator {
  return page.getByTestId('session-item').filter({ has: page.getByTestId('session-item-title').getByText(title, { exact: true }) })
}

const DAY = 24 * 3600 * 1000
/** Evaluated in the page (the e2e files are type-checked without the DOM library). */
type Styled = { ownerDocument: { defaultView: unknown } }
type Window = { getComputedStyle(el: unknown, pseudo?: string): Record<string, string> }
const BACKDROP = (el: Styled): string => (el.ownerDocument.defaultView as Window).getComputedStyle(el, '::backdrop').backgroundColor
const IS_OPEN = (el: unknown): boolean => (el as { open: boolean }).open
const TABLE_ANSWER = '\n\n| setting | value |\n| --- | --- |\n| port | `8080` |\n\nPorts: run `npm run serve` and open **the page**.'

describe('a first launch, in the browser', () => {
  it('takes a change of mode or option for a setting, not activity: the conversation keeps its place and its time', async () => {
    const first = await app.start(dataDir)
    void first
    const agent = await app.host.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_SESSION_STATE: '1' }))
    const projectId = (await app.host.request('projects.add', { cwd: projectDir })).id
    const older = await app.host.request('sessions.new', { projectId, agentId: agent.id })
    await app.host.request('sessions.prompt', { id: older.id, text: '/title Older conversation' })
    const newer = await app.host.request('sessions.new', { projectId, agentId: agent.id })
    await app.host.request('sessions.prompt', { id: newer.id, text: '/title Newer conversation' })
    // Their last turns two and one days ago.
    await app.stop()
    const db = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as { sessions: { id: string; updatedAt: string }[] }
    for (const session of db.sessions) {
      session.updatedAt = new Date(Date.now() - (session.id === older.id ? 2 : 1) * DAY).toISOString()
    }
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(db))
    const running = await app.start(dataDir)

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(running.url)
    const titles = () => page.getByTestId('session-item-title').allTextContents()
    await expect.poll(titles).toEqual(['Newer conversation', 'Older conversation'])
    expect(await item(page, 'Older conversation').locator('.time').textContent()).toBe('2d')

    await item(page, 'Older conversation').getByTestId('session-open').click()
    // Idle since the restart: the change itself reopens it.
    await expect.poll(() => page.getByTestId('mode-select').isEnabled()).toBe(true)
    await page.getByTestId('mode-select').selectOption('code')
    await expect.poll(async () => fold((await app.host.request('sessions.open', { id: older.id })).records).modes?.currentModeId).toBe('code')
    await expect.poll(() => page.getByTestId('config-verbose').isEnabled()).toBe(true)
    await page.getByTestId('config-verbose').click()
    await expect
      .poll(async () => {
        const thread = fold((await app.host.request('sessions.open', { id: older.id })).records)
        return [thread.modes?.currentModeId, thread.configOptions?.find((o) => o.id === 'verbose')?.currentValue]
      })
      .toEqual(['code', true])
    // Give any session.record event time to come: the row must not move nor say "now".
    await page.waitForTimeout(500)
    expect(await titles()).toEqual(['Newer conversation', 'Older conversation'])
    expect(await item(page, 'Older conversation').locator('.time').textContent()).toBe('2d')
    const [listed] = (await app.host.request('sessions.list', {})).filter((s) => s.id === older.id)
    expect(Date.now() - new Date(listed.updatedAt).getTime()).toBeGreaterThan(DAY)
    expect(problems).toEqual([])
    await context.close()
  }, 180_000)

  it('opens a terminal at its first lines', async () => {
    const running = app.started ? app.server : await app.start(dataDir)
    const agent = (await app.host.request('agents.list', {}))[0]
    const projectId = (await app.host.request('projects.list', {}))[0].id
    const session = await app.host.request('sessions.new', { projectId, agentId: agent.id })
    allowCommands(app.host)
    await app.host.request('sessions.prompt', { id: session.id, text: '/terminal seq 1 5\n/terminal seq 1 40' })

    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(running.url)
    await page.getByTestId('session-item').filter({ hasText: 'terminal' }).first().getByTestId('session-open').click()
    const terminals = page.getByTestId('terminal-output')
    await expect.poll(() => terminals.count()).toBe(2)
    const rows = (index: number) => terminals.nth(index).locator('.xterm-rows > div').allTextContents()
    await expect.poll(async () => (await rows(0)).map((r) => r.trim())).toEqual(['1', '2', '3', '4', '5'])
    await terminals.nth(1).scrollIntoViewIfNeeded()
    console.log(`screenshot: ${await screenshot(page, 'e2e-terminal-opens')}`)
    // Longer than the box: a finished command opens at its first lines, the rest a scroll away.
    await expect.poll(async () => (await rows(1)).map((r) => r.trim())).toEqual(Array.from({ length: 16 }, (_, i) => String(i + 1)))
    expect(problems).toEqual([])
    await context.close()
  }, 180_000)

  it.each(['light', 'dark'] as const)(
    'looks right in %s: tool output, search, notices, selects, menus, shortcuts and dialogs',
    async (scheme) => {
      const running = app.started ? app.server : await app.start(dataDir)
      const agents = await app.host.request('agents.list', {})
      const projectId = (await app.host.request('projects.list', {}))[0].id
      if (!agents.some((a) => a.name === 'Ghost')) {
        await app.host.request('agents.add', {
          name: 'Ghost',
          transport: { kind: 'process', command: 'no-such-agent-command', args: [], env: {}, secretEnv: {} }
        })
        await writeFile(join(projectDir, 'server.ts'), 'import { serve } from "./http"\n\n# not a heading\nserve({\n  port: 8080,\n})\n')
        const session = await app.host.request('sessions.new', { projectId, agentId: agents[0].id })
        await app.host.request('sessions.prompt', {
          id: session.id,
          text: `/read ${join(projectDir, 'server.ts')}\n/sayjson ${JSON.stringify(TABLE_ANSWER)}`
        })
        await app.host.request('sessions.rename', { id: session.id, title: 'Looks' })
      }

      const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: scheme })
      const page = await context.newPage()
      const problems = watchConsole(page)
      await page.goto(running.url)
      await item(page, 'Looks').getByTestId('session-open').click()

      // A file read: monospace, its lines kept, no heading made of its "#".
      const text = page.getByTestId('tool-call-text').first()
      await expect.poll(() => text.getAttribute('data-code')).toBe('true')
      expect(await text.locator('h1').count()).toBe(0)
      // Polled: the block is drawn again once its language's highlighting has loaded.
      await expect
        .poll(() => text.locator('pre code').evaluate((el) => (el.ownerDocument.defaultView as unknown as Window).getComputedStyle(el).fontFamily))
        .toMatch(/mono/i)
      expect(await text.locator('pre code').textContent()).toContain('serve({\n  port: 8080,\n})')

      // Selects: one look, the platform's arrow replaced by the chevron, the same in both themes.
      const selects = await page.locator('select').evaluateAll((list) =>
        list.map((el) => {
          const style = (
            el.ownerDocument.defaultView as unknown as { getComputedStyle(e: unknown): { appearance: string; backgroundImage: string } }
          ).getComputedStyle(el)
          return { appearance: style.appearance, chevron: style.backgroundImage.includes('gradient') }
        })
      )
      // The sidebar's agent picker is a split button now (NewSessionButton.vue): these are the page's other selects.
      expect(selects.length).toBeGreaterThan(1)
      expect(selects.every((s) => s.appearance === 'none' && s.chevron)).toBe(true)
      console.log(`screenshot: ${await screenshot(page, `e2e-looks-read-${scheme}`)}`)

      // The session menu holds its keys: the Ctrl+Enter badge inside the menu's box.
      const row = item(page, 'Looks')
      await row.hover()
      await row.getByTestId('session-menu').click()
      const menu = page.getByTestId('action-menu')
      await menu.waitFor()
      const box = (await menu.boundingBox())!
      for (const hint of await menu.getByTestId('menu-hint').all()) {
        const hintBox = (await hint.boundingBox())!
        expect(hintBox.x + hintBox.width).toBeLessThanOrEqual(box.x + box.width - 4)
      }
      console.log(`screenshot: ${await screenshot(page, `e2e-looks-menu-${scheme}`)}`)
      await page.keyboard.press('Escape')

      // Search: a message found shows its words, not its markdown.
      await page.getByTestId('open-search').click()
      await page.getByTestId('search-input').fill('npm run serve')
      const result = page.getByTestId('search-result').filter({ hasText: 'Ports' }).first()
      await expect.poll(() => result.textContent()).toContain('setting value port 8080 Ports: run npm run serve and open the page.')
      expect(await result.textContent()).not.toMatch(/[`*|]/)
      expect(await result.locator('mark').allTextContents()).toContain('npm run serve')
      const backdrops = [await page.getByTestId('search-palette').evaluate(BACKDROP)]
      console.log(`screenshot: ${await screenshot(page, `e2e-looks-search-${scheme}`)}`)
      await page.keyboard.press('Escape')

      // The shortcut list: one grid, every group's keys and words in the same two columns.
      await page.getByTestId('open-shortcuts').click()
      const overlay = page.getByTestId('shortcuts-overlay')
      await overlay.waitFor()
      const xs = async (id: string) =>
        new Set(await overlay.getByTestId(id).evaluateAll((list) => list.map((el) => Math.round(el.getBoundingClientRect().left))))
      expect(await xs('shortcut-keys')).toHaveProperty('size', 1)
      expect(await xs('shortcut-description')).toHaveProperty('size', 1)
      backdrops.push(await overlay.evaluate(BACKDROP))
      console.log(`screenshot: ${await screenshot(page, `e2e-looks-shortcuts-${scheme}`)}`)
      await page.keyboard.press('Escape')
      // Closed or gone: evaluateAll does not wait for an element that is no longer there (evaluate would, 30 s).
      await expect.poll(() => overlay.evaluateAll((list) => list.some((el) => (el as { open: boolean }).open))).toBe(false)

      // The delete dialog: the same dialog, the same backdrop.
      await row.hover()
      await row.getByTestId('session-menu').click()
      await page.getByTestId('menu-delete').click()
      const dialog = page.getByTestId('confirm-dialog')
      await expect.poll(() => dialog.evaluate(IS_OPEN)).toBe(true)
      // Cancel has the focus: a stray Enter deletes nothing.
      await expect.poll(() => page.evaluate<string | null>("document.activeElement?.getAttribute('data-testid') ?? null")).toBe('confirm-cancel')
      backdrops.push(await dialog.evaluate(BACKDROP))
      expect(new Set(backdrops).size).toBe(1)
      expect(backdrops[0]).not.toMatch(/^rgba\(0, 0, 0, 0\)$|transparent/)
      console.log(`screenshot: ${await screenshot(page, `e2e-looks-delete-${scheme}`)}`)
      await page.keyboard.press('Escape')
      await expect.poll(() => dialog.evaluate(IS_OPEN)).toBe(false)

      // A notice under the project: the agent picked is not installed; it can be put away.
      const project = page.getByTestId('project').first()
      await chooseAgent(project, { label: 'Ghost' })
      const notice = project.getByTestId('agent-not-installed')
      await expect.poll(() => notice.count()).toBe(1)
      console.log(`screenshot: ${await screenshot(page, `e2e-looks-notice-${scheme}`)}`)
      await project.getByTestId('agent-not-installed-dismiss').click()
      expect(await notice.count()).toBe(0)

      expect(problems).toEqual([])
      await context.close()
    },
    180_000
  )
})
