import { execFileSync } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AxeResults, Result } from 'axe-core'
import type { Browser, Page } from 'playwright-core'
import { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import type { InboxItem } from '../../shared/inbox'
import { confirmEverything, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'
import { RegistryFixture } from '../registry/fixture'
import { launchBrowser, resetWindowSettings, screenshot, serve } from './browser'

/**
 * Accessibility of every main view, measured by axe-core in Chromium against
 * the real renderer under `serve` and the scripted agent, in light and dark:
 * no violation of impact serious or critical (contrast below WCAG AA among
 * them). The views are a list, each with the function that opens it, so a
 * new view is one more entry. A failure lists each violation's rule, the
 * elements and axe's summary of what is wrong. Light runs all of axe's rules;
 * dark only those that read colours (THEME_RULES): the theme changes colours
 * alone, on the same elements, so every other rule answers in dark as in light.
 * Dark opens each view again in a dark window. Auditing each screen of the
 * light pass in dark too, the page's colour scheme switched in place, was
 * tried and was slower (side by side, two pairs, load 8-17: the views' test
 * 368 and 385 s against 266 and 351 s for the two tests here, the file 461
 * and 439 s against 399 and 399 s; a switch, 0.1 to 1.4 s, cost more than
 * opening the views again).
 *
 * Where its CPU goes (one light pass of 19 screens measured phase by phase, CPU of the test and its Chromium, load
 * 17-20): axe 43 s (2.2 s a screen; in the page, colour contrast a third of axe's time, avoid-inline-spacing's matcher
 * a tenth, aria-allowed-attr 8%, region 5%, building axe's tree 18%), opening a view 3.3 s each, a screenshot 0.35 s,
 * the paint waits and scrolls 3 s in all. A screenshot as JPEG (quality 90) or without hiding the caret saved 0.03 s
 * of CPU or none against PNG (30 of each, a page of 1,500 lines): left as PNG. At load 20 both views tests ran past
 * their 240 s (old build and new alike).
 *
 * The pages of the sidebar's foot are opened one from the other in one window (`follows`: Agents, an agent's form, a
 * new preset, Check, the registry, MCP and its form, Spend, the shortcut list), as a user goes from page to page: 12
 * windows a theme instead of 20. Where the views' time went (wall time, the file beside its old version, load 16-20,
 * one pass of ~50 screens): axe 201-235 s in light and 103-130 s in dark (4-4.7 s and 2.1-2.8 s a screen), the
 * screenshots 52-61 s (1.1 s each), opening the views 44-57 s (old 55-57 s, new 44-50 s), the paint waits 5-8 s.
 * The file: 651 s before, 575 s after (light 361 -> 318 s, dark 255 -> 225 s; timeouts raised for the pair). A view
 * that follows may have two more screens: its areas left scrolled by the view before are audited again from their top.
 */

const require = createRequire(import.meta.url)
const AXE = require.resolve('axe-core')
const PLATFORM = 'linux-x86_64' as const
/** axe's source, read once. */
let axeSource: string | undefined

type Theme = 'light' | 'dark'

/** axe's rules, on by default, whose answer depends on colours: text contrast, and a link told from its text by colour. */
const THEME_RULES = ['color-contrast', 'link-in-text-block']

interface View {
  name: string
  /** Opens the view in `page` and resolves once it is drawn. Each area of it that scrolls is then audited screen by screen. */
  open: (page: Page) => Promise<void>
  /**
   * Opened from the view listed before it, in the same window, by what `open` does there (a click); a view without
   * it is opened in a new window, on the Host's window settings as a first window has them (2-3 s a window at load
   * 16-20: see the header).
   */
  follows?: true
}

const registry = new RegistryFixture()
let root: string
let projectDir: string
let repoDir: string
let browser: Browser
let host: Host
let server: RunningServer
/** The sessions the views show, made through the Host before the views are visited. */
const sessions = { rich: '', tools: '', waiting: '', asking: '', changes: '', spent: '' }
/** Each session's title, by id. */
const titles = new Map<string, string>()

// ---- measuring ------------------------------------------------------------------

/** Runs axe on the page as it is and returns its serious and critical violations, one line per rule and element. */
async function audit(page: Page, where: string, theme: Theme): Promise<string[]> {
  // The page's CSP refuses an added <script>: axe's source is evaluated as the test's own script instead (not subject to it).
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate((axeSource ??= await readFile(AXE, 'utf8')))
  const only = theme === 'dark' ? `, runOnly: { type: "rule", values: ${JSON.stringify(THEME_RULES)} }` : ''
  const results = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"]${only} })`)) as AxeResults
  const found: string[] = []
  for (const violation of results.violations) {
    if (violation.impact !== 'serious' && violation.impact !== 'critical') {
      console.log(`(${violation.impact}) ${where}: ${violation.id}: ${violation.help} — ${violation.nodes.length} node(s)`)
      continue
    }
    found.push(...describeViolation(where, violation))
  }
  return found
}

function describeViolation(where: string, violation: Result): string[] {
  return violation.nodes.map(
    (node) =>
      `${where}: ${violation.id} (${violation.impact}) ${violation.help}\n    at ${node.target.join(' ')}\n    ${(node.failureSummary ?? '').replace(/\n/g, '\n    ')}`
  )
}

// ---- opening the views ------------------------------------------------------------

/** Shows these sessions side by side (the panes the Host keeps for a new window), then opens the window (from a blank page). */
async function showSessions(page: Page, ids: string[], diffMode: 'unified' | 'split' = 'unified'): Promise<void> {
  const panes = ids.map((sessionId, i) => ({ id: `pane-${i + 1}`, sessionId }))
  await host.request('settings.set', { diffMode, panes: { panes, focused: panes[0]!.id, maximised: null } })
  await page.goto(server.url)
  // The window may first draw the panes it had, then the Host's: these sessions' titles say they are there.
  await expect.poll(() => page.getByTestId('session-title').allTextContents()).toEqual(ids.map((id) => titles.get(id)))
  await expect.poll(() => page.getByTestId('composer-input').count()).toBe(ids.length)
}

/** Two frames: what a scroll or a click changed is laid out and painted. */
function painted(page: Page): Promise<unknown> {
  return page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))')
}

