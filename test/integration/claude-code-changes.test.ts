import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { openHost, removeDir, tempDir, waitUntil } from '../helpers'
import { startFakeAnthropic, type FakeAnthropic } from '../real/fake-anthropic'

/**
 * Worktree, checkpoints, review and rewind with real Claude Code
 * (claude-agent-acp from npm) doing the edits, offline, against a local fake
 * of Anthropic's Messages API. Claude Code writes files itself, not through
 * fs/write_text_file: what its turns changed is read from the files and git.
 */

const modules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules')
const adapter = join(modules, '@agentclientprotocol', 'claude-agent-acp', 'dist', 'index.js')

let root: string
let home: string
let repo: string
let host: Host
let api: FakeAnthropic

function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()
}

beforeEach(async () => {
  root = await tempDir('claude-changes')
  home = join(root, 'home')
  repo = join(root, 'repo')
  await mkdir(home)
  await mkdir(repo)
  gitIn(repo, 'init', '--quiet', '-b', 'main')
  gitIn(repo, 'config', 'user.name', 'Test')
  gitIn(repo, 'config', 'user.email', 'test@example.com')
  await writeFile(join(repo, 'README.md'), '# Repo\n')
  gitIn(repo, 'add', '-A')
  gitIn(repo, 'commit', '--quiet', '-m', 'start')
  api = await startFakeAnthropic()
  host = await openHost(join(root, 'data'))
})

afterEach(async () => {
  await host.close()
  await api.close()
  await removeDir(root)
})

/** Sends a prompt and allows whatever Claude Code asks permission for while the turn runs. */
async function turn(id: string, text: string): Promise<string> {
  let done = false
  const prompt = host.request('sessions.prompt', { id, text }).finally(() => {
    done = true
  })
  const allow = (async () => {
    while (!done) {
      const pending = (await host.request('sessions.states', {})).find((s) => s.id === id)?.permissions ?? []
      for (const p of pending) {
        const option = p.options.find((o) => o.kind === 'allow_once') ?? p.options.find((o) => o.kind.startsWith('allow'))
        await host.request('sessions.respondPermission', { id, requestId: p.requestId, optionId: option?.optionId ?? null })
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  })()
  const { stopReason } = await prompt
  await allow
  return stopReason
}

describe('real Claude Code in a worktree of its own, offline', () => {
  it('its own file writes show in Changes per turn; revert, rewind and merge work on them', async () => {
    const agent = await host.request('agents.add', {
      name: 'Claude Code',
      command: process.execPath,
      args: [adapter],
      env: {
        HOME: home,
        ANTHROPIC_BASE_URL: api.url,
        ANTHROPIC_API_KEY: 'sk-ant-fake',
        IS_SANDBOX: '1',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_ENABLE_TELEMETRY: '0'
      }
    })
    const projectId = (await host.request('projects.add', { cwd: repo })).id
    const session = await host.request('sessions.new', { projectId, agentId: agent.id, isolation: 'worktree', branch: 'claude/notes' })
    const tree = session.cwd
    expect(tree).not.toBe(repo)

    expect(await turn(session.id, `Please create the notes.\nWRITE ${join(tree, 'notes.md')} first line\\nsecond line\\n`)).toBe('end_turn')
    await waitUntil('Claude Code to write notes.md', () => existsSync(join(tree, 'notes.md')))
    expect(await turn(session.id, `And a todo list.\nWRITE ${join(tree, 'todo.md')} - ship it\\n`)).toBe('end_turn')
    await waitUntil('Claude Code to write todo.md', () => existsSync(join(tree, 'todo.md')))
    // The writes went straight to disk, in the worktree only, and reached the fake API as tool calls.
    expect(existsSync(join(repo, 'notes.md'))).toBe(false)
    expect(api.requests.some((r) => r.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result')))).toBe(true)

    const all = await host.request('changes.list', { id: session.id })
    expect(all.checkpoints.map((c) => c.turn)).toEqual([1, 2])
    expect(all.files.map((f) => `${f.status} ${f.path}`).sort()).toEqual(['added notes.md', 'added todo.md'])
    expect(all.files.find((f) => f.path === 'notes.md')?.newText).toBe('first line\nsecond line\n')
    const turn2 = await host.request('changes.list', { id: session.id, from: 2 })
    expect(turn2.files.map((f) => f.path)).toEqual(['todo.md'])

    // Rewind to before turn 2, then undo it; revert one file, keep the other, commit and merge.
    const { undo } = await host.request('changes.rewind', { id: session.id, checkpoint: 2 })
    expect(existsSync(join(tree, 'todo.md'))).toBe(false)
    await host.request('changes.rewind', { id: session.id, checkpoint: undo.index })
    expect(await readFile(join(tree, 'todo.md'), 'utf8')).toBe('- ship it\n')
    await host.request('changes.revert', { id: session.id, path: 'todo.md' })
    await host.request('changes.keep', { id: session.id, path: 'notes.md' })
    expect((await host.request('changes.list', { id: session.id })).files).toEqual([])

    // The next prompt tells Claude Code what was restored.
    expect(await turn(session.id, 'Carry on.')).toBe('end_turn')
    const told = api.requests.some((r) => JSON.stringify(r.messages).includes('[Switchboard] The user restored the files'))
    expect(told).toBe(true)

    await host.request('changes.commit', { id: session.id, message: 'Notes from Claude' })
    expect(await host.request('changes.merge', { id: session.id })).toMatchObject({ merged: true, into: 'main' })
    expect(await readFile(join(repo, 'notes.md'), 'utf8')).toBe('first line\nsecond line\n')
    expect(existsSync(join(repo, 'todo.md'))).toBe(false)
  }, 120_000)
})
