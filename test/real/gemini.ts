import { mkdir, readdir, rename, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Host } from '../../electron/host/host'
import { startFakeGemini, type FakeGemini } from './fake-gemini'
import { offlinePerTest, type OfflineRun } from './offline'

/**
 * Real Gemini CLI for the integration tests (from npm, `--acp`), offline
 * against test/real/fake-gemini.ts, as real-gemini.test.ts and
 * real-gemini-mcp.test.ts run it.
 *
 * Gemini CLI is pointed at the fake with GOOGLE_GEMINI_BASE_URL and
 * GEMINI_API_KEY; its settings (in HOME, a temporary folder) select the
 * API-key sign-in, make one attempt per model request (no retries with
 * back-off) and turn off telemetry, usage statistics and update checks.
 */

const modules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules')
/** Gemini CLI's bundle, run with this Node. */
export const geminiBundle = join(modules, '@google', 'gemini-cli', 'bundle', 'gemini.js')

/**
 * Gemini CLI's settings.json. `security.folderTrust` is off unless `folderTrust` (then left to its default,
 * on). `general.sessionRetention` off: at start-up Gemini CLI deletes every file of a session that has one
 * file without conversation in it, and its own session/load leaves such a file behind (see the restart
 * test in real-gemini.test.ts), so with the default the second restart finds nothing to load.
 */
export function geminiSettings({ folderTrust = false } = {}): object {
  return {
    security: { auth: { selectedType: 'gemini-api-key' }, ...(folderTrust ? {} : { folderTrust: { enabled: false } }) },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1, sessionRetention: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    ide: { enabled: false }
  }
}

/** What one test's offline Gemini CLI runs on (see offlineGeminiPerTest). */
export interface OfflineGemini extends OfflineRun<FakeGemini> {
  /** Gemini CLI's HOME, with its settings in .gemini/. */
  home: string
}

/**
 * The real-Gemini suites' set-up, per test (offlinePerTest in ./offline.ts): a
 * temporary folder with HOME (Gemini CLI's settings in it, see geminiSettings)
 * and a project, the fake Gemini API and a Host; after each test nothing with
 * that HOME may run and no unknown API call may have been made.
 */
export function offlineGeminiPerTest({ prefix = 'gemini', folderTrust = false } = {}): OfflineGemini {
  return offlinePerTest({
    prefix,
    startApi: startFakeGemini,
    prepare: async (root) => {
      const home = join(root, 'home')
      await mkdir(join(home, '.gemini'), { recursive: true })
      await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify(geminiSettings({ folderTrust }), null, 2))
      return { home }
    },
    homeOf: ({ home }) => home,
    unknownOf: (api) => api.unknown.map((r) => `${r.method} ${r.path}`)
  })
}

/** Adds Gemini CLI (named "Gemini CLI") pointed at the test's fake, with the key in its environment unless `withKey` is false: its id. */
export async function addGeminiAgent(run: OfflineGemini, withKey = true): Promise<string> {
  const agent = await run.host.request('agents.add', {
    name: 'Gemini CLI',
    transport: {
      kind: 'process',
      command: process.execPath,
      args: [geminiBundle, '--acp'],
      env: {
        HOME: run.home,
        USERPROFILE: run.home,
        GEMINI_CLI_NO_RELAUNCH: 'true',
        GOOGLE_GEMINI_BASE_URL: run.api.url,
        ...(withKey ? { GEMINI_API_KEY: 'fake-gemini-key' } : {}),
        GEMINI_TELEMETRY_ENABLED: 'false',
        NO_BROWSER: 'true'
      }
    }
  })
  return agent.id
}

/**
 * Gemini CLI names a session's file after the minute the session started
 * (`session-2026-01-31T09-41-<id>.jsonl` under HOME/.gemini/tmp/…/chats/), and
 * its session/load first starts a fresh recording of the same session, named
 * the same way: loaded in that same minute, it overwrites the saved
 * conversation (Gemini CLI's own defect; a person restarts later). This moves
 * every saved session of `home` one minute back, as if it had started a minute
 * earlier, so a test can restart at once instead of waiting for the next
 * minute. Only with Gemini CLI stopped (it rewrites its file by name).
 */
export async function backdateGeminiSessions(home: string): Promise<string[]> {
  const moved: string[] = []
  const files = await readdir(join(home, '.gemini', 'tmp'), { recursive: true })
  for (const file of files) {
    const match = /^session-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(.+\.jsonl?)$/.exec(basename(file))
    if (!match) continue
    const [, day, hour, minute, rest] = match
    const earlier = new Date(Date.parse(`${day}T${hour}:${minute}:00Z`) - 60_000).toISOString().slice(0, 16).replace(/:/g, '-')
    const from = join(home, '.gemini', 'tmp', file)
    const to = join(dirname(from), `session-${earlier}-${rest}`)
    await rename(from, to)
    moved.push(to)
  }
  return moved
}