/** Finds the page's large areas that scroll (a thread, a page's body, the sidebar's list), kept in the page by index. */
const FIND_SCROLLING_AREAS = `(() => {
  window.__a11yScrollingAreas = [...document.querySelectorAll('*')].filter(
    (el) => /auto|scroll/.test(getComputedStyle(el).overflowY) && el.scrollHeight > el.clientHeight + 4 && el.clientHeight >= 360
  )
  return window.__a11yScrollingAreas.length
})()`

/**
 * The serious and critical violations of the view as drawn, then of each screenful of every large area that scrolls,
 * from its top down: axe measures the contrast of what is on screen only, and a virtual list draws only the rows near
 * it. An element found again on another screen is one finding.
 */
async function auditView(page: Page, where: string, theme: Theme): Promise<string[]> {
  const found = new Set<string>()
  const name = `a11y-${where
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/-$/, '')
    .toLowerCase()}`
  let screens = 0
  const note = async (): Promise<void> => {
    await painted(page)
    screens++
    console.log(`screenshot: ${await screenshot(page, screens === 1 ? name : `${name}-${screens}`)}`)
    for (const line of await audit(page, where, theme)) found.add(line)
  }
  await note()
  const areas = (await page.evaluate(FIND_SCROLLING_AREAS)) as number
  // Scrolls area `index` to its top (`to: 'top'`) or a screen down; says whether it moved.
  const scroll = ({ index, to }: { index: number; to: 'top' | 'down' }): boolean => {
    const el = (globalThis as any).__a11yScrollingAreas[index]
    const was = el.scrollTop
    el.scrollTop = to === 'top' ? 0 : was + el.clientHeight * 0.9
    return to === 'top' ? was > 0 : el.scrollTop > was
  }
  for (let index = 0; index < areas; index++) {
    if (await page.evaluate(scroll, { index, to: 'top' as const })) await note()
    while (await page.evaluate(scroll, { index, to: 'down' as const })) await note()
  }
  return [...found]
}

async function openWindow(page: Page): Promise<void> {
  await page.goto(server.url)
  await page.getByTestId('project').first().waitFor()
}

async function openAgent(page: Page, name: string): Promise<void> {
  await openWindow(page)
  await page.getByTestId('nav-agents').click()
  await page.getByTestId('agent-row').filter({ hasText: name }).click()
  await page.getByTestId('agent-details').waitFor()
}

const mod = process.platform === 'darwin' ? 'Meta' : 'Control'

