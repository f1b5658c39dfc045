import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import type { InboxItem } from '../../shared/inbox'
import { removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, watchConsole } from './browser'

/**
 * The inbox in the browser: several sessions of two projects waiting at once
 * (two permission requests, a question, a failed turn, a finished one),
 * answered from the inbox with the keyboard only, without opening their
 * sessions; the count in the window's title; the inbox light and dark. One
 * browser, one Host, one scripted agent whose prompts read like a person's.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer
let agentId: string
const projects = { webshop: '', docs: '' }

beforeAll(async () => {
  root = await tempDir('e2e-inbox')
  for (const name of Object.keys(projects)) await mkdir(join(root, name), { recursive: true })
  const scripts = join(root, 'scripts.json')
  await writeFile(
    scripts,
    JSON.stringify({
      'Clean the build folder': `/permission-call ${JSON.stringify({ tool: 'Bash', kind: 'execute', title: 'rm -rf build/', rawInput: { command: 'rm -rf build/' } })}`,
      'Fix the typo in the intro': `/permission-call ${JSON.stringify({ tool: 'Edit', kind: 'edit', title: 'Edit intro.md', locations: [join(root, 'docs', 'intro.md')] })}`,
      'Set up the staging deploy': '/elicit',
      'Translate the guide into German': '/fail The model is overloaded; try again in a minute',
      'Summarise the changelog': '/say Three fixes and one new flag since 2.3; nothing breaks.',
      'Rotate the API keys': `/permission-call ${JSON.stringify({ tool: 'Bash', kind: 'execute', title: 'vault rotate api-keys', rawInput: { command: 'vault rotate api-keys' } })}`
    })
  )
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  projects.webshop = (await host.request('projects.add', { cwd: join(root, 'webshop') })).id
  projects.docs = (await host.request('projects.add', { cwd: join(root, 'docs') })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_SCRIPTS: scripts }, 'Scripted'))).id
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

/** A session whose title is its prompt; the prompt is sent, and its turn left to run (it may wait on the user). */
async function ask(project: keyof typeof projects, prompt: string): Promise<{ id: string; turn: Promise<unknown> }> {
  const { id } = await host.request('sessions.new', { projectId: projects[project], agentId })
  await host.request('sessions.rename', { id, title: prompt })
  const turn = host.request('sessions.prompt', { id, text: prompt }).catch((error: Error) => error)
  return { id, turn }
}

async function waitingInHost(count: number): Promise<InboxItem[]> {
  return waitUntil(`${count} things in the inbox`, async () => {
    const items = await host.request('inbox.list', {})
    return items.length === count ? items : null
  })
}

async function openPage(colorScheme: 'light' | 'dark'): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  await resetWindowSettings(host)
  const context = await browser.newContext({ viewport: { width: 1280, height: 820 }, colorScheme, reducedMotion: 'reduce' })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const problems = watchConsole(page)
  await page.goto(server.url)
  await page.getByTestId('session-item').first().waitFor()
  return { page, problems, close: () => context.close() }
}

