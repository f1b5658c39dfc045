import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, expect } from 'vitest'
import type { Host } from '../../electron/host/host'
import { openHost, processesWithEnv, removeDir, tempDir } from '../helpers'
import { startFakeAnthropic, type FakeAnthropic } from './fake-anthropic'

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
export interface OfflineClaude {
  /** The test's temporary folder, holding everything below. */
  root: string
  /** Claude Code's HOME. */
  home: string
  /** An empty project folder. */
  project: string
  /** The Host's data folder. */
  dataDir: string
  /** The running Host; a test that restarts it assigns the new one here. */
  host: Host
  api: FakeAnthropic
}

/**
 * The set-up the real-Claude suites share, made fresh for each test of the file
 * that calls this (at its top level, before its own hooks): a temporary folder
 * with HOME and a project, the fake Messages API and a Host. After each test
 * the Host and the fake are closed, and it fails if anything Claude Code
 * started (HOME set to the test's folder) still runs, or if Claude Code called
 * anything of the API the fake does not serve. Returns one object whose fields
 * are the running test's.
 */
export function offlineClaudePerTest(prefix = 'claude'): OfflineClaude {
  const run: Partial<OfflineClaude> = {}
  beforeEach(async () => {
    run.root = await tempDir(prefix)
    run.home = join(run.root, 'home')
    run.project = join(run.root, 'project')
    run.dataDir = join(run.root, 'data')
    await mkdir(run.home)
    await mkdir(run.project)
    run.api = await startFakeAnthropic()
    run.host = await openHost(run.dataDir)
  })
  afterEach(async () => {
    if (!run.root) return
    try {
      await run.host?.close()
      await run.api?.close()
      // Everything Claude Code started had HOME set to our folder: none of it may remain.
      expect(processesWithEnv(`HOME=${run.home}`)).toEqual([])
      // Claude Code called nothing of the API the fake does not serve.
      if (run.api) expect(run.api.unknown).toEqual([])
    } finally {
      await removeDir(run.root)
      for (const key of Object.keys(run)) delete run[key as keyof OfflineClaude]
    }
  })
  return run as OfflineClaude
}

/** Adds Claude Code (named "Claude Code") pointed at the test's fake to its Host: the agent's id. */
export async function addClaudeAgent(run: OfflineClaude): Promise<string> {
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
