import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic'
import { offlinePerTest, type OfflineRun } from './offline'

/**
 * Real Claude Code for the integration tests (claude-agent-acp from npm, which
 * runs the Claude Agent SDK's own `claude` binary), offline against
 * test/real/fake-anthropic.ts, as real-claude.test.ts, real-claude-mcp.test.ts,
 * real-claude-rules.test.ts and claude-code-changes.test.ts run it.
 *
 * Claude Code is pointed at the fake with ANTHROPIC_BASE_URL and
 * ANTHROPIC_API_KEY; HOME is a temporary folder (its settings and saved
 * sessions go there); IS_SANDBOX lets it run as root; CLAUDE_CODE_MAX_RETRIES=0
 * makes one attempt per model request (no retries with back-off).
 */

const modules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules')
/** The adapter's entry point, run with this Node. */
export const claudeAdapter = join(modules, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js')

/** What one test's offline Claude Code runs on (see offlineClaudePerTest). */
export interface OfflineClaude extends OfflineRun<FakeAnthropic> {
  /** Claude Code's HOME. */
  home: string
}

/**
 * The real-Claude suites' set-up, per test (offlinePerTest in ./offline.ts): a
 * temporary folder with HOME and a project, the fake Messages API and a Host;
 * after each test nothing with that HOME may run and no unknown API call may
 * have been made.
 */
export function offlineClaudePerTest(prefix = 'claude'): OfflineClaude {
  return offlinePerTest({
    prefix,
    startApi: startFakeAnthropic,
    prepare: async (root) => {
      const home = join(root, 'home')
      await mkdir(home)
      return { home }
    },
    homeOf: ({ home }) => home,
    unknownOf: (api) => api.unknown
  })
}

/** Adds Claude Code (named "Claude Code") pointed at the test's fake to its Host: the agent's id. */
export async function addClaudeAgent(run: Pick<OfflineClaude, 'host' | 'home' | 'api'>): Promise<string> {
  const agent = await run.host.request('agents.add', {
    name: 'Claude Code',
    transport: {
      kind: 'process',
      command: process.execPath,
      args: [claudeAdapter],
      env: {
        HOME: run.home,
        ANTHROPIC_BASE_URL: run.api.url,
        ANTHROPIC_API_KEY: 'sk-ant-fake',
        IS_SANDBOX: '1',
        CLAUDE_CODE_MAX_RETRIES: '0',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_ENABLE_TELEMETRY: '0'
      }
    }
  })
  return agent.id
}
