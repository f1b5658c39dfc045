import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { removeDir, tempDir, waitUntil } from '../helpers'
import { launchBrowser, rendererDir, screenshot, watchConsole, whileHostRestarts, chooseAgent } from './browser'

/**
 * `npm run serve` restarted on the same data folder, with a tab left open:
 * the real command (out/main/serve.js, built from electron/host/serve.ts) run as its own process. The tab
 * reconnects by itself (same port, same token) and shows the theme, the pane
 * layout and the project's agent choice the user left, which the Host keeps
 * in the data folder (a new tab, with nothing in its own storage, shows them
 * too). A tab with a token the server does not take says to open the printed
 * address.
 */

/** `npm run serve` as built (npm test builds first), not its source through tsx: the same code, started in a third of the CPU. */
const serveScript = fileURLToPath(new URL('../../out/main/serve.js', import.meta.url))

let root: string
let dataDir: string
let projectDir: string
let browser: Browser
let serving: { child: ChildProcess; url: string; output: string } | null = null

beforeAll(async () => {
  root = await tempDir('e2e-serve-restart')
  dataDir = join(root, 'data')
  projectDir = join(root, 'shop')
  await mkdir(projectDir)
  browser = await launchBrowser()
})

afterAll(async () => {
  await stopServe()
  await browser?.close()
  await removeDir(root)
})

/** Starts the serve command on the data folder; resolves with the address it prints. */
async function startServe(...args: string[]): Promise<{ url: string; output: string }> {
  const child = spawn(process.execPath, [serveScript, '--data-dir', dataDir, '--renderer-dir', rendererDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SWITCHBOARD_DATA_DIR: '' }
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer): void => {
      output += chunk.toString()
      if (serving?.child === child) serving.output = output
      const match = /^Open (http:\/\/\S+)$/m.exec(output)
      if (match) resolve(match[1])
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code) => reject(new Error(`serve ended (code ${code}) before printing its address:\n${output}`)))
  })
  serving = { child, url, output }
  return { url, output }
}

/** Answers the page's code dialog with the code serve printed on its console, as the user would. */
async function typeServeCode(page: Page): Promise<void> {
  const dialog = page.getByTestId('code-dialog')
  await dialog.waitFor()
  const code = await waitUntil(
    'the code on the console',
    () => /type this code in the page: ([A-Z0-9]{3}-[A-Z0-9]{3})/.exec(serving?.output ?? '')?.[1]
  )
  await dialog.getByTestId('code-input').fill(code)
  await dialog.getByTestId('code-confirm').click()
  await dialog.waitFor({ state: 'hidden' })
}

