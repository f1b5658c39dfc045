import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { commandLineOf } from '../../shared/confirmation'
import { scriptedAgentCommand } from '../agent/spawn'
import { removeDir, tempDir } from '../helpers'
import { closeBrowserHost, consoleCode, consoleOf, openBrowserHost, screenshot, watchConsole } from './browser'

/**
 * Under `serve`, adding an agent on the Agents page waits for the code serve
 * printed on its console: the page shows what would run and a field for the
 * code; a wrong code is said and changes nothing, Cancel leaves the form as it
 * was, "New code" has serve print another, and the right code adds the agent.
 * In light and dark.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer
let page: Page
let problems: string[]

const SECRET = 'sekret-value-0815'

beforeAll(async () => {
  root = await tempDir('e2e-confirm')
  await mkdir(join(root, 'project'))
  ;({ browser, host, server } = await openBrowserHost(join(root, 'data')))
  await host.request('projects.add', { cwd: join(root, 'project') })
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', reducedMotion: 'reduce' })
  page = await context.newPage()
  page.setDefaultTimeout(15_000)
  problems = watchConsole(page)
  await page.goto(server.url)
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

/** How many codes serve has printed so far. */
const codesPrinted = (): number => consoleOf(server).filter((line) => line.startsWith('To confirm, type this code')).length

describe('confirming with the code serve printed', () => {
  it('adding an agent on the Agents page asks for the code; a wrong one and Cancel change nothing; the printed one adds it', async () => {
    await page.getByTestId('empty-open-agents').click()
    await page.getByTestId('add-agent').click()
    const { command, args } = scriptedAgentCommand()
    await page.getByTestId('agent-form-name').fill('Scripted')
    await page.getByTestId('agent-form-command').fill(command)
    await page.getByTestId('agent-form-args').fill([...args, '--note=two words'].join('\n'))
    await page.getByTestId('env-add').click()
    await page.getByTestId('env-name').nth(0).fill('SCRIPTED_AGENT_STATE_DIR')
    await page.getByTestId('env-value').nth(0).fill(join(root, 'state'))
    await page.getByTestId('env-add').click()
    await page.getByTestId('env-name').nth(1).fill('API_TOKEN')
    await page.getByTestId('env-secret').nth(1).check()
    await page.getByTestId('env-value').nth(1).fill(SECRET)
    await page.getByTestId('agent-form-save').click()

    // The question: what would run, exactly as serve's console shows it; the code is on the console only.
    const dialog = page.getByTestId('code-dialog')
    await dialog.waitFor()
    expect(await dialog.locator('h2').textContent()).toBe('Add the agent “Scripted”?')
    const commandLine = commandLineOf(command, [...args, '--note=two words'])
    expect(commandLine).toContain("'--note=two words'")
    expect(await dialog.getByTestId('code-command-line').textContent()).toBe(commandLine)
    expect(consoleOf(server).join('\n')).toContain(`    ${commandLine}`)
    const variables = (await dialog.locator('.env li').allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim())
    expect(variables).toEqual([`SCRIPTED_AGENT_STATE_DIR=${join(root, 'state')}`, 'API_TOKEN=secret, new value'])
    expect(await page.content()).not.toContain(consoleCode(server))
    expect(await dialog.textContent()).not.toContain(SECRET)
    expect(await dialog.getByTestId('code-confirm').textContent()).toContain('Add agent')
    expect(await dialog.getByTestId('code-confirm').isDisabled()).toBe(true)
    expect(await page.evaluate('document.activeElement?.dataset.testid')).toBe('code-input')
    console.log(`screenshot: ${await screenshot(page, 'e2e-confirm-code-light')}`)

    // A wrong code: said in the dialog, nothing added, the field ready for another try.
    const code = consoleCode(server)
    await dialog.getByTestId('code-input').fill(code === 'AAA-AAA' ? 'BBB-BBB' : 'AAA-AAA')
    await dialog.getByTestId('code-confirm').click()
    await expect.poll(() => dialog.getByTestId('code-refusal').textContent()).toMatch(/^Wrong code: nothing was changed/)
    expect(await host.request('agents.list', {})).toEqual([])
    expect(await dialog.getByTestId('code-input').inputValue()).toBe('')

    // Cancel: the form stays as typed and says nothing was changed.
    await dialog.getByTestId('code-cancel').click()
    await dialog.waitFor({ state: 'hidden' })
    await expect.poll(() => page.getByTestId('agent-form-error').textContent()).toBe('Not confirmed: nothing was changed.')
    expect(await page.getByTestId('env-value').nth(1).inputValue()).toBe(SECRET)
    expect(await host.request('agents.list', {})).toEqual([])

    // Again, in the dark: a new code each time it is asked.
    await page.emulateMedia({ colorScheme: 'dark' })
    const before = codesPrinted()
    await page.getByTestId('agent-form-save').click()
    await dialog.waitFor()
    expect(codesPrinted()).toBe(before + 1)
    await dialog.getByTestId('code-again').click()
    await expect.poll(() => dialog.getByRole('status').textContent()).toBe('A new code was printed on the console.')
    expect(codesPrinted()).toBe(before + 2)
    await dialog.getByTestId('code-input').fill(consoleCode(server).toLowerCase())
    console.log(`screenshot: ${await screenshot(page, 'e2e-confirm-code-dark')}`)
    await dialog.getByTestId('code-input').press('Enter')
    await dialog.waitFor({ state: 'hidden' })

    await page.getByTestId('agent-details').waitFor()
    expect(await page.getByTestId('agent-details-name').textContent()).toBe('Scripted')
    const [agent] = await host.request('agents.list', {})
    expect(agent).toMatchObject({
      name: 'Scripted',
      transport: { kind: 'process', command, args: [...args, '--note=two words'], secretEnv: ['API_TOKEN'] }
    })

    // A new name changes nothing that runs: saved without a code.
    await page.getByTestId('agent-edit').click()
    await page.getByTestId('agent-form-name').fill('Scripted agent')
    await page.getByTestId('agent-form-save').click()
    await expect.poll(() => page.getByTestId('agent-details-name').textContent()).toBe('Scripted agent')
    expect(await dialog.isVisible()).toBe(false)
    expect(problems).toEqual([])
  })

  it('a preset shows what it will run before it is added; cancelled, it is not', async () => {
    await page.emulateMedia({ colorScheme: 'light' })
    const codex = (await host.request('agents.presets', {})).find((p) => p.id === 'codex')
    if (!codex) throw new Error('no Codex preset')
    await page.getByTestId('add-preset-codex').click()
    const dialog = page.getByTestId('code-dialog')
    await dialog.waitFor()
    expect(await dialog.locator('h2').textContent()).toBe('Add the agent “Codex”?')
    expect(await dialog.getByTestId('code-command-line').textContent()).toBe(commandLineOf(codex.command, codex.args))
    console.log(`screenshot: ${await screenshot(page, 'e2e-confirm-code-preset-light')}`)
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    await expect.poll(() => page.getByRole('alert').filter({ hasText: 'Not confirmed' }).count()).toBe(1)
    expect((await host.request('agents.list', {})).map((a) => a.id)).not.toContain('codex')
    expect(problems).toEqual([])
  })
})
