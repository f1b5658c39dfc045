import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Locator, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/ws-server'
import { fold, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'
import { launchBrowser, screenshot, serve, watchConsole } from './browser'

/**
 * What a first launch showed wrong, as the user sees it in Chromium: a
 * settings change taken for activity, and the looks of tool output, search
 * results, terminals, selects, dialogs and menus, in light and dark.
 */

let root: string
let dataDir: string
let projectDir: string
let browser: Browser
let host: Host | null = null
let server: RunningServer | null = null

beforeAll(async () => {
  root = await tempDir('e2e-first-launch')
  dataDir = join(root, 'data')
  projectDir = join(root, 'shop')
  await mkdir(projectDir, { recursive: true })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await stopHost()
  await removeDir(root)
})

async function startHost(): Promise<RunningServer> {
  host = await openHost(dataDir)
  server = await serve(host)
  return server
}

async function stopHost(): Promise<void> {
  await server?.close()
  await host?.close()
  server = null
  host = null
}

function item(page: Page, title: string): Locator {
  return page.getByTestId('session-item').filter({ has: page.getByTestId('session-item-title').getByText(title, { exact: true }) })
}

const DAY = 24 * 3600 * 1000

describe('a first launch, in the browser', () => {
  it('takes a change of mode or option for a setting, not activity: the conversation keeps its place and its time', async () => {
    const first = await startHost()
    void first
    const agent = await host!.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_SESSION_STATE: '1' }))
    const projectId = (await host!.request('projects.add', { cwd: projectDir })).id
    const older = await host!.request('sessions.new', { projectId, agentId: agent.id })
    await host!.request('sessions.prompt', { id: older.id, text: '/title Older conversation' })
    const newer = await host!.request('sessions.new', { projectId, agentId: agent.id })
    await host!.request('sessions.prompt', { id: newer.id, text: '/title Newer conversation' })
    // Their last turns two and one days ago.
    await stopHost()
    const db = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as { sessions: { id: string; updatedAt: string }[] }
    for (const session of db.sessions) {
      session.updatedAt = new Date(Date.now() - (session.id === older.id ? 2 : 1) * DAY).toISOString()
    }
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(db))
    const running = await startHost()

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(running.url)
    const titles = () => page.getByTestId('session-item-title').allTextContents()
    await expect.poll(titles).toEqual(['Newer conversation', 'Older conversation'])
    expect(await item(page, 'Older conversation').locator('.time').textContent()).toBe('2d')

    await item(page, 'Older conversation').getByTestId('session-open').click()
    // Not connected since the restart: the change itself reopens it.
    await expect.poll(() => page.getByTestId('mode-select').isEnabled()).toBe(true)
    await page.getByTestId('mode-select').selectOption('code')
    await page.getByTestId('config-verbose').click()
    await expect
      .poll(async () => {
        const thread = fold((await host!.request('sessions.open', { id: older.id })).records)
        return [thread.modes?.currentModeId, thread.configOptions?.find((o) => o.id === 'verbose')?.currentValue]
      })
      .toEqual(['code', true])
    // Give any session.record event time to come: the row must not move nor say "now".
    await page.waitForTimeout(500)
    expect(await titles()).toEqual(['Newer conversation', 'Older conversation'])
    expect(await item(page, 'Older conversation').locator('.time').textContent()).toBe('2d')
    const [listed] = (await host!.request('sessions.list', {})).filter((s) => s.id === older.id)
    expect(Date.now() - new Date(listed.updatedAt).getTime()).toBeGreaterThan(DAY)
    expect(problems).toEqual([])
    await context.close()
  }, 180_000)

  it('opens a terminal at its first lines', async () => {
    const running = server ?? (await startHost())
    const agent = (await host!.request('agents.list', {}))[0]
    const projectId = (await host!.request('projects.list', {}))[0].id
    const session = await host!.request('sessions.new', { projectId, agentId: agent.id })
    await host!.request('sessions.prompt', { id: session.id, text: '/terminal seq 1 5\n/terminal seq 1 40' })

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
})
