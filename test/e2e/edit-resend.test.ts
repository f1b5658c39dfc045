import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { screenshot, watchConsole } from './browser'
import { closeChangesFixture, openChangesFixture, send, type ChangesFixture } from './changes-repo'

/**
 * "Edit and resend" by keyboard in the window (issue 39, point 2): the action
 * on an earlier message, the text edited in place, sent; the files go back to
 * before that message, the new session opens with the edited message and a
 * mark of where it left the original, and the original's message links to it.
 * Light and dark.
 */

let fixture: ChangesFixture

beforeAll(async () => {
  fixture = await openChangesFixture('e2e-edit', { 'notes.md': 'start\n' })
})

afterAll(async () => {
  await closeChangesFixture(fixture)
})

describe('edit and resend', () => {
  it('edits an earlier message, resends it in a new session, and links the two', async () => {
    const { browser, server, repo } = fixture
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    await page.getByTestId('project').first().hover()
    await page.getByTestId('project').first().getByTestId('new-session').click()
    await page.getByTestId('composer-input').waitFor()
    await send(page, 'Plan the notes.')
    await send(page, 'Write the notes in full.\n/disk notes.md full\\n')
    await send(page, 'Now shorten them.')
    expect(await readFile(join(repo, 'notes.md'), 'utf8')).toBe('full\n')

    // By keyboard: the second message's action takes the focus, Enter opens its text.
    const second = page.getByTestId('entry-user').nth(1)
    await second.getByTestId('entry-edit').focus()
    await page.keyboard.press('Enter')
    const field = page.getByTestId('edit-text')
    await expect.poll(() => field.evaluate((el) => el.matches(':focus'))).toBe(true)
    expect(await field.inputValue()).toContain('Write the notes in full.')
    expect(await page.getByTestId('edit-what').textContent()).toContain('The files go back to how they were before this message')
    await field.fill('Write the notes briefly.\n/disk notes.md brief\\n')
    console.log(`screenshot: ${await screenshot(page, 'e2e-edit-resend-editing-light')}`)
    await page.keyboard.press('Control+Enter')

    // The new session opens: the first message copied, where it parts, the edited message and its reply.
    await expect.poll(() => page.getByTestId('branch-mark').first().textContent()).toContain('Edited from message 2 of')
    await expect.poll(() => page.getByTestId('entry-stop').count()).toBe(2)
    const users = await page.getByTestId('entry-user').allTextContents()
    expect(users.map((t) => t.replace(/✎.*$/s, '').trim())).toEqual([
      expect.stringContaining('Plan the notes.'),
      expect.stringContaining('Write the notes briefly.')
    ])
    expect(await readFile(join(repo, 'notes.md'), 'utf8')).toBe('brief\n')
    console.log(`screenshot: ${await screenshot(page, 'e2e-edit-resend-branch-light')}`)

    // Back to the original from the mark: its second message names the new session, and all three messages are there.
    await page.getByTestId('branch-open').first().click()
    await expect.poll(() => page.getByTestId('entry-user').count()).toBe(3)
    const mark = page.getByTestId('entry-user').nth(1).getByTestId('branch-mark')
    await expect.poll(() => mark.textContent()).toContain('Edited and resent in')
    console.log(`screenshot: ${await screenshot(page, 'e2e-edit-resend-original-light')}`)

    // While a turn runs, the editor says to stop it first, and stops it.
    const stops = await page.getByTestId('entry-stop').count()
    await page.getByTestId('composer-input').fill('/sleep 30000')
    await page.getByTestId('send').click()
    await expect.poll(() => page.getByTestId('session-status').getAttribute('data-kind')).toBe('running')
    await page.getByTestId('entry-user').first().getByTestId('entry-edit').click()
    await page.getByTestId('edit-stop-turn').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-edit-resend-running-light')}`)
    await page.getByTestId('edit-stop-turn').click()
    await expect.poll(() => page.getByTestId('entry-stop').count()).toBe(stops + 1)
    await expect.poll(() => page.getByTestId('edit-stop-turn').count()).toBe(0)
    await page.getByTestId('edit-cancel').click()

    const dark = await browser.newContext({ viewport: { width: 1100, height: 800 }, colorScheme: 'dark' })
    const darkPage = await dark.newPage()
    await darkPage.goto(server.url)
    await darkPage.getByTestId('session-item').filter({ hasText: 'edited at message 2' }).click()
    await darkPage.getByTestId('branch-mark').first().waitFor()
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-edit-resend-branch-dark')}`)
    await darkPage.getByTestId('entry-user').first().getByTestId('entry-edit').click()
    await darkPage.getByTestId('edit-text').waitFor()
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-edit-resend-editing-dark')}`)
    // The copied first message has no checkpoint here: the resend leaves the files and says so.
    expect(await darkPage.getByTestId('edit-what').textContent()).toContain('The files stay as they are')
    await darkPage.keyboard.press('Escape')
    await expect.poll(() => darkPage.getByTestId('edit-message').count()).toBe(0)
    await dark.close()
    await context.close()
    expect(problems).toEqual([])
  })
})
