import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Locator, type Page } from 'playwright-core'
import { ConsoleCodes } from '../../electron/host/web/console-codes'
import type { Host } from '../../electron/host/host'
import { SIDEBAR_WIDTH } from '../../shared/settings'
import { openHost } from '../helpers'
import { startWsServer, type RunningServer } from '../../electron/host/web/ws-server'
import { RENDERER_JS_FLAGS } from '../../electron/host/host-process/exec-argv'

/** Headless Chromium (Debian's) against the real renderer build, served by the real host. */

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** This checkout's renderer build, or another's (BENCH_RENDERER_DIR: a bench probe run side by side on an old build). */
export const rendererDir = process.env.BENCH_RENDERER_DIR ?? join(repoRoot, 'out', 'renderer')
export const artifactsDir = join(repoRoot, 'test-results')

export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
  if (!existsSync(path)) {
    throw new Error(`Chromium not found at ${path}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH`)
  }
  return path
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(join(rendererDir, 'index.html'))) {
    throw new Error(`No renderer build in ${rendererDir}: run 'npm run build' first (npm test does)`)
  }
  return chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS })
}

/**
 * How every test and benchmark runs Chromium here; V8's flags as the desktop shell gives its window's renderer (or
 * BENCH_JS_FLAGS: others tried by a bench probe without a change to the code).
 */
export const CHROMIUM_ARGS = [
  `--js-flags=${process.env.BENCH_JS_FLAGS ?? RENDERER_JS_FLAGS}`,
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync'
]

/** What each server's console showed (the lines serve prints its confirmation codes on). */
const consoles = new WeakMap<RunningServer, string[]>()

/**
 * The WebSocket server in front of `host`, confirming as `serve` does: a change
 * the page asks for that would run a program waits for the code printed on the
 * console (here, kept for `consoleCode`). The test's own requests, in process,
 * go through the Host's own confirmation (openHost: none asked).
 */
export async function serve(host: Host): Promise<RunningServer> {
  const lines: string[] = []
  const codes = new ConsoleCodes({ print: (line) => lines.push(line) })
  const server = await startWsServer({ host, rendererDir, confirmCommand: codes.confirm })
  consoles.set(server, lines)
  return server
}

/** Everything the server printed on its console so far. */
export function consoleOf(server: RunningServer): string[] {
  return consoles.get(server) ?? []
}

/** The code the server printed last, as the user reads it on the console. */
export function consoleCode(server: RunningServer): string {
  const line = [...consoleOf(server)].reverse().find((l) => l.startsWith('To confirm, type this code in the page: '))
  const code = /: ([A-Z0-9]{3}-[A-Z0-9]{3})/.exec(line ?? '')?.[1]
  if (!code) throw new Error(`The server printed no confirmation code:\n${consoleOf(server).join('\n')}`)
  return code
}

/** Answers the page's code dialog as the user would: the code from the console, typed and confirmed; waits for the dialog to close. */
export async function typeConsoleCode(page: Page, server: RunningServer): Promise<void> {
  const dialog = page.getByTestId('code-dialog')
  await dialog.waitFor()
  await dialog.getByTestId('code-input').fill(consoleCode(server))
  await dialog.getByTestId('code-confirm').click()
  await dialog.waitFor({ state: 'hidden' })
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(artifactsDir, { recursive: true })
  const path = join(artifactsDir, `${name}.png`)
  await page.screenshot({ path, fullPage: false })
  return path
}

/**
 * What the system clipboard holds, read by the page. Reading needs the page
 * focused, which under load may come back a moment late: each read asks for
 * it and a refused read is returned as its reason, for `expect.poll`.
 */
export async function clipboardText(page: Page): Promise<string> {
  await page.bringToFront()
  return page.evaluate('navigator.clipboard.readText().catch((error) => `(read failed: ${error.message})`)') as Promise<string>
}

/**
 * Notes in the page, as they happen, where the focus goes and which keys reach what (by test id, else tag), so a
 * check on the focus that fails under load can say what happened before it (`focusTrace`). Call before `goto`.
 */
