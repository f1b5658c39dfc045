import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { confirmEverything, removeDir, tempDir, waitUntil } from '../helpers'
import { launchBrowser, screenshot, serve, watchConsole } from './browser'

/**
 * The update notice (renderer/src/components/window/UpdateNotice.vue) in the built renderer, against a Host that
 * stands for the desktop one: its shell's updater is this test, which tells the Host what the updater is doing
 * (`updates.note`, as electron/updates.ts does through the Host's channel) and hears the yes (`installUpdate`).
 * The updater itself is test/shell/updates.test.ts.
 */

let dir: string
let host: Host
let server: RunningServer
let browser: Browser
const installs: string[] = []

beforeAll(async () => {
  dir = await tempDir('e2e-updates')
  host = await Host.open({
    dataDir: dir,
    version: '0.1.0',
    presets: [],
    confirmCommand: confirmEverything,
    installUpdate: async (when) => void installs.push(when)
  })
  server = await serve(host)
  browser = await launchBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await host?.close()
  await removeDir(dir)
})

async function openPage(colorScheme: 'light' | 'dark'): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 }, colorScheme, reducedMotion: 'reduce' })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const problems = watchConsole(page)
  await page.goto(server.url)
  return { page, problems, close: () => context.close() }
}

describe('the update notice', () => {
  it('shows the download with its progress, then "Restart to update", whose yes reaches the shell; light and dark', async () => {
    host.updates.note({ status: 'idle' })
    const { page, problems, close } = await openPage('light')
    const notice = page.getByTestId('update-notice')
    await page.getByTestId('theme-dark').waitFor({ state: 'attached' })
    expect(await notice.count()).toBe(0)

    host.updates.note({ status: 'downloading', version: '0.2.0', transferred: 1_200_000, total: 2_000_000 })
    await notice.getByRole('heading', { name: 'Downloading Switchboard 0.2.0' }).waitFor()
    expect(await notice.getByRole('progressbar', { name: 'Downloading Switchboard 0.2.0' }).getAttribute('value')).toBe('60')
    await expect.poll(() => notice.innerText()).toContain('60% · installs only when you say so')
    console.log(`screenshot: ${await screenshot(page, 'e2e-update-downloading-light')}`)

    host.updates.note({ status: 'ready', version: '0.2.0', installOnQuit: false })
    const restart = notice.getByRole('button', { name: 'Restart to update' })
    await restart.waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-update-ready-light')}`)
    // By keyboard: the button takes the focus and Enter says yes.
    await restart.focus()
    await page.keyboard.press('Enter')
    await waitUntil('the yes to reach the shell', () => installs.includes('restart'))

    // "When I quit": the notice says so, and offers the restart still.
    await notice.getByRole('button', { name: 'When I quit' }).click()
    await notice.getByText('It will be installed when you quit Switchboard.').waitFor()
    expect(installs).toEqual(['restart', 'quit'])
    expect(await notice.getByRole('button', { name: 'When I quit' }).count()).toBe(0)

    // Put away: gone until the updater has something new to say.
    await notice.getByRole('button', { name: 'Put the update notice away' }).click()
    expect(await notice.count()).toBe(0)
    expect(problems).toEqual([])
    await close()
  }, 60_000)

  it('says why a download was refused, in the dark theme too', async () => {
    host.updates.note({ status: 'ready', version: '0.2.0', installOnQuit: false })
    const dark = await openPage('dark')
    const notice = dark.page.getByTestId('update-notice')
    await notice.getByRole('button', { name: 'Restart to update' }).waitFor()
    console.log(`screenshot: ${await screenshot(dark.page, 'e2e-update-ready-dark')}`)
    host.updates.note({ status: 'downloading', version: '0.3.0', transferred: 300_000, total: 2_000_000 })
    await notice.getByRole('heading', { name: 'Downloading Switchboard 0.3.0' }).waitFor()
    console.log(`screenshot: ${await screenshot(dark.page, 'e2e-update-downloading-dark')}`)
    const message =
      'The file downloaded does not match the checksum its feed published, so it was deleted and not installed (sha512 checksum mismatch, expected abc, got def).'
    host.updates.note({ status: 'failed', version: '0.3.0', message })
    await notice.getByRole('heading', { name: 'The update to 0.3.0 was not installed' }).waitFor()
    expect(await notice.getByRole('alert').innerText()).toBe(message)
    console.log(`screenshot: ${await screenshot(dark.page, 'e2e-update-failed-dark')}`)
    expect(dark.problems).toEqual([])
    await dark.close()
  }, 60_000)
})
