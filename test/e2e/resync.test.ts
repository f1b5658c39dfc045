import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import { startWsServer, type RunningServer } from '../../electron/host/web/ws-server'
import { openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'
import { launchBrowser, rendererDir, screenshot, watchConsole, whileHostRestarts } from './browser'

/**
 * A window left open while the link to its Host goes and comes back re-reads
 * everything it shows, without a reload: after `npm run serve` is killed
 * (kill -9, mid-turn, a permission card on screen) and started again on the
 * same data folder, and after its socket is dropped while the same Host goes
 * on (a card answered elsewhere, a queue changed, a turn that ended). No event
 * sequence survives either; the window must show the Host's truth, not what it
 * had: no "Lost the connection" left, no "Working…", no card for a request
 * nobody waits for, the turn cut short listed in the inbox.
 */

/** `npm run serve` as built (npm test builds first), not its source through tsx: the same code, started in a third of the CPU. */
const serveScript = fileURLToPath(new URL('../../out/main/serve.js', import.meta.url))

let root: string
let browser: Browser
let serving: { child: ChildProcess; url: string } | null = null

beforeAll(async () => {
  root = await tempDir('e2e-resync')
  browser = await launchBrowser()
})

afterAll(async () => {
  await stopServe('SIGTERM')
  await browser?.close()
  await removeDir(root)
})

/** A data folder with a project, the scripted agent (its prompts read like a person's) and one session, titled. */
async function prepare(name: string, scripts: Record<string, string>): Promise<{ dataDir: string; host: Host; sessionId: string }> {
  const dataDir = join(root, name, 'data')
  const projectDir = join(root, name, 'shop')
  await mkdir(projectDir, { recursive: true })
  const scriptsFile = join(root, name, 'scripts.json')
  await writeFile(scriptsFile, JSON.stringify(scripts))
  const host = await openHost(dataDir)
  const project = await host.request('projects.add', { cwd: projectDir })
  const agent = await host.request('agents.add', scriptedAgent(join(root, name, 'state'), { SCRIPTED_AGENT_SCRIPTS: scriptsFile }))
  const sessionId = (await host.request('sessions.new', { projectId: project.id, agentId: agent.id })).id
  await host.request('sessions.rename', { id: sessionId, title: 'Build folder' })
  return { dataDir, host, sessionId }
}

/** The real `serve` command on the data folder, as its own process; resolves with the address it prints. */
async function startServe(dataDir: string): Promise<string> {
  const child = spawn(process.execPath, [serveScript, '--data-dir', dataDir, '--renderer-dir', rendererDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SWITCHBOARD_DATA_DIR: '' },
    // A group of its own: a kill -9 takes serve's supervisor and the Host it runs at once, as a crash of both would.
    detached: true
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer): void => {
      output += chunk.toString()
      const match = /^Open (http:\/\/\S+)$/m.exec(output)
      if (match) resolve(match[1])
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code) => reject(new Error(`serve ended (code ${code}) before printing its address:\n${output}`)))
  })
  serving = { child, url }
  return url
}

async function stopServe(signal: NodeJS.Signals): Promise<void> {
  if (!serving) return
  const { child } = serving
  serving = null
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  // SIGKILL: the whole group (the supervisor and its Host), so the Host cannot close as it does when only its
  // supervisor goes; any other signal goes to serve, which closes its Host.
  if (signal === 'SIGKILL' && child.pid) process.kill(-child.pid, 'SIGKILL')
  else child.kill(signal)
  await exited
}

async function openTab(url: string): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' })
  const page = await context.newPage()
  const problems = watchConsole(page)
  await page.goto(url)
  await page.getByTestId('session-item').filter({ hasText: 'Build folder' }).click()
  await page.getByTestId('composer-input').waitFor()
  return { page, problems }
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('composer-input').press('Enter')
}

/** The page in the light theme, then the dark one: the window follows the system's (the theme is left at System). */
async function screenshots(page: Page, name: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await expect.poll(() => page.evaluate('document.documentElement.dataset.theme')).toBe(colorScheme)
    console.log(`screenshot: ${await screenshot(page, `${name}-${colorScheme}`)}`)
  }
  await page.emulateMedia({ colorScheme: 'light' })
}

async function closeInbox(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Close the inbox' }).click()
  await page.getByTestId('inbox').waitFor({ state: 'hidden' })
}

/** What the session's pane says about the turn: the header's status, the thread's "is working", the cards. */
async function paneShows(page: Page): Promise<{ status: string | null; working: number; cards: number; banners: string[]; lost: number }> {
  return {
    status: await page.getByTestId('session-status').textContent(),
    working: await page.getByText('Scripted is working…').count(),
    cards: await page.getByTestId('pane').getByTestId('permission').count(),
    banners: await page.getByTestId('error-banner').allTextContents(),
    lost: await page.getByTestId('connection-status').count()
  }
}

/** Waits (polling the page, as a user would look) until the pane shows `expected`; resolves with how long it took. */
async function untilPaneShows(page: Page, expected: Partial<Awaited<ReturnType<typeof paneShows>>>, from: number): Promise<number> {
  await expect.poll(() => paneShows(page), { timeout: 20_000 }).toMatchObject(expected)
  return Date.now() - from
}

