import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { addClaudeAgent, offlineClaudePerTest } from '../real/claude'
import { runCli } from './run-cli'

/**
 * `switchboard run` with real Claude Code (claude-agent-acp from npm), offline
 * against the fake Anthropic API (test/real/claude.ts): a Write it asks for is
 * denied by --allow never (exit 5, nothing written), and a second run continues
 * the same conversation in a new process.
 */

const run = offlineClaudePerTest('cli-claude')

describe('switchboard run with real Claude Code, offline', () => {
  it('denies what --allow never denies, and --continue goes on with the conversation', async () => {
    await addClaudeAgent(run)
    // The command opens the data folder itself: the test's Host lets go of it first.
    await run.host.close()
    const env = { SWITCHBOARD_DATA_DIR: run.dataDir }
    const file = join(run.project, 'denied.md')
    const first = await runCli(['run', '--agent', 'Claude Code', '--project', run.project, '--allow', 'never', `A new file.\nWRITE ${file} no\\n`], {
      env
    })
    expect(first.stderr).toContain('denied "Write denied.md" (--allow never)')
    expect(first.code).toBe(5)
    expect(existsSync(file)).toBe(false)

    const id = /^Session ([\w-]+);/.exec(first.stderr)?.[1] ?? ''
    const second = await runCli(['run', '--continue', id, '--allow', 'never', 'Hello again'], { env })
    expect(second.stdout).toBe('Echo: Hello again\n')
    expect(second.code).toBe(0)
    // Claude Code was shown the earlier turn: the same conversation, not a new one.
    expect(JSON.stringify(run.api.main().at(-1)?.messages ?? [])).toContain('A new file.')
  }, 120_000)
})
