import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page, Route } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { initialJavaScript, staticClosure } from '../../bench/initial-js'
import { allowCommands, removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, rendererDir, resetWindowSettings, screenshot, watchConsole, chooseAgent } from './browser'
import { screenshotBothThemes } from './themes'

/**
 * A window that opens fast (renderer/src/lazy.ts, highlight.ts): the first
 * screen fetches only the script index.html names (and what it preloads);
 * a session's view, the terminal, a diff, the Agents and MCP pages and each
 * highlighting language arrive when first used. A code block shows plain at
 * once and highlighted once its language is in; a part that is slow to come
 * shows a loading line, one whose chunk cannot be fetched says so with Try
 * again. A conversation whose rows show diffs fetches the diff's code once
 * it is shown, so rows scrolled into view later are drawn whole at once. All
 * under the strict CSP, with no violation. Screenshots in test-results/
 * (light and dark, the window switched between them).
 */

let root: string
let projectDir: string
let browser: Browser
let host: Host
let server: RunningServer
let projectId: string
let agentId: string

beforeAll(async () => {
  root = await tempDir('e2e-lazy')
  projectDir = join(root, 'lazy-project')
  await mkdir(join(projectDir, 'src'), { recursive: true })
  await writeFile(join(projectDir, 'src', 'example.ts'), 'export const x = 1\n')
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state'), {}, 'Scripted'))).id
  projectId = (await host.request('projects.add', { cwd: projectDir })).id
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

beforeEach(async () => {
  await resetWindowSettings(host)
})

async function newContext(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  await context.addInitScript(
    "window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI))"
  )
  return context
}

/** The path of each script the page asked for (`assets/x.js`), in order. */
function scriptsRequested(page: Page): string[] {
  const scripts: string[] = []
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname.replace(/^\//, '')
    if (path.endsWith('.js')) scripts.push(path)
  })
  return scripts
}

/** Holds the requests for scripts whose file name starts with `name-` until `release` is called. */
async function hold(context: BrowserContext, name: string): Promise<{ release(): void; held: () => number }> {
  const waiting: Route[] = []
  let released = false
  await context.route(new RegExp(`/assets/${name}-[^/]*\\.js$`), (route) => {
    if (released) void route.continue()
    else waiting.push(route)
  })
  return {
    release() {
      released = true
      for (const route of waiting.splice(0)) void route.continue()
    },
    held: () => waiting.length
  }
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('send').click()
}

describe('a window that opens fast', () => {
  it('shows the first screen with only its script, then a session, a code block highlighted once its language is in, a diff and a terminal', async () => {
    const context = await newContext()
    const page = await context.newPage()
    const problems = watchConsole(page)
    const scripts = scriptsRequested(page)
    // The Python highlighting is held back, to see the code block before it arrives.
    const python = await hold(context, 'python')

    await page.goto(server.url)
    const project = page.getByTestId('project').filter({ hasText: 'lazy-project' })
    await project.waitFor()
    // The first screen: exactly the build's initial scripts, none of the parts not shown (a session's view and
    // the diff may have begun to come: they are fetched once the window is idle).
    const initial = await initialJavaScript(rendererDir)
    const whenIdle = await fetchedWhenIdle(initial.files.map((f) => f.file))
    expect(new Set(scripts.filter((s) => !whenIdle.has(s)))).toEqual(new Set(initial.files.map((f) => f.file)))

    await chooseAgent(project, { label: 'Scripted' })
    await project.getByTestId('new-session').click()
    await page.getByTestId('composer-input').waitFor()
    await expect.poll(() => page.getByTestId('composer-input').isEnabled()).toBe(true)
    expect(scripts.some((s) => /assets\/SessionView-/.test(s))).toBe(true)
    expect(scripts.some((s) => /assets\/(open-xterm|TerminalOutput|python)-/.test(s))).toBe(false)

    await send(page, '/sayjson "Here it is:\\n\\n```python\\ndef greet(name):\\n    return f\\"hello {name}\\"\\n```\\n"')
    const code = page.locator('[data-testid=entry-assistant] .code-block').first()
    // Shown at once, plain, while its language is on its way.
    await expect.poll(() => code.locator('code').textContent(), { timeout: 30_000 }).toContain('def greet(name):')
    expect(await code.locator('.code-lang').textContent()).toBe('python')
    await expect.poll(() => python.held(), { timeout: 30_000 }).toBeGreaterThan(0)
    expect(await code.locator('.hljs-keyword').count()).toBe(0)
    await screenshotBothThemes(page, 'lazy-code-plain')
    python.release()
    // Highlighted once it has arrived, the same text.
    await expect.poll(() => code.locator('.hljs-keyword').first().textContent(), { timeout: 30_000 }).toBe('def')
    expect(await code.locator('code').textContent()).toBe('def greet(name):\n    return f"hello {name}"\n')
    await screenshotBothThemes(page, 'lazy-code-highlighted')

    // A diff and a terminal: each fetched when the tool call shows one.
    await send(page, "/diff src/example.ts\n/terminal printf '\\033[1;32mPASS\\033[0m lazy\\n'\n/say Done.")
    // The command is asked before it runs: the user allows it on its card.
    await page.getByTestId('permission').getByTestId('permission-option').filter({ hasText: 'Allow once' }).click()
    await page.getByTestId('tool-call-diff').first().waitFor({ timeout: 60_000 })
    await expect.poll(() => page.getByTestId('diff-path').first().textContent(), { timeout: 30_000 }).toContain('example.ts')
    const terminal = page.getByTestId('terminal').first()
    await expect.poll(() => terminal.locator('.xterm-rows').textContent(), { timeout: 60_000 }).toContain('PASS lazy')
    expect(scripts.some((s) => /assets\/DiffView-/.test(s))).toBe(true)
    expect(scripts.some((s) => /assets\/open-xterm-/.test(s))).toBe(true)

    expect(await page.evaluate('window.__violations')).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  }, 180_000)

  it('shows a loading line while a page is on its way, and a failure with Try again when its chunk cannot be fetched', async () => {
    const context = await newContext()
    const page = await context.newPage()
    const problems = watchConsole(page)
    const mcp = await hold(context, 'McpPage')
    // The Agents page's chunk cannot be fetched (the network is down) until `offline` is cleared.
    let offline = true
    await context.route(/\/assets\/AgentsPage-[^/]*\.js$/, (route) => {
      if (offline) void route.abort('internetdisconnected')
      else void route.continue()
    })

    await page.goto(server.url)
    await page.getByTestId('project').filter({ hasText: 'lazy-project' }).waitFor()

    // The MCP page is held back: its place shows that it is loading.
    await page.getByTestId('open-mcp').click()
    const loading = page.getByTestId('lazy-loading')
    await loading.waitFor({ timeout: 30_000 })
    expect(await loading.textContent()).toContain('Loading the MCP page')
    await screenshotBothThemes(page, 'lazy-loading')
    mcp.release()
    await page.getByRole('heading', { name: 'MCP servers', exact: true }).waitFor({ timeout: 60_000 })
    expect(await loading.count()).toBe(0)

    // The Agents page cannot be fetched: said so, not a blank; Try again brings it.
    await page.getByTestId('nav-agents').click()
    const failed = page.getByTestId('lazy-failed')
    await failed.waitFor({ timeout: 30_000 })
    expect(await failed.textContent()).toContain('Could not load the Agents page')
    // Said once, in its place: not also as an error of the window.
    expect(await page.getByTestId('error-banner').count()).toBe(0)
    await screenshotBothThemes(page, 'lazy-failed')
    offline = false
    await failed.getByTestId('lazy-retry').click()
    await page.getByTestId('agents-page').waitFor({ timeout: 60_000 })
    expect(await failed.count()).toBe(0)
    expect(await page.getByTestId('agents-page').textContent()).toContain('Scripted')

    expect(await page.evaluate('window.__violations')).toEqual([])
    // The refused chunk is the one error the page reports (the browser logs the failed fetch).
    expect(problems.filter((p) => !/AgentsPage|Failed to fetch dynamically imported module|ERR_INTERNET_DISCONNECTED/.test(p))).toEqual([])
    await context.close()
  }, 180_000)

  it('opens a past conversation, once the window has settled after its start, with no code left to fetch: its tail and its edit drawn at once', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.rename', { id, title: 'An edit at the end' })
    await host.request('sessions.prompt', { id, text: '/diff src/example.ts\n/say The edit is made.' })
    await host.request('sessions.close', { id })

    const context = await newContext()
    const page = await context.newPage()
    const problems = watchConsole(page)
    const scripts = scriptsRequested(page)
    // The diff's code is the last the window fetches once idle after its start (the session's view's code makes it).
    const diffCode = page.waitForEvent('requestfinished', { predicate: (r) => /\/assets\/DiffView-[^/]*\.js$/.test(r.url()), timeout: 60_000 })
    await page.goto(server.url)
    const item = page.getByTestId('session-item').filter({ hasText: 'An edit at the end' })
    await item.waitFor()
    // The reader reads the list a moment: the page settles (its idle fetch done, nothing fetched for half a second, then idle).
    await diffCode
    await page.waitForLoadState('networkidle')
    await page.evaluate('new Promise((resolve) => requestIdleCallback(() => resolve()))')
    const before = scripts.length
    // From here on no script can come (the network is down): the conversation opens with what the window has.
    await context.route(/\.js$/, (route) => route.abort('internetdisconnected'))
    await item.click()
    await page.getByTestId('entry-assistant').filter({ hasText: 'The edit is made.' }).waitFor({ timeout: 30_000 })
    // Its edit drawn whole in the same frame, not a loading line first.
    expect(await page.getByTestId('tool-call-diff').count()).toBe(1)
    expect(await page.getByTestId('diff-path').textContent()).toContain('example.ts')
    expect(await page.getByTestId('lazy-loading').count()).toBe(0)
    expect(await page.getByTestId('lazy-failed').count()).toBe(0)
    expect(scripts.slice(before)).toEqual([])
    await screenshotBothThemes(page, 'lazy-opened-settled')
    expect(await page.evaluate('window.__violations')).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  }, 120_000)

  it('draws the edit and command cards of a conversation opened at its end whole and at their height when the reader flings up past them, on a slow network', async () => {
    // Three edits and three commands amid 180 messages: opened at its end, none of them is in view. The commands' output:
    // more lines than a terminal shows (it scrolls), a few lines, coloured, and lines longer than the terminal is wide.
    const { id } = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.rename', { id, title: 'Edits far up' })
    const edits = ['/diff src/example.ts', '/diff src/example.ts', '/diff src/example.ts']
    const commands = [
      '/terminal seq 1 40',
      "/terminal printf '\\033[1;32mPASS\\033[0m one\\ntwo\\nthree\\n'",
      `/terminal printf '${'wide '.repeat(50)}\\nshort\\n${'x'.repeat(330)}\\n'`
    ]
    // The commands are asked before they run: allowed here, as a user would on each card.
    const allowed = allowCommands(host)
    await host.request('sessions.prompt', { id, text: ['/many 60', ...edits, ...commands, '/many 120'].join('\n') })
    expect(allowed).toHaveLength(3)

    const context = await newContext()
    // A slow network: the diff's code takes its time to come.
    await context.route(/\/assets\/DiffView-[^/]*\.js$/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 500))
      await route.continue()
    })
    const page = await context.newPage()
    const problems = watchConsole(page)
    const diffCode = page.waitForEvent('requestfinished', { predicate: (r) => /\/assets\/DiffView-[^/]*\.js$/.test(r.url()), timeout: 60_000 })
    const terminalCode = page.waitForEvent('requestfinished', {
      predicate: (r) => /\/assets\/TerminalOutput-[^/]*\.js$/.test(r.url()),
      timeout: 60_000
    })
    await page.goto(server.url)
    await page.getByTestId('session-item').filter({ hasText: 'Edits far up' }).click()
    await page.getByTestId('entry-assistant').filter({ hasText: 'Message 120 with code' }).waitFor({ timeout: 30_000 })
    expect(await page.getByTestId('entry-tool-call').count()).toBe(0)
    // While the reader is at the end, the diff's and the terminal's code come, though neither was shown.
    await Promise.all([diffCode, terminalCode])
    // The reader pauses (the page is idle: the code that came is in).
    await page.evaluate('new Promise((resolve) => requestIdleCallback(() => resolve()))')

    // Each card the list puts in the page: whether it shows its diff or terminal then, its heights while in the page, any loading line.
    await page.evaluate(`(() => {
      const seen = (window.__cards = [])
      window.__loading = 0
      const sizes = new ResizeObserver((entries) => {
        for (const e of entries) if (e.target.isConnected) seen.find((c) => c.el === e.target)?.heights.push(Math.round(e.borderBoxSize[0].blockSize))
      })
      new MutationObserver((records) => {
        for (const r of records)
          for (const node of r.addedNodes) {
            if (!(node instanceof Element)) continue
            if (node.matches('[data-testid=lazy-loading]') || node.querySelector('[data-testid=lazy-loading]')) window.__loading++
            for (const card of [node, ...node.querySelectorAll('[data-testid=entry-tool-call]')]) {
              if (!card.matches('[data-testid=entry-tool-call]') || seen.some((c) => c.el === card)) continue
              const part = card.querySelector('[data-testid=tool-call-diff]') ? 'diff' : card.querySelector('[data-testid=terminal-output]') ? 'terminal' : 'none'
              seen.push({ el: card, part, heights: [] })
              sizes.observe(card)
            }
          }
      }).observe(document.querySelector('[data-testid=thread-scroll]'), { childList: true, subtree: true })
    })()`)
    await fling(page)
    await page.getByTestId('entry-user').first().waitFor()
    // Back down past the edits and the commands, where the reader stops.
    const scroller = page.getByTestId('thread-scroll')
    await expect
      .poll(async () => {
        await scroller.evaluate((el) => (el.scrollTop += 200))
        return page.getByTestId('terminal-output').count()
      })
      .toBe(3)
    // Two frames, for the last sizes to be told.
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    const cards = (await page.evaluate('window.__cards.map((c) => ({ part: c.part, heights: [...new Set(c.heights)] }))')) as {
      part: 'diff' | 'terminal' | 'none'
      heights: number[]
    }[]
    // (One the fling took past within a frame was gone before it was laid out: no height.)
    for (const card of cards) {
      expect(card.part).not.toBe('none')
      expect(card, `a ${card.part} card changed height`).toEqual({ part: card.part, heights: card.heights.slice(0, 1) })
    }
    for (const part of ['diff', 'terminal']) {
      expect(cards.filter((card) => card.part === part && card.heights.length === 1).length, part).toBeGreaterThanOrEqual(2)
    }
    expect(await page.evaluate('window.__loading')).toBe(0)
    // The commands' output: the first at its first lines, the others whole, the long lines wrapped.
    const outputs = page.getByTestId('terminal-output')
    await outputs.nth(2).scrollIntoViewIfNeeded()
    const shown = async (n: number): Promise<string | undefined> => (await outputs.nth(n).locator('.xterm-rows').textContent())?.trimEnd()
    await expect.poll(() => shown(0)).toBe('12345678910111213141516')
    await expect.poll(() => shown(1)).toBe('PASS onetwothree')
    await screenshot(page, 'lazy-terminal-flung-light')
    await page.emulateMedia({ colorScheme: 'dark' })
    // Once the colours have changed (their transitions run out).
    await expect.poll(() => page.evaluate('document.getAnimations().length')).toBe(0)
    // The terminals take the dark theme's background too, as the box around them does.
    const backgrounds = (await page.evaluate(`[...document.querySelectorAll('[data-testid=terminal-output]')].map((box) =>
      [box, box.querySelector('.xterm-scrollable-element')].map((el) => getComputedStyle(el).backgroundColor))`)) as [string, string][]
    expect(backgrounds).toHaveLength(3)
    for (const [box, screen] of backgrounds) expect(screen).toBe(box)
    await screenshot(page, 'lazy-terminal-flung-dark')
    await page.getByTestId('tool-call-diff').first().scrollIntoViewIfNeeded()
    await screenshot(page, 'lazy-diff-flung-dark')
    await page.emulateMedia({ colorScheme: 'light' })
    await expect.poll(() => page.evaluate('document.getAnimations().length')).toBe(0)
    await screenshot(page, 'lazy-diff-flung-light')
    expect(await page.evaluate('window.__violations')).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  }, 180_000)
})

/**
 * The scripts the window fetches once idle after its start (lazy.ts `whenIdle`): a session's view and the diff,
 * with what they import that the first screen's scripts (`initial`) do not hold.
 */
async function fetchedWhenIdle(initial: string[]): Promise<Set<string>> {
  const parts = (await readdir(join(rendererDir, 'assets'))).filter((f) => /^(SessionView|DiffView)-[^.]*\.js$/.test(f)).map((f) => `assets/${f}`)
  expect(parts).toHaveLength(2)
  return new Set([...(await staticClosure(rendererDir, parts)).keys()].filter((file) => !initial.includes(file)))
}

/** Scrolls the thread up a screen and a half a frame (a fling, its rows passing by) until it is at its top. */
function fling(page: Page): Promise<void> {
  // A string: this runs in the page (the tests' TypeScript has no DOM types).
  return page.evaluate(`new Promise((resolve) => {
    const el = document.querySelector('[data-testid=thread-scroll]')
    const tick = () => {
      if (el.scrollTop <= 0) return resolve()
      el.scrollTop -= el.clientHeight * 1.5
      requestAnimationFrame(tick)
    }
    requestAnimationFrame(tick)
  })`)
}
