import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { clipboardText, closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, watchConsole, chooseAgent } from './browser'
import { screenshotBothThemes } from './themes'

/**
 * The thread view in Chromium, against `serve` and the scripted agent: code,
 * thoughts, plans, tool calls with diffs and terminals, permissions answered
 * inline, completions in the composer, and a long thread. Screenshots land in
 * test-results/ (light and dark, the window switched between them).
 */

let root: string
let projectDir: string
let browser: Browser
let host: Host
let server: RunningServer
let projectId: string
/** The agent named Scripted. */
let scriptedId: string

beforeAll(async () => {
  root = await tempDir('e2e-thread')
  projectDir = join(root, 'my-project')
  await mkdir(join(projectDir, 'src'), { recursive: true })
  await writeFile(join(projectDir, 'src', 'example.ts'), 'export const x = 1\n')
  await writeFile(join(projectDir, 'README.md'), '# My project\n')
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  scriptedId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_SESSION_STATE: '1' }, 'Scripted'))).id
  await host.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_CHUNK_DELAY_MS: '12' }, 'Streamer'))
  await host.request('agents.add', scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_PROMPT: 'image,embeddedContext' }, 'Seer'))
  projectId = (await host.request('projects.add', { cwd: projectDir })).id
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

// Each test's new window starts as a first window, not with the panes and choices the previous test left.
beforeEach(async () => {
  await resetWindowSettings(host)
})

async function newContext(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url).origin })
  // Anything the CSP refuses (an inline style from xterm.js, say) is counted.
  await context.addInitScript(
    "window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI))"
  )
  return context
}

async function newSession(page: Page, agent = 'Scripted'): Promise<void> {
  await page.goto(server.url)
  const project = page.getByTestId('project').filter({ hasText: 'my-project' })
  await chooseAgent(project, { label: agent })
  await project.getByTestId('new-session').click()
  await page.getByTestId('composer-input').waitFor()
  await expect.poll(() => page.getByTestId('composer-input').isEnabled()).toBe(true)
}

/** A new window with a new session of `agent` open in it (newSession); its console watched. */
async function sessionWindow(agent = 'Scripted'): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await newContext()
  const page = await context.newPage()
  const problems = watchConsole(page)
  await newSession(page, agent)
  return { context, page, problems }
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('send').click()
}

async function turns(page: Page, count: number): Promise<void> {
  await expect.poll(() => page.getByTestId('entry-stop').count(), { timeout: 30_000 }).toBe(count)
}

/**
 * A conversation of 200 messages (every fifth with a code block), titled `title`, opened in a new window running
 * `initScript`, once its last message is in view.
 */
async function openManyMessages(title: string, initScript: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const { context, page, problems, item } = await listed(title, initScript, '/many 200')
  await item.click()
  await expect.poll(() => inView(page.getByText('Message 199:'))).toBe(true)
  return { context, page, problems }
}

/** A session titled `title` (given `prompt` first, when there is one), listed in a new window running `initScript`. */
async function listed(
  title: string,
  initScript: string,
  prompt?: string
): Promise<{ context: BrowserContext; page: Page; problems: string[]; item: Locator }> {
  const { id } = await host.request('sessions.new', { projectId, agentId: scriptedId })
  await host.request('sessions.rename', { id, title })
  if (prompt) await host.request('sessions.prompt', { id, text: prompt })
  const context = await newContext()
  await context.addInitScript(initScript)
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(server.url)
  const item = page.getByTestId('session-item').filter({ hasText: title })
  await item.waitFor()
  return { context, page, problems, item }
}

/** Whether the element is fully inside the thread's scrolling area. */
function inView(locator: Locator): Promise<boolean> {
  return locator.evaluate((el: any) => {
    const box = el.getBoundingClientRect()
    const view = el.closest('[data-testid=thread-scroll]').getBoundingClientRect()
    return box.top >= view.top - 1 && box.bottom <= view.bottom + 1
  })
}

function distanceFromBottom(page: Page): Promise<number> {
  return page.getByTestId('thread-scroll').evaluate((el: any) => el.scrollHeight - el.scrollTop - el.clientHeight)
}

/** Sends a prompt and waits for its turn to end (its stop line may be out of view, and so out of the page). */
async function prompt(page: Page, text: string): Promise<void> {
  const thread = page.getByTestId('thread')
  const asked = Number((await thread.count()) ? await thread.getAttribute('data-user-entries') : 0)
  await send(page, text)
  await expect.poll(async () => Number(await thread.getAttribute('data-user-entries')), { timeout: 30_000 }).toBe(asked + 1)
  await expect.poll(() => page.getByTestId('session-status').textContent(), { timeout: 30_000 }).toBe('Ready')
}

/**
 * Watches, from now on, each frame as it is painted: whether the conversation's last entry is drawn, its bottom inside
 * the view and, once the conversation is longer than the view, at its end (within its padding). Read where a frame is
 * done: in a ResizeObserver made after the list's own (observers are called in the order they were made, so this one
 * runs after the list has measured the rows and moved the view, and before the paint), woken each frame by an element
 * resized in requestAnimationFrame (which runs before the list's measurements, so it cannot tell what is painted).
 * Returns how many frames it saw, and those that did not show the end.
 */
async function watchPaintedEnd(page: Page): Promise<() => Promise<{ frames: number; faults: string[] }>> {
  await page.evaluate(`(() => {
    const state = { frames: 0, faults: [] }
    globalThis.paintedEnd = state
    let probe = document.body
    for (let depth = 0; depth < 60; depth++) {
      const inner = document.createElement('div')
      inner.style.cssText = 'position: absolute; width: 1px; height: 1px; pointer-events: none'
      probe = probe.appendChild(inner)
    }
    let wide = false
    const wake = () => {
      wide = !wide
      probe.style.width = wide ? '2px' : '1px'
      requestAnimationFrame(wake)
    }
    requestAnimationFrame(wake)
    new ResizeObserver(() => {
      const scroller = document.querySelector('[data-testid=thread-scroll]')
      const thread = scroller?.querySelector('[data-testid=thread]')
      if (!thread) return
      state.frames++
      const last = Number(thread.dataset.entries) - 1
      const row = thread.querySelector('.row[data-index="' + last + '"]')
      const view = scroller.getBoundingClientRect()
      const bottom = row ? Math.round(row.getBoundingClientRect().bottom - view.bottom) : null
      const fits = scroller.scrollHeight <= scroller.clientHeight
      if (bottom === null || bottom > 1 || (!fits && bottom < -60))
        state.faults.push('entry ' + last + ': ' + (bottom === null ? 'not drawn' : 'its bottom ' + bottom + ' px from the view’s'))
    }).observe(probe)
  })()`)
  return () => page.evaluate('globalThis.paintedEnd') as Promise<{ frames: number; faults: string[] }>
}

