import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import type { TranscriptRecord } from '../../shared/transcript'
import type { Host } from '../../electron/host/host'
import type { RunningServer } from '../../electron/host/web/ws-server'
import { removeDir, scriptedAgent, tempDir } from '../helpers'
import { closeBrowserHost, openBrowserHost, resetWindowSettings, screenshot, watchConsole } from './browser'

/**
 * The Spend page in the browser: reached from the sidebar, its empty state,
 * totals that follow the agents as they spend, the chart by agent in light
 * and dark, the period and grouping chosen by keyboard, and the rows shown
 * downloaded as CSV. A conversation from earlier days (read once from its
 * transcript) gives the chart its past.
 */

let root: string
let browser: Browser
let host: Host
let server: RunningServer

const DAY = 86_400_000

beforeAll(async () => {
  root = await tempDir('e2e-spend')
  const dataDir = join(root, 'data')
  await mkdir(join(dataDir, 'deleted-transcripts'), { recursive: true })
  await writeFile(join(dataDir, 'deleted-transcripts', 'billing.jsonl'), earlierDays())
  await mkdir(join(root, 'storefront'))
  ;({ browser, host, server } = await openBrowserHost(dataDir))
  await resetWindowSettings(host)
})

afterAll(async () => {
  await closeBrowserHost({ browser, host, server })
  await removeDir(root)
})

/** A deleted conversation of Claude's that spent on three earlier days. */
function earlierDays(): string {
  const at = (daysAgo: number, minutes: number): string => new Date(Date.now() - daysAgo * DAY + minutes * 60_000).toISOString()
  const records: TranscriptRecord[] = [
    {
      t: 'header',
      v: 2,
      id: 'billing',
      acpSessionId: 'acp-billing',
      agentId: 'claude-scripted',
      projectId: 'legacy',
      cwd: '/work/legacy-billing',
      createdAt: at(5, 0)
    }
  ]
  // Days ago, the cumulative cost after that day's turn, its input and output tokens.
  for (const [daysAgo, usd, input, output] of [
    [5, 0.42, 16_800, 5_040],
    [3, 1.52, 44_000, 13_200],
    [1, 2.17, 26_000, 7_800]
  ]) {
    records.push(
      { t: 'prompt', at: at(daysAgo, 1), content: [{ type: 'text', text: 'Move invoicing to the new billing API' }] },
      { t: 'update', at: at(daysAgo, 2), update: { sessionUpdate: 'usage_update', used: 1, size: 2, cost: { amount: usd, currency: 'USD' } } },
      { t: 'stop', at: at(daysAgo, 3), stopReason: 'end_turn', usage: { totalTokens: input + output, inputTokens: input, outputTokens: output } }
    )
  }
  return records.map((r) => JSON.stringify(r) + '\n').join('')
}

