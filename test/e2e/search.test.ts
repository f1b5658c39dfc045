import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { makeDataset } from '../../bench/data'
import { openHost, removeDir, scriptedAgent, tempDir } from '../helpers'
import { launchBrowser, screenshot, serve, watchConsole } from './browser'

/**
 * Search (Ctrl/Cmd+K): text said long ago in a session, across agents and
 * after a restart of the host, is found and opens scrolled to where it was said.
 */

let root: string
let dataDir: string
let browser: Browser
let host: Host | null = null
let server: RunningServer | null = null

beforeAll(async () => {
  root = await tempDir('e2e-search')
  dataDir = join(root, 'data')
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await host?.close()
  await removeDir(root)
})

const mod = process.platform === 'darwin' ? 'Meta' : 'Control'

/** The Host (re)opened on `dataDir` and served, and a page on it with its sessions listed. */
async function reopenOn(dataDir: string): Promise<{ context: BrowserContext; page: Page; problems: string[]; url: string }> {
  await server?.close()
  await host?.close()
  host = await openHost(dataDir)
  server = await serve(host)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(server.url)
  await page.getByTestId('session-item').first().waitFor()
  return { context, page, problems, url: server.url }
}

describe('search', () => {
  it('finds text from an old session after a restart and opens it scrolled to the hit', async () => {
    host = await openHost(dataDir)
    const projectDir = join(root, 'payments')
    await mkdir(projectDir, { recursive: true })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const stateDir = join(root, 'agent-state')
    // The answers follow scripts, so the questions read like a person's (and do not hold the answer's words).
    const scripts = join(root, 'scripts.json')
    await writeFile(
      scripts,
      JSON.stringify({
        'And where is it set?': '/say The retry budget lives in `config/webhooks.ts` as `RETRY_BUDGET_MS` (30 seconds by default).',
        'Is the budget shared?': '/title Retry budget notes\n/say Each retry uses up budget, but that is unrelated to webhooks here.'
      })
    )
    const env = { SCRIPTED_AGENT_SCRIPTS: scripts }
    const a = await host.request('agents.add', scriptedAgent(stateDir, { ...env, SCRIPTED_AGENT_NAME: 'scripted-agent-a' }, 'Scripted agent A'))
    const b = await host.request('agents.add', scriptedAgent(stateDir, { ...env, SCRIPTED_AGENT_NAME: 'scripted-agent-b' }, 'Scripted agent B'))

    // An old conversation: the answer we look for, then a lot more talk after it.
    const old = await host.request('sessions.new', { projectId, agentId: a.id })
    await host.request('sessions.prompt', { id: old.id, text: '/title Webhook retries' })
    await host.request('sessions.prompt', { id: old.id, text: 'How often do we retry a failed payment webhook?' })
    await host.request('sessions.prompt', { id: old.id, text: 'And where is it set?' })
    for (let i = 0; i < 4; i++) await host.request('sessions.prompt', { id: old.id, text: '/stream 250' })
    // Another agent's session says something close, but not the phrase.
    const other = await host.request('sessions.new', { projectId, agentId: b.id })
    await host.request('sessions.prompt', { id: other.id, text: 'Is the budget shared?' })

    const { context, page, problems, url } = await reopenOn(dataDir)

    await page.keyboard.press(`${mod}+K`)
    const palette = page.getByTestId('search-palette')
    await palette.waitFor()
    // Empty, it says what it searches.
    expect(await palette.textContent()).toContain('anything you or an agent said')
    await page.getByTestId('search-input').fill('retry budget lives')
    const results = page.getByTestId('search-result')
    await expect.poll(() => results.count()).toBeGreaterThan(0)
    const first = results.first()
    expect(await first.textContent()).toContain('Webhook retries')
    expect(await first.locator('mark').allTextContents()).toEqual(['retry budget lives', 'RETRY', 'BUDGET'])
    expect(await first.getAttribute('aria-selected')).toBe('true')
    console.log(`screenshot: ${await screenshot(page, 'e2e-search-results')}`)

    // Words alone find both agents' sessions, and titles; the phrase ranks first.
    await page.getByTestId('search-input').fill('retry budget')
    await expect.poll(async () => (await results.allTextContents()).some((t) => t.includes('unrelated to webhooks'))).toBe(true)
    expect(await palette.locator('.group').allTextContents()).toEqual(['Conversations', 'Messages'])
    await page.getByTestId('search-input').fill('"retry budget lives"')
    await expect.poll(() => results.count()).toBe(1)

    // Enter opens the session scrolled to the answer, far above the end of the conversation.
    await page.keyboard.press('Enter')
    await expect.poll(() => palette.isVisible()).toBe(false)
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('Webhook retries')
    const answer = page.getByTestId('entry-assistant').filter({ hasText: 'RETRY_BUDGET_MS' })
    const scroller = page.locator('.thread-scroll')
    await expect
      .poll(async () => {
        const [box, view] = await Promise.all([answer.boundingBox(), scroller.boundingBox()])
        return Boolean(box && view && box.y >= view.y && box.y + box.height <= view.y + view.height)
      })
      .toBe(true)
    const atEnd = await scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight < 50)
    expect(atEnd).toBe(false)
    console.log(`screenshot: ${await screenshot(page, 'e2e-search-opened')}`)

    // A project is found by its name; the sidebar takes the focus there.
    await page.keyboard.press(`${mod}+K`)
    await page.getByTestId('search-input').fill('paym')
    await expect.poll(() => results.first().getAttribute('data-kind')).toBe('project')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe('project-head')

    // Esc closes; nothing found says so.
    await page.keyboard.press(`${mod}+K`)
    await page.getByTestId('search-input').fill('zebra crossing')
    await expect.poll(() => page.getByTestId('search-empty').textContent()).toContain('Nothing found for “zebra crossing”')
    await page.keyboard.press('Escape')
    await expect.poll(() => palette.isVisible()).toBe(false)

    // Dark mode.
    const dark = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' })
    const darkPage = await dark.newPage()
    await darkPage.goto(url)
    await darkPage.getByTestId('session-item').first().waitFor()
    await darkPage.keyboard.press(`${mod}+K`)
    await darkPage.getByTestId('search-input').fill('retry budget')
    await expect.poll(() => darkPage.getByTestId('search-result').count()).toBeGreaterThan(1)
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-search-dark')}`)
    await dark.close()

    expect(problems).toEqual([])
    await context.close()
  })

  it('a long answer shows the rows that fit, and the rest as the list is scrolled', async () => {
    // Every session says 'render listing' twice (its question and answer): 40 messages are answered.
    const { context, page, problems } = await reopenOn(
      (await makeDataset(join(root, 'many'), { projects: 2, sessions: 60, turnsPerSession: 1 })).dataDir
    )
    await page.keyboard.press(`${mod}+K`)
    await page.getByTestId('search-input').fill('render listing')
    const results = page.getByTestId('search-result')
    await expect.poll(() => results.count()).toBeGreaterThan(0)
    await expect.poll(() => page.getByTestId('search-indexing').count()).toBe(0)
    // Frames later, the list holds what fills it and a little more, not every row of the answer.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 300))))')
    const list = page.locator('#search-results')
    const first = await results.count()
    expect(first).toBeLessThan(20)
    expect(await list.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true)
    console.log(`screenshot: ${await screenshot(page, 'e2e-search-long-light')}`)
    await page.emulateMedia({ colorScheme: 'dark' })
    console.log(`screenshot: ${await screenshot(page, 'e2e-search-long-dark')}`)
    await page.emulateMedia({ colorScheme: 'light' })
    // Scrolled (the wheel over the list): the whole answer is there to scroll to.
    await list.hover()
    await page.mouse.wheel(0, 400)
    await expect.poll(() => results.count()).toBe(40)
    await expect.poll(() => list.evaluate((el) => el.scrollTop)).toBeGreaterThan(0)
    expect(problems).toEqual([])
    await context.close()
  })
})