const richTurn = [
  '/commands',
  '/usage',
  '/think Considering **how** to approach this: the tests first, then the diff.',
  '/sayjson "Here is the plan:\\n\\n```ts\\nconst x: number = 42\\nconsole.log(x)\\n```\\n\\nAnd `inline` code."',
  '/plan Read the code;Write the change;Run the tests',
  '/diff src/example.ts',
  "/terminal printf '\\033[1;32mPASS\\033[0m src/a.test.ts\\n\\033[31mFAIL\\033[0m src/b.test.ts\\n\\033[38;2;255;128;0mtruecolor\\033[0m done\\n'",
  '/say Done.'
].join('\n')

describe('the thread view', () => {
  it('shows code, a thought, a plan, a diff and a terminal, in light and dark', async () => {
    const { context, page, problems } = await sessionWindow()
    await send(page, richTurn)
    // The command is asked before it runs: the user allows it on its card.
    await page.getByTestId('permission').getByTestId('permission-option').filter({ hasText: 'Allow once' }).click()
    await turns(page, 1)

    // Code: highlighted, and copied by its control.
    const code = page.locator('[data-testid=entry-assistant] .code-block').first()
    expect(await code.locator('.hljs-keyword').first().textContent()).toBe('const')
    await code.locator('.code-copy').click()
    await expect.poll(() => code.locator('.code-copy').textContent()).toBe('Copied')
    await expect.poll(() => clipboardText(page)).toBe('const x: number = 42\nconsole.log(x)\n')

    // The thought is closed until asked for.
    const thought = page.getByTestId('entry-thought')
    expect(await thought.getAttribute('open')).toBeNull()
    expect(await thought.locator('.thought-preview').textContent()).toContain('Considering how to approach this')
    await thought.locator('summary').click()
    await expect.poll(() => thought.locator('.markdown strong').textContent()).toBe('how')

    // The plan is a checklist.
    const plan = page.getByTestId('entry-plan')
    expect(await plan.locator('li .step').allTextContents()).toEqual(['Read the code', 'Write the change', 'Run the tests'])
    expect(await plan.getByTestId('plan-progress').textContent()).toBe('· 0 of 3 done')

    // The edit: a diff, its place, its raw input.
    const edit = page.getByTestId('entry-tool-call').filter({ hasText: 'Edit src/example.ts' })
    expect(await edit.getByTestId('diff-stats').textContent()).toBe('+3 −3')
    expect(await edit.getByTestId('diff-line').count()).toBe(15)
    expect(await edit.locator('.line.add .word').first().textContent()).toContain('encoding:')
    await edit.getByTestId('tool-call-location').click()
    await expect.poll(() => edit.locator('.locations .feedback').textContent()).toBe('Path copied')
    await expect.poll(() => clipboardText(page)).toBe(`${join(projectDir, 'src', 'example.ts')}:3`)
    await edit.getByTestId('raw-input').click()
    expect(JSON.parse((await edit.getByTestId('raw-body').textContent()) ?? '')).toMatchObject({ edits: [{ line: 4 }, { line: 6 }, { line: 12 }] })
    await edit.getByTestId('raw-input').click()

    // The command ran in a terminal view: xterm.js, its colours applied under the strict CSP.
    const terminal = page.getByTestId('terminal-output')
    await expect
      .poll(() => terminal.locator('.xterm-rows > div').allTextContents())
      .toEqual([
        expect.stringMatching(/^PASS src\/a\.test\.ts\s*$/),
        expect.stringMatching(/^FAIL src\/b\.test\.ts\s*$/),
        expect.stringMatching(/^truecolor done\s*$/)
      ])
    const colour = (text: string) =>
      terminal
        .locator('.xterm-rows span', { hasText: text })
        .first()
        .evaluate((el: any) => el.ownerDocument.defaultView.getComputedStyle(el).color)
    expect(await colour('truecolor')).toBe('rgb(255, 135, 0)')
    expect(await colour('FAIL')).not.toBe(await colour('done'))
    expect(await page.getByTestId('usage').textContent()).toContain('1.2K / 200K tokens')
    await page.getByTestId('thread-scroll').evaluate((el: any) => (el.scrollTop = 0))
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'thread-top')).join(', ')}`)
    await page.getByTestId('to-latest').click()
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'thread')).join(', ')}`)

    // Side by side, remembered after a reload.
    await edit.getByTestId('diff-split').click()
    await expect.poll(() => edit.getByTestId('diff-row').count()).toBe(13)
    await page.reload()
    await page.getByTestId('session-item').first().click()
    await expect.poll(() => page.getByTestId('diff-row').count()).toBe(13)
    await page.getByTestId('tool-call-diff').scrollIntoViewIfNeeded()
    console.log(`screenshot: ${await screenshot(page, 'thread-light-split')}`)
    expect(problems).toEqual([])
    expect(await page.evaluate('window.__violations')).toEqual([])

    await context.close()
  })

  it('completes the agent’s slash commands and project files; a mentioned file goes as a resource link', async () => {
    const { context, page, problems } = await sessionWindow()
    await send(page, '/commands')
    await turns(page, 1)

    const input = page.getByTestId('composer-input')
    await input.click()
    await page.keyboard.type('/')
    const options = page.getByTestId('completion-option')
    await expect.poll(() => options.locator('.option-label').allTextContents()).toEqual(['/review', '/test'])
    console.log(`screenshot: ${await screenshot(page, 'thread-slash-commands')}`)
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    expect(await input.inputValue()).toBe('/test ')
    expect(await page.getByTestId('entry-user').count()).toBe(1)

    await input.fill('')
    await page.keyboard.type('/blocks look at @exa')
    await expect.poll(() => options.locator('.option-label').allTextContents()).toEqual(['src/example.ts'])
    console.log(`screenshot: ${await screenshot(page, 'thread-mention')}`)
    await page.keyboard.press('Tab')
    expect(await input.inputValue()).toBe('/blocks look at @src/example.ts ')
    await page.keyboard.press('Enter')
    await turns(page, 2)
    expect((await page.getByTestId('entry-assistant').last().textContent())?.trim()).toBe(
      `blocks: text, resource_link(file://${join(projectDir, 'src', 'example.ts')})`
    )
    // The sent message names the file as a chip.
    expect(await page.getByTestId('entry-user').last().locator('.file-link').textContent()).toBe('example.ts')
    expect(problems).toEqual([])
    await context.close()
  })

  it('sends a pasted image to an agent that accepts images, with a thumbnail before it goes', async () => {
    const { context, page, problems } = await sessionWindow('Seer')
    // A 1×1 PNG, pasted into the composer. (A string, as this file is type-checked without the DOM library.)
    await page.evaluate(`(() => {
      const bytes = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0))
      const data = new DataTransfer()
      data.items.add(new File([bytes], 'dot.png', { type: 'image/png' }))
      document.querySelector('[data-testid=composer-input]').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
    })()`)
    await expect.poll(() => page.getByTestId('attachment').textContent()).toContain('Image: dot.png')
    expect(
      await page
        .getByTestId('attachment')
        .locator('img.thumb')
        .evaluate((img: any) => img.naturalWidth)
    ).toBe(1)
    await send(page, '/blocks')
    await turns(page, 1)
    expect((await page.getByTestId('entry-assistant').last().textContent())?.trim()).toBe('blocks: text, image(image/png,70 bytes)')
    expect(await page.getByTestId('attachment').count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })

  it('asks permission inline: the card, its tool call marked and shown, answered with a key', async () => {
    const { context, page, problems } = await sessionWindow()
    await send(page, '/many 40\n/permission')
    await page.getByTestId('permission-option').first().waitFor()
    expect(await page.getByTestId('permission-option').allTextContents()).toEqual(['1 Allow', '2 Reject'])
    const call = page.getByTestId('entry-tool-call').filter({ hasText: 'Run dangerous command' })
    expect(await call.getByTestId('tool-call-status').textContent()).toBe('Needs your answer')

    // Far up in the thread, "Show in thread" brings the call back into view.
    await page.getByTestId('thread-scroll').evaluate((el: any) => (el.scrollTop = 0))
    await expect.poll(() => call.count()).toBe(0)
    await page.getByTestId('permission-show').click()
    await expect.poll(() => call.count()).toBe(1)
    await expect.poll(() => inView(call)).toBe(true)
    console.log(`screenshot: ${await screenshot(page, 'thread-permission')}`)

    // The card keeps the focus: a digit answers.
    await page.getByTestId('permission-option').first().focus()
    await page.keyboard.press('2')
    await turns(page, 1)
    expect(await page.getByTestId('entry-permission').textContent()).toContain('Refused: Run dangerous command')
    expect(await page.getByTestId('permission').count()).toBe(0)
    await page.getByTestId('thread-scroll').evaluate((el: any) => (el.scrollTop = el.scrollHeight))
    // Refused by the user: it reads so, although the agent ended the call failed (issue 36.4).
    expect(await page.getByTestId('entry-tool-call').filter({ hasText: 'Run dangerous command' }).getByTestId('tool-call-status').textContent()).toBe(
      'Rejected'
    )
    expect(problems).toEqual([])
    await context.close()
  })

  it("shows an agent's notices as dismissable notices, never in its reply, a compaction as such, and offers the agent's Compact", async () => {
    const raw = (update: Record<string, unknown>): string => `/raw ${JSON.stringify(update)}`
    const turn = [
      '/say The change is in `src/example.ts`.',
      raw({
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: "**Warning:** We're changing auto mode on Monday.\nSessions started after then ask before each edit." },
        _meta: { claudeCode: { kind: 'informational', level: 'warning' } }
      }),
      raw({ sessionUpdate: 'notice', severity: 'info', title: 'Rate limit reached', description: 'Retrying in 5 seconds.' }),
      raw({ sessionUpdate: 'compaction_update', compactionId: 'c1', status: 'in_progress' }),
      raw({
        sessionUpdate: 'compaction_summary_chunk',
        compactionId: 'c1',
        content: { type: 'text', text: 'We **fixed** the build and added a test.' }
      }),
      raw({ sessionUpdate: 'compaction_update', compactionId: 'c1', status: 'completed' }),
      raw({
        sessionUpdate: 'available_commands_update',
        availableCommands: [{ name: 'compact', description: 'Clear the history but keep a summary in context' }]
      }),
      '/say Anything else?'
    ].join('\n')
    const { context, page, problems } = await sessionWindow()
    await send(page, turn)
    await turns(page, 1)

    expect((await page.getByTestId('entry-assistant').allTextContents()).map((t) => t.trim())).toEqual([
      'The change is in src/example.ts.',
      'Anything else?'
    ])
    const notices = page.getByTestId('entry-notice')
    expect(await notices.count()).toBe(2)
    expect(await notices.first().textContent()).toContain("We're changing auto mode on Monday.")
    expect(await notices.first().getAttribute('class')).toContain('warning')
    const compaction = page.getByTestId('entry-compaction')
    expect(await compaction.getByTestId('compaction-state').textContent()).toBe('Conversation compacted')
    await compaction.locator('summary').click()
    await expect.poll(() => compaction.locator('.markdown strong').textContent()).toBe('fixed')
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'thread-notices')).join(', ')}`)

    // Dismissed, a notice goes; the other stays.
    await notices.first().getByTestId('notice-dismiss').click()
    await expect.poll(() => notices.count()).toBe(1)
    expect(await notices.first().textContent()).toContain('Rate limit reached')

    // The agent announced /compact: the header offers it, and it sends that command.
    await page.getByTestId('compact').click()
    await turns(page, 2)
    expect(await page.getByTestId('entry-user').last().textContent()).toContain('/compact')
    expect(problems).toEqual([])
    await context.close()
  })

  it('shows a subagent nested under the tool call that launched it, live, with its own permission, in light and dark', async () => {
    const { context, page, problems } = await sessionWindow()
    await send(page, '/subagent ask the flaky test')
    await page.getByTestId('permission-option').first().waitFor()
    const launch = page.getByTestId('entry-tool-call').filter({ hasText: 'Agent: the flaky test' }).first()
    const subagent = launch.getByTestId('subagent')
    // Open while it works: its own thread, its tool call waiting for the answer.
    expect(await subagent.getAttribute('open')).not.toBeNull()
    expect(await subagent.getByTestId('subagent-state').textContent()).toContain('Working')
    expect(await subagent.getByTestId('entry-assistant').textContent()).toContain('Looking into the flaky test.')
    const asked = subagent.getByTestId('entry-tool-call').filter({ hasText: 'Check the flaky test' })
    expect(await asked.getByTestId('tool-call-status').textContent()).toBe('Needs your answer')
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'thread-subagent')).join(', ')}`)
    await page.getByTestId('permission-option').first().click()
    await turns(page, 1)
    expect(await subagent.getByTestId('subagent-state').textContent()).toBe('Done')
    expect(await asked.getByTestId('tool-call-status').textContent()).toBe('Done')
    expect(await page.getByTestId('entry-session-message').textContent()).toContain('the flaky test: found it (permission: allow)')
    expect(await page.getByTestId('session-message-from').textContent()).toBe('From the subagent the flaky test')
    expect(problems).toEqual([])
    await context.close()
  })

  it('keeps a long thread light: only what is in view is rendered; it follows the stream, or keeps the reader’s place', async () => {
    const { context, page, problems } = await sessionWindow('Streamer')
    await send(page, '/many 400')
    await turns(page, 1)
    // 400 messages, a handful of rows in the page.
    const rows = page.locator('[data-testid=thread] .row')
    expect(await rows.count()).toBeLessThan(60)
    await expect.poll(() => inView(page.getByText('Message 399:'))).toBe(true)
    expect(await distanceFromBottom(page)).toBeLessThan(30)

    // Streaming at the bottom: the view follows.
    await send(page, '/stream 120')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('chunk 40 ')
    await expect.poll(() => distanceFromBottom(page)).toBeLessThan(30)
    await turns(page, 2)
    await expect.poll(() => inView(page.getByText('chunk 120'))).toBe(true)

    // Scrolled up while it streams: the reader stays where they are.
    await send(page, '/stream 150')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('chunk 10 ')
    await page.getByTestId('thread-scroll').evaluate((el: any) => (el.scrollTop = el.scrollHeight / 2))
    // The first entry wholly in view, and where it is; null until the list has drawn a row in the view. It draws the
    // new place's rows on its next frames, and until then the old place's rows are still in the page, far below the
    // view (under load a look two frames on saw one, the second turn's prompt, and took it for the first in view).
    const firstInView = () =>
      page.getByTestId('thread-scroll').evaluate((scroller: any) => {
        const { top, bottom } = scroller.getBoundingClientRect()
        const rows = [...scroller.querySelectorAll('.row')].filter((row: any) => {
          const rowTop = row.getBoundingClientRect().top
          return rowTop >= top && rowTop < bottom
        })
        rows.sort((a: any, b: any) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
        return rows.length ? { id: rows[0].dataset.entryId as string, top: Math.round(rows[0].getBoundingClientRect().top) } : null
      })
    await expect.poll(firstInView).not.toBeNull()
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    const before = (await firstInView())!
    expect(before.id).toMatch(/^assistant:/)
    // (The turn's end is out of view, and so out of the page: the session's status says it.)
    await expect.poll(() => page.getByTestId('session-status').textContent(), { timeout: 30_000 }).toBe('Ready')
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    expect(await firstInView()).toEqual(before)
    expect(await distanceFromBottom(page)).toBeGreaterThan(500)
    console.log(`screenshot: ${await screenshot(page, 'thread-long-reading')}`)

    await page.getByTestId('to-latest').click()
    await expect.poll(() => distanceFromBottom(page)).toBeLessThan(30)
    expect(await inView(page.getByText('chunk 150'))).toBe(true)
    expect(problems).toEqual([])
    await context.close()
  })

  it('keeps the reader where they scrolled as entries come before the scroll’s event, and shows ↓ Latest', async () => {
    const context = await newContext()
    // Each message the page's socket brings passes __beforeMessage first, before the page takes it in (its records
    // are shown in the next frame, threads.ts).
    await context.addInitScript(`(() => {
      const Socket = window.WebSocket
      window.WebSocket = class extends Socket {
        constructor(...args) {
          super(...args)
          this.addEventListener('message', (event) => window.__beforeMessage?.(String(event.data)))
        }
      }
    })()`)
    const page = await context.newPage()
    const problems = watchConsole(page)
    await newSession(page)
    await send(page, Array.from({ length: 30 }, (_, i) => `/tool step ${i + 1}`).join('\n'))
    await expect.poll(() => page.getByTestId('session-status').textContent(), { timeout: 30_000 }).toBe('Ready')
    // (A pause: the next records are shown in the frame after they come, threads.ts, not one later as after a late one.)
    await page.waitForTimeout(700)
    // The view scrolled to the top in the frame that takes in the next prompt's tool call, just before it is taken in:
    // the scroll's event comes with the next frame, after the new entry (as a scroll made between frames comes after a
    // row measured then).
    await page.evaluate(`window.__beforeMessage = (data) => {
      if (!data.includes('"sessionUpdate":"tool_call"')) return
      window.__beforeMessage = null
      requestAnimationFrame(() => {
        const scroller = document.querySelector('[data-testid=thread-scroll]')
        window.__scrolledFrom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight
        scroller.scrollTo({ top: 0 })
      })
    }`)
    await send(page, '/tool one more')
    // The scroll was made from the end, where the list followed the turn.
    await expect.poll(() => page.evaluate('window.__scrolledFrom ?? null'), { timeout: 30_000 }).not.toBeNull()
    expect(await page.evaluate('window.__scrolledFrom')).toBeLessThan(30)
    // Both turns in the list: each a prompt, its tool calls and its end.
    await expect.poll(() => page.getByTestId('thread').getAttribute('data-entries'), { timeout: 30_000 }).toBe('35')
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    // At the top still, the new entries below, and the way back to them offered.
    expect(await page.getByTestId('thread-scroll').evaluate((el: any) => el.scrollTop)).toBe(0)
    expect(await distanceFromBottom(page)).toBeGreaterThan(500)
    await page.getByTestId('to-latest').waitFor({ timeout: 5_000 })
    expect(problems).toEqual([])
    await context.close()
  })

  // Clicked at once, the session's view comes with its thread; once the window has fetched the view's code (when
  // first idle after its start, lazy.ts), the view is drawn at the click and its thread comes into it after.
  it.each(['at once', 'once the window has settled'] as const)(
    'opens a long conversation at its end without drawing its beginning first, or rows it then lets go of (clicked %s)',
    async (when) => {
      const { id } = await host.request('sessions.new', { projectId, agentId: scriptedId })
      await host.request('sessions.rename', { id, title: `Opened at its end ${when}` })
      await host.request('sessions.prompt', { id, text: '/many 200' })
      const context = await newContext()
      // Every row the list puts in the page, from the first, by its place in the conversation.
      await context.addInitScript(`new MutationObserver((records) => {
      const seen = (window.__rowsAdded ??= [])
      for (const record of records)
        for (const node of record.addedNodes)
          if (node instanceof Element)
            for (const row of [node, ...node.querySelectorAll('.row[data-index]')])
              if (row.matches('[data-testid=thread] .row[data-index]') && !seen.includes(row)) seen.push(row)
    }).observe(document, { childList: true, subtree: true })`)
      const page = await context.newPage()
      const problems = watchConsole(page)
      const viewCode =
        when === 'at once'
          ? null
          : page.waitForEvent('requestfinished', { predicate: (r) => /\/assets\/SessionView-[^/]*\.js$/.test(r.url()), timeout: 60_000 })
      await page.goto(server.url)
      const item = page.getByTestId('session-item').filter({ hasText: `Opened at its end ${when}` })
      await item.waitFor()
      await viewCode
      await item.click()
      await expect.poll(() => inView(page.getByText('Message 199:'))).toBe(true)
      const count = Number(await page.getByTestId('thread').getAttribute('data-entries'))
      expect(count).toBeGreaterThan(200)
      const added = (await page.evaluate('window.__rowsAdded.map((row) => Number(row.dataset.index))')) as number[]
      // Drawn from its end: no row of its first half was ever in the page (the view holds a few dozen of its last).
      expect(added.length).toBeGreaterThan(0)
      expect(added.filter((index) => index < count / 2)).toEqual([])
      // And each row put in the page is one the view at rest holds: none drawn and let go of on the way. A row whose
      // markdown was put in it only after the row was measured as it mounted was measured empty (a one-line reply as
      // 0 px), and the list drew more rows above to fill the view with them: 57 rows put in the page for 18 in it. Drawn
      // for the view's height before the session's settings line came above it (with the thread), the top row was let
      // go of once the list learnt the view's new height.
      const kept = (await page.evaluate(
        "Array.from(document.querySelectorAll('[data-testid=thread] > .row'), (row) => Number(row.dataset.index))"
      )) as number[]
      expect(added.filter((index) => !kept.includes(index))).toEqual([])
      expect(problems).toEqual([])
      await context.close()
    }
  )

  it('lays the page out once for the rows a render puts in it, not once a row; a row scrolled back to is not measured again', async () => {
    // Each read of a row's height, and whether the page had changed since the last read of a height (the read then lays
    // the page out first), counted by the row it read; and each read of the view's place after a change.
    const { context, page, problems } = await openManyMessages(
      'Measured together',
      `(() => {
      const height = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'offsetHeight').get
      const changes = new MutationObserver(() => undefined)
      changes.observe(document, { childList: true, subtree: true, attributes: true, characterData: true })
      const reads = (window.__rowReads = { laidOut: 0, placeLaidOut: 0, byRow: {} })
      Object.defineProperty(HTMLElement.prototype, 'offsetHeight', {
        configurable: true,
        get() {
          const changed = changes.takeRecords().length > 0
          if (this.matches('[data-testid=thread] > .row')) {
            if (changed) reads.laidOut++
            reads.byRow[this.dataset.entryId] = (reads.byRow[this.dataset.entryId] ?? 0) + 1
          }
          return height.call(this)
        }
      })
      // The view's place, which the list reads too: read after a change, it lays the page out as a height does.
      const top = Object.getOwnPropertyDescriptor(Element.prototype, 'scrollTop')
      Object.defineProperty(Element.prototype, 'scrollTop', {
        configurable: true,
        get() {
          if (this.matches('[data-testid=thread-scroll]') && changes.takeRecords().length > 0) reads.placeLaidOut++
          return top.get.call(this)
        },
        set(value) {
          top.set.call(this, value)
        }
      })
    })()`
    )
    const reads = () => page.evaluate('window.__rowReads') as Promise<{ laidOut: number; placeLaidOut: number; byRow: Record<string, number> }>
    const opened = await reads()
    // The view at the end holds some 18 rows, each read once as the list put it in the page. Read as each mounted, the
    // next row's insertion came between two reads: every read laid the page out again (one layout a row, 18 or more).
    const measured = Object.keys(opened.byRow).length
    expect(measured).toBeGreaterThan(10)
    expect(opened.laidOut).toBeLessThanOrEqual(3)
    // Nor the view's place, read before each row's size was given to the list, its size the same as the list's: a layout
    // for each row as it mounted and at each render that gave it its size again (52 and 53 in two runs, 2 now), ~25 ms of
    // the open's forced layout here (bench/open-probe.ts).
    expect(opened.placeLaidOut).toBeLessThanOrEqual(3)
    // A screen up and back down, a step at a time: the rows at the end, measured at the open, are not read again.
    const atEnd = Object.keys(opened.byRow)
    for (const dir of [-1, 1]) {
      for (let step = 0; step < 3; step++) {
        await page.getByTestId('thread-scroll').evaluate((el, d) => el.scrollBy(0, (d * el.clientHeight) / 3), dir)
        await page.evaluate('new Promise((r) => setTimeout(r, 250))')
      }
    }
    await expect.poll(() => inView(page.getByText('Message 199:'))).toBe(true)
    const back = await reads()
    expect(atEnd.filter((row) => back.byRow[row] !== opened.byRow[row])).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })

  it('opens a past conversation at its end with the composer focused, each message sanitised in one pass, not one a block', async () => {
    // Each document DOMPurify parses (one each time it sanitises) from the click on.
    const { context, page, problems } = await openManyMessages(
      'Sanitised a message at a time',
      `(() => {
      const parse = DOMParser.prototype.parseFromString
      window.__parsed = 0
      document.addEventListener('pointerdown', () => (window.__counting = true), true)
      DOMParser.prototype.parseFromString = function (...args) {
        if (window.__counting) window.__parsed++
        return parse.apply(this, args)
      }
    })()`
    )
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    // What the reader has: the end at the bottom, the keyboard in the composer.
    expect(await distanceFromBottom(page)).toBeLessThan(30)
    expect(await page.evaluate("document.activeElement?.getAttribute('data-testid')")).toBe('composer-input')
    // Every fifth message is a paragraph and a code block: sanitised a block at a time, the rows at the end parsed a
    // document more for each of those than there are messages drawn.
    const drawn = await page.locator('[data-testid=thread] .markdown').count()
    const withCode = await page.locator('[data-testid=thread] .markdown .code-block').count()
    expect(withCode).toBeGreaterThan(1)
    expect(await page.evaluate('window.__parsed')).toBeLessThanOrEqual(drawn)
    console.log(`screenshot: ${await screenshot(page, 'thread-opened-at-end')}`)
    expect(problems).toEqual([])
    await context.close()
  })

  it('prepares the markdown once the window is idle, before the first open, leaving nothing in the page; the open then draws its messages right', async () => {
    // Each document DOMPurify parses (one each time it sanitises), before the click and from it on.
    const { context, page, problems, item } = await listed(
      'Prepared before its open',
      `(() => {
      const parse = DOMParser.prototype.parseFromString
      window.__parsed = { before: 0, after: 0 }
      document.addEventListener('pointerdown', () => (window.__clicked = true), true)
      DOMParser.prototype.parseFromString = function (...args) {
        window.__parsed[window.__clicked ? 'after' : 'before']++
        return parse.apply(this, args)
      }
    })()`,
      '/many 40'
    )
    const children = () => page.evaluate('document.body.childElementCount')
    const before = await children()
    // The thread's code is fetched once the window is first idle, and its markdown rendered once, thrown away, when it
    // is next idle: the first open does not compile markdown-it and DOMPurify in the task drawing its rows. (The old
    // window sanitised nothing before the first open.)
    await expect.poll(() => page.evaluate('window.__parsed.before'), { timeout: 20_000 }).toBeGreaterThan(0)
    expect(await children()).toBe(before)
    expect(await page.evaluate("document.querySelectorAll('[aria-hidden=true][style*=mono]').length")).toBe(0)
    await item.click()
    await expect.poll(() => inView(page.getByText('Message 39:'))).toBe(true)
    // What the reader sees is the conversation's own: its code blocks, its words, one pass at most a message drawn.
    const drawn = await page.locator('[data-testid=thread] .markdown').count()
    expect(await page.locator('[data-testid=thread] .markdown .code-block').count()).toBeGreaterThan(1)
    expect(await page.getByTestId('thread').textContent()).not.toContain('warm')
    expect(await page.evaluate('window.__parsed.after')).toBeLessThanOrEqual(drawn)
    expect(await page.evaluate("document.activeElement?.getAttribute('data-testid')")).toBe('composer-input')
    expect(problems).toEqual([])
    await context.close()
  })

  it('asks the Host for a conversation at its click, then draws its view in that same task once the code is in: no blank pane between', async () => {
    // Whether the conversation's title is in the pane as its open is sent on the socket, and once the click is handled
    // (a listener on the window runs after the row's, the render it asked for done in between).
    const { context, page, problems, item } = await listed(
      'Drawn at its click',
      `(() => {
      const shown = () => Boolean(document.querySelector('[data-testid=pane] [data-testid=session-title]'))
      const parse = DOMParser.prototype.parseFromString
      window.__seen = { prepared: 0, atSend: null, atClick: null }
      DOMParser.prototype.parseFromString = function (...args) {
        window.__seen.prepared++
        return parse.apply(this, args)
      }
      const send = WebSocket.prototype.send
      WebSocket.prototype.send = function (data) {
        if (typeof data === 'string' && data.includes('"method":"sessions.open"')) window.__seen.atSend = shown()
        return send.call(this, data)
      }
      window.addEventListener('click', () => (window.__seen.atClick = shown()))
    })()`,
      '/many 5'
    )
    // The session view's code, fetched once the window is first idle: its markdown is prepared once it has run.
    await expect.poll(() => page.evaluate('window.__seen.prepared'), { timeout: 20_000 }).toBeGreaterThan(0)
    await item.click()
    await expect.poll(() => inView(page.getByText('Message 4:'))).toBe(true)
    // The request went out before the view was drawn (sent after it, the Host waited for the render), and the view was
    // in the page when the click was done: drawn as an async part, it came a task later, the pane blank meanwhile.
    expect(await page.evaluate('window.__seen')).toMatchObject({ atSend: false, atClick: true })
    expect(await page.getByTestId('pane').getByTestId('session-title').textContent()).toBe('Drawn at its click')
    expect(problems).toEqual([])
    await context.close()
  })

  it('makes the date formatters once the window is idle: a pointer over a session, as before its click, makes none, and its tooltip says when it was updated', async () => {
    // Each Intl date formatter the page makes, before the pointer first comes over the page and from then on.
    const { context, page, problems, item } = await listed(
      'Hovered for its date',
      `(() => {
      window.__formats = { before: 0, after: 0 }
      document.addEventListener('pointerover', () => (window.__pointed = true), true)
      for (const name of ['DateTimeFormat', 'RelativeTimeFormat']) {
        const Native = Intl[name]
        Intl[name] = new Proxy(Native, {
          construct(target, args) {
            window.__formats[window.__pointed ? 'after' : 'before']++
            return Reflect.construct(target, args)
          }
        })
      }
    })()`
    )
    // Made once the window is idle after its start (the first formatter a page makes costs Chromium its locale data,
    // ~40 ms: before, the pointer over a session made it, in the task before that session's open).
    await expect.poll(() => page.evaluate('window.__formats.before'), { timeout: 20_000 }).toBe(2)
    await item.hover()
    await expect.poll(() => item.getByTestId('session-open').getAttribute('title')).toContain('Updated')
    expect(await page.evaluate('window.__formats.after')).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })

  it('draws only the rows in view while the reader flings, and those around the view again once the fling stops', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId: scriptedId })
    await host.request('sessions.rename', { id, title: 'Flung through' })
    await host.request('sessions.prompt', { id, text: '/many 800' })
    const context = await newContext()
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    await page.getByTestId('session-item').filter({ hasText: 'Flung through' }).click()
    await expect.poll(() => inView(page.getByText('Message 799:')), { timeout: 60_000 }).toBe(true)
    // Rows in the page wholly above the view and wholly below it, as the frame before this one left them.
    const outside = `(() => {
      const scroller = document.querySelector('[data-testid=thread-scroll]')
      const view = scroller.getBoundingClientRect()
      const rows = Array.from(scroller.querySelectorAll('[data-testid=thread] > .row'), (row) => row.getBoundingClientRect())
      return { above: rows.filter((row) => row.bottom <= view.top).length, below: rows.filter((row) => row.top >= view.bottom).length }
    })()`
    // Flung up: a leap of `screens` each frame, for 10 frames; what each frame left outside the view once the fling is
    // one (its second leap). Looked at in a frame's callback, after the frame's scroll event and the rows it drew; the
    // view moved in a task after the frame, as a reader's wheel moves it. (Moved in the frame's callback, it moved
    // between the scroll event and the list's measurements, which put the view back where the event had it, in every
    // other frame: a leap and a step, never two leaps in a row.) After the leaps of `stalled` frames, the page stalls for
    // 300 ms in a task of its own before the next frame, longer than a fling's 200 ms, as a loaded machine stalls it.
    // Each render the list makes from the second leap on is looked at too (as the thread's rows change), painted or not:
    // a frame's callback comes before some of them, and a render that drew the rows around the view could be gone by the
    // next.
    const fling = (screens: number, stalled: number[]) =>
      page.evaluate(`new Promise((resolve) => {
        const scroller = document.querySelector('[data-testid=thread-scroll]')
        const seen = []
        const renders = []
        let frame = 0
        let counting = false
        const changes = new MutationObserver(() => counting && renders.push({ frame, ...${outside} }))
        changes.observe(document.querySelector('[data-testid=thread]'), { childList: true })
        const tick = () => {
          if (frame >= 3) seen.push(${outside})
          if (frame++ === 10) {
            changes.disconnect()
            return resolve({ seen, renders })
          }
          setTimeout(() => {
            counting = frame >= 2
            scroller.scrollTop -= ${screens} * scroller.clientHeight
            if (${JSON.stringify(stalled)}.includes(frame)) setTimeout(() => { const from = performance.now(); while (performance.now() - from < 300); })
            requestAnimationFrame(tick)
          })
        }
        requestAnimationFrame(tick)
      })`) as Promise<{ seen: { above: number; below: number }[]; renders: { frame: number; above: number; below: number }[] }>
    // Three screens a frame: the rows beyond the view are gone from it by the next frame. None is drawn but where rows
    // measured as they came in moved the view: in a frame or two, a few more where the page stalled (a CI run's load
    // did: 5 frames of 8, one row each). Before, one on either side was drawn in every frame, two rows a frame put in
    // the page for nothing, and six on either side in each frame after a fling had ended. And no render while it lasts
    // draws the rows around the view: one of the list's own moves (a row measured) taken for a reader's step counted
    // the leaps from naught again; where the page stalled, the fling ended between two leaps, and three renders drew
    // 12 or 13 rows beyond the view (a CI run's frame saw one of them: 18 rows outside over 8 frames); in one run of
    // five, such a move between the first two leaps began the fling late. Nor does the fling's first render draw where
    // the view was: the view's handler heard the second leap before the list did, and a render kept the rows of its old
    // place, 12 of them (all outside the view), before the one that drew those in it, in the same task.
    for (const stalls of [[], [4, 6, 8]]) {
      const fast = await fling(3, stalls)
      expect(fast.seen).toHaveLength(8)
      expect(fast.seen.reduce((sum, frame) => sum + frame.above + frame.below, 0)).toBeLessThan(1.5 * fast.seen.length)
      expect(fast.renders.length).toBeGreaterThan(8)
      // (Each render's frame and rows outside the view, said when it fails: where in the fling it came.)
      expect(Math.max(...fast.renders.map((render) => render.above + render.below)), JSON.stringify(fast.renders)).toBeLessThan(5)
    }
    // Once it stops, the rows around the view are drawn again, ready for the wheel.
    // (Six on either side, give or take the one the view's edge cuts.)
    const around = async () => {
      const { above, below } = (await page.evaluate(outside)) as { above: number; below: number }
      return Math.min(above, below)
    }
    await expect.poll(around).toBeGreaterThanOrEqual(5)
    // A screen and a half a frame: the row just above the view is in the next frame's view, and it is drawn (with the
    // one past it where rows measured moved the view), the page stalled or not.
    for (const stalls of [[], [4, 6, 8]]) {
      const { seen: slow } = await fling(1.5, stalls)
      expect(slow.filter((frame) => frame.above === 1 || frame.above === 2).length).toBeGreaterThan(slow.length / 2)
    }
    expect(problems).toEqual([])
    await context.close()
  })

  it('draws a fling through files read at about their height: the rows a frame puts in the page are painted, not let go of once measured', async () => {
    // 80 reads of a 40-line file: each card shows it in its code box (390 px at its cap), between short messages.
    const file = join(projectDir, 'src', 'forty-lines.ts')
    await writeFile(file, Array.from({ length: 40 }, (_, i) => `export const line${i} = ${i} // forty lines`).join('\n') + '\n')
    const { id } = await host.request('sessions.new', { projectId, agentId: scriptedId })
    await host.request('sessions.rename', { id, title: 'Files read' })
    await host.request('sessions.prompt', { id, text: Array.from({ length: 80 }, (_, i) => `/read ${file}\n/say Read ${i}.`).join('\n') })
    const context = await newContext()
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    await page.getByTestId('session-item').filter({ hasText: 'Files read' }).click()
    await expect.poll(() => inView(page.getByText('Read 79.')), { timeout: 60_000 }).toBe(true)
    // Flung up three screens a frame (moved in a task after each frame, as a wheel moves it), each frame landing where no
    // row was measured. Counted, by frame: whether it put rows in the page, and whether it let go of some of them in the
    // same frame, after its animation frame callbacks (where the list measured them and took away the rows they pushed
    // out of the view), never painted. Guessed at 80 px, a card drew four or five rows more than the view held at each
    // landing, in nearly every frame.
    const frames = (await page.evaluate(`new Promise((resolve) => {
      const scroller = document.querySelector('[data-testid=thread-scroll]')
      const landed = new Set()
      const wasted = new Set()
      let frame = 0
      let afterCallbacks = false
      const born = new WeakMap()
      scroller.addEventListener('scroll', () => (afterCallbacks = false), { capture: true, passive: true })
      const rows = new MutationObserver((records) => {
        for (const record of records) {
          for (const node of record.addedNodes) if (node.classList?.contains('row')) (landed.add(frame), born.set(node, frame))
          for (const node of record.removedNodes)
            if (node.classList?.contains('row') && afterCallbacks && born.get(node) === frame - 1) wasted.add(frame - 1)
        }
      })
      rows.observe(scroller.querySelector('[data-testid=thread]'), { childList: true })
      const tick = () => {
        frame++
        afterCallbacks = true
        if (frame === 16 || scroller.scrollTop === 0) {
          rows.disconnect()
          return resolve({ landed: landed.size, wasted: wasted.size })
        }
        setTimeout(() => {
          scroller.scrollTop -= 3 * scroller.clientHeight
          requestAnimationFrame(tick)
        })
      }
      requestAnimationFrame(tick)
    })`)) as { landed: number; wasted: number }
    expect(frames.landed).toBeGreaterThan(5)
    expect(frames.wasted).toBeLessThan(frames.landed / 2)
    expect(problems).toEqual([])
    await context.close()
  })

  it('goes on flinging while the wheel pushes against the top where the earlier page is being read, through a stall of the page, and draws the rows in full once it stops', async () => {
    const { id } = await host.request('sessions.new', { projectId, agentId: scriptedId })
    await host.request('sessions.rename', { id, title: 'Flung into a page' })
    await host.request('sessions.prompt', { id, text: '/many 1200' })
    // The earlier pages read slowly, as on a loaded machine or a slow disk: the fling waits at the top for one. Held
    // until the wheel has pushed there for its 800 ms (a fixed 1.5 s was not enough on a loaded machine: the page could
    // come in first, counted from when the fling neared the top).
    let release = (): void => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    const handle = host.handle.bind(host)
    host.handle = (async (method, params, options) => {
      if (method === 'transcripts.read') await held
      return handle(method, params, options)
    }) as typeof host.handle
    try {
      const context = await newContext()
      const page = await context.newPage()
      const problems = watchConsole(page)
      await page.goto(server.url)
      await page.getByTestId('session-item').filter({ hasText: 'Flung into a page' }).click()
      await expect.poll(() => inView(page.getByText('Message 1199:')), { timeout: 60_000 }).toBe(true)
      // Flung up three screens a frame (a wheel event, then the move in a task after the frame, as a wheel moves it) into
      // the top of what the window holds; there, while the earlier page is read, the wheel goes on for 800 ms. Counted
      // meanwhile: markdown blocks put in the page as markdown, not as the text passing rows show. The fling used to end
      // 200 ms after its last move, and the rows in view and six more on either side were drawn in full (parsed,
      // sanitised, laid out) for the frames before the page came in and the fling went on past them.
      // Once, 300 ms into the push, the page stalls for 300 ms after a wheel event (a long render, a collection, another
      // process on the cores): the fling's end was due before the frame with the next one, and ended it (a CI run).
      const pushed = (await page.evaluate(`new Promise((resolve) => {
        const scroller = document.querySelector('[data-testid=thread-scroll]')
        let counting = false
        let markdown = 0
        new MutationObserver((records) => {
          if (!counting) return
          for (const record of records)
            for (const node of record.addedNodes) {
              if (node.nodeType !== 1) continue
              for (const block of node.matches('.markdown') ? [node] : node.querySelectorAll('.markdown'))
                if (!block.classList.contains('passing')) markdown++
            }
        }).observe(scroller.querySelector('[data-testid=thread]'), { childList: true, subtree: true })
        const loading = () => document.querySelector('[data-testid=load-earlier]')?.disabled === true
        const started = performance.now()
        let since = 0
        let stalled = false
        const tick = () => {
          const now = performance.now()
          if (!since && scroller.scrollTop === 0 && loading()) (since = now), (counting = true)
          if (since && now - since > 800) return resolve({ markdown, loading: loading(), passing: document.querySelectorAll('[data-testid=markdown-passing]').length })
          if (now - started > 30000) return resolve({ markdown: -1, loading: false, passing: 0 })
          scroller.dispatchEvent(new WheelEvent('wheel', { deltaY: -3 * scroller.clientHeight, bubbles: true }))
          if (since && !stalled && now - since > 300) {
            stalled = true
            const until = performance.now() + 300
            while (performance.now() < until);
          }
          setTimeout(() => {
            scroller.scrollTop -= 3 * scroller.clientHeight
            requestAnimationFrame(tick)
          })
        }
        requestAnimationFrame(tick)
      })`)) as { markdown: number; loading: boolean; passing: number }
      release()
      // Still at the top with the page being read, the rows in view passing by, none drawn in full.
      expect(pushed.loading).toBe(true)
      expect(pushed.passing).toBeGreaterThan(0)
      expect(pushed.markdown).toBe(0)
      // Once the wheel stops, the fling ends: every row in the page shows its markdown.
      await expect.poll(() => page.getByTestId('markdown-passing').count(), { timeout: 10_000 }).toBe(0)
      expect(await page.locator('[data-testid=entry-assistant] .markdown .md-block').count()).toBeGreaterThan(0)
      expect(problems).toEqual([])
      await context.close()
    } finally {
      release()
      host.handle = handle
    }
  })

  it('keeps the newest entry in place for a reader at the end: every frame painted shows it, whole, at the bottom', async () => {
    const { context, page, problems } = await sessionWindow()
    // Longer than the view: the reader is at its end.
    await prompt(page, '/many 30')
    const painted = await watchPaintedEnd(page)
    // A batch of entries at once (an agent's burst, a tool call's messages), a streamed reply, tool calls.
    await prompt(page, '/many 30')
    await prompt(page, '/stream 80\n/tool Format\n/say **done**\n/tool Lint\n/many 8')
    await prompt(page, 'hello there')
    // A prompt of several lines typed: the composer grows, the view above it shrinks, the end stays in it.
    await page.getByTestId('composer-input').fill('Now the tests:\nfirst the unit ones,\nthen the end-to-end ones,\nand say what failed.')
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    const { frames, faults } = await painted()
    expect(frames).toBeGreaterThan(5)
    expect(faults).toEqual([])
    console.log(`screenshot: ${await screenshot(page, 'thread-end-followed')}`)
    await page.emulateMedia({ colorScheme: 'dark' })
    // (The colours change over a short transition: the picture is taken after it.)
    await page.waitForTimeout(400)
    console.log(`screenshot: ${await screenshot(page, 'thread-end-followed-dark')}`)
    expect(problems).toEqual([])
    await context.close()
  })

  it('lays out a long growing paragraph in pieces, each ending where its line ended, and as one paragraph once it stops', async () => {
    const { context, page, problems } = await sessionWindow('Streamer')
    await send(page, '/stream 900')
    const entry = page.getByTestId('entry-assistant').last()
    // The reply's paragraphs, each as the lines the page shows it in, and the same text laid out as one paragraph at
    // the same width beside them (taken out again at once: all in one task, between two drawings).
    const lines = () =>
      entry.evaluate((el: any) => {
        const paragraphs: any[] = [...el.querySelectorAll('.markdown p')]
        const tail = paragraphs[paragraphs.length - 1]
        const doc = el.ownerDocument
        const whole = doc.createElement('p')
        whole.textContent = paragraphs.map((p) => p.textContent).join('')
        whole.style.cssText = `position: absolute; visibility: hidden; width: ${tail.getBoundingClientRect().width}px`
        tail.after(whole)
        const range = doc.createRange()
        const linesOf = (elements: any[]) => {
          const out: string[] = []
          for (const element of elements) {
            let top: number | null = null
            const walker = doc.createTreeWalker(element, 4 /* NodeFilter.SHOW_TEXT */)
            for (let node: any = walker.nextNode(); node; node = walker.nextNode()) {
              for (let i = 0; i < node.data.length; i++) {
                range.setStart(node, i)
                range.setEnd(node, i + 1)
                const box = range.getClientRects()[0]
                if (!box) continue
                if (top === null || Math.abs(box.top - top) > box.height / 2) out.push('')
                top = box.top
                out[out.length - 1] += node.data[i]
              }
            }
          }
          return out.map((line) => line.trim())
        }
        const shown = linesOf(paragraphs)
        const one = linesOf([whole])
        whole.remove()
        const first = el.querySelector('.md-settled')
        const kept = !!first?.__kept
        if (first) first.__kept = true
        return { paragraphs: paragraphs.length, settled: el.querySelectorAll('.md-settled').length, shown, one, kept }
      })
    // While it streams: the lines above the last few in paragraphs of their own, laid out once and left as they are,
    // the page showing the very lines one paragraph would.
    await expect.poll(async () => (await lines()).settled, { timeout: 60_000 }).toBeGreaterThan(1)
    const streaming = await lines()
    expect(streaming.shown.length).toBeGreaterThan(10)
    expect(streaming.shown).toEqual(streaming.one)
    expect(streaming.kept).toBe(true)
    console.log(`screenshot: ${await screenshot(page, 'thread-growing-paragraph')}`)
    await page.emulateMedia({ colorScheme: 'dark' })
    // (The colours change over a short transition: the picture is taken after it.)
    await page.waitForTimeout(400)
    console.log(`screenshot: ${await screenshot(page, 'thread-growing-paragraph-dark')}`)
    await page.emulateMedia({ colorScheme: 'light' })
    // Narrower while it streams: the pieces cut at the old width are one paragraph again, and the lines still those of one.
    await page.setViewportSize({ width: 1000, height: 860 })
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    const narrower = await lines()
    expect(narrower.shown).toEqual(narrower.one)
    // Once it stops: one paragraph again (what copying it and another width need), ending with the last chunk.
    await turns(page, 1)
    await expect.poll(async () => (await lines()).paragraphs).toBe(1)
    const done = await lines()
    expect(done.settled).toBe(0)
    expect(done.shown).toEqual(done.one)
    expect(done.shown[done.shown.length - 1]).toMatch(/chunk 900$/)
    console.log(`screenshot: ${await screenshot(page, 'thread-grown-paragraph')}`)
    expect(problems).toEqual([])
    await context.close()
  })
})
