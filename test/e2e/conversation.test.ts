import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import {
  launchBrowser,
  resetWindowSettings,
  RestartableHost,
  screenshot,
  typeConsoleCode,
  watchConsole,
  whileHostRestarts,
  chooseAgent
} from './browser'
import { screenshotBothThemes } from './themes'

/**
 * The vertical slice by clicking and typing: the built renderer in headless
 * Chromium, over the WebSocket transport, against the Host and the scripted
 * agent as real subprocess.
 */

let root: string
let dataDir: string
let projectDir: string
let browser: Browser
const app = new RestartableHost()

beforeAll(async () => {
  root = await tempDir('e2e')
  dataDir = join(root, 'data')
  projectDir = join(root, 'my-project')
  await mkdir(projectDir, { recursive: true })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await app.stop()
  await removeDir(root)
})

// Each test's new window starts as a first window, not with the panes and choices the previous test left.
beforeEach(async () => {
  if (app.started) await resetWindowSettings(app.host)
})

/** A new window on `url`, a new session of `agent` started from my-project in its sidebar; the window's console watched. */
async function newSessionWindow(
  url: string,
  agent: string | { label: string }
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(url)
  const project = page.getByTestId('project').filter({ hasText: 'my-project' })
  await chooseAgent(project, agent)
  await project.getByTestId('new-session').click()
  return { context, page, problems }
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('send').click()
}

