import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { confirmEverything, removeDir, tempDir } from '../helpers'
import { PRESET_PACKAGES } from '../../electron/host/agents/presets'
import { RegistryFixture } from '../registry/fixture'
import { launchBrowser, resetWindowSettings, screenshot, serve, typeConsoleCode, watchConsole } from './browser'

/**
 * The Agents page's registry by clicking: the list with icons and licences,
 * search, install with the agent then set up like any other, an update
 * offered (old → new) and made, pin, uninstall; the capability report on the
 * agent's page and beside it in the new-session picker; light and dark.
 */

const PLATFORM = 'linux-x86_64' as const
const fixture = new RegistryFixture()
let root: string
let browser: Browser
let host: Host
let server: RunningServer

beforeAll(async () => {
  root = await tempDir('e2e-registry')
  await fixture.start()
  fixture.agents = [
    fixture.binaryAgent('1.0.0', PLATFORM),
    {
      id: 'py-agent',
      name: 'Python Agent',
      version: '0.4.1',
      description: 'An agent published on PyPI, run through uv',
      website: 'https://example.com/py-agent',
      authors: ['Example Labs'],
      license: 'Apache-2.0',
      distribution: { uvx: { package: 'py-agent', args: ['acp'], env: {} } }
    },
    {
      id: 'mac-only',
      name: 'Mac-only Agent',
      version: '2.1.0',
      description: 'Ships a download for macOS only',
      authors: ['Someone'],
      license: 'proprietary',
      distribution: { binary: { 'darwin-aarch64': { archive: `${fixture.base}/dl/mac.zip`, cmd: './agent', args: [], env: {} } } }
    }
  ]
  host = await Host.open({
    dataDir: join(root, 'data'),
    version: 'test',
    confirmCommand: confirmEverything,
    presets: [],
    initializeTimeoutMs: 20_000,
    registry: { url: fixture.feedUrl, platform: PLATFORM }
  })
  await host.request('projects.add', { cwd: root })
  browser = await launchBrowser()
  server = await serve(host)
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await host?.close()
  await fixture.stop()
  await removeDir(root)
})

// Each test's new window starts as a first window, not with the panes and choices the previous test left.
beforeEach(async () => {
  await resetWindowSettings(host)
})

async function openRegistry(page: Page): Promise<void> {
  await page.goto(server.url)
  await page.getByTestId('nav-agents').click()
  await page.getByTestId('open-registry').click()
  await page.getByTestId('registry-entry').first().waitFor()
}

/** The element's computed mask image (run in the page). */
function maskOf(el: unknown): string {
  return (globalThis as unknown as { getComputedStyle(e: unknown): { maskImage: string } }).getComputedStyle(el).maskImage
}

function entry(page: Page, id: string) {
  return page.locator(`[data-testid="registry-entry"][data-registry-id="${id}"]`)
}

