import { appendFile, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { TranscriptRecord } from '../../shared/transcript'
import { appendLongTurns } from '../../bench/long-data'
import { openHost, removeDir, scriptedAgent, tempDir } from '../helpers'
import { launchBrowser, RestartableHost, screenshot, watchConsole } from './browser'

/**
 * What the user sees after things went wrong: a damaged db.json (moved aside,
 * sessions rebuilt, the user told), a torn transcript line (reported), a very
 * long conversation (opens at its end, earlier parts load on scrolling up),
 * and an agent that crashed mid-turn (the error shown, the next message
 * continues the session, also after a restart).
 */

let root: string
let dataDir: string
let projectDir: string
let browser: Browser
const app = new RestartableHost()

beforeAll(async () => {
  browser = await launchBrowser()
})
afterAll(async () => {
  await browser?.close()
})
beforeEach(async () => {
  root = await tempDir('e2e-recovery')
  dataDir = join(root, 'data')
  projectDir = join(root, 'long-project')
  await mkdir(projectDir, { recursive: true })
})
afterEach(async () => {
  await app.stop()
  await removeDir(root)
})

async function newPage(url: string): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(url)
  return { page, problems }
}

const at = '2026-03-01T12:00:00.000Z'

/** Turns as an agent would have left them: a question, an answer in three chunks, the end of the turn. */
function turns(from: number, count: number): string {
  const lines: TranscriptRecord[] = []
  for (let n = from; n < from + count; n++) {
    lines.push({ t: 'prompt', at, content: [{ type: 'text', text: `Question ${n}` }] })
    for (const part of ['Answer ', `number ${n}`, ', in full.']) {
      lines.push({ t: 'update', at, update: { sessionUpdate: 'agent_message_chunk', messageId: `m${n}`, content: { type: 'text', text: part } } })
    }
    lines.push({ t: 'stop', at, stopReason: 'end_turn' })
  }
  return lines.map((r) => JSON.stringify(r) + '\n').join('')
}

/** A session whose first turn asked 'The very first question', made by a Host that is closed again: its transcript is then made long. */
async function firstQuestion(): Promise<{ id: string }> {
  const first = await openHost(dataDir)
  const project = await first.request('projects.add', { cwd: projectDir })
  const agent = await first.request('agents.add', scriptedAgent(join(root, 'agent-state')))
  const record = await first.request('sessions.new', { projectId: project.id, agentId: agent.id })
  await first.request('sessions.prompt', { id: record.id, text: 'The very first question' })
  await first.close()
  return record
}

