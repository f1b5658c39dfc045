import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'
import { closeBrowserHost, openBrowserHost, type BrowserHost } from './browser'

/**
 * What the Changes end-to-end files (changes.test.ts, changes-beside.test.ts)
 * share: a git repository `shop` with a first commit, and the browser and Host
 * of openBrowserHost with the scripted agent and that repository as a project.
 */

/** `git args…` in `cwd`: its output, trimmed. */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()
}

export interface ChangesFixture extends BrowserHost {
  /** The file's temporary folder (the repository, the Host's data, the agent's state). */
  root: string
  /** The repository, the project's folder. */
  repo: string
  agentId: string
  projectId: string
}

/** A temporary folder `prefix-…` with the repository holding `files` (name → text) committed as "start", and the rest (see above). */
export async function openChangesFixture(prefix: string, files: Record<string, string>): Promise<ChangesFixture> {
  const root = await tempDir(prefix)
  const repo = join(root, 'shop')
  try {
    await mkdir(repo, { recursive: true })
    gitIn(repo, 'init', '--quiet', '-b', 'main')
    gitIn(repo, 'config', 'user.name', 'E2E')
    gitIn(repo, 'config', 'user.email', 'e2e@example.com')
    for (const [name, text] of Object.entries(files)) await writeFile(join(repo, name), text)
    gitIn(repo, 'add', '-A')
    gitIn(repo, 'commit', '--quiet', '-m', 'start')
  } catch (error) {
    await removeDir(root)
    throw error
  }
  let opened: Partial<BrowserHost> = {}
  try {
    opened = await openBrowserHost(join(root, 'data'))
    const { browser, host, server } = opened as BrowserHost
    const agentId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))).id
    const projectId = (await host.request('projects.add', { cwd: repo })).id
    return { browser, host, server, root, repo, agentId, projectId }
  } catch (error) {
    await closeBrowserHost(opened)
    await removeDir(root)
    throw error
  }
}

/** Closes what openChangesFixture opened and removes its folder. */
export async function closeChangesFixture(fixture: ChangesFixture | undefined): Promise<void> {
  if (!fixture) return
  await closeBrowserHost(fixture)
  await removeDir(fixture.root)
}

/** Sends `text` from the focused composer and waits for the turn's end to show. */
export async function send(page: Page, text: string): Promise<void> {
  const stops = await page.getByTestId('entry-stop').count()
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('send').click()
  await waitUntil('the turn to end', async () => (await page.getByTestId('entry-stop').count()) > stops)
}