export async function traceFocus(page: Page): Promise<void> {
  // A script in the page's own terms (this file is compiled without the DOM's types).
  await page.addInitScript(`(() => {
    const at = (node) => (node instanceof Element ? (node.getAttribute('data-testid') ?? node.tagName.toLowerCase()) : String(node))
    const trace = []
    globalThis.focusTrace = trace
    const note = (line) => {
      trace.push(Math.round(performance.now()) + ' ' + line)
      if (trace.length > 200) trace.shift()
    }
    document.addEventListener('focusin', (event) => note('focus ' + at(event.target)), true)
    document.addEventListener('focusout', (event) => note('blur ' + at(event.target) + ' -> ' + at(event.relatedTarget)), true)
    window.addEventListener('keydown', (event) => note('key ' + event.key + ' on ' + at(event.target)), true)
  })()`)
}

/**
 * Holds every `<dialog>`'s `close` listeners until a key (by its `key`) is released, as a loaded machine did in CI: the
 * event comes a task after the dialog closed, and Chromium may run the user's next keys first. A dialog that gives the
 * focus back at its close event then takes it from wherever the user had moved it (e2e/presets' Home → ArrowDown ended
 * on the agent: the late event put the focus on the New session button between the two keys). Call before `goto`.
 */
export async function holdDialogCloseUntilKey(page: Page, key: string): Promise<void> {
  await page.addInitScript(`(() => {
    const held = []
    const add = EventTarget.prototype.addEventListener
    EventTarget.prototype.addEventListener = function (type, listener, options) {
      if (type !== 'close' || !(this instanceof HTMLDialogElement) || !listener) return add.call(this, type, listener, options)
      const late = function (event) {
        held.push(() => (typeof listener === 'function' ? listener.call(this, event) : listener.handleEvent(event)))
      }
      return add.call(this, type, late, options)
    }
    window.addEventListener('keyup', (event) => {
      if (event.key === ${JSON.stringify(key)}) held.splice(0).forEach((run) => run())
    }, true)
  })()`)
}

/** What `traceFocus` noted, one event a line, for an assertion's message. */
export async function focusTrace(page: Page): Promise<string> {
  const trace = (await page.evaluate('globalThis.focusTrace ?? []')) as string[]
  return `focus and keys, last first:\n${trace.slice(-40).reverse().join('\n')}`
}

/** The page each `problems` list (from `watchConsole`) listens to, and whether a restart's refused reconnects are let pass. */
const watched = new WeakMap<string[], { page: Page; restarting: number }>()

/** Collects console errors and CSP violations so a test can assert there were none. */
export function watchConsole(page: Page): string[] {
  const problems: string[] = []
  const state = { page, restarting: 0 }
  watched.set(problems, state)
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    if (state.restarting > 0 && REFUSED_RECONNECT.test(message.text())) return
    problems.push(message.text())
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  return problems
}

/** What a page logs when its WebSocket (or its question to /auth) cannot reach a host that is restarting. */
const REFUSED_RECONNECT =
  /^WebSocket connection to 'ws:\/\/127\.0\.0\.1:\d+\/ws\?token=[^']*' failed: .*ERR_CONNECTION_REFUSED|^Failed to load resource: net::ERR_CONNECTION_REFUSED$/

let consoleMarks = 0

/**
 * Runs a host restart: the refused reconnects the page logs meanwhile are
 * expected and dropped from `problems`; anything else logged stays. The page
 * may tell of a refusal after `restart` returned (its console reaches this
 * process late under load: seen in e2e/resync run twice at once), so they are
 * let pass until the page is connected again and its console has caught up
 * (a mark it logs after that has come back); a refusal after it counts.
 */
export async function whileHostRestarts<T>(problems: string[], restart: () => Promise<T>): Promise<T> {
  const state = watched.get(problems)
  if (state) state.restarting++
  const from = problems.length
  try {
    return await restart()
  } finally {
    const during = problems.splice(from)
    problems.push(...during.filter((problem) => !REFUSED_RECONNECT.test(problem)))
    if (state) void caughtUp(state.page).finally(() => state.restarting--)
  }
}

/** Resolves once the page is connected to a Host again and every console message it logged before has come. */
async function caughtUp(page: Page): Promise<void> {
  try {
    await page.getByTestId('connection-status').waitFor({ state: 'detached', timeout: 120_000 })
    const mark = `console caught up ${++consoleMarks}`
    const seen = page.waitForEvent('console', { predicate: (message) => message.text() === mark, timeout: 120_000 })
    await page.evaluate(`console.debug(${JSON.stringify(mark)})`)
    await seen
  } catch {
    // The page went (closed or navigated away): nothing more of it to wait for.
  }
}

