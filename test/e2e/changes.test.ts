import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { screenshot, watchConsole } from './browser'
import { closeChangesFixture, gitIn, openChangesFixture, send, type ChangesFixture } from './changes-repo'

/**
 * The Changes view by clicking: a session in its own worktree, the agent
 * editing files straight on disk, keep and revert per hunk and per file, a
 * note on a line sent to the agent, a rewind and its undo; light and dark.
 */

let fixture: ChangesFixture

const LINES = Array.from({ length: 24 }, (_, i) => `line ${i + 1}`)

beforeAll(async () => {
  fixture = await openChangesFixture('e2e-changes', { 'cart.txt': LINES.join('\n') + '\n', 'README.md': '# Shop\n' })
})

afterAll(async () => {
  await closeChangesFixture(fixture)
})

/** The project's worktrees, from its menu (a panel under its row; opened again, it stays). */
async function showWorktrees(page: Page): Promise<void> {
  if (await page.getByTestId('project-panel-worktrees').count()) return
  await page.getByTestId('project').first().hover()
  await page.getByTestId('project-menu').first().click()
  await page.getByTestId('menu-worktrees').click()
}

describe('the Changes view', () => {
  it('a worktree session: keep and revert per hunk and file, a note to the agent, rewind and undo', async () => {
    const { browser, server } = fixture
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)

    // A new session in its own worktree, on a branch the user names (the choice shows once the project is reached: it asks git).
    await page.getByTestId('project').first().hover()
    await page.getByTestId('project').first().getByTestId('new-session-menu').click()
    await page.getByTestId('new-session-place-worktree').click()
    await page.keyboard.press('Escape')
    await page.getByTestId('new-session-branch').fill('feature/cart')
    await page.getByTestId('new-session').click()
    await page.getByTestId('composer-input').waitFor()
    await expect.poll(() => page.getByTestId('session-branch').textContent()).toContain('feature/cart')
    await expect.poll(() => page.getByTestId('session-item-branch').textContent()).toContain('feature/cart')
    await showWorktrees(page)
    await expect.poll(() => page.getByTestId('project-worktree').count()).toBe(1)

    const edited = [...LINES]
    edited[1] = 'line 2 by the agent'
    edited[20] = 'line 21 by the agent'
    await send(page, `/disk cart.txt ${edited.join('\\n')}\\n\n/disk NOTES.md written on disk\\n`)
    await send(page, '/disk README.md # Shop, turn two\\n')
    const record = (await fixture.host.request('sessions.list', {}))[0]!
    const tree = record.worktree!.path
    expect(await readFile(join(fixture.repo, 'cart.txt'), 'utf8')).toBe(LINES.join('\n') + '\n') // the project folder is untouched

    await page.getByTestId('changes-toggle').click()
    const cart = page.locator('[data-testid="change-file"][data-path="cart.txt"]')
    await cart.waitFor()
    await expect.poll(() => page.getByTestId('change-file').count()).toBe(3)
    await expect.poll(() => cart.getByTestId('change-hunk').count()).toBe(2)
    console.log(`screenshot: ${await screenshot(page, 'e2e-changes-light')}`)

    // Keep the first hunk, revert the second.
    await cart.getByTestId('change-hunk').first().getByTestId('hunk-keep').click()
    await expect.poll(() => cart.getByTestId('change-hunk').count()).toBe(1)
    await cart.getByTestId('hunk-revert').click()
    await expect.poll(() => page.locator('[data-testid="change-file"][data-path="cart.txt"]').count()).toBe(0)
    const text = await readFile(join(tree, 'cart.txt'), 'utf8')
    expect(text).toContain('line 2 by the agent')
    expect(text).not.toContain('line 21 by the agent')
    // Revert a whole file: the new one goes.
    await page.locator('[data-testid="change-file"][data-path="NOTES.md"]').getByTestId('file-revert').click()
    await expect.poll(() => existsSync(join(tree, 'NOTES.md'))).toBe(false)

    // Per turn: turn 2 changed README.md only.
    await page.getByTestId('changes-scope').selectOption({ label: 'Turn 2 only' })
    await expect.poll(() => page.getByTestId('change-path').allTextContents()).toEqual(['README.md'])
    await page.getByTestId('changes-scope').selectOption({ label: 'Not yet kept (whole session)' })

    // A note on a line, sent to the agent as the next prompt.
    const readme = page.locator('[data-testid="change-file"][data-path="README.md"]')
    // The whole-session view is back (with its keep and revert buttons) before a line is clicked.
    await readme.getByTestId('file-keep').waitFor()
    await readme.locator('.line.add [data-testid="line-note"]').click()
    await page.getByTestId('note-input').fill('Keep the title short.')
    await page.getByTestId('note-input').press('Control+Enter')
    await expect.poll(() => page.getByTestId('line-comment').count()).toBe(1)
    await page.getByTestId('send-comments').click()
    // The echo streams in chunks: wait for its end, not only its start.
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent(), { timeout: 15_000 }).toContain('README.md, line 1:')
    await expect.poll(() => page.getByTestId('entry-assistant').last().textContent(), { timeout: 15_000 }).toContain('Keep the title short.')

    // Rewind from the first message: the files go back to before turn 1, then the rewind is undone.
    await page.getByTestId('entry-user').first().hover()
    await page.getByTestId('entry-rewind').first().click()
    await page.getByTestId('rewind-confirm').waitFor()
    console.log(`screenshot: ${await screenshot(page, 'e2e-changes-rewind-light')}`)
    await page.getByTestId('rewind-go').click()
    // The confirmation goes once the Host has answered, every file restored.
    await page.getByTestId('rewind-confirm').waitFor({ state: 'detached' })
    expect(await readFile(join(tree, 'README.md'), 'utf8')).toBe('# Shop\n')
    expect(await readFile(join(tree, 'cart.txt'), 'utf8')).toBe(LINES.join('\n') + '\n')
    await page.getByTestId('checkpoints').locator('summary').click()
    await page.getByTestId('checkpoint').first().getByTestId('checkpoint-rewind').click()
    await page.getByTestId('rewind-go').click()
    await page.getByTestId('rewind-confirm').waitFor({ state: 'detached' })
    expect(await readFile(join(tree, 'README.md'), 'utf8')).toBe('# Shop, turn two\n')
    await page.getByTestId('changes-close').click()
    await expect.poll(() => page.getByText('Files restored to checkpoint 1').count()).toBe(1)

    // Commit and merge back into main.
    await page.getByTestId('changes-toggle').click()
    await page.getByTestId('commit-message').fill('Cart tweaks')
    await page.getByTestId('commit').click()
    await expect.poll(() => gitIn(tree, 'log', '-1', '--format=%s')).toBe('Cart tweaks')
    await page.getByTestId('merge').click()
    await expect.poll(() => page.getByTestId('merge-result').textContent()).toContain("Merged 'feature/cart' into 'main'")
    expect(await readFile(join(fixture.repo, 'README.md'), 'utf8')).toBe('# Shop, turn two\n')

    // Dark: the same view.
    const dark = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'dark' })
    const darkPage = await dark.newPage()
    await darkPage.goto(server.url)
    await darkPage.getByTestId('session-item').first().click()
    await darkPage.getByTestId('composer-input').waitFor()
    await send(darkPage, '/disk cart.txt line 1 only, in the dark\\n')
    await darkPage.getByTestId('changes-toggle').click()
    await darkPage.locator('[data-testid="change-file"][data-path="cart.txt"]').waitFor()
    await darkPage.locator('[data-testid="line-note"]').nth(1).click()
    await darkPage.getByTestId('note-input').fill('Why remove the rest?')
    await darkPage.getByTestId('note-add').click()
    console.log(`screenshot: ${await screenshot(darkPage, 'e2e-changes-dark')}`)
    await dark.close()

    // Deleting the session with its worktree: refused while work is uncommitted, then discarded on purpose.
    await page.reload()
    await page.getByTestId('session-item').first().click()
    await page.getByTestId('delete-session').click()
    await page.getByTestId('delete-worktree').check()
    await page.getByTestId('confirm-delete').click()
    await page.getByTestId('worktree-dirty').waitFor()
    expect(await page.getByTestId('worktree-dirty').textContent()).toContain('cart.txt')
    console.log(`screenshot: ${await screenshot(page, 'e2e-changes-delete-worktree')}`)
    await page.getByTestId('discard-changes').check()
    await page.getByTestId('confirm-delete').click()
    await expect.poll(() => existsSync(tree)).toBe(false)
    await showWorktrees(page)
    await expect.poll(() => page.getByTestId('project-panel-worktrees').textContent()).toContain('Worktrees (0)')
    expect(await page.getByTestId('project-worktree').count()).toBe(0)
    expect(gitIn(fixture.repo, 'branch', '--list', 'feature/cart')).toContain('feature/cart')
    expect(problems).toEqual([])
    await context.close()
  }, 240_000)
})