describe('recovering in the browser', () => {
  it('tells the user about a damaged db.json and a torn line, and opens a long conversation at its end', async () => {
    const record = await firstQuestion()
    // Months of conversation: 3,000 more turns (15,000 records), then a line torn by a crash.
    const transcript = join(dataDir, 'transcripts', `${record.id}.jsonl`)
    await appendFile(transcript, turns(1, 3000))
    await appendFile(transcript, '{"t":"update","at":"2026-03-01T12:00:00.000Z","update":{"sessionUpd')
    // And db.json half written.
    await writeFile(join(dataDir, 'db.json'), '{"version": 2, "projects": [{"id": "')

    const { page, problems } = await newPage((await app.start(dataDir)).url)
    const banner = page.getByTestId('error-banner').filter({ hasText: 'db.json could not be read' })
    await banner.waitFor()
    expect(await banner.textContent()).toMatch(
      /moved to .*db\.corrupt-.*1 session\(s\) were recovered from their transcripts.*Agents you had added yourself/s
    )

    // The recovered session keeps its title (its first question) and opens at its end.
    await page.getByTestId('session-item').filter({ hasText: 'The very first question' }).click()
    await page.getByTestId('entry-user').filter({ hasText: 'Question 3000' }).waitFor()
    await page
      .getByTestId('error-banner')
      .filter({ hasText: '1 damaged line of “The very first question” could not be read and was skipped' })
      .waitFor()
    // The list is virtualised: the thread says how many entries it holds; only those in view are in the page.
    const thread = page.getByTestId('thread')
    const userEntries = async (): Promise<number> => Number(await thread.getAttribute('data-user-entries'))
    const shownAtFirst = await userEntries()
    expect(shownAtFirst).toBeGreaterThan(10)
    expect(shownAtFirst).toBeLessThan(200)
    await page.getByTestId('load-earlier').waitFor({ state: 'attached' })
    await screenshot(page, 'recovery-banner-and-tail')

    // Scrolling up loads earlier turns, and the reader stays where they were: the first question of the
    // tail, at the top of the view when the loading starts, is still on screen after earlier turns came in.
    await page.getByTestId('load-earlier').scrollIntoViewIfNeeded()
    // The first question on screen once the list has drawn where it now is (it renders a frame later).
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))')
    const anchorText = await page.getByTestId('entry-user').evaluateAll((els) => {
      const onScreen = els.find((el) => el.getBoundingClientRect().bottom > 0)
      return (onScreen?.textContent ?? '').trim()
    })
    await screenshot(page, 'recovery-load-earlier')
    await expect.poll(userEntries).toBeGreaterThan(shownAtFirst)
    const same = page.getByTestId('entry-user').filter({ hasText: new RegExp(`^\\s*${anchorText}\\s*$`) })
    await expect.poll(() => same.isVisible()).toBe(true)
    const viewport = page.viewportSize()!
    const box = (await same.boundingBox())!
    expect(box.y + box.height > 0 && box.y < viewport.height).toBe(true)

    // Clicking on reaches the very beginning. The edge also loads on its own once in reach, so the last page can come
    // in, and the button go, between a look and the next: a click, or isEnabled, made on it then waited Playwright's
    // 30 s for a button that never came back (the test 39-40 s in 3 of 5 CIs, 7-7.5 s in the other two). A click not
    // made in 5 s is left to the next turn of the loop, which looks again; gone or enabled is one look at the page.
    const button = page.getByTestId('load-earlier')
    for (let i = 0; i < 40 && (await button.count()) > 0; i++) {
      await button.click({ timeout: 5_000 }).catch(() => undefined)
      await expect.poll(() => button.evaluateAll((found) => found.every((el) => !el.hasAttribute('disabled')))).toBe(true)
    }
    await expect.poll(() => page.getByTestId('load-earlier').count()).toBe(0)
    await page.getByTestId('thread-scroll').evaluate((el) => el.scrollTo({ top: 0 }))
    await page.getByTestId('entry-user').filter({ hasText: 'The very first question' }).waitFor()
    // The window holds a few pages of a long conversation, not all of it: far up, it let go of the end.
    expect(await userEntries()).toBeLessThan(1500)
    await page.getByTestId('load-later').waitFor({ state: 'attached' })
    await screenshot(page, 'recovery-first-question')
    // "Latest" reads the end again; scrolling down would load it a page at a time.
    await page.getByTestId('to-latest').click()
    await page.getByTestId('entry-user').filter({ hasText: 'Question 3000' }).waitFor()
    await expect.poll(() => page.getByTestId('load-later').count()).toBe(0)
    expect(problems).toEqual([])

    // The same at the top of the conversation, in the dark.
    const dark = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' })
    const darkPage = await dark.newPage()
    await darkPage.goto(app.server.url)
    await darkPage.getByTestId('session-item').first().click()
    await darkPage.getByTestId('entry-user').filter({ hasText: 'Question 3000' }).waitFor()
    await darkPage.getByTestId('load-earlier').scrollIntoViewIfNeeded()
    await screenshot(darkPage, 'recovery-load-earlier-dark')
    await dark.close()
  })

  it('scrolls a long day of conversation to its first entry and back to its last as fast as the wheel can fling, the pages loading on the way', async () => {
    const record = await firstQuestion()
    // Entries of many heights (thoughts, diffs, terminal output, markdown): the list guesses them and measures them late.
    const turns = await appendLongTurns(join(dataDir, 'transcripts', `${record.id}.jsonl`), 10_000)
    const { page, problems } = await newPage((await app.start(dataDir)).url)
    await page.getByTestId('session-item').first().click()
    const last = page.getByTestId('entry-user').filter({ hasText: `Question ${turns - 1}:` })
    await last.waitFor()
    // Rows passing by in a fling show their markdown as text alone (MarkdownBlock): looked at mid-fling, light and dark.
    await passingScreenshot(page, -1, 'recovery-fling-passing')
    await fling(page, 'earlier')
    await page.getByTestId('entry-user').filter({ hasText: 'The very first question' }).waitFor()
    // Far up, the window let go of the end: down again, it loads it back a page at a time and reaches it.
    expect(await page.getByTestId('load-later').count()).toBe(1)
    await page.emulateMedia({ colorScheme: 'dark' })
    await passingScreenshot(page, 1, 'recovery-fling-passing-dark')
    await fling(page, 'later')
    await last.waitFor()
    expect(await page.getByTestId('load-later').count()).toBe(0)
    // At rest, every row shows its markdown again: the last turn's reply its list and its highlighted code block.
    await expect.poll(() => page.getByTestId('markdown-passing').count()).toBe(0)
    const reply = page.getByTestId('entry-assistant').filter({ hasText: `Turn ${turns - 1}:` })
    await reply.locator('.code-block pre code').waitFor()
    expect(await reply.locator('li').count()).toBe(3)
    expect(await reply.locator('.md-block').count()).toBe(3)
    expect(await page.locator('[data-testid=entry-user] .markdown .md-block').count()).toBeGreaterThan(0)
    await screenshot(page, 'recovery-fling-rest-dark')
    expect(problems).toEqual([])
  })

  it('shows an agent crash mid-turn, keeps what it said, and continues with the next message, also after a restart', async () => {
    const first = await app.start(dataDir)
    const project = await app.host.request('projects.add', { cwd: projectDir })
    const agent = await app.host.request('agents.add', scriptedAgent(join(root, 'agent-state')))
    await app.host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    const { page, problems } = await newPage(first.url)
    await page.getByTestId('session-item').first().click()
    // A turn the agent fails is said once, as the thread's error entry: not again under the header.
    await page.getByTestId('composer-input').fill('/say partial\n/fail the build broke')
    await page.getByTestId('send').click()
    await page.getByTestId('entry-error').filter({ hasText: 'the build broke' }).waitFor()
    await expect.poll(() => page.getByTestId('cancel').count()).toBe(0)
    expect(await page.getByTestId('session-error').count()).toBe(0)

    await page.getByTestId('composer-input').fill('/stream 3\n/stderr the model server went away\n/exit 7')
    await page.getByTestId('send').click()
    const error = page.getByTestId('entry-error').filter({ hasText: 'exited with code 7' })
    await error.waitFor()
    expect(await error.textContent()).toMatch(/exited with code 7.*the model server went away.*The conversation so far is kept; send again/s)
    expect(await page.getByTestId('entry-assistant').filter({ hasText: 'chunk 1 chunk 2 chunk 3' }).count()).toBe(1)
    await screenshot(page, 'recovery-agent-crash')

    await page.getByTestId('composer-input').fill('are you back?')
    await page.getByTestId('send').click()
    await page.getByTestId('entry-assistant').filter({ hasText: 'You said: are you back?' }).waitFor()
    // Neither failure was said again in a banner (both prompts were answered long before this reply).
    expect(await page.getByTestId('error-banner').count()).toBe(0)

    expect(problems).toEqual([])

    // Quit and start again: the conversation is all there and goes on.
    await page.close()
    await app.stop()
    const second = await app.start(dataDir)
    const again = await newPage(second.url)
    await again.page.getByTestId('session-item').first().click()
    await again.page.getByTestId('entry-assistant').filter({ hasText: 'You said: are you back?' }).waitFor()
    await again.page.getByTestId('composer-input').fill('after the restart')
    await again.page.getByTestId('send').click()
    await again.page.getByTestId('entry-assistant').filter({ hasText: 'You said: after the restart' }).waitFor()
    expect(await again.page.getByTestId('entry-assistant').filter({ hasText: 'chunk 1 chunk 2 chunk 3' }).count()).toBe(1)
    expect(again.problems).toEqual([])
  })
})

