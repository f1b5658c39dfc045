import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { waitUntil } from '../helpers'
import { addClaudeAgent, offlineClaudePerTest } from '../real/claude'

/**
 * Worktree, checkpoints, review and rewind with real Claude Code
 * (claude-agent-acp from npm) doing the edits, offline, against a local fake
 * of Anthropic's Messages API. Claude Code writes files itself, not through
 * fs/write_text_file: what its turns changed is read from the files and git.
 */

const run = offlineClaudePerTest('claude-changes')

function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()
}

/** The project is a git repository with one commit. */
beforeEach(async () => {
  gitIn(run.project, 'init', '--quiet', '-b', 'main')
  gitIn(run.project, 'config', 'user.name', 'Test')
  gitIn(run.project, 'config', 'user.email', 'test@example.com')
  await writeFile(join(run.project, 'README.md'), '# Repo\n')
  gitIn(run.project, 'add', '-A')
  gitIn(run.project, 'commit', '--quiet', '-m', 'start')
})

/** Sends a prompt and allows whatever Claude Code asks permission for while the turn runs. */
async function turn(id: string, text: string): Promise<string> {
  let done = false
  const prompt = run.host.request('sessions.prompt', { id, text }).finally(() => {
    done = true
  })
  const allow = (async () => {
    while (!done) {
      const pending = (await run.host.request('sessions.states', {})).find((s) => s.id === id)?.permissions ?? []
      for (const p of pending) {
        const option = p.options.find((o) => o.kind === 'allow_once') ?? p.options.find((o) => o.kind.startsWith('allow'))
        await run.host.request('sessions.respondPermission', { id, requestId: p.requestId, optionId: option?.optionId ?? null })
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
    const agentId = await addClaudeAgent(run)
    const projectId = (await run.host.request('projects.add', { cwd: run.project })).id
    const session = await run.host.request('sessions.new', { projectId, agentId, isolation: 'worktree', branch: 'claude/notes' })
    const tree = session.cwd
    expect(tree).not.toBe(run.project)

    expect(await turn(session.id, `Please create the notes.\nWRITE ${join(tree, 'notes.md')} first line\\nsecond line\\n`)).toBe('end_turn')
    await waitUntil('Claude Code to write notes.md', () => existsSync(join(tree, 'notes.md')))
    expect(await turn(session.id, `And a todo list.\nWRITE ${join(tree, 'todo.md')} - ship it\\n`)).toBe('end_turn')
    await waitUntil('Claude Code to write todo.md', () => existsSync(join(tree, 'todo.md')))
    // The writes went straight to disk, in the worktree only, and reached the fake API as tool calls.
    expect(existsSync(join(run.project, 'notes.md'))).toBe(false)
    expect(run.api.requests.some((r) => r.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result')))).toBe(
      true
    )

    const all = await run.host.request('changes.list', { id: session.id })
    expect(all.checkpoints.map((c) => c.turn)).toEqual([1, 2])
    expect(all.files.map((f) => `${f.status} ${f.path}`).sort()).toEqual(['added notes.md', 'added todo.md'])
    expect(all.files.find((f) => f.path === 'notes.md')?.newText).toBe('first line\nsecond line\n')
    const turn2 = await run.host.request('changes.list', { id: session.id, from: 2 })
    expect(turn2.files.map((f) => f.path)).toEqual(['todo.md'])

    // Rewind to before turn 2, then undo it; revert one file, keep the other, commit and merge.
    const { undo } = await run.host.request('changes.rewind', { id: session.id, checkpoint: 2 })
    expect(existsSync(join(tree, 'todo.md'))).toBe(false)
    await run.host.request('changes.rewind', { id: session.id, checkpoint: undo.index })
    expect(await readFile(join(tree, 'todo.md'), 'utf8')).toBe('- ship it\n')
    await run.host.request('changes.revert', { id: session.id, path: 'todo.md' })
    await run.host.request('changes.keep', { id: session.id, path: 'notes.md' })
    expect((await run.host.request('changes.list', { id: session.id })).files).toEqual([])

    // The next prompt tells Claude Code what was restored.
    expect(await turn(session.id, 'Carry on.')).toBe('end_turn')
    const told = run.api.requests.some((r) => JSON.stringify(r.messages).includes('[Switchboard] The user restored the files'))
    expect(told).toBe(true)

    await run.host.request('changes.commit', { id: session.id, message: 'Notes from Claude' })
    expect(await run.host.request('changes.merge', { id: session.id })).toMatchObject({ merged: true, into: 'main' })
    expect(await readFile(join(run.project, 'notes.md'), 'utf8')).toBe('first line\nsecond line\n')
    expect(existsSync(join(run.project, 'todo.md'))).toBe(false)
  }, 120_000)
})