/** Every main view but the empty first screen (which needs a Host with nothing in it: see its own test). */
const views: View[] = [
  {
    name: 'conversation: thought, code, plan, tool calls, permission answered, usage, error',
    open: async (page) => {
      await showSessions(page, [sessions.rich])
      await page.getByTestId('entry-plan').waitFor()
      await page.getByTestId('entry-thought').locator('summary').click()
    }
  },
  {
    name: 'conversation: a diff, a terminal and a long tool output',
    open: async (page) => {
      await showSessions(page, [sessions.tools])
      await page.getByTestId('terminal').first().waitFor({ state: 'attached' })
      await page.getByTestId('tool-call-diff').first().waitFor({ state: 'attached' })
    }
  },
  {
    name: 'conversation: a diff side by side',
    open: async (page) => {
      await showSessions(page, [sessions.tools], 'split')
      await page.getByTestId('diff-row').first().waitFor({ state: 'attached' })
    }
  },
  {
    name: 'conversation: a permission request waiting, the agent panel open',
    open: async (page) => {
      await showSessions(page, [sessions.waiting])
      await page.getByTestId('permission').waitFor()
      await page.getByTestId('agent-status').click()
      await page.locator('#agent-details').waitFor()
    }
  },
  {
    name: 'conversation: a question waiting',
    open: async (page) => {
      await showSessions(page, [sessions.asking])
      await page.getByTestId('elicitation').waitFor()
    }
  },
  {
    name: 'four panes',
    open: async (page) => {
      await showSessions(page, [sessions.rich, sessions.tools, sessions.waiting, sessions.spent])
    }
  },
  {
    name: 'the New session menu (agents, presets, folder or worktree)',
    open: async (page) => {
      await openWindow(page)
      const project = page.getByTestId('project').first()
      await project.hover()
      await project.getByTestId('new-session-menu').click()
      await page.getByTestId('new-session-options').waitFor()
    }
  },
  {
    name: "a project's menu and its Extra folders panel",
    open: async (page) => {
      await openWindow(page)
      const project = page.getByTestId('project').first()
      await project.hover()
      await project.getByTestId('project-menu').click()
      await page.getByTestId('menu-folders').click()
      await page.getByTestId('project-panel-folders').waitFor()
    }
  },
  {
    name: 'inbox',
    open: async (page) => {
      await openWindow(page)
      await page.getByTestId('open-inbox').click()
      await page.getByTestId('inbox-item').first().waitFor()
    }
  },
  {
    name: 'search',
    open: async (page) => {
      await openWindow(page)
      await page.keyboard.press(`${mod}+K`)
      await page.getByTestId('search-input').fill('plan')
      await page.getByTestId('search-result').first().waitFor()
    }
  },
  {
    name: 'Changes',
    open: async (page) => {
      await showSessions(page, [sessions.changes])
      await page.getByTestId('changes-toggle').click()
      await page.getByTestId('change-hunk').first().waitFor()
    }
  },
  // The pages of the sidebar's foot, in one window: each view opened from the one before, as a user goes from one to the next.
  {
    name: 'Agents',
    open: (page) => openAgent(page, 'Scripted')
  },
  {
    name: 'Agents: editing an agent',
    follows: true,
    open: async (page) => {
      await page.getByTestId('agent-edit').click()
      await page.getByTestId('agent-form').waitFor()
    }
  },
  {
    name: 'Agents: a new session preset',
    follows: true,
    open: async (page) => {
      await page.getByTestId('new-session-preset').click()
      await page.getByTestId('preset-form').waitFor()
    }
  },
  {
    name: 'Check',
    follows: true,
    open: async (page) => {
      await page.getByTestId('agent-row').filter({ hasText: 'Fixture Agent' }).click()
      await page.getByTestId('agent-check-report').waitFor()
    }
  },
  {
    name: 'registry',
    follows: true,
    open: async (page) => {
      await page.getByTestId('open-registry').click()
      await expect.poll(() => page.getByTestId('registry-entry').count()).toBe(2)
    }
  },
  {
    name: 'MCP',
    follows: true,
    open: async (page) => {
      await page.getByTestId('open-mcp').click()
      await page.getByTestId('mcp-profile').first().waitFor()
    }
  },
  {
    name: 'MCP: adding a server',
    follows: true,
    open: async (page) => {
      await page.getByTestId('mcp-add').click()
      await page.getByTestId('mcp-form').waitFor()
    }
  },
  {
    name: 'Spend',
    follows: true,
    open: async (page) => {
      await page.getByTestId('nav-spend').click()
      await page.getByTestId('spend-row').first().waitFor()
    }
  },
  {
    name: 'settings: theme and shortcuts',
    follows: true,
    open: async (page) => {
      await page.getByTestId('open-shortcuts').click()
      await page.getByTestId('shortcuts-overlay').waitFor()
    }
  }
]