/**
 * The window settings the Host keeps (theme, panes, each project's agent
 * choice, diff view) back to what a first window has: a test's new browser
 * context then starts as a new window would, not with the panes and choices
 * an earlier test in the same file left in the data folder.
 */
export async function resetWindowSettings(host: Host): Promise<void> {
  const { settings } = await host.request('settings.get', {})
  const projectAgents = Object.fromEntries(Object.keys(settings.projectAgents ?? {}).map((id) => [id, null]))
  await host.request('settings.set', {
    theme: 'system',
    diffMode: 'unified',
    panes: { panes: [{ id: 'pane-first', sessionId: null }], focused: 'pane-first', maximised: null },
    projectAgents,
    sidebarWidth: SIDEBAR_WIDTH.initial
  })
}

/** What an end-to-end file runs against: Chromium, a real Host on a data folder, and the WebSocket server in front of it. */
export interface BrowserHost {
  browser: Browser
  host: Host
  server: RunningServer
}

/** Starts the browser, the Host on `dataDir` and its server: the set-up every end-to-end file shares. */
export async function openBrowserHost(dataDir: string): Promise<BrowserHost> {
  const browser = await launchBrowser()
  const host = await openHost(dataDir)
  return { browser, host, server: await serve(host) }
}

/** Closes what openBrowserHost opened (any part may be missing after a failed start). */
export async function closeBrowserHost(fixture: Partial<BrowserHost>): Promise<void> {
  await fixture.browser?.close()
  await fixture.server?.close()
  await fixture.host?.close()
}

/**
 * A Host and its server that a test stops and starts again on one data folder,
 * as a user quits and restarts the app (the files that restart share this).
 */
export class RestartableHost {
  private running: { host: Host; server: RunningServer } | null = null

  get started(): boolean {
    return this.running !== null
  }

  /** The running Host (asking before start() is the test's mistake, said as such). */
  get host(): Host {
    if (!this.running) throw new Error('The Host is not started')
    return this.running.host
  }

  get server(): RunningServer {
    if (!this.running) throw new Error('The Host is not started')
    return this.running.server
  }

  async start(dataDir: string): Promise<RunningServer> {
    const host = await openHost(dataDir)
    this.running = { host, server: await serve(host) }
    return this.running.server
  }

  async stop(): Promise<void> {
    const running = this.running
    this.running = null
    await running?.server.close()
    await running?.host.close()
  }
}

/** Resident memory in MB of the largest Chromium renderer process this process started (none of another's): the page's. */
export function rendererRssMb(): number {
  const parent = new Map<number, number>()
  const renderers: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer')) renderers.push(pid)
    } catch {
      // Gone meanwhile.
    }
  }
  const mine = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 20; p = parent.get(p) ?? 0, hops++) if (p === process.pid) return true
    return false
  }
  let kb = 0
  for (const pid of renderers.filter(mine)) {
    try {
      kb = Math.max(kb, Number(/VmRSS:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0))
    } catch {
      // Gone meanwhile.
    }
  }
  return kb / 1024
}

/**
 * Makes an agent the project's choice for a new session, as a person does: the New session button's arrow
 * (NewSessionButton.vue), then the agent in its menu, by id or by `{ label }`. The main part then starts it.
 */
export async function chooseAgent(project: Locator, agent: string | { label: string }): Promise<void> {
  await project.getByTestId('new-session-menu').click()
  const menu = project.page().getByTestId('new-session-options')
  const item =
    typeof agent === 'string'
      ? menu.locator(`[data-testid=new-session-agent-option][data-agent-id="${agent}"]`)
      : menu.getByRole('menuitemradio', { name: agent.label, exact: true })
  await item.click()
  await menu.waitFor({ state: 'detached' })
}

/** The agents the project's New session menu offers, by name (the menu is opened and closed again). */
export async function agentChoices(project: Locator): Promise<string[]> {
  await project.getByTestId('new-session-menu').click()
  const menu = project.page().getByTestId('new-session-options')
  const names = await menu.getByTestId('new-session-agent-option').allTextContents()
  await project.page().keyboard.press('Escape')
  await menu.waitFor({ state: 'detached' })
  return names.map((n) => n.trim())
}