describe('the ACP Registry on the Agents page', () => {
  it('lists, searches, installs, checks, updates, pins and uninstalls', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await openRegistry(page)

    await expect.poll(() => page.getByTestId('registry-entry').count()).toBe(3)
    await expect.poll(() => page.getByTestId('registry-source').textContent()).toMatch(/Fetched from the registry/)
    // The fixture agent's icon is a mask of its SVG; the others show a monogram.
    const mask = await entry(page, 'fixture-agent').getByTestId('registry-icon').evaluate(maskOf)
    expect(mask).toContain('data:image/svg+xml')
    await expect.poll(() => entry(page, 'py-agent').textContent()).toContain('Needs uv')
    await expect.poll(() => entry(page, 'mac-only').textContent()).toContain('No download for this platform (linux-x86_64)')
    console.log(`screenshot: ${await screenshot(page, 'e2e-registry-light')}`)

    await page.getByTestId('registry-search').fill('apache uv')
    await expect.poll(() => page.getByTestId('registry-entry').count()).toBe(1)
    await expect.poll(() => page.getByTestId('registry-entry').first().getAttribute('data-registry-id')).toBe('py-agent')
    await page.getByTestId('registry-search').fill('')

    // uvx without uv: the reason, and how to get it.
    await entry(page, 'py-agent').getByTestId('registry-install').click()
    await expect.poll(() => entry(page, 'py-agent').getByTestId('registry-error').textContent()).toContain('Install uv')

    await entry(page, 'fixture-agent').getByTestId('registry-install').click()
    // What it will run, and from where, before anything is downloaded: confirmed with the code serve printed.
    const confirmation = page.getByTestId('code-dialog')
    await confirmation.waitFor()
    expect(await confirmation.getByTestId('code-command-line').textContent()).toBe(
      join(root, 'data', 'agents', 'fixture-agent', '1.0.0', 'fixture', 'fixture-agent')
    )
    expect(await confirmation.textContent()).toContain(
      `after downloading ${fixture.feedUrl.replace(/registry\.json$/, '')}dl/fixture-agent-1.0.0.tar.gz`
    )
    expect(fixture.requests.filter((path) => path.startsWith('/dl/'))).toEqual([])
    console.log(`screenshot: ${await screenshot(page, 'e2e-registry-confirm-light')}`)
    await typeConsoleCode(page, server)
    await expect.poll(() => entry(page, 'fixture-agent').getByTestId('registry-installed').textContent()).toMatch(/installed 1\.0\.0/)
    // The agent is set up like any other, in the list and in the new-session picker.
    await expect.poll(() => page.getByTestId('agent-row').allTextContents()).toEqual([expect.stringContaining('Fixture Agent')])

    // The capability report, from the agent's page.
    await entry(page, 'fixture-agent').getByTestId('registry-open').click()
    await expect
      .poll(() => page.getByTestId('agent-origin').textContent())
      .toMatch(/the ACP Registry \(fixture-agent\), version 1\.0\.0 through a download/)
    await page.getByTestId('agent-check-run').click()
    const report = page.getByTestId('agent-check-report')
    await report.waitFor({ timeout: 30_000 })
    await expect.poll(() => report.locator('[data-check-line="session/load"]').textContent()).toMatch(/yes\s*worked/)
    await expect.poll(() => report.locator('[data-check-line="session/fork"]').textContent()).toMatch(/no\s*not offered/)
    await page.getByTestId('agent-check').scrollIntoViewIfNeeded()
    console.log(`screenshot: ${await screenshot(page, 'e2e-agent-check-light')}`)
    // Exported as markdown for a bug report.
    const download = page.waitForEvent('download')
    await page.getByTestId('agent-check-save-md').click()
    expect((await download).suggestedFilename()).toMatch(/^fixture-agent-check-\d{4}-\d{2}-\d{2}\.md$/)
    // Said in plain words in the project's menu, for the agent its new sessions start with.
    await page.getByTestId('nav-agents').click()
    await page.getByTestId('project').first().hover()
    await page.getByTestId('project-menu').first().click()
    await expect.poll(() => page.getByTestId('menu-note').textContent()).toMatch(/^Fixture Agent can load past sessions \(checked .+\)\.$/)
    await page.keyboard.press('Escape')

    // The registry lists 2.0.0: the update shows old and new; pinned, it is not offered.
    fixture.agents = [fixture.binaryAgent('2.0.0', PLATFORM), ...fixture.agents.slice(1)]
    await page.getByTestId('nav-agents').click()
    await page.getByTestId('open-registry').click()
    await page.getByTestId('registry-refresh').click()
    await expect.poll(() => entry(page, 'fixture-agent').getByTestId('registry-update').textContent()).toMatch(/Update 1\.0\.0 → 2\.0\.0/)
    await entry(page, 'fixture-agent').getByTestId('registry-pin').click()
    await expect.poll(() => entry(page, 'fixture-agent').getByTestId('registry-installed').textContent()).toContain('pinned')
    expect(await entry(page, 'fixture-agent').getByTestId('registry-update').count()).toBe(0)
    await entry(page, 'fixture-agent').getByTestId('registry-pin').click()
    await entry(page, 'fixture-agent').getByTestId('registry-update').click()
    await typeConsoleCode(page, server)
    await expect.poll(() => entry(page, 'fixture-agent').getByTestId('registry-installed').textContent()).toMatch(/installed 2\.0\.0/)
    expect(await entry(page, 'fixture-agent').getByTestId('registry-update').count()).toBe(0)

    // Uninstall, confirmed: the agent and its files go.
    await entry(page, 'fixture-agent').getByTestId('registry-uninstall').click()
    await entry(page, 'fixture-agent').getByTestId('registry-uninstall-confirm').click()
    await expect.poll(() => entry(page, 'fixture-agent').getByTestId('registry-installed').count()).toBe(0)
    await expect.poll(() => page.getByTestId('agent-row').count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })

  it('looks right in dark, with a report', async () => {
    const agent = await host.request('registry.install', { registryId: 'fixture-agent' })
    await host.request('agents.check', { agentId: agent.id })
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'dark' })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await openRegistry(page)
    console.log(`screenshot: ${await screenshot(page, 'e2e-registry-dark')}`)
    await entry(page, 'fixture-agent').getByTestId('registry-open').click()
    await page.getByTestId('agent-check').scrollIntoViewIfNeeded()
    await page.getByTestId('agent-check-report').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-agent-check-dark')}`)
    expect(problems).toEqual([])
    await context.close()
  })

  it('offline, the list bundled with the app serves, with the real registry’s icons, and says why', async () => {
    await host.request('registry.setUrl', { url: 'http://127.0.0.1:9/registry.json' })
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await openRegistry(page)
    await expect.poll(() => page.getByTestId('registry-source').textContent()).toMatch(/The list bundled with Switchboard \(\d{4}-\d{2}-\d{2}\)/)
    await expect
      .poll(() => page.getByTestId('registry-problem').textContent())
      .toContain('Could not reach the registry at http://127.0.0.1:9/registry.json')
    await expect.poll(() => entry(page, 'gemini').textContent()).toContain('Gemini CLI')
    const mask = await entry(page, 'gemini').getByTestId('registry-icon').evaluate(maskOf)
    expect(mask).toContain('data:image/svg+xml')
    console.log(`screenshot: ${await screenshot(page, 'e2e-registry-snapshot')}`)
    expect(problems).toEqual([])
    await context.close()
    await host.request('registry.setUrl', { url: '' })
  })

  it('shows the agents already set up (the presets) as such, with the version they run, and offers no install', async () => {
    const runs = (presetId: string) => PRESET_PACKAGES.find((p) => p.presetId === presetId)!
    const claude = runs('claude-code')
    const gemini = runs('gemini')
    // Set up as the presets are where their commands are not installed: through npx, at the pinned version.
    const added = [
      await host.request('agents.add', {
        name: 'Claude Code',
        transport: { kind: 'process', command: 'npx', args: ['-y', `${claude.npxPackage}@${claude.version}`], env: {} }
      }),
      await host.request('agents.add', {
        name: 'Gemini CLI',
        transport: { kind: 'process', command: 'npx', args: ['-y', `${gemini.npxPackage}@${gemini.version}`, '--acp'], env: {} }
      })
    ]
    // The list bundled with the app, as offline: it has both, at older versions (Claude's under its old package name).
    await host.request('registry.setUrl', { url: 'http://127.0.0.1:9/registry.json' })
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    try {
      await openRegistry(page)
      await expect
        .poll(() => entry(page, 'claude-code-acp').getByTestId('registry-configured').textContent())
        .toContain(`Set up · version ${claude.version}`)
      await expect.poll(() => entry(page, 'gemini').getByTestId('registry-configured').textContent()).toContain(`Set up · version ${gemini.version}`)
      for (const id of ['claude-code-acp', 'gemini']) {
        expect(await entry(page, id).getByTestId('registry-install').count()).toBe(0)
        expect(await entry(page, id).getByTestId('registry-update').count()).toBe(0)
      }
      // One the user has not set up is offered as before.
      expect(await entry(page, 'auggie').getByTestId('registry-install').count()).toBe(1)
      await entry(page, 'gemini').scrollIntoViewIfNeeded()
      console.log(`screenshot: ${await screenshot(page, 'e2e-registry-presets-light')}`)
      await page.emulateMedia({ colorScheme: 'dark' })
      console.log(`screenshot: ${await screenshot(page, 'e2e-registry-presets-dark')}`)
      await page.emulateMedia({ colorScheme: 'light' })
      // Open goes to the agent's own page.
      await entry(page, 'gemini').getByTestId('registry-open').click()
      await expect.poll(() => page.getByTestId('agent-details').textContent()).toContain('Gemini CLI')

      // A registry that lists a newer version of the package a preset runs offers to move to it, old → new.
      fixture.agents = [
        {
          id: 'gemini',
          name: 'Gemini CLI',
          version: '99.0.0',
          description: 'Google’s agent',
          authors: ['Google'],
          distribution: { npx: { package: '@google/gemini-cli@99.0.0', args: ['--experimental-acp'], env: {} } }
        }
      ]
      await host.request('registry.setUrl', { url: fixture.feedUrl })
      // Away from the agent's page (the button leaves the Agents page) and back to the registry.
      await page.getByTestId('nav-agents').click()
      await page.getByTestId('nav-agents').click()
      await page.getByTestId('open-registry').click()
      await page.getByTestId('registry-refresh').click()
      await expect.poll(() => entry(page, 'gemini').getByTestId('registry-update').textContent()).toMatch(`Update ${gemini.version} → 99.0.0`)
      expect(await entry(page, 'gemini').getByTestId('registry-install').count()).toBe(0)
      expect(problems).toEqual([])
    } finally {
      await context.close()
      await host.request('registry.setUrl', { url: '' })
      for (const agent of added) await host.request('agents.remove', { agentId: agent.id })
    }
  })

  it('adds a custom agent from a command line pasted whole, split for confirmation', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    await page.getByTestId('nav-agents').click()
    await page.getByTestId('add-agent').click()
    await page.getByTestId('agent-form-name').fill('Bar agent')
    await page.getByTestId('agent-form-command-line').fill(`FOO="a b" npx -y @foo/bar@1.2 --acp --flag "x y" --home $HOME`)
    // What will run, word by word: the program, each argument (one with a space in it), the variable.
    const split = page.getByTestId('agent-form-split')
    await expect.poll(() => split.getByTestId('split-command').textContent()).toBe('npx')
    expect(await split.getByTestId('split-arg').allTextContents()).toEqual(['-y', '@foo/bar@1.2', '--acp', '--flag', 'x y', '--home', '$HOME'])
    expect(await split.getByTestId('split-env').allTextContents()).toEqual(['FOO=a b'])
    console.log(`screenshot: ${await screenshot(page, 'e2e-agent-command-line-light')}`)
    // A line that needs a shell is refused, saying why, and nothing is saved.
    await page.getByTestId('agent-form-command-line').fill('my-agent --acp | tee log')
    await expect.poll(() => page.getByTestId('agent-form-command-line-error').textContent()).toContain("'|' needs a shell")
    await page.getByTestId('agent-form-save').click()
    await expect.poll(() => page.getByTestId('agent-form-error').textContent()).toContain('The command line cannot be run')
    expect((await host.request('agents.list', {})).map((a) => a.name)).not.toContain('Bar agent')

    await page.getByTestId('agent-form-command-line').fill(`FOO="a b" npx -y @foo/bar@1.2 --acp --flag "x y"`)
    await page.getByTestId('agent-form-save').click()
    await typeConsoleCode(page, server)
    await expect
      .poll(async () => (await host.request('agents.list', {})).find((a) => a.name === 'Bar agent'))
      .toMatchObject({
        transport: { kind: 'process', command: 'npx', args: ['-y', '@foo/bar@1.2', '--acp', '--flag', 'x y'], env: { FOO: 'a b' } }
      })
    expect(problems).toEqual([])
    await context.close()
  })
})