describe('a conversation in the browser', () => {
  it('adds a project, talks to an agent, and picks the conversation up after a restart', async () => {
    const first = await app.start(dataDir)
    await app.host.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_CHUNK_DELAY_MS: '5' }))
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(first.url)

    // A relative path is refused with a message saying why.
    await page.getByTestId('add-project-path').fill('relative/folder')
    await page.getByTestId('add-project-submit').click()
    await expect.poll(() => page.getByTestId('add-project-error').textContent()).toMatch(/absolute/)

    await page.getByTestId('add-project-path').fill(projectDir)
    await page.getByTestId('add-project-submit').click()
    // A folder agents may work in is confirmed with the code serve printed, the dialog saying what agents get.
    await expect.poll(() => page.getByTestId('code-reach').textContent()).toContain(`may read and write files in ${projectDir}`)
    await typeConsoleCode(page, first)
    const project = page.getByTestId('project').filter({ hasText: 'my-project' })
    await project.waitFor()
    await project.getByTestId('new-session').click()
    await page.getByTestId('composer-input').waitFor()

    await send(
      page,
      '/think weighing the options\n/tool Format the code\n/say **Hello** from the `scripted` agent\n/stream 10\n/terminal echo "build ok"'
    )
    // The command is asked before it runs: the user allows it on its card.
    const card = page.getByTestId('permission')
    await expect.poll(() => card.textContent()).toContain('Run the command echo "build ok"')
    await card.getByTestId('permission-option').filter({ hasText: 'Allow once' }).click()
    await page.getByTestId('entry-stop').first().waitFor()
    expect(await page.getByTestId('entry-stop').first().textContent()).toBe('Finished')
    expect(await page.getByTestId('entry-user').count()).toBe(1)
    const reply = page.getByTestId('entry-assistant').first()
    expect(await reply.locator('strong').textContent()).toBe('Hello')
    expect(await reply.textContent()).toContain('chunk 10')
    expect(await page.getByTestId('entry-tool-call').first().textContent()).toContain('Format the code')
    expect(await page.getByTestId('entry-thought').count()).toBe(1)
    // A command the agent ran through the client, with its output and exit.
    expect(await page.getByTestId('terminal').textContent()).toMatch(/\$ echo "build ok".*exit 0.*build ok/s)
    console.log(`screenshot: ${await screenshot(page, 'e2e-conversation')}`)

    // Agent text is rendered as sanitised markdown: no script runs, no handler survives.
    await send(page, '/say <img src=x onerror="window.__pwned=1"> [click](javascript:window.__pwned=2)')
    await expect.poll(() => page.getByTestId('entry-stop').count()).toBe(2)
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined()
    expect(await page.locator('[data-testid=thread] img[onerror]').count()).toBe(0)
    expect(await page.locator('[data-testid=thread] a[href^="javascript:"]').count()).toBe(0)

    // Restart the host: the session is listed, readable at once, and continues through session/load.
    await whileHostRestarts(problems, async () => {
      await app.stop()
      await page.goto((await app.start(dataDir)).url)
    })
    await page.getByTestId('session-item').first().click()
    await expect.poll(() => page.getByTestId('entry-user').count()).toBe(2)
    expect(await page.getByTestId('session-status').textContent()).toBe('Idle')
    await send(page, 'and one more thing')
    await expect.poll(() => page.getByTestId('entry-stop').count()).toBeGreaterThanOrEqual(1)
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('You said: and one more thing')
    // The replay replaced the view: each earlier message is there once.
    expect(await page.getByTestId('entry-user').count()).toBe(3)
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-continued')).join(', ')}`)

    expect(problems).toEqual([])
    await context.close()
  })

  it('changes mode, model and options from the session header, and shows usage', async () => {
    await app.stop()
    const running = await app.start(dataDir)
    const agent = await app.host.request(
      'agents.add',
      scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_SESSION_STATE: '1' }, 'Configurable')
    )
    const { context, page, problems } = await newSessionWindow(running.url, agent.id)
    await page.getByTestId('mode-select').waitFor()
    expect(await page.getByTestId('mode-select').inputValue()).toBe('ask')

    await page.getByTestId('mode-select').selectOption('code')
    await expect.poll(() => page.getByTestId('mode-select').inputValue()).toBe('code')
    await page.getByTestId('config-model').selectOption('smart')
    await expect.poll(() => page.getByTestId('config-model').inputValue()).toBe('smart')
    await page.getByTestId('config-verbose').check()
    await expect.poll(() => page.getByTestId('config-verbose').isChecked()).toBe(true)

    // Files dropped on the composer: a text file is embedded; an image is refused, as this agent takes none.
    // (A string, as this file is type-checked without the DOM library.)
    await page.evaluate(`(() => {
      const data = new DataTransfer()
      data.items.add(new File(['hello'], 'notes.txt', { type: 'text/plain' }))
      data.items.add(new File([new Uint8Array([137, 80, 78, 71])], 'shot.png', { type: 'image/png' }))
      document.querySelector('form.composer').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }))
    })()`)
    await expect.poll(() => page.getByTestId('attachment').allTextContents()).toEqual(['File: notes.txt ✕'])
    expect(await page.getByTestId('attach-error').textContent()).toBe('Configurable does not accept images')
    await send(page, '/blocks')
    await expect
      .poll(async () => (await page.getByTestId('entry-assistant').last().textContent())?.trim())
      .toBe('blocks: text, resource(file:///notes.txt: 5 chars)')

    await send(page, '/state\n/usage')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('mode=code model=smart verbose=true')
    await expect.poll(() => page.getByTestId('usage').textContent()).toMatch(/1\.2K \/ 200K tokens · \$0\.42/)
    console.log(`screenshot: ${await screenshot(page, 'e2e-session-controls')}`)
    expect(problems).toEqual([])
    await context.close()
  })

  it('imports sessions made elsewhere, forks one and deletes it, from the sidebar and header', async () => {
    await app.stop()
    const running = await app.start(dataDir)
    const stateDir = join(root, 'lifecycle-state')
    await mkdir(stateDir, { recursive: true })
    const history = [
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'How do I run the tests?' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Run `npm test`.' } }
    ]
    await writeFile(join(stateDir, 'sess-elsewhere.json'), JSON.stringify(history))
    await writeFile(
      join(stateDir, 'sess-elsewhere.meta.json'),
      JSON.stringify({ cwd: projectDir, title: 'Asked in the terminal', updatedAt: new Date().toISOString() })
    )
    const agent = await app.host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: 'list,fork,delete' }, 'Lifecycle'))

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(running.url)
    const project = page.getByTestId('project').filter({ hasText: 'my-project' })
    await chooseAgent(project, agent.id)
    await project.hover()
    await project.getByTestId('project-menu').click()
    await page.getByTestId('menu-import').click()
    await expect.poll(() => project.getByTestId('import-note').textContent()).toBe('Imported 1 session.')

    await page.getByTestId('session-item').filter({ hasText: 'Asked in the terminal' }).click()
    // At rest, nothing calls for action: the agent starts from the session's menu (or when a message is sent).
    expect(await page.getByTestId('continue-session').count()).toBe(0)
    await page.getByTestId('session-more').click()
    await page.getByTestId('menu-continue').click()
    await expect.poll(() => page.getByTestId('entry-assistant').first().textContent()).toContain('Run npm test.')

    await page.getByTestId('fork-session').click()
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('Fork of Asked in the terminal')
    expect(await page.getByTestId('entry-user').first().textContent()).toContain('How do I run the tests?')
    console.log(`screenshot: ${await screenshot(page, 'e2e-fork')}`)

    await page.getByTestId('delete-session').click()
    await page.getByTestId('confirm-delete').click()
    await expect.poll(() => page.getByTestId('session-item').filter({ hasText: 'Fork of' }).count()).toBe(0)
    expect(await page.getByTestId('session-item').filter({ hasText: 'Asked in the terminal' }).count()).toBe(1)
    // The pane goes back to the conversation the fork was made from, not to a blank pane.
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('Asked in the terminal')
    await expect.poll(() => page.getByTestId('entry-assistant').first().textContent()).toContain('Run npm test.')
    console.log(`screenshot: ${await screenshot(page, 'e2e-fork-deleted')}`)
    expect(problems).toEqual([])
    await context.close()
  })

  it('answers a permission request from the keyboard, remembers "always" as the card says, and revokes it', async () => {
    const { context, page, problems } = await newSessionWindow(app.server.url, { label: 'Scripted' })
    await send(page, '/permission-always execute')
    await page.getByTestId('permission-option').first().waitFor()
    // In one order whatever the agent's ("Always allow" came first): "Allow" once first, and focused.
    expect(await page.getByTestId('permission-option').allTextContents()).toEqual(['1 Allow', '2 Always allow', '3 Reject', '4 Always reject'])
    expect(await page.evaluate('document.activeElement?.textContent?.trim()')).toBe('1 Allow')
    expect(await page.getByTestId('permission-always').textContent()).toContain(
      '“Always” remembers running Run dangerous command (that exact command only), for this agent only'
    )
    console.log(`screenshot: ${await screenshot(page, 'e2e-permission')}`)
    // The card took the focus: the digit answers at once.
    await page.keyboard.press('2')
    await expect.poll(() => page.getByTestId('entry-permission').first().textContent()).toContain('Allowed: Run dangerous command')
    expect(await page.getByTestId('entry-permission').first().textContent()).toContain(
      'Always allow, from now on for running “Run dangerous command” (that exact command only)'
    )
    await expect.poll(() => page.getByTestId('permission-rules').textContent()).toContain('1 remembered permission')

    await send(page, '/permission-always execute')
    await expect.poll(() => page.getByTestId('entry-permission').count()).toBe(2)
    expect(await page.getByTestId('entry-permission').last().textContent()).toContain(
      'remembered answer (Allow) for running “Run dangerous command” (that exact command only)'
    )
    await page.getByTestId('permission-rules').locator('summary').click()
    expect(await page.getByTestId('permission-rule').allTextContents()).toEqual([
      expect.stringContaining('Always allow running Run dangerous command (that exact command only)')
    ])
    await page.getByTestId('revoke-permission').click()
    await expect.poll(() => page.getByTestId('permission-rules').count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })

  it('names a Codex MCP rule by its server and tool, and its "for this session" for what it is, on the card and in the rules', async () => {
    const { context, page, problems } = await newSessionWindow(app.server.url, { label: 'Scripted' })
    // As codex-acp asks: every MCP approval titled alike, the server and tool only in the raw input.
    const spec = {
      kind: 'other',
      title: 'Approve MCP tool call',
      announced: false,
      rawInput: {
        server_name: 'docs',
        id: 'mcp_tool_call_approval_call-1',
        request: {
          mode: 'form',
          _meta: { codex_approval_kind: 'mcp_tool_call', persist: ['session', 'always'] },
          message: 'Allow the docs MCP server to run tool "search_docs"?'
        }
      },
      options: [
        { optionId: 'approved', name: 'Allow', kind: 'allow_once' },
        { optionId: 'approved-for-session', name: 'Allow for this session', kind: 'allow_always' },
        { optionId: 'approved-always', name: "Allow and don't ask again", kind: 'allow_always' },
        { optionId: 'cancel', name: 'Cancel', kind: 'reject_once' }
      ]
    }
    await send(page, `/permission-call ${JSON.stringify(spec)}`)
    await page.getByTestId('permission-always').waitFor()
    expect(await page.getByTestId('permission-option').allTextContents()).toEqual([
      '1 Allow',
      '2 Allow for this session',
      '3 Always allow',
      '4 Cancel'
    ])
    expect(await page.getByTestId('permission-always').textContent()).toContain(
      '“Always” remembers the tool search_docs of the MCP server docs, and no other, for this agent only; “for this session” the same'
    )
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-permission-mcp')).join(', ')}`)
    await page.keyboard.press('3')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permission: approved')
    await page.getByTestId('permission-rules').locator('summary').click()
    expect(await page.getByTestId('permission-rule').allTextContents()).toEqual([
      expect.stringContaining('Always allow the tool search_docs of the MCP server docs, and no other')
    ])
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-permission-mcp-rule')).join(', ')}`)
    await page.getByTestId('revoke-permission').click()
    await expect.poll(() => page.getByTestId('permission-rules').count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })

  it('says what "always" covers for a Claude Code tool, offers none for a file outside the project, and lists each rule with its scope', async () => {
    const { context, page, problems } = await newSessionWindow(app.server.url, { label: 'Scripted' })
    const call = (spec: Record<string, unknown>): string => `/permission-call ${JSON.stringify(spec)}`
    const command = `node -e "require('fs').readdirSync('.').forEach((f) => console.log(f))"`
    await send(page, call({ tool: 'Bash', kind: 'execute', title: command, rawInput: { command } }))
    await page.getByTestId('permission-always').waitFor()
    expect(await page.getByTestId('permission-option').allTextContents()).toEqual(['1 Allow', '2 Always allow', '3 Reject'])
    expect(await page.getByTestId('permission-option').nth(1).getAttribute('title')).toContain('The agent offered “Always Allow all Bash”')
    expect(await page.getByTestId('permission-always').textContent()).toContain(
      `“Always” remembers running ${command} with Bash (that exact command only), for this agent only`
    )
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-permission-command')).join(', ')}`)
    await page.keyboard.press('2')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permission: allow')

    const notes = join(projectDir, 'notes.md')
    await send(page, call({ tool: 'Edit', kind: 'edit', title: 'Edit notes.md', locations: [notes], rawInput: { file_path: notes } }))
    await page.getByTestId('permission-always').waitFor()
    expect(await page.getByTestId('permission-always').textContent()).toContain(
      '“Always” remembers Edit on any file inside my-project, for this agent only'
    )
    await page.keyboard.press('2')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permission: allow')

    // A file outside the project: asked, with no "always" to choose, and why.
    const outside = join(root, 'elsewhere', 'notes.md')
    await send(page, call({ tool: 'Edit', kind: 'edit', title: `Edit ${outside}`, locations: [outside], rawInput: { file_path: outside } }))
    await page.getByTestId('permission-always').waitFor()
    expect(await page.getByTestId('permission-option').allTextContents()).toEqual(['1 Allow', '2 Reject'])
    expect(await page.getByTestId('permission-always').textContent()).toContain(
      `No “always” for this one: it names ${outside}, outside my-project's folders`
    )
    await page.getByTestId('permission-rules').locator('summary').click()
    expect(await page.getByTestId('permission-rule').allTextContents()).toEqual([
      expect.stringContaining(`Always allow running ${command} with Bash (that exact command only)`),
      expect.stringContaining('Always allow Edit on any file inside my-project')
    ])
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-permission-outside')).join(', ')}`)
    await page.keyboard.press('2')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permission: reject')
    expect(await page.getByTestId('entry-permission').last().textContent()).toContain(`Refused: Edit ${outside}`)

    // Revoked one by one, each by what it covers.
    await page.getByRole('button', { name: 'Revoke: Always allow Edit on any file inside my-project' }).click()
    await expect.poll(() => page.getByTestId('permission-rule').count()).toBe(1)
    await page.getByTestId('revoke-permission').click()
    await expect.poll(() => page.getByTestId('permission-rules').count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })

  it('shows two permission requests asked at once; each is answered on its own, by click or, for the first, by key', async () => {
    const { context, page, problems } = await newSessionWindow(app.server.url, { label: 'Scripted' })
    await send(page, '/permissions 2')
    const cards = page.getByTestId('permission')
    await expect.poll(() => cards.count()).toBe(2)
    expect(await cards.allTextContents()).toEqual([expect.stringContaining('Step 1 of 2'), expect.stringContaining('Step 2 of 2')])
    expect(await page.getByTestId('permissions-waiting').textContent()).toContain('2 permission requests waiting')
    console.log(`screenshot: ${await screenshot(page, 'e2e-two-permissions')}`)

    // A click answers the card it is in: the second goes, the first stays.
    await cards.nth(1).getByTestId('permission-option').filter({ hasText: 'Reject' }).click()
    await expect.poll(() => cards.count()).toBe(1)
    expect(await cards.first().textContent()).toContain('Step 1 of 2')
    // The keys answer the first (now the only) card.
    await page.keyboard.press('1')
    await expect.poll(() => cards.count()).toBe(0)
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permissions: allow, reject')
    expect(problems).toEqual([])
    await context.close()
  })

  it('leads into signing in when an agent needs it, then starts the session', async () => {
    const agent = await app.host.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_AUTH: '1' }, 'Locked'))
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(app.server.url)
    const project = page.getByTestId('project').filter({ hasText: 'my-project' })
    await chooseAgent(project, agent.id)
    await project.getByTestId('new-session').click()
    // The main pane leads into it, once; nothing under the project.
    const panel = page.getByTestId('agent-problem-panel')
    await expect.poll(() => panel.getByTestId('agent-problem-sentence').textContent()).toBe('Locked needs you to sign in first.')
    expect(await project.getByTestId('new-session-error').count()).toBe(0)
    expect(await project.getByTestId('sign-in').count()).toBe(0)
    await panel.getByTestId('sign-in-var-SCRIPTED_KEY').fill('sekret')
    console.log(`screenshot: ${await screenshot(page, 'e2e-sign-in')}`)
    await panel.getByTestId('sign-in-api-key').click()
    await expect.poll(() => page.getByTestId('session-title').textContent()).toBe('New session')
    expect(await page.getByTestId('agent-status').textContent()).toContain('Locked')
    expect(await page.getByTestId('sign-in').count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })
})