async function stopServe(): Promise<void> {
  if (!serving) return
  const { child } = serving
  serving = null
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

const backgroundColour = (page: Page): Promise<string> => page.evaluate('getComputedStyle(document.body).backgroundColor') as Promise<string>
const DARK = 'rgb(21, 23, 29)'
const LIGHT = 'rgb(246, 247, 249)'

describe('a restarted serve', () => {
  it('keeps port and token: an open tab reconnects by itself and shows the theme, panes and agent choice the user left', async () => {
    const first = await startServe()
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(first.url)

    // The user's settings: a project whose picker is on Gemini CLI, the dark theme, two panes.
    await page.getByTestId('add-project-path').fill(projectDir)
    await page.getByTestId('add-project-submit').click()
    await typeServeCode(page)
    const project = page.getByTestId('project').filter({ hasText: 'shop' })
    await chooseAgent(project, 'gemini')
    await page.getByTestId('theme-dark').click()
    await expect.poll(() => backgroundColour(page)).toBe(DARK)
    await page.getByTestId('pane-split').first().click()
    await expect.poll(() => page.getByTestId('pane').count()).toBe(2)
    const settings = async (): Promise<Record<string, unknown>> =>
      JSON.parse(await readFile(join(dataDir, 'settings.json'), 'utf8')) as Record<string, unknown>
    await expect.poll(async () => ((await settings()).panes as { panes: unknown[] } | undefined)?.panes.length).toBe(2)

    const second = await whileHostRestarts(problems, async () => {
      await stopServe()
      await expect.poll(() => page.getByTestId('connection-status').count()).toBe(1)
      const started = await startServe()
      // The tab comes back by itself: no reload, no new address.
      await expect.poll(() => page.getByTestId('connection-status').count(), { timeout: 30_000 }).toBe(0)
      return started
    })
    expect(second.url).toBe(first.url)
    expect(second.output).not.toMatch(/taken|new token/)
    expect(await backgroundColour(page)).toBe(DARK)
    expect(await page.getByTestId('pane').count()).toBe(2)
    expect(await project.getByTestId('new-session-split').getAttribute('data-choice')).toBe('agent:gemini')
    // Still live: a change reaches the restarted Host.
    await page.getByTestId('theme-light').click()
    await expect.poll(async () => (await settings()).theme).toBe('light')
    await page.getByTestId('theme-dark').click()
    await expect.poll(async () => (await settings()).theme).toBe('dark')
    console.log(`screenshot: ${await screenshot(page, 'e2e-serve-restart-dark')}`)

    // A new tab, in a browser with nothing stored: dark from the first paint (the page is served with it), the same panes and choice.
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' })
    // The theme on <html> once the page is parsed, before any of its scripts has run.
    await fresh.addInitScript(`document.addEventListener('readystatechange', () => {
      if (document.readyState === 'interactive') window.themeBeforeScripts = document.documentElement.dataset.theme ?? null
    })`)
    const tab = await fresh.newPage()
    const tabProblems = watchConsole(tab)
    await tab.goto(second.url)
    await tab.getByTestId('project').filter({ hasText: 'shop' }).waitFor()
    expect(await tab.evaluate('window.themeBeforeScripts')).toBe('dark')
    expect(await backgroundColour(tab)).toBe(DARK)
    await expect.poll(() => tab.getByTestId('pane').count()).toBe(2)
    expect(await tab.getByTestId('project').filter({ hasText: 'shop' }).getByTestId('new-session-split').getAttribute('data-choice')).toBe(
      'agent:gemini'
    )

    // Light chosen in the new tab: the first tab follows.
    await tab.getByTestId('theme-light').click()
    await expect.poll(() => backgroundColour(page)).toBe(LIGHT)
    console.log(`screenshot: ${await screenshot(page, 'e2e-serve-restart-light')}`)
    expect(tabProblems).toEqual([])
    expect(problems).toEqual([])
    await fresh.close()
    await context.close()
  })

  it('tells a tab whose token is refused to open the printed address, also an open one after --new-token', async () => {
    const { url } = serving ?? (await startServe())
    // An open tab, which also puts the theme back to the system's (the refused pages below follow their browser's).
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    await page.goto(url)
    await page.getByTestId('project').first().waitFor()
    await page.getByTestId('theme-system').click()
    await expect.poll(async () => (JSON.parse(await readFile(join(dataDir, 'settings.json'), 'utf8')) as { theme?: string }).theme).toBe('system')

    const wrong = url.replace(/#token=.*$/, '#token=not-the-token')
    for (const colorScheme of ['light', 'dark'] as const) {
      const refusedContext = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme })
      const refusedPage = await refusedContext.newPage()
      await refusedPage.goto(wrong)
      const refused = refusedPage.getByTestId('connection-refused')
      await refused.waitFor()
      expect(await refused.textContent()).toContain('Open the address Switchboard printed on its console (it ends with #token=…)')
      expect(await refusedPage.getByTestId('connection-status').count()).toBe(0)
      // Nothing claims there is nothing: the page knows nothing yet.
      expect(await refusedPage.getByTestId('empty-state').count()).toBe(0)
      console.log(`screenshot: ${await screenshot(refusedPage, `e2e-serve-refused-${colorScheme}`)}`)
      await refusedContext.close()
    }

    // The open tab, then a restart with a new token: the tab says so by itself, and the new address brings it back.
    await stopServe()
    const rotated = await startServe('--new-token')
    expect(rotated.output).toContain('A new token was made (--new-token)')
    expect(rotated.url).not.toBe(url)
    expect(rotated.url.split('#')[0]).toBe(url.split('#')[0])
    await page.getByTestId('connection-refused').waitFor({ timeout: 30_000 })
    expect(await page.getByTestId('connection-refused').textContent()).toContain('Switchboard refused the key this page was opened with')
    await page.goto(rotated.url)
    await expect.poll(() => page.getByTestId('connection-refused').count(), { timeout: 30_000 }).toBe(0)
    await page.getByTestId('project').first().waitFor()
    await context.close()
  })
})
