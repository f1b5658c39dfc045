import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, watchConsole } from './browser'

/**
 * "Continue with…" in the browser (issue 39, point 1), with two scripted agents named as two real ones: from the
 * session header's menu (a dialog of the other agents and presets, by keyboard) and from the palette; the new
 * session opens with the conversation attached to its message box (a chip), which the first message takes along;
 * both sessions link to each other in their headers and sidebar rows. Light and dark.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer
let projectId: string
let claudeId: string
const mod = process.platform === 'darwin' ? 'Meta' : 'Control'

beforeAll(async () => {
  root = await tempDir('e2e-hand-off')
  await mkdir(join(root, 'shop'), { recursive: true })
  const scripts = join(root, 'scripts.json')
  await writeFile(
    scripts,
    JSON.stringify({
      'Add a health check to the API':
        '/plan Add GET /health;Test it;Document it\n/tool Read src/server.ts\n/say I added `GET /health` returning `{ ok: true }`; the test is next.'
    })
  )
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  const state = join(root, 'agent-state')
  claudeId = (
    await host.request(
      'agents.add',
      scriptedAgent(state, { SCRIPTED_AGENT_SCRIPTS: scripts, SCRIPTED_AGENT_PROMPT: 'image,embeddedContext' }, 'Claude Code')
    )
  ).id
  await host.request('agents.add', scriptedAgent(state, { SCRIPTED_AGENT_PROMPT: '' }, 'Codex'))
  projectId = (await host.request('projects.add', { cwd: join(root, 'shop') })).id
  await resetWindowSettings(host)
}, 60_000)

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

async function withSession(image = false): Promise<string> {
  const session = await host.request('sessions.new', { projectId, agentId: claudeId })
  await host.request('sessions.prompt', { id: session.id, text: 'Add a health check to the API' })
  if (image) {
    const data = Buffer.from('png').toString('base64')
    await host.request('sessions.prompt', {
      id: session.id,
      text: 'It should look like this',
      attachments: [{ type: 'image', data, mimeType: 'image/png' }]
    })
  }
  return session.id
}

async function openPage(scheme: 'light' | 'dark'): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme: scheme })
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(server.url)
  await page.getByTestId('session-item').first().waitFor()
  return { page, problems }
}

const focusedTestId = (page: Page): Promise<string | null> => page.evaluate("document.activeElement?.getAttribute('data-testid') ?? null")

describe('hand-off in the browser', () => {
  it('from the header menu, by keyboard: the new session carries the conversation, both link to each other (light)', async () => {
    const sourceId = await withSession()
    const { page, problems } = await openPage('light')
    await page.locator(`[data-session-id="${sourceId}"] [data-testid="session-open"]`).click()
    await page.getByTestId('session-title').filter({ hasText: 'Add a health check' }).waitFor()

    await page.getByTestId('session-more').focus()
    await page.keyboard.press('Enter')
    await page.getByTestId('menu-continue-with').waitFor()
    await page.getByTestId('menu-continue-with').focus()
    await page.keyboard.press('Enter')
    const dialog = page.getByTestId('continue-with-dialog')
    await dialog.waitFor()
    expect(await focusedTestId(page)).toMatch(/^continue-with-agent:/)
    expect(await dialog.textContent()).toContain('Codex')
    expect(await dialog.textContent()).not.toMatch(/Claude Code\s*agent/)
    console.log(`screenshot: ${await screenshot(page, 'e2e-hand-off-dialog-light')}`)
    await page.keyboard.press('Enter')

    // The new session, with Codex, the conversation attached to its message box.
    await page.getByTestId('hand-off-seed').waitFor()
    expect(await page.getByTestId('handed-off-from').textContent()).toContain('Add a health check')
    expect(await page.getByTestId('hand-off-links').textContent()).toContain('with Claude Code')
    expect(await page.getByTestId('hand-off-seed').textContent()).toMatch(
      /Conversation: “Add a health check to the API” with Claude Code\s*· \d+k characters, as text/
    )
    expect(await page.getByTestId('composer-input').getAttribute('placeholder')).toContain('Tell Codex what to do next')
    console.log(`screenshot: ${await screenshot(page, 'e2e-hand-off-new-light')}`)

    // The first message takes it along; the bubble shows what was typed.
    await page.getByTestId('composer-input').fill('Write the test for it')
    await page.keyboard.press('Enter')
    await page.getByTestId('hand-off-seed').waitFor({ state: 'detached' })
    await expect.poll(async () => (await page.getByTestId('entry-user').allTextContents()).join(' ')).toContain('Write the test for it')
    const newId = (await host.request('sessions.list', { projectId })).find((s) => s.handedOffFrom === sourceId)?.id
    expect(newId).toBeTruthy()
    const prompt = (await host.request('sessions.open', { id: newId! })).records.find((r) => r.t === 'prompt')
    expect(prompt?.t === 'prompt' && prompt.content[0]?.type === 'text' && prompt.content[0].text).toContain('I added `GET /health`')

    // The sidebar says it in both rows; the link goes back by keyboard, and the original names where it continues.
    expect(await page.locator(`[data-session-id="${newId}"] [data-testid="session-item-hand-off"]`).textContent()).toContain('from Claude Code')
    await page.getByTestId('handed-off-from').focus()
    await page.keyboard.press('Enter')
    await page.getByTestId('handed-off-to').waitFor()
    expect(await page.getByTestId('hand-off-links').textContent()).toContain('Continued in')
    expect(await page.getByTestId('hand-off-links').textContent()).toContain('with Codex')
    expect(await page.locator(`[data-session-id="${sourceId}"] [data-testid="session-item-hand-off"]`).textContent()).toContain(
      'continued with Codex'
    )
    console.log(`screenshot: ${await screenshot(page, 'e2e-hand-off-source-light')}`)
    await page.getByTestId('handed-off-to').click()
    await page.getByTestId('handed-off-from').waitFor()
    expect(problems).toEqual([])
  })

  it('from the palette: "continue with cod" lists Codex first; the chip says the image left out, and can be removed (dark)', async () => {
    const sourceId = await withSession(true)
    const { page, problems } = await openPage('dark')
    await page.locator(`[data-session-id="${sourceId}"] [data-testid="session-open"]`).click()
    await page.getByTestId('session-title').filter({ hasText: 'Add a health check' }).waitFor()
    await page.keyboard.press(`${mod}+K`)
    await page.getByTestId('search-input').fill('continue with cod')
    const command = page.getByTestId('palette-command')
    await command.first().waitFor()
    expect(await command.allTextContents()).toEqual([expect.stringContaining('Continue with Codex')])
    console.log(`screenshot: ${await screenshot(page, 'e2e-hand-off-palette-dark')}`)
    await page.keyboard.press('Enter')
    await page.getByTestId('hand-off-seed').waitFor()
    // Codex here takes no images: the one of the conversation is left out, said under the chip.
    expect(await page.getByTestId('hand-off-seed-note').allTextContents()).toEqual([
      expect.stringContaining('1 image of the conversation left out: the agent does not take images.')
    ])
    console.log(`screenshot: ${await screenshot(page, 'e2e-hand-off-new-dark')}`)
    await page.getByTestId('handed-off-from').focus()
    await page.keyboard.press('Enter')
    await page.getByTestId('handed-off-to').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-hand-off-source-dark')}`)
    await page.getByTestId('handed-off-to').last().click()
    await page.getByTestId('hand-off-seed-remove').click()
    await page.getByTestId('hand-off-seed').waitFor({ state: 'detached' })
    const record = (await host.request('sessions.list', { projectId })).filter((s) => s.handedOffFrom === sourceId)
    expect(record.map((r) => r.handOffSeed)).toEqual([undefined])
    expect(problems).toEqual([])
  })
})
