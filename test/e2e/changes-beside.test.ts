import { existsSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Locator, Page } from 'playwright-core'
import { screenshot, watchConsole } from './browser'
import { screenshotBothThemes } from './themes'
import { closeChangesFixture, gitIn, openChangesFixture, send, type ChangesFixture } from './changes-repo'

/**
 * The Changes view beside the conversation (issue 37): the thread stays in
 * sight and the composer usable while it shows; the split is resized with the
 * mouse and the keys and comes back after a reload; checkpoints are named by
 * their prompt; what is committed is kept; after a merge the worktree and
 * branch may go (not while work is uncommitted); toasts stay clear of every
 * pane's composer, with one pane and with four.
 */

let fixture: ChangesFixture

beforeAll(async () => {
  fixture = await openChangesFixture('e2e-changes-beside', { 'cart.txt': 'apples\npears\n' })
})

afterAll(async () => {
  await closeChangesFixture(fixture)
})

async function box(locator: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  const found = await locator.boundingBox()
  if (!found) throw new Error('not on screen')
  return found
}

function overlaps(a: { x: number; y: number; width: number; height: number }, b: { x: number; y: number; width: number; height: number }): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
}

/** Every toast's box against every composer's: none may cover another. */
async function toastsClearOfComposers(page: Page): Promise<void> {
  const toasts = await page.getByTestId('toast').all()
  expect(toasts.length).toBeGreaterThan(0)
  const composers = await page.locator('form.composer').all()
  expect(composers.length).toBeGreaterThan(0)
  for (const toast of toasts) for (const composer of composers) expect(overlaps(await box(toast), await box(composer))).toBe(false)
}

/** One empty pane, as a window starts (the layout is the Host's setting, shared by every page). */
async function onePane(): Promise<void> {
  await fixture.host.request('settings.set', { panes: { panes: [{ id: 'single', sessionId: null }], focused: 'single', maximised: null } })
}

const splitValue = async (page: Page): Promise<number> => Number(await page.getByTestId('changes-splitter').getAttribute('aria-valuenow'))

