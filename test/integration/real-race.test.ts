import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { gitIn, processesWithEnv, waitUntil } from '../helpers'
import { addClaudeAgent, offlineClaudePerTest } from '../real/claude'
import { addCodexAgent, makeCodexHome, requireCodexAdapter, type CodexHome } from '../real/codex'
import { startFakeOpenAI, type FakeOpenAI } from '../real/fake-openai'
import { threadReader } from '../real/thread'

/**
 * A race with real agents, offline (issue 39, point 3): real Claude Code and real Codex get the same prompt at once,
 * each in its own worktree of the project, against local fakes of their model APIs (test/real/). The prompt carries
 * a line each fake acts on (Claude's `WRITE`, Codex's `ADD`), with a path relative to the session's folder, so each
 * agent writes into its own worktree; the user allows each write. Then the comparison, a check and a keep.
 */

const run = offlineClaudePerTest('real-race')
const claude = threadReader(() => run.host, 'Claude Code')
const codex = threadReader(() => run.host, 'Codex')
let openai: FakeOpenAI
let codexHome: CodexHome

beforeEach(async () => {
  requireCodexAdapter()
  openai = await startFakeOpenAI()
  codexHome = await makeCodexHome(join(run.root, 'codex'), openai.url)
})

afterEach(async () => {
  // Before offlineClaudePerTest's own (hooks run last-registered first): the Host stops Codex too.
  await run.host?.close()
  await openai?.close()
  expect(processesWithEnv(`HOME=${codexHome.home}`)).toEqual([])
  expect(openai.unknown).toEqual([])
})

describe('a race between real Claude Code and real Codex, offline', () => {
  it('both get the prompt at once, each writes in its own worktree; the comparison, a check and keeping one', async () => {
    gitIn(run.project, 'init', '--quiet', '-b', 'main')
    gitIn(run.project, 'config', 'user.name', 'Test User')
    gitIn(run.project, 'config', 'user.email', 'test@example.com')
    gitIn(run.project, 'commit', '--quiet', '--allow-empty', '-m', 'start')
    const claudeId = await addClaudeAgent(run)
    const codexId = await addCodexAgent(run.host, codexHome)
    const projectId = (await run.host.request('projects.add', { cwd: run.project })).id
    const prompt = 'Write your answer into a file.\nWRITE answer.txt from claude\\n\nADD answer.txt from codex'
    const race = await run.host.request('races.start', { projectId, prompt, entries: [{ agentId: claudeId }, { agentId: codexId }] })
    expect(race.racers.map((r) => [r.name, r.state])).toEqual([
      ['Claude Code', 'running'],
      ['Codex', 'running']
    ])
    const [claudeSession, codexSession] = race.racers.map((r) => r.sessionId ?? '')
    // Each asks before it writes; the user allows both.
    await claude.answer(claudeSession ?? '', 'allow')
    await codex.answer(codexSession ?? '', 'allow')
    const done = await waitUntil(
      'both racers done',
      async () => {
        const c = await run.host.request('races.compare', { raceId: race.id })
        return c.rows.every((r) => r.state === 'done') ? c : null
      },
      { timeoutMs: 60_000 }
    )
    const records = await run.host.request('sessions.get', { ids: [claudeSession ?? '', codexSession ?? ''] })
    const folderOf = (id: string | undefined): string => records.find((r) => r.id === id)?.worktree?.path ?? '(none)'
    expect(folderOf(claudeSession)).not.toBe(folderOf(codexSession))
    expect(await readFile(join(folderOf(claudeSession), 'answer.txt'), 'utf8')).toBe('from claude\n')
    expect(await readFile(join(folderOf(codexSession), 'answer.txt'), 'utf8')).toBe('from codex\n')
    expect(done.rows.map((r) => r.files)).toEqual([
      [{ path: 'answer.txt', added: 1, removed: 0, binary: false }],
      [{ path: 'answer.txt', added: 1, removed: 0, binary: false }]
    ])
    // Claude Code's turn reported its tokens (the fake counts each request).
    expect(done.rows[0]?.spend?.tokens.total).toBeGreaterThan(0)
    // Both prompts reached the models.
    expect(JSON.stringify(run.api.main().at(-1)?.messages ?? [])).toContain('WRITE answer.txt')
    expect(JSON.stringify(openai.main().at(0)?.body.input ?? [])).toContain('ADD answer.txt')

    await run.host.request('projects.setCheckCommand', { projectId, command: 'grep -q codex answer.txt' })
    await run.host.request('races.runCheck', { raceId: race.id, sessionId: claudeSession ?? '' })
    await run.host.request('races.runCheck', { raceId: race.id, sessionId: codexSession ?? '' })
    const checked = await waitUntil('both checks over', async () => {
      const c = await run.host.request('races.compare', { raceId: race.id })
      return c.rows.every((r) => r.check && r.check.status !== 'running') ? c : null
    })
    expect(checked.rows.map((r) => r.check?.status)).toEqual(['failed', 'passed'])
    const kept = await run.host.request('races.keep', { raceId: race.id, sessionId: codexSession ?? '' })
    expect(kept.merge).toMatchObject({ merged: true, into: 'main' })
    expect(gitIn(run.project, 'show', 'main:answer.txt')).toBe('from codex')
    expect(await run.host.request('races.removeOthers', { raceId: race.id })).toEqual({ removed: [claudeSession], refused: [] })
  }, 180_000)
})