/** The inbox's rows as the user reads them: the kind, then its agent, project and session (the agent's monogram left out). */
function rows(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('[data-testid="inbox-item"]')].map((item) => {
    const where = item.querySelector('[data-testid="inbox-where"]').cloneNode(true)
    where.querySelector('[data-testid="agent-icon"]')?.remove()
    return item.dataset.kind + ': ' + where.textContent.replace(/\\s+/g, ' ').trim()
  })`) as Promise<string[]>
}

const focusedTestId = (page: Page): Promise<unknown> => page.evaluate('document.activeElement?.dataset?.testid ?? null')

describe('the inbox', () => {
  it('lists several sessions waiting at once, each answered from it with the keyboard, and counts them in the title', async () => {
    const summary = await ask('webshop', 'Summarise the changelog')
    await summary.turn
    await (
      await ask('docs', 'Translate the guide into German')
    ).turn
    const clean = await ask('webshop', 'Clean the build folder')
    await waitingInHost(3)
    const typo = await ask('docs', 'Fix the typo in the intro')
    await waitingInHost(4)
    const deploy = await ask('webshop', 'Set up the staging deploy')
    await waitingInHost(5)

    const { page, problems, close } = await openPage('light')
    await expect.poll(() => page.title()).toBe('(5) Switchboard')
    expect(await page.getByTestId('inbox-button-count').textContent()).toBe('5')
    console.log(`screenshot: ${await screenshot(page, 'e2e-inbox-button')}`)

    await page.keyboard.press('Control+i')
    await page.getByTestId('inbox').waitFor()
    await expect
      .poll(() => rows(page))
      .toEqual([
        'permission: Scripted · webshop · Clean the build folder',
        'permission: Scripted · docs · Fix the typo in the intro',
        'elicitation: Scripted · webshop · Set up the staging deploy',
        'error: Scripted · docs · Translate the guide into German',
        'finished: Scripted · webshop · Summarise the changelog'
      ])
    // The oldest request has the keyboard, its options their digits.
    expect(await focusedTestId(page)).toBe('inbox-open')
    // "Allow" once first, whatever the agent's order ("Always allow" came first).
    expect(await page.getByTestId('inbox-item').first().getByTestId('permission-option').allInnerTexts()).toEqual([
      '1 Allow',
      '2 Always allow',
      '3 Reject'
    ])
    console.log(`screenshot: ${await screenshot(page, 'e2e-inbox')}`)

    // A permission answered by its digit, in place: no session opened.
    await page.keyboard.press('1')
    expect(await clean.turn).toEqual({ stopReason: 'end_turn' })
    await expect.poll(() => page.getByTestId('inbox-item').first().getByTestId('inbox-where').innerText()).toContain('Fix the typo in the intro')
    await expect.poll(() => focusedTestId(page)).toBe('inbox-open')
    await page.keyboard.press('3')
    expect(await typo.turn).toEqual({ stopReason: 'end_turn' })

    // The question: Enter opens its form inline, answered from the keyboard.
    await expect.poll(() => page.getByTestId('inbox-item').first().getAttribute('data-kind')).toBe('elicitation')
    await page.keyboard.press('Enter')
    await page.getByTestId('elicitation').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-inbox-question')}`)
    await page.keyboard.press('ArrowDown') // Target: Staging
    for (let tab = 0; tab < 4; tab++) await page.keyboard.press('Tab') // replicas, contact, dry run, then the first region
    await page.keyboard.press('Space')
    for (let tab = 0; tab < 10 && (await focusedTestId(page)) !== 'elicitation-accept'; tab++) await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    expect(await deploy.turn).toEqual({ stopReason: 'end_turn' })
    expect(JSON.stringify((await host.request('sessions.open', { id: deploy.id })).records)).toContain('elicitation: accept')

    // Their turns have ended since: three more results to read, none opened yet. The pane shows nothing.
    await expect
      .poll(() => rows(page))
      .toEqual([
        'error: Scripted · docs · Translate the guide into German',
        'finished: Scripted · webshop · Summarise the changelog',
        'finished: Scripted · webshop · Clean the build folder',
        'finished: Scripted · docs · Fix the typo in the intro',
        'finished: Scripted · webshop · Set up the staging deploy'
      ])
    expect(await page.getByTestId('entry-assistant').count()).toBe(0)

    // A finished turn opens its session: shown, it is seen, and the count goes down.
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await page.getByTestId('inbox').waitFor({ state: 'hidden' })
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('Three fixes and one new flag')
    await expect.poll(() => page.title()).toBe('(4) Switchboard')
    // Seen in the window at once; the Host hears it on the window's link soon after.
    await expect.poll(async () => (await host.request('inbox.list', {})).some((i) => i.session?.id === summary.id)).toBe(false)

    // Back in the inbox, the failed turn is dismissed with Delete; Esc closes.
    await page.keyboard.press('Control+i')
    await expect.poll(() => page.getByTestId('inbox-item').first().getAttribute('data-kind')).toBe('error')
    await page.keyboard.press('Delete')
    await expect.poll(() => page.getByTestId('inbox-item').count()).toBe(3)
    await page.keyboard.press('Escape')
    await page.getByTestId('inbox').waitFor({ state: 'hidden' })
    await expect.poll(() => page.title()).toBe('(3) Switchboard')
    expect(problems).toEqual([])
    await close()
  })

  it('opens from its button in the dark, offers an agent’s sign-in, and says when nothing waits', async () => {
    const keys = await ask('docs', 'Rotate the API keys')
    await waitingInHost(4)
    const locked = await host.request('agents.add', scriptedAgent(join(root, 'state-locked'), { SCRIPTED_AGENT_AUTH: '1' }, 'Locked'))
    await expect(host.request('sessions.new', { projectId: projects.docs, agentId: locked.id })).rejects.toThrow(/sign in/)
    await waitingInHost(5)
    const { page, problems, close } = await openPage('dark')
    await expect.poll(() => page.title()).toBe('(5) Switchboard')
    await page.getByTestId('open-inbox').click()
    await page.getByTestId('inbox').waitFor()
    await expect
      .poll(() => rows(page))
      .toEqual([
        'permission: Scripted · docs · Rotate the API keys',
        'sign_in: Locked',
        'finished: Scripted · webshop · Clean the build folder',
        'finished: Scripted · docs · Fix the typo in the intro',
        'finished: Scripted · webshop · Set up the staging deploy'
      ])
    console.log(`screenshot: ${await screenshot(page, 'e2e-inbox-dark')}`)

    // The sign-in opens in place with the agent's own ways to sign in; Esc closes it, not the inbox.
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByTestId('sign-in-method').count()).toBe(3)
    console.log(`screenshot: ${await screenshot(page, 'e2e-inbox-sign-in-dark')}`)
    await page.keyboard.press('Escape')
    await page.getByTestId('sign-in').waitFor({ state: 'detached' })
    await page.getByTestId('inbox').waitFor()

    // Dismissed from the inbox: the agent is told no, and its turn ends.
    await page.keyboard.press('ArrowUp')
    await page.keyboard.press('Delete')
    await keys.turn
    expect(JSON.stringify((await host.request('sessions.open', { id: keys.id })).records)).toContain('permission: cancelled')
    // Its result is there to read now, with the sign-in and the three left from before: each dismissed in turn.
    await expect.poll(() => page.getByTestId('inbox-item').count()).toBe(5)
    for (let left = 4; left >= 0; left--) {
      await page.keyboard.press('Delete')
      await expect.poll(() => page.getByTestId('inbox-item').count()).toBe(left)
    }
    await page.getByTestId('inbox-empty').waitFor()
    await expect.poll(() => page.title()).toBe('Switchboard')
    // The window hides a dismissed item at once; its dismissal reaches the Host on the window's link soon after.
    await expect.poll(() => host.request('inbox.list', {})).toEqual([])
    console.log(`screenshot: ${await screenshot(page, 'e2e-inbox-empty-dark')}`)
    expect(problems).toEqual([])
    await close()
  })
})