// ---- the data the views show --------------------------------------------------------

/** Runs one turn through the Host, allowing each permission it asks for; resolves when the turn ends. */
async function turn(id: string, text: string): Promise<void> {
  const stop = host.events.subscribe((events) => {
    for (const event of events) {
      if (event.type !== 'inbox.changed') continue
      for (const item of event.payload as InboxItem[]) {
        if (item.kind !== 'permission' || item.session?.id !== id) continue
        const allow = item.permission.options.find((o) => o.kind === 'allow_once')
        if (allow)
          void host
            .request('sessions.respondPermission', { id, requestId: item.permission.requestId, optionId: allow.optionId })
            .catch(() => undefined)
      }
    }
  })
  try {
    await host.request('sessions.prompt', { id, text })
  } finally {
    stop()
  }
}

async function newSession(projectId: string, agentId: string, title: string, isolation: 'folder' | 'worktree' = 'folder'): Promise<string> {
  const { id } = await host.request('sessions.new', { projectId, agentId, isolation })
  await host.request('sessions.rename', { id, title })
  titles.set(id, title)
  return id
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()
}

beforeAll(async () => {
  root = await tempDir('e2e-a11y')
  projectDir = join(root, 'webshop')
  repoDir = join(root, 'shop')
  await mkdir(join(projectDir, 'src'), { recursive: true })
  await writeFile(join(projectDir, 'src', 'example.ts'), 'export const x = 1\n')
  // A tool output longer and wider than its box: it scrolls.
  await writeFile(
    join(projectDir, 'build.log'),
    Array.from(
      { length: 80 },
      (_, i) => `step ${i + 1}: compiled module-${i + 1}.ts ${'·'.repeat(i % 7)} ${'a long line of output '.repeat(8)}`
    ).join('\n')
  )
  await mkdir(repoDir, { recursive: true })
  git(repoDir, 'init', '--quiet', '-b', 'main')
  git(repoDir, 'config', 'user.name', 'E2E')
  git(repoDir, 'config', 'user.email', 'e2e@example.com')
  await writeFile(join(repoDir, 'cart.txt'), Array.from({ length: 24 }, (_, i) => `line ${i + 1}`).join('\n') + '\n')
  git(repoDir, 'add', '-A')
  git(repoDir, 'commit', '--quiet', '-m', 'start')

  await registry.start()
  registry.agents = [
    registry.binaryAgent('1.0.0', PLATFORM),
    {
      id: 'py-agent',
      name: 'Python Agent',
      version: '0.4.1',
      description: 'An agent published on PyPI, run through uv',
      authors: ['Example Labs'],
      license: 'Apache-2.0',
      distribution: { uvx: { package: 'py-agent', args: ['acp'], env: {} } }
    }
  ]
  host = await Host.open({
    dataDir: join(root, 'data'),
    version: 'test',
    confirmCommand: confirmEverything,
    presets: [],
    initializeTimeoutMs: 20_000,
    registry: { url: registry.feedUrl, platform: PLATFORM }
  })
  browser = await launchBrowser()
  server = await serve(host)
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await host?.close()
  await registry.stop()
  await removeDir(root)
})

/** A page in a new window of this theme; motion reduced, so colours are read at rest, not mid-transition. */
async function newPage(theme: Theme): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: theme, reducedMotion: 'reduce' })
  return context.newPage()
}