describe('the Changes view beside the conversation', () => {
  it('keeps the thread and composer in use, resizes and remembers the split, names checkpoints, keeps what is committed, offers to remove a merged worktree', async () => {
    const { browser, server } = fixture
    const context = await browser.newContext({ viewport: { width: 1400, height: 860 } })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)

    await page.getByTestId('project').first().hover()
    await page.getByTestId('project').first().getByTestId('new-session-menu').click()
    await page.getByTestId('new-session-place-worktree').click()
    await page.keyboard.press('Escape')
    await page.getByTestId('new-session-branch').fill('feature/beside')
    await page.getByTestId('new-session').click()
    await page.getByTestId('composer-input').waitFor()
    await send(page, 'Tidy the cart list\nthen say so\n/disk cart.txt apples\\npears\\nplums\\n')
    const record = (await fixture.host.request('sessions.list', {})).find((s) => s.worktree?.branch === 'feature/beside')!
    const tree = record.worktree!.path

    // Open: the Changes view stands beside the thread, which stays (its message, the composer).
    await page.getByTestId('changes-toggle').click()
    const panel = page.getByTestId('changes-panel')
    await page.locator('[data-testid="change-file"][data-path="cart.txt"]').waitFor()
    expect(await page.getByTestId('entry-user').first().isVisible()).toBe(true)
    expect(await page.getByTestId('composer-input').isVisible()).toBe(true)
    const conversation = await box(page.getByTestId('conversation'))
    const changes = await box(panel)
    expect(changes.x).toBeGreaterThanOrEqual(conversation.x + conversation.width)

    // A checkpoint reads its turn, the first line of its prompt and a time.
    await page.getByTestId('checkpoints').locator('summary').click()
    const label = (await page.getByTestId('checkpoint-label').first().textContent())!.replace(/\s+/g, ' ').trim()
    expect(label).toMatch(/^Before turn 1 · Tidy the cart list · \S/)
    console.log(`screenshot: ${await screenshot(page, 'e2e-changes-beside-light')}`)

    // The composer is usable while the Changes view shows; what the turn changed shows when it ends.
    await send(page, '/disk NOTES.md written beside\\n')
    await page.locator('[data-testid="change-file"][data-path="NOTES.md"]').waitFor()
    expect(await panel.isVisible()).toBe(true)

    // Resized with the mouse: the handle dragged to the left gives the Changes view more room.
    const before = await splitValue(page)
    const handle = await box(page.getByTestId('changes-splitter'))
    await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2)
    await page.mouse.down()
    await page.mouse.move(handle.x - 140, handle.y + handle.height / 2, { steps: 5 })
    await page.mouse.up()
    const dragged = await splitValue(page)
    expect(dragged).toBeGreaterThan(before + 5)
    await expect.poll(async () => (await box(panel)).width).toBeGreaterThan(changes.width + 100)
    // ...and with the keys on the focused handle.
    await page.getByTestId('changes-splitter').focus()
    await page.keyboard.press('ArrowRight')
    await page.keyboard.press('ArrowRight')
    await expect.poll(() => splitValue(page)).toBe(dragged - 10)
    await page.keyboard.press('ArrowLeft')
    await expect.poll(() => splitValue(page)).toBe(dragged - 5)
    const kept = dragged - 5
    // Remembered: the window comes back with it.
    await expect.poll(async () => (await fixture.host.request('settings.get', {})).settings.changesSplit).toBeCloseTo(kept / 100, 2)
    await page.reload()
    await page.getByTestId('session-item').first().click()
    await page.getByTestId('changes-toggle').click()
    await page.getByTestId('changes-splitter').waitFor()
    expect(await splitValue(page)).toBe(kept)

    // Commit: what was committed is kept, no longer "not yet kept", nothing to revert.
    await page.locator('[data-testid="change-file"][data-path="NOTES.md"]').waitFor()
    await page.getByTestId('commit-message').fill('Plums and notes')
    await page.getByTestId('commit').click()
    await expect.poll(() => gitIn(tree, 'log', '-1', '--format=%s')).toBe('Plums and notes')
    await page.getByTestId('changes-none').waitFor()
    expect(await page.getByTestId('change-file').count()).toBe(0)
    expect(await page.getByTestId('file-revert').count()).toBe(0)
    await toastsClearOfComposers(page)

    // Merge: the offer to remove the worktree and branch; refused while the worktree holds uncommitted work.
    await page.getByTestId('merge').click()
    await expect.poll(() => page.getByTestId('merge-result').textContent()).toContain("Merged 'feature/beside' into 'main'")
    await page.getByTestId('remove-worktree-offer').waitFor()
    await writeFile(join(tree, 'stray.txt'), 'left behind\n')
    await page.getByTestId('remove-worktree').click()
    await expect.poll(() => page.getByTestId('remove-worktree-error').textContent()).toContain('stray.txt')
    expect(await page.getByTestId('remove-worktree-error').textContent()).toContain('uncommitted')
    expect(existsSync(tree)).toBe(true)
    expect(gitIn(fixture.repo, 'branch', '--list', 'feature/beside')).toContain('feature/beside')
    console.log(`screenshot: ${await screenshot(page, 'e2e-changes-remove-offer-light')}`)
    await rm(join(tree, 'stray.txt'))
    await page.getByTestId('remove-worktree').click()
    // The worktree goes first, then the branch: the answer (its toast) says both are gone.
    await expect.poll(() => page.getByTestId('toast').last().textContent()).toContain("branch 'feature/beside' were removed")
    expect(existsSync(tree)).toBe(false)
    expect(gitIn(fixture.repo, 'branch', '--list', 'feature/beside')).toBe('')
    expect(gitIn(fixture.repo, 'log', 'main', '-1', '--format=%s')).toContain("Merge branch 'feature/beside'")
    await page.getByTestId('changes-unavailable').waitFor()
    expect(problems).toEqual([])
    await context.close()
  }, 240_000)

  it('stacks the Changes view above the conversation in a narrow pane; light and dark, one pane and four', async () => {
    const { browser, server } = fixture
    const host = fixture.host
    for (const title of ['one', 'two', 'three', 'four']) {
      const session = await host.request('sessions.new', { projectId: fixture.projectId, agentId: fixture.agentId })
      await host.request('sessions.prompt', { id: session.id, text: `Pane ${title}` })
    }
    await onePane()
    const context = await browser.newContext({ viewport: { width: 1400, height: 860 } })
    const page = await context.newPage()
    await page.goto(server.url)
    const items = page.getByTestId('session-item')
    await expect.poll(() => items.count()).toBeGreaterThanOrEqual(4)
    await items.nth(0).getByTestId('session-open').click()
    await page.getByTestId('composer-input').waitFor()
    await page.getByTestId('changes-toggle').click()
    await page.getByTestId('checkpoints').waitFor()
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-changes-beside-1-pane')).join(', ')}`)
    for (let n = 1; n < 4; n++) {
      await items.nth(n).getByTestId('session-open').focus()
      await page.keyboard.press('Control+Enter')
      await expect.poll(() => page.locator('form.composer').count()).toBe(n + 1)
    }
    // Four panes: the one with the Changes view stacks them above its conversation, both in sight.
    const pane = page.getByTestId('pane').filter({ has: page.getByTestId('changes-panel') })
    await expect.poll(() => pane.getByTestId('changes-splitter').getAttribute('aria-orientation')).toBe('horizontal')
    const stacked = async (): Promise<void> => {
      const changes = await box(pane.getByTestId('changes-panel'))
      const conversation = await box(pane.getByTestId('conversation'))
      expect(changes.y + changes.height).toBeLessThanOrEqual(conversation.y)
    }
    await stacked()
    // A toast with four panes (there is no fifth): clear of every composer, in either theme (one asked for again if
    // the first has gone meanwhile).
    const toastClear = async (): Promise<void> => {
      await stacked()
      if ((await page.getByTestId('toast').count()) === 0) await page.keyboard.press('Control+Backslash')
      await page.getByTestId('toast').first().waitFor()
      await toastsClearOfComposers(page)
    }
    await page.keyboard.press('Control+Backslash')
    await page.getByTestId('toast').waitFor()
    await toastsClearOfComposers(page)
    console.log(`screenshots: ${(await screenshotBothThemes(page, 'e2e-changes-beside-4-panes', toastClear)).join(', ')}`)
    await context.close()
  }, 240_000)

  it('a toast with one pane stands clear of its composer', async () => {
    const { browser, server } = fixture
    const host = fixture.host
    const gone = await host.request('sessions.new', { projectId: fixture.projectId, agentId: fixture.agentId })
    await host.request('sessions.rename', { id: gone.id, title: 'To be deleted' })
    await onePane()
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    await page.goto(server.url)
    await page.locator('[data-testid="session-item"]', { hasText: 'Pane one' }).getByTestId('session-open').click()
    await page.getByTestId('composer-input').waitFor()
    await page.locator('[data-testid="session-item"]', { hasText: 'To be deleted' }).getByTestId('session-open').focus()
    await page.keyboard.press('Delete')
    await page.getByTestId('confirm-delete').click()
    await page.getByTestId('toast').waitFor()
    await toastsClearOfComposers(page)
    console.log(`screenshot: ${await screenshot(page, 'e2e-toast-one-pane')}`)
    await context.close()
  }, 120_000)
})
