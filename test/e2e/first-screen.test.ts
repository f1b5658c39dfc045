import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest'
import type { Browser, Page, Route } from 'playwright-core'
import { Host } from '../../electron/host/host'
import { firstScreenModule } from '../../electron/host/host-process/first-screen-module'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { makeDataset } from '../../bench/data'
import { FIRST_LOAD } from '../../renderer/src/first-load'
import { removeDir, tempDir } from '../helpers'
import { closeBrowserHost, launchBrowser, rendererDir, screenshot, serve, watchConsole } from './browser'

/**
 * The window's first screen, drawn by the Host (out/main/first-screen.js, as
 * `serve` and the desktop app load it) and painted before the window's code
 * has run; then the window mounts over it and works.
 */

const HOSTILE_TITLE = '<img src=x onerror="window.__drawnScript=1"> & "quotes"'

let root: string
let browser: Browser
let host: Host
let server: RunningServer
let sessionId: string

beforeAll(async () => {
  root = await tempDir('e2e-first-screen')
  const { dataDir } = await makeDataset(root, { projects: 1, sessions: 2, turnsPerSession: 1 })
  const firstScreen = firstScreenModule(join(rendererDir, '..', 'main', 'first-screen.js'))
  expect(firstScreen, 'npm run build writes out/main/first-screen.js').toBeDefined()
  host = await Host.open({ dataDir, version: 'test', presets: [], firstScreen })
  const sessions = await host.request('sessions.summary', { limit: 8, records: 120 })
  sessionId = sessions[0].sessions[0].id
  await host.request('sessions.rename', { id: sessionId, title: HOSTILE_TITLE })
  // Loaded as the Host starts (firstScreenModule), well before a person opens a window: here, before the first test's.
  expect((await host.request('app.firstScreen', { height: 800, requests: [] })).html).toContain('data-testid="session-item"')
  browser = await launchBrowser()
  server = await serve(host)
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

/** Opens the window with its code held back until `release` is called. */
async function openHeld(page: Page): Promise<() => void> {
  let release: () => void = () => undefined
  const held = new Promise<void>((resolve) => (release = resolve))
  await page.route('**/assets/window-*.js', async (route: Route) => {
    await held
    await route.continue()
  })
  await page.goto(server.url)
  return release
}

describe("the window's first screen", () => {
  it('loads in Node itself, as serve and the desktop app load it (the tests import it through their own resolver)', async () => {
    // Node's ES module resolution is stricter than the test runner's: a package imported by a folder (no file, no
    // exports map) loads here and fails in the app, where the Host then draws no first screen.
    const file = pathToFileURL(join(rendererDir, '..', 'main', 'first-screen.js')).href
    const loads = `const m = await import(${JSON.stringify(file)}); if (typeof m.renderFirstScreen !== 'function') throw new Error('no renderFirstScreen')`
    await expect(promisify(execFile)(process.execPath, ['--input-type=module', '-e', loads])).resolves.toBeDefined()
  })

  it("is painted from the Host's drawing before the window's code runs, escaped, then the window mounts over it and works", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    // Closed even when a check fails: a page left open keeps asking the Host, and the later tests count what is asked.
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const problems = watchConsole(page)
    const handle = vi.spyOn(host, 'handle')
    onTestFinished(() => handle.mockRestore())
    const release = await openHeld(page)

    // The window's code has not run (Vue marks the element it mounts on); the sidebar and its rows are there.
    const rows = page.getByTestId('session-item')
    await expect.poll(() => rows.count()).toBe(2)
    expect(await page.locator('#app[data-v-app]').count()).toBe(0)
    await expect.poll(() => page.getByTestId('session-item-title').allTextContents()).toContain(HOSTILE_TITLE)
    // What an agent or a user named a session is text: no element was made of it, no script ran from it.
    expect(await page.locator('[data-testid=project-list] img').count()).toBe(0)
    expect(await page.evaluate('window.__drawnScript')).toBeUndefined()
    // The rows stand one after the other in the frame, as the window lays them out.
    const boxes = await rows.evaluateAll((elements) => elements.map((e) => e.getBoundingClientRect().top))
    expect(boxes[1]).toBeGreaterThan(boxes[0])
    await screenshot(page, 'first-screen-drawn')

    release()
    await page.locator('#app[data-v-app]').waitFor()
    await expect.poll(() => page.getByTestId('session-item-title').allTextContents()).toContain(HOSTILE_TITLE)
    // The window works: the session opens in the pane.
    await rows.filter({ hasText: HOSTILE_TITLE }).getByTestId('session-open').click()
    await expect.poll(() => page.getByTestId('session-title').first().textContent()).toBe(HOSTILE_TITLE)
    await screenshot(page, 'first-screen-mounted')
    // The page asked for its first load once, with the drawing: the window took those answers, and the drawing them
    // too. (Before it, serve read the theme to serve the page with.)
    const calls = handle.mock.calls.map(([method]) => method)
    handle.mockRestore()
    const asked = calls.slice(calls.indexOf('app.firstScreen'))
    expect(asked.filter((method) => method === 'app.firstScreen')).toHaveLength(1)
    for (const [method] of FIRST_LOAD)
      expect(
        asked.filter((m) => m === method),
        method
      ).toHaveLength(1)
    // Nothing refused by the page's CSP (a style attribute in the Host's drawing would be), nothing thrown.
    expect(problems).toEqual([])
  })

  it("is put in place when the Host answers after the window's wait, while the window's code still loads", async () => {
    // A Host slow to answer (a loaded machine): the window stops waiting after a second, yet its code is still coming.
    const handle = host.handle.bind(host)
    const slow = vi.spyOn(host, 'handle').mockImplementation(async (method, params) => {
      if (method === 'app.firstScreen') await new Promise((resolve) => setTimeout(resolve, 1500))
      return handle(method, params)
    })
    onTestFinished(() => slow.mockRestore())
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const release = await openHeld(page)
    await expect.poll(() => page.getByTestId('session-item').count()).toBe(2)
    expect(await page.locator('#app[data-v-app]').count()).toBe(0)
    release()
    await page.locator('#app[data-v-app]').waitFor()
    await expect.poll(() => page.getByTestId('session-item').count()).toBe(2)
  })

  it('is drawn in the dark theme on a dark system before the window runs', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' })
    onTestFinished(() => context.close())
    const page = await context.newPage()
    const release = await openHeld(page)
    await page.getByTestId('session-item').first().waitFor()
    expect(await page.locator('html').getAttribute('data-theme')).toBe('dark')
    await screenshot(page, 'first-screen-drawn-dark')
    release()
  })

  it("comes with the window's first load, answered once: the drawing asks for nothing again", async () => {
    // The window's own first load, as the page's first script sends it.
    const requests = FIRST_LOAD.map(([method, params]): [string, unknown] => [method, params])
    const handle = vi.spyOn(host, 'handle')
    try {
      const { html, answers } = await host.request('app.firstScreen', { height: 800, requests })
      // One answer per request, in order, each as the request alone gets it.
      expect(answers).toEqual(await Promise.all(requests.map(([method, params]) => host.handle(method, params))))
      expect(html).toContain('data-testid="session-item"')
      // app.firstScreen, its requests, then the same asked again above: the drawing asked for none of them again.
      expect(handle.mock.calls.map(([method]) => method)).toEqual(['app.firstScreen', ...requests.map(([m]) => m), ...requests.map(([m]) => m)])
    } finally {
      handle.mockRestore()
    }
  })

  it('leaves nothing running in the Host once drawn', async () => {
    const running = (): string[] => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout')
    const before = running().length
    for (let i = 0; i < 10; i++) await host.request('app.firstScreen', { height: 800, requests: [] })
    // A timer per drawing would keep the Host's process alive after it closed, and each drawing in memory. (The
    // Host's own timers, re-armed at each request, may be one or two more than before.)
    expect(running().length - before).toBeLessThanOrEqual(2)
  })

  it('answers what it cannot run, and a request for itself, with its own error; the rest all the same', async () => {
    const { answers } = await host.request('app.firstScreen', {
      height: 800,
      requests: [
        ['app.firstScreen', { height: 10 }],
        ['sessions.summary', { limit: -1 }],
        ['no.such', {}],
        ['projects.list', {}]
      ]
    })
    expect(answers.map((answer) => (answer.ok ? 'ok' : answer.error.code))).toEqual(['invalid_params', 'invalid_params', 'unknown_method', 'ok'])
  })

  it('is left to the window when the Host has none to draw; the first load is answered all the same', async () => {
    const bare = await Host.open({ dataDir: join(root, 'data-bare'), version: 'test', presets: [] })
    try {
      const answer = await bare.request('app.firstScreen', { height: 800, requests: [['projects.list', {}]] })
      expect(answer).toEqual({ html: null, answers: [{ ok: true, result: [] }] })
    } finally {
      await bare.close()
    }
  })
})