/**
 * A screenshot of rows passing by in a fling, as a reader sees them: the thread scrolled a screen and a half at a time
 * from a timer (scrolled from a frame's callback, as `fling` does, a frame is painted before the rows are put in the
 * page), until such a row is in view.
 */
async function passingScreenshot(page: Page, direction: 1 | -1, name: string): Promise<void> {
  await page.evaluate(`(() => {
    const el = document.querySelector('[data-testid=thread-scroll]')
    window.__flinging = setInterval(() => (el.scrollTop += ${direction} * el.clientHeight * 1.5), 16)
  })()`)
  try {
    await page.getByTestId('markdown-passing').first().waitFor()
    await screenshot(page, name)
  } finally {
    await page.evaluate('clearInterval(window.__flinging)')
  }
}

/**
 * Scrolls the thread ten screens a frame (a fling) towards `edge` until it is there with nothing more to load, or a
 * minute has passed (then the caller's wait for the entry at that end fails).
 */
function fling(page: Page, edge: 'earlier' | 'later'): Promise<void> {
  const down = edge === 'later'
  // A string: this runs in the page (the tests' TypeScript has no DOM types).
  return page.evaluate(`new Promise((resolve) => {
    const el = document.querySelector('[data-testid=thread-scroll]')
    const started = performance.now()
    const tick = () => {
      const there = ${down} ? el.scrollTop + el.clientHeight >= el.scrollHeight - 2 : el.scrollTop <= 0
      if ((there && !document.querySelector('[data-testid=load-${edge}]')) || performance.now() - started > 60000) return resolve()
      el.scrollTop += ${down ? 1 : -1} * el.clientHeight * 10
      requestAnimationFrame(tick)
    }
    requestAnimationFrame(tick)
  })`)
}