describe('the Spend page', () => {
  it('shows what agents spent as they spend, charted by agent in light and dark, and exports the rows as CSV', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', acceptDownloads: true })
    const page = await context.newPage()
    const problems = watchConsole(page)
    await page.goto(server.url)
    await page.getByTestId('nav-spend').click()
    await page.getByTestId('spend-page').waitFor()

    // Nothing today yet: the empty state says so and offers all time.
    await page.getByTestId('spend-period-today').check()
    await page.getByTestId('spend-empty').waitFor()
    expect(await page.getByTestId('spend-empty').textContent()).toContain('Nothing spent today')
    console.log(`screenshot: ${await screenshot(page, 'e2e-spend-empty-light')}`)

    // Two agents spend while the page is open: it follows.
    const projectId = (await host.request('projects.add', { cwd: join(root, 'storefront'), name: 'storefront' })).id
    const claude = await host.request('agents.add', scriptedAgent(join(root, 'claude'), {}, 'Claude (scripted)'))
    const gemini = await host.request('agents.add', scriptedAgent(join(root, 'gemini'), {}, 'Gemini (scripted)'))
    expect(claude.id).toBe('claude-scripted')
    const spendIn = async (agentId: string, title: string, script: string): Promise<void> => {
      const { id } = await host.request('sessions.new', { projectId, agentId })
      await host.request('sessions.rename', { id, title })
      await host.request('sessions.prompt', { id, text: script })
    }
    await spendIn(claude.id, 'Checkout flow', '/cost 0.84 USD\n/tokens 38000 6100')
    await spendIn(gemini.id, 'Product search', '/cost 0.3 USD\n/cost 2.5 EUR\n/tokens 21000 3500')
    const rows = page.getByTestId('spend-row')
    await expect.poll(() => rows.count()).toBe(2)
    await expect.poll(() => page.getByTestId('spend-total').allTextContents()).toEqual(['Cost in USD$1.14', 'Cost in EUR€2.50'])

    // The last 7 days, by keyboard: the period's radios move with the arrow keys.
    await page.getByTestId('spend-period-today').focus()
    await page.keyboard.press('ArrowRight')
    await expect.poll(() => rows.count()).toBe(3)
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, -1).map((cell) => cell.textContent?.trim())))
    expect(cells).toEqual([
      ['Move invoicing to the new billing API, deleted', 'legacy-billing', 'Claude (scripted)', '$2.17', '—', '112,840'],
      ['Checkout flow', 'storefront', 'Claude (scripted)', '$0.84', '—', '44,100'],
      ['Product search', 'storefront', 'Gemini (scripted)', '$0.30', '€2.50', '24,500']
    ])
    const chart = page.getByTestId('spend-chart')
    await expect.poll(() => chart.getAttribute('aria-label')).toBe('Cost in USD per day, by agent: Claude (scripted) $3.01, Gemini (scripted) $0.30.')
    console.log(`screenshot: ${await screenshot(page, 'e2e-spend-light')}`)

    // By project, then the rows shown as a CSV file.
    await page.getByTestId('spend-group-sessions').focus()
    await page.keyboard.press('ArrowRight')
    await expect.poll(() => rows.count()).toBe(2)
    const download = page.waitForEvent('download')
    await page.getByTestId('spend-export').click()
    const file = await download
    expect(file.suggestedFilename()).toMatch(/^switchboard-spend-projects-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/)
    const csv = (await readFile((await file.path()) ?? '', 'utf8')).split('\r\n')
    expect(csv[0]).toBe(
      '\uFEFF"Project","Cost (USD)","Cost (EUR)","Tokens","Input tokens","Output tokens","Thought tokens","Cached read tokens","Cached write tokens","Last spent","Deleted"'
    )
    expect(csv[1]).toMatch(/^"legacy-billing",2\.17,,112840,86800,26040,0,0,0,"[^"]+","yes"$/)
    expect(csv[2]).toMatch(/^"storefront",1\.14,2\.5,68600,59000,9600,0,0,0,"[^"]+",$/)
    expect(csv[3]).toBe('')

    // Dark: the chart is drawn again in the dark theme's colours; tokens as the measure.
    await page.getByTestId('theme-dark').click()
    await page.getByTestId('spend-measure').selectOption('tokens')
    await expect.poll(() => chart.getAttribute('aria-label')).toMatch(/^Tokens per day, by agent: Claude \(scripted\) 156,940 tokens/)
    console.log(`screenshot: ${await screenshot(page, 'e2e-spend-dark')}`)

    // A custom period: the day three days ago alone.
    const day = new Date(Date.now() - 3 * DAY)
    const iso = `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`
    await page.getByTestId('spend-period-custom').check()
    await page.getByTestId('spend-from').fill(iso)
    await page.getByTestId('spend-to').fill(iso)
    await expect.poll(() => page.getByTestId('spend-total').allTextContents()).toEqual(['Cost in USD$1.10'])

    // A session's name opens it.
    await page.getByTestId('spend-period-7d').check()
    await page.getByTestId('spend-group-sessions').check()
    await page.getByTestId('spend-table').getByRole('button', { name: 'Checkout flow' }).click()
    await page.getByTestId('composer-input').waitFor()
    expect(await page.getByTestId('spend-page').count()).toBe(0)
    // Its shortcut brings the page back; Escape, outside a text field, leaves it.
    await page.keyboard.press('Control+Shift+S')
    await page.getByTestId('spend-page').waitFor()
    await page.getByTestId('spend-page').click({ position: { x: 400, y: 10 } })
    await page.keyboard.press('Escape')
    await page.getByTestId('spend-page').waitFor({ state: 'detached' })
    expect(problems).toEqual([])
    await page.getByTestId('theme-system').click()
    await context.close()
  })
})