describe('accessibility (axe-core)', () => {
  it('the empty first screen has no serious or critical violation, light and dark', async () => {
    const found: string[] = []
    for (const theme of ['light', 'dark'] as const) {
      await resetWindowSettings(host)
      const page = await newPage(theme)
      await page.goto(server.url)
      await page.getByTestId('empty-state').waitFor()
      found.push(...(await auditView(page, `empty first screen (${theme})`, theme)))
      await page.context().close()
    }
    expect(found).toEqual([])
  })

  describe('with projects, agents and conversations', () => {
    beforeAll(async () => {
      const project = await host.request('projects.add', { cwd: projectDir })
      const shop = await host.request('projects.add', { cwd: repoDir })
      const state = join(root, 'agent-state')
      const agent = await host.request(
        'agents.add',
        scriptedAgent(state, { SCRIPTED_AGENT_SESSION_STATE: '1', SCRIPTED_AGENT_MCP: 'http,sse' }, 'Scripted')
      )
      await host.request('mcp.save', {
        name: 'docs',
        transport: 'stdio',
        command: 'node',
        args: ['docs-server.js'],
        env: [{ name: 'MODE', value: 'ro' }]
      })
      await host.request('mcp.save', { name: 'tracker', transport: 'http', url: 'https://example.com/mcp' })
      const fixtureAgent = await host.request('registry.install', { registryId: 'fixture-agent' })
      await host.request('agents.check', { agentId: fixtureAgent.id })

      sessions.rich = await newSession(project.id, agent.id, 'Plan the release')
      await turn(
        sessions.rich,
        [
          '/commands',
          '/usage',
          '/think Considering **how** to approach this: the tests first, then the change.',
          '/sayjson "Here is the plan:\\n\\n```ts\\nconst x: number = 42\\nconsole.log(x)\\n```\\n\\nAnd `inline` code, a [link](https://example.com) and a table:\\n\\n| a | b |\\n|---|---|\\n| 1 | 2 |"',
          '/plan Read the code;Write the change;Run the tests',
          '/tool Format the code',
          '/subagent Look at the tests',
          '/permission',
          '/say Done.'
        ].join('\n')
      )
      await host
        .request('sessions.prompt', { id: sessions.rich, text: '/fail The model is overloaded; try again in a minute' })
        .catch(() => undefined)

      sessions.tools = await newSession(project.id, agent.id, 'Fix the example')
      await turn(
        sessions.tools,
        [
          '/diff src/example.ts',
          "/terminal printf '\\033[1;32mPASS\\033[0m src/a.test.ts\\n\\033[31mFAIL\\033[0m src/b.test.ts\\n'",
          `/read ${join(projectDir, 'build.log')}`,
          // A new file longer than the diff's box, and a command whose output is longer than the terminal's: both scroll.
          `/raw ${JSON.stringify({
            sessionUpdate: 'tool_call',
            toolCallId: 'long-diff',
            title: 'Write notes.md',
            kind: 'edit',
            status: 'completed',
            content: [
              {
                type: 'diff',
                path: join(projectDir, 'notes.md'),
                oldText: null,
                newText: Array.from({ length: 60 }, (_, i) => `note ${i + 1}`).join('\n')
              }
            ]
          })}`,
          '/terminal seq 1 60',
          '/say Built.'
        ].join('\n')
      )

      sessions.spent = await newSession(project.id, agent.id, 'Summarise the changelog')
      await turn(sessions.spent, '/cost 0.42 USD\n/say Three fixes and one new flag since 2.3.')

      sessions.changes = await newSession(shop.id, agent.id, 'Tidy the cart', 'worktree')
      await turn(sessions.changes, '/disk cart.txt line 1\\nline 2 by the agent\\nline 3\\n\n/disk NOTES.md written on disk\\n')

      // Left waiting: the permission card in its pane, and an item in the inbox.
      sessions.waiting = await newSession(project.id, agent.id, 'Clean the build folder')
      void host.request('sessions.prompt', { id: sessions.waiting, text: '/permission-always execute' }).catch(() => undefined)
      await waitUntil('the permission request in the inbox', async () => (await host.request('inbox.list', {})).some((i) => i.kind === 'permission'))
      await host.request('sessions.queue', { id: sessions.waiting, text: 'Then run the tests again' })
      // A question in its pane, and in the inbox.
      sessions.asking = await newSession(project.id, agent.id, 'Set up the staging deploy')
      void host.request('sessions.prompt', { id: sessions.asking, text: '/elicit' }).catch(() => undefined)
      await waitUntil('the question in the inbox', async () => (await host.request('inbox.list', {})).some((i) => i.kind === 'elicitation'))
    }, 120_000)

    for (const theme of ['light', 'dark'] as const) {
      it(`every main view has no serious or critical violation (${theme})`, async () => {
        const page = await newPage(theme)
        const found: string[] = []
        for (const view of views) {
          // The window before keeps its panes as it closes: it is gone before the next view's settings are made. A view
          // that follows the one before is opened in its window.
          if (!view.follows) {
            await page.goto('about:blank')
            await resetWindowSettings(host)
          }
          await view.open(page)
          found.push(...(await auditView(page, `${view.name} (${theme})`, theme)))
        }
        await page.context().close()
        await resetWindowSettings(host)
        expect(found).toEqual([])
      }, 240_000)
    }
  })
})
