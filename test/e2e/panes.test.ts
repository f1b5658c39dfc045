import { copyFile, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Browser, Locator, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { openHost, removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, serve, watchConsole, chooseAgent } from './browser'

/**
 * Side by side: two sessions of two different agents, each in its own pane,
 * streaming at the same time; moving between panes with the keyboard,
 * maximising and closing them. Also makes the README's screenshot
 * (docs/screenshot.png, written when UPDATE_README_SCREENSHOT=1).
 */

let root: string
let projectDir: string
let browser: Browser
let host: Host
let server: RunningServer

beforeAll(async () => {
  root = await tempDir('e2e-panes')
  projectDir = join(root, 'acme-api')
  await mkdir(join(projectDir, 'src'), { recursive: true })
  await writeFile(join(projectDir, 'src', 'server.ts'), 'export const port = 8080\n')
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

// Each test's new window starts as a first window, not with the panes and choices the previous test left.
beforeEach(async () => {
  await resetWindowSettings(host)
})

const mod = process.platform === 'darwin' ? 'Meta' : 'Control'

function pane(page: Page, index: number): Locator {
  return page.getByTestId('pane').nth(index)
}

async function send(target: Locator, text: string): Promise<void> {
  await target.getByTestId('composer-input').fill(text)
  await target.getByTestId('send').click()
}

async function newSession(page: Page, agentId: string): Promise<void> {
  const project = page.getByTestId('project').filter({ hasText: 'acme-api' })
  await chooseAgent(project, agentId)
  await project.getByTestId('new-session').click()
}

describe('panes', () => {
  it('shows two agents side by side, each streaming on its own at the same time', async () => {
    const stateDir = join(root, 'agent-state')
    const a = await host.request(
      'agents.add',
      scriptedAgent(stateDir, { SCRIPTED_AGENT_NAME: 'scripted-agent-a', SCRIPTED_AGENT_CHUNK_DELAY_MS: '15' }, 'Scripted agent A')
    )
    const b = await host.request(
      'agents.add',
      scriptedAgent(stateDir, { SCRIPTED_AGENT_NAME: 'scripted-agent-b', SCRIPTED_AGENT_CHUNK_DELAY_MS: '15' }, 'Scripted agent B')
    )
    await host.request('projects.add', { cwd: projectDir })

    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)

    await newSession(page, a.id)
    await expect.poll(() => pane(page, 0).getByTestId('agent-status').textContent()).toContain('Scripted agent A')
    // A new pane beside the first takes the focus; the next session opens there.
    await pane(page, 0).getByTestId('pane-split').click()
    await expect.poll(() => page.getByTestId('pane').count()).toBe(2)
    expect(await pane(page, 1).getAttribute('data-focused')).toBe('true')
    await newSession(page, b.id)
    await expect.poll(() => pane(page, 1).getByTestId('agent-status').textContent()).toContain('Scripted agent B')
    expect(await pane(page, 0).getByTestId('agent-status').textContent()).toContain('Scripted agent A')

    // Both turns stream, then stop at a permission request: both sessions are mid-turn at once.
    await send(pane(page, 0), '/stream 20\n/permission\n/say A finished')
    await send(pane(page, 1), '/stream 30\n/permission\n/say B finished')
    await pane(page, 0).getByTestId('permission').waitFor()
    await pane(page, 1).getByTestId('permission').waitFor()
    expect(await pane(page, 0).getByTestId('entry-assistant').first().textContent()).toContain('chunk 20')
    expect(await pane(page, 1).getByTestId('entry-assistant').first().textContent()).toContain('chunk 30')
    expect(await pane(page, 0).getByTestId('session-status').textContent()).toBe('Waiting for you')
    expect(await pane(page, 1).getByTestId('session-status').textContent()).toBe('Waiting for you')
    // Each pane has only its own agent's stream.
    expect(await pane(page, 0).getByTestId('entry-assistant').first().textContent()).not.toContain('chunk 21')
    // The sidebar says both are waiting for an answer.
    await expect.poll(() => page.locator('[data-testid=session-item][data-state=waiting]').count()).toBe(2)
    console.log(`screenshot: ${await screenshot(page, 'e2e-panes-waiting')}`)

    // A digit answers only the focused pane's request.
    await page.keyboard.press(`${mod}+1`)
    expect(await pane(page, 0).getAttribute('data-focused')).toBe('true')
    await page.keyboard.press('2') // "Reject" in pane 1
    await expect.poll(() => pane(page, 0).getByTestId('entry-permission').count()).toBe(1)
    expect(await pane(page, 1).getByTestId('permission').count()).toBe(1)
    await page.keyboard.press(`${mod}+2`)
    expect(await pane(page, 1).getAttribute('data-focused')).toBe('true')
    await page.keyboard.press('1') // "Allow" in pane 2
    await expect.poll(() => pane(page, 1).getByTestId('entry-stop').count()).toBe(1)
    await expect.poll(() => pane(page, 0).getByTestId('entry-stop').count()).toBe(1)
    expect(await pane(page, 0).getByTestId('entry-permission').textContent()).toContain('Refused')
    expect(await pane(page, 1).getByTestId('entry-permission').textContent()).toContain('Allowed')
    expect(await pane(page, 0).getByTestId('thread').textContent()).toContain('A finished')
    expect(await pane(page, 1).getByTestId('thread').textContent()).toContain('B finished')
    expect(await pane(page, 0).getByTestId('thread').textContent()).not.toContain('B finished')

    // Two long answers at once: both panes fill while both are running.
    await send(pane(page, 0), '/stream 120')
    await send(pane(page, 1), '/stream 120')
    await expect
      .poll(async () => {
        const [one, two] = await Promise.all([0, 1].map((i) => pane(page, i).getByTestId('entry-assistant').last().textContent()))
        return [one?.includes('chunk 120'), two?.includes('chunk 120')]
      })
      .toEqual([true, true])
    await expect.poll(() => page.getByTestId('session-status').allTextContents()).toEqual(['Ready', 'Ready'])

    // Maximise and restore from the keyboard; the hidden pane keeps its session.
    await page.keyboard.press(`${mod}+Shift+Enter`)
    await expect.poll(() => pane(page, 0).isVisible()).toBe(false)
    expect(await pane(page, 1).isVisible()).toBe(true)
    console.log(`screenshot: ${await screenshot(page, 'e2e-panes-maximised')}`)
    await page.keyboard.press(`${mod}+Shift+Enter`)
    await expect.poll(() => pane(page, 0).isVisible()).toBe(true)

    // Previous / next pane, then close the focused one: the other session stays.
    await page.keyboard.press(`${mod}+Alt+ArrowLeft`)
    expect(await pane(page, 0).getAttribute('data-focused')).toBe('true')
    await page.keyboard.press(`${mod}+Alt+ArrowRight`)
    expect(await pane(page, 1).getAttribute('data-focused')).toBe('true')
    await page.keyboard.press(`${mod}+Alt+KeyW`)
    await expect.poll(() => page.getByTestId('pane').count()).toBe(1)
    expect(await pane(page, 0).getByTestId('agent-status').textContent()).toContain('Scripted agent A')
    // The closed pane's session is still in the sidebar and opens into a new pane from its menu.
    const itemB = page.locator('[data-testid=session-item]').filter({ has: page.getByRole('img', { name: 'Scripted agent B' }) })
    await itemB.hover()
    await itemB.getByTestId('session-menu').click()
    await page.getByTestId('menu-open-new-pane').click()
    await expect.poll(() => page.getByTestId('pane').count()).toBe(2)
    await expect.poll(() => pane(page, 1).getByTestId('agent-status').textContent()).toContain('Scripted agent B')

    // The layout survives a reload.
    await page.reload()
    await expect.poll(() => page.getByTestId('pane').count()).toBe(2)
    await expect.poll(() => pane(page, 1).getByTestId('entry-stop').count()).toBe(2)
    expect(problems).toEqual([])
    await context.close()
  })

  it('streams four long answers into four panes at once, each whole, in order and only in its own pane', async () => {
    // The window's renderer collects its garbage sooner than Chromium's defaults (RENDERER_JS_FLAGS): what it shows
    // while four answers grow at once is every chunk of each, once, in order, in the pane of its session.
    const stateDir = join(root, 'four-state')
    const agent = await host.request(
      'agents.add',
      scriptedAgent(stateDir, { SCRIPTED_AGENT_CHUNK_DELAY_MS: '1', SCRIPTED_AGENT_CHUNKS_PER_DELAY: '2' }, 'Scripted four')
    )
    const listed = await host.request('projects.list', {})
    const project = listed.find((p) => p.cwd === projectDir) ?? (await host.request('projects.add', { cwd: projectDir }))
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push((await host.request('sessions.new', { projectId: project.id, agentId: agent.id })).id)
    await host.request('settings.set', {
      panes: { panes: ids.map((sessionId, i) => ({ id: `pane-${i + 1}`, sessionId })), focused: 'pane-1', maximised: null }
    })
    const context = await browser.newContext({ viewport: { width: 1600, height: 900 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    await expect.poll(() => page.getByTestId('composer-input').count()).toBe(4)

    // Past the length a growing paragraph is laid out in pieces (2,000 characters): ~15 KB each, a different count a pane.
    const counts = [1_500, 1_501, 1_502, 1_503]
    await Promise.all(ids.map((id, i) => host.request('sessions.prompt', { id, text: `/stream ${counts[i]}` })))
    const expected = counts.map((n) => Array.from({ length: n }, (_, k) => `chunk ${k + 1}`).join(' '))
    const shown = (): Promise<string[]> =>
      Promise.all(
        [0, 1, 2, 3].map(async (i) => {
          const blocks = pane(page, i).locator('[data-testid=entry-assistant] :is(.md-block, .plain-piece)')
          return (await blocks.allTextContents()).join(' ').replace(/\s+/g, ' ').trim()
        })
      )
    await expect.poll(() => page.getByTestId('session-status').allTextContents(), { timeout: 60_000 }).toEqual(['Ready', 'Ready', 'Ready', 'Ready'])
    await expect.poll(shown, { timeout: 10_000 }).toEqual(expected)
    expect(problems).toEqual([])
    await context.close()
  })

  it('makes the README screenshot: two agents at work side by side', async () => {
    const file = join(projectDir, 'src', 'server.ts')
    const scripts = {
      "Make the server's port configurable, defaulting to 8080.": [
        '/think The port is hard-coded in src/server.ts. Read it from PORT and keep 8080 as the default.',
        '/plan Read the server entry point;Read PORT from the environment;Add a test',
        `/read ${file}`,
        `/write ${file} export const port = Number(process.env.PORT ?? 8080)`,
        '/tool Run the tests',
        '/say Done: the port now comes from `PORT`, falling back to **8080**. Try `PORT=3000 npm start`.'
      ].join('\n'),
      'Review the auth middleware for timing attacks.': [
        '/think Token checks must not leak how many characters matched.',
        '/tool Search for token comparisons',
        '/say `auth.ts` compares the session token with `===`, which stops at the **first differing character**: response times leak how much of a guess was right. Use `crypto.timingSafeEqual` on equal-length buffers instead.',
        '/sleep 600000'
      ].join('\n')
    }
    const scriptsFile = join(root, 'scripts.json')
    await writeFile(scriptsFile, JSON.stringify(scripts))
    // A fresh data folder: the sidebar shows only this scene.
    await server.close()
    await host.close()
    host = await openHost(join(root, 'shot-data'))
    server = await serve(host)
    await host.request('projects.add', { cwd: projectDir })
    const stateDir = join(root, 'shot-state')
    const a = await host.request(
      'agents.add',
      scriptedAgent(stateDir, { SCRIPTED_AGENT_NAME: 'scripted-agent-a', SCRIPTED_AGENT_SCRIPTS: scriptsFile }, 'Scripted agent A')
    )
    const b = await host.request(
      'agents.add',
      scriptedAgent(stateDir, { SCRIPTED_AGENT_NAME: 'scripted-agent-b', SCRIPTED_AGENT_SCRIPTS: scriptsFile }, 'Scripted agent B')
    )

    const context = await browser.newContext({ viewport: { width: 1440, height: 860 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    await newSession(page, a.id)
    await pane(page, 0).getByTestId('composer-input').waitFor()
    await send(pane(page, 0), "Make the server's port configurable, defaulting to 8080.")
    await expect.poll(() => pane(page, 0).getByTestId('entry-stop').count()).toBe(1)

    await page.keyboard.press(`${mod}+Backslash`)
    await expect.poll(() => page.getByTestId('pane').count()).toBe(2)
    await newSession(page, b.id)
    await pane(page, 1).getByTestId('composer-input').waitFor()
    await send(pane(page, 1), 'Review the auth middleware for timing attacks.')
    await expect.poll(() => pane(page, 1).getByTestId('thread').textContent()).toContain('timingSafeEqual')
    await pane(page, 1).getByTestId('composer-input').fill('Show me the fix as a diff')
    const path = await screenshot(page, 'e2e-side-by-side')
    console.log(`screenshot: ${path}`)
    if (process.env.UPDATE_README_SCREENSHOT === '1') await copyFile(path, join(__dirname, '..', '..', 'docs', 'screenshot.png'))

    await pane(page, 1).getByTestId('cancel').click()
    await expect.poll(() => pane(page, 1).getByTestId('entry-stop').count()).toBe(1)
    expect(problems).toEqual([])
    await context.close()
  })
})
