import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, screenshot, watchConsole } from './browser'

/**
 * Queued prompts in the browser: the composer stays usable while a turn runs
 * and Enter queues; the queue under the thread is edited and emptied with the
 * keyboard, goes one by one as turns end, is held (and says why) after a
 * failed turn until Resume, and offers "Send now" only for an agent that
 * announces it takes prompts mid-turn. The agent's turns wait on gate files,
 * opened by the test when it has looked: nothing depends on timing.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer
let projectId: string
const gates = { refactor: '', deploy: '', review: '', migrate: '' }

beforeAll(async () => {
  root = await tempDir('e2e-queue')
  await mkdir(join(root, 'project'), { recursive: true })
  for (const name of Object.keys(gates) as (keyof typeof gates)[]) gates[name] = join(root, `gate-${name}`)
  // Prompts that read like a person's, while the agent follows a script (SCRIPTED_AGENT_SCRIPTS).
  const scripts = join(root, 'scripts.json')
  await writeFile(
    scripts,
    JSON.stringify({
      'Refactor the session parser into its own module': `/await ${gates.refactor}\n/say The parser now lives in **parser.ts**; the old file re-exports it.`,
      'Deploy the staging build': `/await ${gates.deploy}\n/fail The model is overloaded; try again in a minute`,
      'Review the open pull request': `/await ${gates.review}\n/say This is never said: the turn hands over first.`,
      'Write the database migration': `/await ${gates.migrate}\n/say The migration is in **0007_sessions.sql**.`
    })
  )
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
  await host.request('agents.add', scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_SCRIPTS: scripts }, 'Scripted'))
  await host.request(
    'agents.add',
    scriptedAgent(join(root, 'state-steer'), { SCRIPTED_AGENT_SCRIPTS: scripts, SCRIPTED_AGENT_PROMPT_QUEUEING: '1' }, 'Steerable')
  )
  await host.request(
    'agents.add',
    scriptedAgent(join(root, 'state-steering'), { SCRIPTED_AGENT_SCRIPTS: scripts, SCRIPTED_AGENT_STEERING: '1' }, 'Steering')
  )
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

async function newSession(agentName: string, title: string): Promise<string> {
  const agent = (await host.request('agents.list', {})).find((a) => a.name === agentName)
  const record = await host.request('sessions.new', { projectId, agentId: agent!.id })
  await host.request('sessions.rename', { id: record.id, title })
  return record.id
}

async function openPage(colorScheme: 'light' | 'dark', title: string): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme })
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(server.url)
  await page.getByTestId('session-item').filter({ hasText: title }).click()
  await page.getByTestId('composer-input').waitFor()
  return { page, problems, close: () => context.close() }
}

async function write(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('composer-input').press('Enter')
}

async function userTexts(page: Page): Promise<string[]> {
  return (await page.locator('[data-testid="entry-user"] .bubble').allTextContents()).map((t) => t.trim())
}

async function assistantTexts(page: Page): Promise<string[]> {
  return (await page.getByTestId('entry-assistant').allTextContents()).map((t) => t.trim())
}

function queuedTexts(page: Page): Promise<string[]> {
  return page.getByTestId('queued-text').allTextContents()
}

describe('queued prompts', () => {
  it('queue while a turn runs, are edited and removed with the keyboard, and go one by one', async () => {
    await newSession('Scripted', 'Parser refactor')
    const { page, problems, close } = await openPage('light', 'Parser refactor')

    await write(page, 'Refactor the session parser into its own module')
    await page.getByTestId('cancel').waitFor()
    // The composer stays usable: Enter queues now.
    expect(await page.getByTestId('send').textContent()).toContain('Queue')
    await write(page, 'Then run the whole test suite')
    await write(page, 'And update the changelog')
    await write(page, 'Also bump the version')
    await expect.poll(() => queuedTexts(page)).toEqual(['Then run the whole test suite', 'And update the changelog', 'Also bump the version'])
    expect(await page.getByTestId('composer-input').inputValue()).toBe('')
    // This agent does not take prompts mid-turn: no "Send now".
    expect(await page.getByTestId('queued-send-now').count()).toBe(0)

    // Keyboard: Enter on a queued prompt edits it in place, Enter saves; Delete removes one.
    const items = page.getByTestId('queued-prompt')
    await items.nth(1).focus()
    await page.keyboard.press('Enter')
    const field = page.getByTestId('queued-edit')
    await field.waitFor()
    await field.fill('And update the changelog for 2.4')
    console.log(`screenshot: ${await screenshot(page, 'e2e-queue-editing')}`)
    await page.keyboard.press('Enter')
    await expect.poll(() => queuedTexts(page)).toEqual(['Then run the whole test suite', 'And update the changelog for 2.4', 'Also bump the version'])
    // Focus came back to the prompt that was edited.
    expect(await page.evaluate('document.activeElement?.dataset?.testid')).toBe('queued-prompt')
    // Escape gives the text back.
    await page.keyboard.press('Enter')
    await field.fill('thrown away')
    await page.keyboard.press('Escape')
    await expect.poll(() => queuedTexts(page)).toEqual(['Then run the whole test suite', 'And update the changelog for 2.4', 'Also bump the version'])
    await items.nth(2).focus()
    await page.keyboard.press('Delete')
    await expect.poll(() => queuedTexts(page)).toEqual(['Then run the whole test suite', 'And update the changelog for 2.4'])
    await page.getByTestId('composer-input').click()
    console.log(`screenshot: ${await screenshot(page, 'e2e-queue')}`)

    await writeFile(gates.refactor, 'open')
    await expect
      .poll(() => assistantTexts(page), { timeout: 60_000 })
      .toEqual([
        'The parser now lives in parser.ts; the old file re-exports it.',
        'You said: Then run the whole test suite',
        'You said: And update the changelog for 2.4'
      ])
    await page.getByTestId('queue').waitFor({ state: 'detached' })
    expect(await userTexts(page)).toEqual([
      'Refactor the session parser into its own module',
      'Then run the whole test suite',
      'And update the changelog for 2.4'
    ])
    expect(problems).toEqual([])
    await close()
  })

  it('is held after a failed turn, says why, and goes on when resumed', async () => {
    await newSession('Scripted', 'Staging deploy')
    const { page, problems, close } = await openPage('dark', 'Staging deploy')
    await write(page, 'Deploy the staging build')
    await page.getByTestId('cancel').waitFor()
    await write(page, 'Then post the link in the channel')
    await page.getByTestId('queued-prompt').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-queue-dark')}`)

    await writeFile(gates.deploy, 'open')
    const held = page.getByTestId('queue-held')
    await held.waitFor({ timeout: 60_000 })
    expect(await held.textContent()).toMatch(/last turn failed, so the queue waits/)
    expect(await queuedTexts(page)).toEqual(['Then post the link in the channel'])
    // Nothing was sent after the failure.
    expect(await userTexts(page)).toEqual(['Deploy the staging build'])
    // With the queue held, Enter sends at once again.
    expect(await page.getByTestId('send').textContent()).toContain('Send')
    console.log(`screenshot: ${await screenshot(page, 'e2e-queue-held-dark')}`)

    await page.getByTestId('queue-resume').click()
    await expect.poll(async () => (await assistantTexts(page)).at(-1), { timeout: 60_000 }).toBe('You said: Then post the link in the channel')
    await page.getByTestId('queue').waitFor({ state: 'detached' })
    expect(problems).toEqual([])
    await close()
  })

  it('offers "Send now" when the agent takes prompts mid-turn, and hands the prompt to the running turn', async () => {
    await newSession('Steerable', 'Pull request review')
    const { page, problems, close } = await openPage('light', 'Pull request review')
    await write(page, 'Review the open pull request')
    await page.getByTestId('cancel').waitFor()
    await write(page, 'Focus on the error handling first')
    await write(page, 'Then summarise what you found')
    await expect.poll(() => page.getByTestId('queued-send-now').count()).toBe(2)
    console.log(`screenshot: ${await screenshot(page, 'e2e-queue-send-now')}`)

    const dark = await openPage('dark', 'Pull request review')
    // Another window sees the same queue.
    await expect.poll(() => queuedTexts(dark.page)).toEqual(['Focus on the error handling first', 'Then summarise what you found'])
    console.log(`screenshot: ${await screenshot(dark.page, 'e2e-queue-send-now-dark')}`)
    await dark.close()

    await page.getByTestId('queued-send-now').first().click()
    await expect
      .poll(() => assistantTexts(page), { timeout: 60_000 })
      .toEqual(['You said: Focus on the error handling first', 'You said: Then summarise what you found'])
    expect(await userTexts(page)).toEqual(['Review the open pull request', 'Focus on the error handling first', 'Then summarise what you found'])
    await page.getByTestId('queue').waitFor({ state: 'detached' })
    expect(problems).toEqual([])
    await close()
  })

  it('steers the running turn of an agent that announces steering: the queue says so, the prompt shows as sent into the turn', async () => {
    await newSession('Steering', 'Database migration')
    const { page, problems, close } = await openPage('light', 'Database migration')
    await write(page, 'Write the database migration')
    await page.getByTestId('cancel').waitFor()
    await write(page, 'Use a transaction for it')
    await expect.poll(() => page.getByTestId('queued-send-now').count()).toBe(1)
    expect(await page.getByTestId('queue').locator('.how').textContent()).toContain('or now by steering the running turn')
    expect(await page.getByTestId('queued-send-now').getAttribute('title')).toContain('Steer:')
    await page.getByTestId('queued-send-now').click()
    await page.getByTestId('queue').waitFor({ state: 'detached' })
    await expect.poll(() => assistantTexts(page)).toEqual(['steered: Use a transaction for it'])
    expect(await page.getByTestId('entry-steered').textContent()).toBe('Sent into the running turn')
    console.log(`screenshot: ${await screenshot(page, 'e2e-queue-steered')}`)
    await writeFile(gates.migrate, 'open')
    await expect.poll(() => assistantTexts(page)).toEqual(['steered: Use a transaction for it', 'The migration is in 0007_sessions.sql.'])
    // One turn: the steer has none of its own.
    await expect.poll(() => page.getByTestId('entry-stop').count()).toBe(1)
    expect(problems).toEqual([])
    await close()
  })
})
