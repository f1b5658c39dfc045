import { mkdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { findExecutable } from '../../electron/host/child-processes/executables'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { startTinyHttpServer, tinyServerCommand, type TinyHttpServer } from '../mcp/tiny-server'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, typeConsoleCode, watchConsole } from './browser'
import { screenshotBothThemes } from './themes'

/**
 * The MCP page by clicking and typing: add a server with a secret, test its
 * connection against a real MCP server, start a session and see exactly what
 * the agent was given (and what was left out); import from another app's file.
 */

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'mcp')
let root: string
let browser: Browser
let host: Host
let server: RunningServer
let tinyHttp: TinyHttpServer

beforeAll(async () => {
  root = await tempDir('e2e-mcp')
  await mkdir(join(root, 'my-project'), { recursive: true })
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  tinyHttp = await startTinyHttpServer()
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await tinyHttp?.close()
  await removeDir(root)
})

// Each test's new window starts as a first window, not with the panes and choices the previous test left.
beforeEach(async () => {
  await resetWindowSettings(host)
})

async function fillPair(page: Page, kind: 'env' | 'header', name: string, value: string, secret = false): Promise<void> {
  await page.getByTestId(`mcp-add-${kind}`).click()
  await page.getByTestId(`mcp-${kind}-name`).last().fill(name)
  await page.getByTestId(`mcp-${kind}-value`).last().fill(value)
  if (secret) await page.getByTestId(`mcp-${kind}-secret`).last().check()
}