describe('a window whose link to the Host comes back', () => {
  it('after kill -9 mid-turn and a restart of serve: the same tab shows the turn cut short, no card, no "Working…", the inbox lists it', async () => {
    const { dataDir, host, sessionId } = await prepare('killed', { 'Clean the build folder': '/permission' })
    await host.close()
    const { page, problems } = await openTab(await startServe(dataDir))
    await send(page, 'Clean the build folder')
    await page.getByTestId('pane').getByTestId('permission').waitFor()
    expect(await paneShows(page)).toMatchObject({ status: 'Waiting for you', working: 1, cards: 1 })
    // What the Host keeps of the turn under way is on disk (written as the request came), as a crash would find it.
    const record = async (): Promise<Record<string, unknown> | undefined> =>
      (JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as { sessions: Record<string, unknown>[] }).sessions.find(
        (s) => s.id === sessionId
      )
    await waitUntil('the turn under way written in db.json', async () => (await record())?.underWay)
    await screenshots(page, 'e2e-resync-killed-before')
    // The inbox, left open through the restart (the session behind it is not in sight, so what it lists stays), lists the request.
    await page.getByTestId('open-inbox').click()
    await expect.poll(() => page.getByTestId('inbox-item').allTextContents()).toEqual([expect.stringContaining('Run dangerous command')])

    let restarted = 0
    await whileHostRestarts(problems, async () => {
      await stopServe('SIGKILL')
      await page.getByTestId('connection-status').waitFor()
      await startServe(dataDir)
      restarted = Date.now()
    })
    // The same tab, no reload: the link back, the turn shown as ended, the card gone, the session idle.
    const took = await untilPaneShows(page, { lost: 0, status: 'Idle', working: 0, cards: 0, banners: [] }, restarted)
    console.log(`the tab showed the truth ${took} ms after serve printed its address again`)
    // The inbox lists the request cut short, not the request.
    await expect
      .poll(() => page.getByTestId('inbox-item').allTextContents())
      .toEqual([expect.stringContaining('Switchboard stopped unexpectedly while Scripted waited for your permission (“Run dangerous command”)')])
    await screenshots(page, 'e2e-resync-killed-after-inbox')
    await closeInbox(page)
    expect(await page.getByTestId('entry-error').last().textContent()).toContain(
      'Switchboard stopped unexpectedly while Scripted waited for your permission'
    )
    expect(await page.getByTestId('tool-call-status').allTextContents()).not.toContain('Needs your answer')
    // The sidebar agrees: nothing waits on the user, nothing works.
    expect(await page.getByTestId('session-item').filter({ hasText: 'Build folder' }).textContent()).not.toMatch(/Needs you|Working/)
    await screenshots(page, 'e2e-resync-killed-after')
    // And the session goes on: the next message starts its agent again.
    await send(page, 'Clean the build folder')
    await page.getByTestId('pane').getByTestId('permission').waitFor()
    await page.getByTestId('pane').getByTestId('permission-option').first().click()
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permission: allow')
    expect(problems).toEqual([])
    await page.context().close()
  })

  it('after its socket dropped while the Host went on: a card answered elsewhere, a queue changed and a turn that ended show as they are', async () => {
    const { host, sessionId } = await prepare('dropped', { 'Clean the build folder': '/permission', 'Then tidy the logs': '/say Logs tidied.' })
    const port = { port: 0, token: '' }
    const listen = async (): Promise<RunningServer> => {
      const server = await startWsServer({ host, rendererDir, ...(port.port ? port : {}) })
      Object.assign(port, { port: server.port, token: server.token })
      return server
    }
    let server = await listen()
    try {
      const { page, problems } = await openTab(server.url)
      await send(page, 'Clean the build folder')
      await page.getByTestId('pane').getByTestId('permission').waitFor()
      // A prompt queued behind the running turn.
      await send(page, 'Then tidy the logs')
      await expect.poll(() => page.getByTestId('queued-text').allTextContents()).toEqual(['Then tidy the logs'])
      await screenshots(page, 'e2e-resync-dropped-before')

      // The socket goes (the server is closed; the Host is not), and while the tab cannot hear it the Host goes on:
      // the queued prompt is taken out and the permission answered, in another window, and the turn ends.
      await whileHostRestarts(problems, async () => {
        await server.close()
        await page.getByTestId('connection-status').waitFor()
        const [state] = (await host.request('sessions.states', {})).filter((s) => s.id === sessionId)
        const queued = state.queue?.[0]
        const asked = state.permissions?.[0]
        expect(queued?.text).toBe('Then tidy the logs')
        expect(asked).toBeDefined()
        await host.request('sessions.removeQueued', { id: sessionId, queuedId: queued!.id })
        await host.request('sessions.respondPermission', { id: sessionId, requestId: asked!.requestId, optionId: 'allow' })
        await waitUntil(
          'the turn to end',
          async () => (await host.request('sessions.states', {})).find((s) => s.id === sessionId)?.status === 'ready'
        )
        // The same port and token: the tab comes back by itself.
        server = await listen()
      })
      const back = Date.now()
      const took = await untilPaneShows(page, { lost: 0, status: 'Ready', working: 0, cards: 0, banners: [] }, back)
      console.log(`the tab showed the truth ${took} ms after the socket could open again`)
      await expect.poll(() => page.getByTestId('entry-assistant').last().textContent()).toContain('permission: allow')
      expect(await page.getByTestId('queued-prompt').count()).toBe(0)
      expect(await page.getByTestId('tool-call-status').allTextContents()).toEqual(['Done'])
      await screenshots(page, 'e2e-resync-dropped-after')
      expect(problems).toEqual([])
      await page.context().close()
    } finally {
      await server.close()
      await host.close()
    }
  })
})
