import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { gitIn, openHost, processesWithEnv, removeDir, tempDir } from '../helpers'
import { addClaudeAgent } from '../real/claude'
import { addCodexAgent, makeCodexHome, requireCodexAdapter, type CodexHome } from '../real/codex'
import { startFakeAnthropic, typedText, type FakeAnthropic } from '../real/fake-anthropic'
import { startFakeOpenAI, type FakeOpenAI } from '../real/fake-openai'
import { said, threadReader } from '../real/thread'

/**
 * A hand-off between the real Claude Code and the real Codex (issue 39, point
 * 1), offline against the fake Messages and Responses APIs: a conversation with
 * Claude Code in a worktree goes on with Codex, then back with Claude Code. The
 * conversation handed over reaches each model's request, and the model's next
 * write lands in the same worktree. One Host, both fakes, one test.
 */

let root: string
let home: string
let project: string
let host: Host
let anthropic: FakeAnthropic
let openai: FakeOpenAI
let codex: CodexHome
const { answer, entries } = threadReader(() => host, 'the agent')

beforeAll(async () => {
  requireCodexAdapter()
  root = await tempDir('real-hand-off')
  home = join(root, 'home')
  project = join(root, 'project')
  await mkdir(home, { recursive: true })
  await mkdir(project)
  gitIn(project, 'init', '--quiet', '-b', 'main')
  await writeFile(join(project, 'README.md'), 'The shop\n')
  gitIn(project, 'add', '-A')
  gitIn(project, 'commit', '--quiet', '-m', 'start')
  anthropic = await startFakeAnthropic()
  openai = await startFakeOpenAI()
  codex = await makeCodexHome(root, openai.url)
  host = await openHost(join(root, 'data'))
})

afterAll(async () => {
  await host?.close()
  await anthropic?.close()
  await openai?.close()
  // Neither agent left anything running (both had HOME in the test's folder).
  expect(processesWithEnv(`HOME=${home}`)).toEqual([])
  expect(anthropic?.unknown ?? []).toEqual([])
  expect((openai?.unknown ?? []).map((r) => `${r.method} ${r.path}`)).toEqual([])
  await removeDir(root)
})

describe('hand-off between real Claude Code and real Codex, offline', () => {
  it('Claude Code → Codex → Claude Code: each model is given the conversation, and writes in the same worktree', async () => {
    const claudeId = await addClaudeAgent({ home, api: anthropic, host })
    const codexId = await addCodexAgent(host, codex)
    const projectId = (await host.request('projects.add', { cwd: project })).id

    // Claude Code writes a file in its own worktree.
    const first = await host.request('sessions.new', { projectId, agentId: claudeId, isolation: 'worktree', branch: 'feature/health' })
    const tree = first.cwd
    const written = join(tree, 'health.ts')
    const turn = host.request('sessions.prompt', { id: first.id, text: `Add the health check.\nWRITE ${written} export const ok = true` })
    await answer(first.id, 'allow')
    expect((await turn).stopReason).toBe('end_turn')
    expect(await readFile(written, 'utf8')).toBe('export const ok = true')

    // Codex takes over: same worktree and branch; the conversation reaches the model with the first prompt.
    const second = await host.request('sessions.handOff', { id: first.id, agentId: codexId })
    expect(second).toMatchObject({ cwd: tree, worktree: { branch: 'feature/health' }, handedOffFrom: first.id })
    expect(second.handOffSeed?.asResource).toBe(true)
    const byCodex = join(tree, 'health.test.ts')
    const codexTurn = host.request('sessions.prompt', { id: second.id, text: `Now the test.\nADD ${byCodex} test('ok')` })
    await answer(second.id, 'allow')
    expect((await codexTurn).stopReason).toBe('end_turn')
    const toCodex = JSON.stringify(openai.main()[0]?.body.input ?? [])
    expect(toCodex).toContain('A conversation handed over to you')
    expect(toCodex).toContain('Add the health check.')
    expect(toCodex).toContain('Done: Write finished.')
    expect(toCodex).toContain('+export const ok = true')
    expect(await readFile(byCodex, 'utf8')).toBe("test('ok')\n")
    // The user's bubble holds what they typed, not the conversation sent with it.
    expect(said(await entries(second.id))[0]).toBe(`user: Now the test.\nADD ${byCodex} test('ok')`)

    // And back to Claude Code: what Codex did reaches Claude's model; its Write lands in the same worktree.
    const third = await host.request('sessions.handOff', { id: second.id, agentId: claudeId })
    expect(third.cwd).toBe(tree)
    const before = anthropic.main().length
    const back = join(tree, 'NOTES.md')
    const claudeTurn = host.request('sessions.prompt', { id: third.id, text: `Write it down.\nWRITE ${back} health check done` })
    await answer(third.id, 'allow')
    expect((await claudeTurn).stopReason).toBe('end_turn')
    const request = anthropic.main()[before]
    const firstMessage = request?.messages.find((m) => m.role === 'user')
    const blocks = typeof firstMessage?.content === 'string' ? [firstMessage.content] : (firstMessage?.content ?? []).map((b) => b.text ?? '')
    const context = blocks.find((t) => t.includes('<context ref="switchboard://hand-off/'))
    expect(context).toContain('Now the test.')
    expect(context).toContain('Done: apply_patch finished.')
    // The diff runs from where the first session began: Claude's file and Codex's both.
    expect(context).toContain('+++ b/health.ts')
    expect(context).toContain('+++ b/health.test.ts')
    // What the user typed stays their own message, after the conversation.
    expect(typedText(firstMessage?.content ?? []).at(-1)).toContain('Write it down.')
    expect(await readFile(back, 'utf8')).toBe('health check done')
    expect(existsSync(join(project, 'NOTES.md'))).toBe(false)
    const sessions = await host.request('sessions.get', { ids: [first.id, second.id] })
    expect(sessions.map((s) => s.handedOffTo)).toEqual([[second.id], [third.id]])
  }, 240_000)
})