describe('the MCP page in the browser', () => {
  it('adds a server, tests its connection, and starts a session with it', async () => {
    await host.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_MCP: 'http' }, 'HTTP-capable agent'))
    await host.request('projects.add', { cwd: join(root, 'my-project') })
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)

    await page.getByTestId('open-mcp').click()
    await page.getByTestId('mcp-empty').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-mcp-empty')}`)

    // A form left empty says what is missing.
    await page.getByTestId('mcp-add').click()
    await page.getByTestId('mcp-save').click()
    await expect
      .poll(() => page.getByTestId('mcp-form').getByRole('alert').allTextContents())
      .toEqual(['Give the server a name (agents show it beside its tools).', 'Which command starts the server? (e.g. npx, uvx, or a path)'])

    // The tiny MCP server, started with a bare `node` (found on PATH), with a secret the server checks.
    const tiny = tinyServerCommand()
    await page.getByTestId('mcp-name').fill('tiny')
    await page.getByTestId('mcp-command').fill('node')
    await page.getByTestId('mcp-args').fill(tiny.args.join('\n'))
    await fillPair(page, 'env', 'TINY_GREETING', 'bonjour')
    await fillPair(page, 'env', 'TINY_REQUIRE_TOKEN', 'open-sesame')
    await fillPair(page, 'env', 'TINY_TOKEN', 'open-sesame', true)
    console.log(`screenshot: ${await screenshot(page, 'e2e-mcp-form')}`)
    await page.getByTestId('mcp-save').click()
    // A local command: saved once confirmed with the code serve printed.
    await typeConsoleCode(page, server)
    const row = page.locator('[data-testid=mcp-profile][data-name="tiny"]')
    await row.waitFor()
    expect(await row.textContent()).toContain('TINY_TOKEN (secret)')

    await row.getByTestId('mcp-test').click()
    const result = row.getByTestId('mcp-test-result')
    await result.waitFor()
    expect(await result.textContent()).toContain('Connected to tiny-mcp')
    expect(await row.getByTestId('mcp-test-tools').textContent()).toContain('echo')
    expect(await row.getByTestId('mcp-test-prompts').textContent()).toContain('Says bonjour')
    expect(await row.getByTestId('mcp-test-resources').textContent()).toContain('tiny://readme')

    // An SSE server, which this agent cannot take: it will be left out, visibly.
    await page.getByTestId('mcp-add').click()
    await page.getByTestId('mcp-name').fill('legacy')
    await page.getByTestId('mcp-transport-sse').check()
    await page.getByTestId('mcp-url').fill(tinyHttp.sseUrl)
    await page.getByTestId('mcp-save').click()
    const legacy = page.locator('[data-testid=mcp-profile][data-name="legacy"]')
    await legacy.getByTestId('mcp-test').click()
    await expect.poll(() => legacy.getByTestId('mcp-test-result').textContent()).toContain('Connected to tiny-mcp')

    expect(await row.getByTestId('mcp-last-test').textContent()).toBe('✓ Connected')
    // One switch per server: on its own, on or off in every project; with a project picked, on or off there.
    expect(await row.getByTestId('mcp-switch').getAttribute('aria-label')).toBe('tiny on')
    await page.getByTestId('mcp-project-select').selectOption({ label: 'my-project' })
    await expect.poll(() => row.getByTestId('mcp-switch').getAttribute('aria-label')).toBe('tiny on in my-project')
    expect(await row.getByTestId('mcp-switch').isChecked()).toBe(true)
    expect(await row.locator('input[type=checkbox]').count()).toBe(1)
    console.log(`screenshot: ${await screenshot(page, 'e2e-mcp-page')}`)

    // A session in the project gets the tiny server (its command as an absolute path, its secret), not the SSE one.
    const project = page.getByTestId('project').filter({ hasText: 'my-project' })
    await project.getByTestId('new-session').click()
    await page.getByTestId('composer-input').waitFor()
    expect(await page.getByTestId('mcp-page').count()).toBe(0)
    const sessionMcp = page.getByTestId('session-mcp')
    await expect.poll(() => sessionMcp.locator('summary').textContent()).toMatch(/MCP: tiny\s*· 1 left out/)
    // Its mark says what its last test found.
    expect(await page.getByTestId('session-mcp-given').getAttribute('data-test')).toBe('ok')
    expect(await page.getByTestId('session-mcp-left-out').textContent()).toContain(
      'legacy SSE · v1 left out: HTTP-capable agent does not take MCP servers over SSE (it does not announce mcpCapabilities.sse)'
    )
    await page.getByTestId('composer-input').fill('/mcp')
    await page.getByTestId('send').click()
    await page.getByTestId('entry-stop').first().waitFor()
    const reply = (await page.getByTestId('entry-assistant').last().textContent()) ?? ''
    const given = JSON.parse(reply.trim().slice('mcpServers='.length)) as unknown
    expect(given).toEqual([
      {
        name: 'tiny',
        command: await findExecutable('node'),
        args: tiny.args,
        env: [
          { name: 'TINY_GREETING', value: 'bonjour' },
          { name: 'TINY_REQUIRE_TOKEN', value: 'open-sesame' },
          { name: 'TINY_TOKEN', value: 'open-sesame' }
        ]
      }
    ])
    console.log(`screenshot: ${await screenshot(page, 'e2e-mcp-session')}`)

    // Editing keeps a stored secret that is left blank (the server still gets its token), and makes version 2;
    // the session keeps its record of version 1.
    await page.getByTestId('open-mcp').click()
    await row.getByTestId('mcp-edit').click()
    expect(await page.getByTestId('mcp-env-value').nth(2).inputValue()).toBe('')
    await page.getByTestId('mcp-env-value').first().fill('salut')
    await page.getByTestId('mcp-save').click()
    await typeConsoleCode(page, server)
    await expect.poll(() => row.textContent()).toContain('v2')
    await row.getByTestId('mcp-test').click()
    await expect.poll(() => row.getByTestId('mcp-test-prompts').textContent()).toContain('Says salut')
    const [record] = await host.request('sessions.list', {})
    expect(record.mcpServers?.map((s) => [s.name, s.version])).toEqual([['tiny', 1]])

    // Switched off for the project: sessions there no longer get it.
    await row.getByTestId('mcp-switch').uncheck()
    await expect.poll(async () => Object.values((await host.request('mcp.list', {})).disabled).flat()).toHaveLength(1)

    expect(problems).toEqual([])
    await context.close()
  }, 180_000)

  it('imports servers from another app’s file, with secrets offered for the secret store, in dark mode', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    // The sidebar counts the servers from the start, before the MCP page is opened.
    await expect.poll(() => page.getByTestId('open-mcp').locator('.count').textContent()).toBe('2')
    await page.getByTestId('open-mcp').click()
    await page.getByTestId('mcp-open-import').click()
    // The five apps' files for this OS, found or not.
    await expect.poll(() => page.getByTestId('mcp-import-source').count()).toBe(5)

    await page.getByTestId('mcp-import-path').fill(join(fixtures, 'claude_desktop_config.json'))
    await page.getByTestId('mcp-import-preview').click()
    await page.getByTestId('mcp-import-candidates').waitFor()
    expect(await page.getByTestId('mcp-import-status').allTextContents()).toEqual(['New', 'New'])
    const candidates = await page.getByTestId('mcp-import-candidates').textContent()
    expect(candidates).toContain('ghp••••••789')
    expect(candidates).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789')
    expect(candidates).toContain('broken: It has neither a command nor a url.')
    expect(await page.getByTestId('mcp-import-secret').isChecked()).toBe(true)
    console.log(`screenshot: ${await screenshot(page, 'e2e-mcp-import-dark')}`)

    await page.getByTestId('mcp-import-apply').click()
    await typeConsoleCode(page, server)
    await expect.poll(() => page.getByTestId('mcp-message').textContent()).toBe('Imported 2 servers.')
    const github = (await host.request('mcp.list', {})).profiles.find((p) => p.name === 'github')
    expect(github?.env).toEqual([{ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', value: '', secret: true }])

    // A server that dies at start: its exit code and the end of its stderr are shown.
    const tiny = tinyServerCommand()
    await host.request('mcp.save', {
      name: 'needs-token',
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      env: [{ name: 'TINY_REQUIRE_TOKEN', value: 'x' }]
    })
    const failing = page.locator('[data-testid=mcp-profile][data-name="needs-token"]')
    await failing.getByTestId('mcp-test').click()
    await failing.getByTestId('mcp-test-result').waitFor()
    expect(await failing.getByTestId('mcp-test-exit').textContent()).toBe('2')
    expect(await failing.getByTestId('mcp-test-result').textContent()).toContain('tiny-mcp: TINY_TOKEN is missing or wrong')
    // The failure is kept with the server: shown on its row, and new sessions are not given it (said on the session).
    await expect.poll(() => failing.getByTestId('mcp-last-test').textContent()).toBe('✕ Test failed')
    expect(await failing.getByTestId('mcp-left-out-note').textContent()).toContain('new sessions are not given it')
    console.log(`screenshot: ${await screenshot(page, 'e2e-mcp-page-dark')}`)
    // (The imported docker server may not be installed here: a session would be refused for it.)
    await host.request('mcp.delete', { id: github?.id ?? '' })
    const project = page.getByTestId('project').filter({ hasText: 'my-project' })
    await project.getByTestId('new-session').click()
    const leftOut = page.getByTestId('session-mcp-left-out').filter({ hasText: 'needs-token' })
    await expect.poll(() => leftOut.textContent()).toMatch(/needs-token stdio · v1 left out: its last Test connection failed \(.*TINY_TOKEN/)
    console.log(`screenshot: ${await screenshot(page, 'e2e-mcp-left-out-dark')}`)
    expect(problems).toEqual([])
    await context.close()
  }, 180_000)

  it('shows which servers the agent started, failed or did not report, and offers to trust a folder Gemini CLI does not', async () => {
    await mkdir(join(root, 'run-project'), { recursive: true })
    const project = await host.request('projects.add', { cwd: join(root, 'run-project') })
    const tiny = tinyServerCommand()
    const only = { scope: 'projects' as const, projectIds: [project.id] }
    await host.request('mcp.save', { name: 'echo-ok', transport: 'stdio', command: tiny.command, args: tiny.args, env: [], ...only })
    // Exits at start (no token): inside the agent it crashes, with no Test connection run to warn of it.
    await host.request('mcp.save', {
      name: 'crashy',
      transport: 'stdio',
      command: tiny.command,
      args: tiny.args,
      env: [{ name: 'TINY_REQUIRE_TOKEN', value: 'x' }],
      ...only
    })
    // Other tests' servers that reach every project are switched off here.
    for (const p of (await host.request('mcp.list', {})).profiles) {
      if (p.name !== 'echo-ok' && p.name !== 'crashy')
        await host.request('mcp.setProjectEnabled', { projectId: project.id, profileId: p.id, enabled: false })
    }
    const plain = await host.request('agents.add', scriptedAgent(join(root, 'run-agent'), {}, 'Plain agent'))
    const ran = await host.request('sessions.new', { projectId: project.id, agentId: plain.id })
    await host.request('sessions.prompt', { id: ran.id, text: '/mcp-call echo-ok echo' })
    await host.request('sessions.prompt', { id: ran.id, text: '/mcp-call crashy echo' })
    // An agent that answers to the name of Gemini CLI, with a home of its own: no rule trusts the folder there.
    const geminiHome = join(root, 'gemini-home')
    const gemini = await host.request(
      'agents.add',
      scriptedAgent(join(root, 'gemini-agent'), { SCRIPTED_AGENT_NAME: 'gemini-cli', HOME: geminiHome }, 'Gemini CLI')
    )
    const refused = await host.request('sessions.new', { projectId: project.id, agentId: gemini.id })

    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    await page.locator(`[data-session-id="${ran.id}"]`).first().click()
    const sessionMcp = page.getByTestId('session-mcp')
    // A failure opens the list by itself.
    await expect.poll(() => sessionMcp.locator('summary').textContent()).toMatch(/MCP: echo-ok, crashy\s*· 1 failed/)
    expect(
      await page.getByTestId('session-mcp-run').evaluateAll((els) => els.map((e) => [e.getAttribute('data-state'), e.textContent?.trim()]))
    ).toEqual([
      ['started', 'started'],
      ['failed', 'failed']
    ])
    const crashed = page.getByTestId('session-mcp-given').filter({ hasText: 'crashy' })
    expect(await crashed.textContent()).toMatch(/its tool echo could not reach it: MCP server 'crashy': .*Connection closed/)
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-mcp-run-states')).join(', ')}`)

    await page.locator(`[data-session-id="${refused.id}"]`).first().click()
    const notice = page.getByTestId('session-mcp-untrusted')
    await notice.waitFor()
    expect(await notice.textContent()).toContain('Gemini CLI does not start MCP servers in folders it does not trust')
    expect(await page.getByTestId('session-mcp-run').evaluateAll((els) => els.map((e) => e.getAttribute('data-state')))).toEqual([
      'not_started',
      'not_started'
    ])
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-mcp-untrusted')).join(', ')}`)
    // Trusting is confirmed outside the page (serve's console code), then written to Gemini CLI's own file.
    const trust = page.getByTestId('session-mcp-trust')
    await trust.focus()
    await page.keyboard.press('Enter')
    await typeConsoleCode(page, server)
    await page.getByTestId('session-mcp-restart').waitFor()
    const file = JSON.parse(await readFile(join(geminiHome, '.gemini', 'trustedFolders.json'), 'utf8')) as Record<string, string>
    expect(file).toEqual({ [join(root, 'run-project')]: 'TRUST_FOLDER' })
    console.log(`screenshot: ${await screenshot(page, 'e2e-mcp-trusted-restart-light')}`)
    expect(problems).toEqual([])
    await context.close()
  }, 180_000)
})
