import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { currentModeOf, permissionSkipOf } from '../../shared/modes'
import type { ThreadEntry, ToolCallEntry } from '../../shared/thread'
import { entriesOf, fold, openHost, waitUntil } from '../helpers'
import { offlineCodexPerTest, addCodexAgent } from '../real/codex'
import { said, threadReader } from '../real/thread'
import { FAIL400_MESSAGE, textOfItem } from '../real/fake-openai'

/**
 * Real Codex (`@agentclientprotocol/codex-acp`, which runs the Codex app-server
 * of its `@openai/codex` dependency) running whole turns through the Host,
 * offline, against a local fake of OpenAI's Responses API
 * (test/real/fake-openai.ts): what a user sees of the mode a session starts in,
 * streamed text, tool calls and their permissions, edits, cancelling, API
 * failures, and a conversation continued after restarts.
 *
 * Codex is pointed at the fake by its config.toml (test/real/codex.ts, shared
 * with real-codex-mcp.test.ts). Nothing in it says when to ask: codex-acp starts a session in its mode "agent"
 * (Auto review, which lets a model review what the user would be asked), and
 * Switchboard puts it in "read-only", which asks before an edit and before a
 * command leaves the sandbox; the fake model asks for that as a real one
 * does (`sandbox_permissions: "require_escalated"`), so what the user allows
 * runs unsandboxed. The model's tools are called as Codex knows them:
 * `exec_command` (a function) and `apply_patch` (a freeform custom tool).
 */

const run = offlineCodexPerTest()
const { entries, toolCalls, pendingPermission, answer } = threadReader(() => run.host, 'Codex')

/** Adds Codex pointed at the fake, the project, and a new session in it. */
async function newSession(): Promise<string> {
  const { agentId, projectId } = await addCodex()
  return (await run.host.request('sessions.new', { projectId, agentId })).id
}

/** Codex pointed at the fake, and the project. */
async function addCodex(): Promise<{ agentId: string; projectId: string }> {
  const agentId = await addCodexAgent(run.host, run.codex)
  const projectId = (await run.host.request('projects.add', { cwd: run.project })).id
  return { agentId, projectId }
}

/** What the model was shown in the main conversation's last request. */
function lastInput(): string {
  return JSON.stringify(run.api.main().at(-1)?.body.input ?? [])
}

describe('real Codex through the Host, offline against a fake Responses API', () => {
  it('streams a text reply into one assistant entry', async () => {
    const id = await newSession()
    expect(await run.host.request('sessions.prompt', { id, text: 'Hello there, tell me a story' })).toEqual({ stopReason: 'end_turn' })
    const { records } = await run.host.request('sessions.open', { id })
    const thread = fold(records)
    expect(said(thread.entries)).toEqual(['user: Hello there, tell me a story', 'assistant: Echo: Hello there, tell me a story'])
    expect(thread.entries.at(-1)).toMatchObject({ kind: 'stop', stopReason: 'end_turn' })
    expect(entriesOf(thread, 'error')).toEqual([])
    // It came in pieces, as streamed; the prompt and the key reached the model.
    const chunks = records.filter((r) => r.t === 'update' && r.update.sessionUpdate === 'agent_message_chunk')
    expect(chunks.length).toBeGreaterThan(1)
    const [request] = run.api.main()
    expect(textOfItem(request?.body.input?.at(-1))).toContain('Hello there, tell me a story')
    expect(request?.apiKey).toBe('fake-openai-key')
    expect(request?.body.stream).toBe(true)
  }, 90_000)

  it("a new session starts in the mode that asks (Read-only, not codex-acp's own 'agent'): its first edit is asked", async () => {
    const id = await newSession()
    const thread = fold((await run.host.request('sessions.open', { id })).records)
    const option = thread.configOptions?.find((o) => o.category === 'mode')
    expect(option).toMatchObject({ currentValue: 'read-only' })
    expect(currentModeOf(thread)).toEqual({ id: 'read-only', name: 'Read-only' })
    // The modes that let Codex act unasked are marked so wherever the session shows them.
    const offered = option?.type === 'select' ? option.options.flatMap((o) => ('options' in o ? o.options : [o])).map((o) => o.value) : []
    expect(Object.fromEntries(offered.map((m) => [m, permissionSkipOf(m)]))).toEqual({
      'read-only': null,
      'workspace-write': 'edits',
      agent: 'all',
      'agent-full-access': 'all'
    })
    expect((await run.host.request('sessions.states', {})).find((s) => s.id === id)?.modeSkips).toBeUndefined()

    const fresh = join(run.project, 'first.md')
    const turn = run.host.request('sessions.prompt', { id, text: `A new file.\nADD ${fresh} first` })
    const permission = await pendingPermission(id)
    expect(existsSync(fresh)).toBe(false)
    await run.host.request('sessions.respondPermission', {
      id,
      requestId: permission.requestId,
      optionId: permission.options.find((o) => o.kind === 'allow_once')!.optionId
    })
    expect((await turn).stopReason).toBe('end_turn')
    expect(await readFile(fresh, 'utf8')).toBe('first\n')
  }, 90_000)

  it('a shell command asks permission: allowed, it runs; rejected, it does not', async () => {
    const id = await newSession()
    const allowed = join(run.project, 'allowed.txt')
    const turn = run.host.request('sessions.prompt', { id, text: `Please run it.\nSHELL touch ${allowed}` })
    const permission = await answer(id, 'allow')
    expect(permission.title).toBe(`touch ${allowed}`)
    expect((await turn).stopReason).toBe('end_turn')
    expect(existsSync(allowed)).toBe(true)
    const [ran] = await toolCalls(id)
    expect(ran).toMatchObject({ toolKind: 'execute', status: 'completed', title: `touch ${allowed}` })
    expect(said(await entries(id)).at(-1)).toBe('assistant: Done: exec_command finished.')

    // Codex offers one way to refuse a command: "No, and tell Codex what to do differently", which
    // stops the turn there (Codex aborts it; the prompt answers `cancelled`) for the user to say more.
    const rejected = join(run.project, 'rejected.txt')
    const second = run.host.request('sessions.prompt', { id, text: `And this one.\nSHELL touch ${rejected}` })
    const refused = await answer(id, 'reject')
    expect(refused.options.filter((o) => o.kind.startsWith('reject'))).toMatchObject([{ optionId: 'cancel', kind: 'reject_once' }])
    expect((await second).stopReason).toBe('cancelled')
    expect(existsSync(rejected)).toBe(false)
    const thread = fold((await run.host.request('sessions.open', { id })).records)
    expect(entriesOf(thread, 'permission')).toMatchObject([
      { title: `touch ${allowed}`, allowed: true },
      { title: `touch ${rejected}`, allowed: false }
    ])
    // Not shown as run, nor as still waiting.
    const shown = (entriesOf(thread, 'tool_call') as ToolCallEntry[]).filter((c) => c.toolCallId === refused.toolCallId)
    expect(shown.length).toBeGreaterThan(0)
    for (const call of shown) expect(['rejected', 'failed', 'cancelled']).toContain(call.status)
    expect(thread.entries.at(-1)).toMatchObject({ kind: 'stop', stopReason: 'cancelled' })
    expect(said(thread.entries).at(-1)).toBe(`user: And this one.\nSHELL touch ${rejected}`)
    expect(entriesOf(thread, 'error')).toEqual([])
    expect((await run.host.request('sessions.states', {})).find((s) => s.id === id)?.permissions ?? []).toEqual([])

    // The user says what to do instead, and the session goes on.
    expect((await run.host.request('sessions.prompt', { id, text: 'Never mind that one' })).stopReason).toBe('end_turn')
    expect(said(await entries(id)).slice(-2)).toEqual(['user: Never mind that one', 'assistant: Echo: Never mind that one'])
    expect(existsSync(rejected)).toBe(false)
  }, 90_000)

  it('edits an existing file (the diff shows in the tool call) and writes a new one', async () => {
    const id = await newSession()
    const existing = join(run.project, 'notes.md')
    await writeFile(existing, 'old line\n')
    const turn = run.host.request('sessions.prompt', { id, text: `Update the notes.\nEDIT ${existing} old line => new line` })
    // Codex 2.x titles every patch "Edit files": the card's tool call (Show in thread) has the file and its diff.
    const asked = await answer(id, 'allow')
    expect(asked.title).toBe('Edit files')
    expect((await turn).stopReason).toBe('end_turn')
    expect(await readFile(existing, 'utf8')).toBe('new line\n')
    const [edit] = await toolCalls(id)
    expect(edit).toMatchObject({ toolCallId: asked.toolCallId, toolKind: 'edit', status: 'completed' })
    expect(edit?.content).toContainEqual(expect.objectContaining({ type: 'diff', path: existing, oldText: 'old line\n', newText: 'new line\n' }))
    expect(said(await entries(id)).at(-1)).toBe('assistant: Done: apply_patch finished.')

    const fresh = join(run.project, 'fresh.md')
    const second = run.host.request('sessions.prompt', { id, text: `Now a new file.\nADD ${fresh} brand new` })
    expect((await answer(id, 'allow')).title).toBe('Edit files')
    expect((await second).stopReason).toBe('end_turn')
    const calls = await toolCalls(id)
    expect(calls).toHaveLength(2)
    const write = calls[1]
    expect(write).toMatchObject({ toolKind: 'edit', status: 'completed' })
    expect(write?.content).toContainEqual(expect.objectContaining({ type: 'diff', path: fresh, newText: 'brand new\n' }))
    expect(existsSync(fresh) ? await readFile(fresh, 'utf8') : '(no file)').toBe('brand new\n')
  }, 90_000)

  it('cancel mid-stream ends the turn with what was streamed; cancel during a permission ends the tool call', async () => {
    const id = await newSession()
    const slow = run.host.request('sessions.prompt', { id, text: 'SLOW' })
    await waitUntil('some of the slow reply', async () => said(await entries(id)).some((l) => l.includes('slow3 ')), { timeoutMs: 30_000 })
    await run.host.request('sessions.cancel', { id })
    expect((await slow).stopReason).toBe('cancelled')
    const partial = said(await entries(id)).at(-1) ?? ''
    expect(partial).toMatch(/^assistant: slow1 slow2 slow3 /)
    expect(partial).not.toContain('slow60')
    expect((await entries(id)).at(-1)).toMatchObject({ kind: 'stop', stopReason: 'cancelled' })
    // Nothing more arrives after the cancel.
    await new Promise((r) => setTimeout(r, 1_000))
    expect(said(await entries(id)).at(-1)).toBe(partial)

    // A shell command waiting for permission when the user cancels.
    const never = join(run.project, 'never.txt')
    const waiting = run.host.request('sessions.prompt', { id, text: `SHELL touch ${never}` })
    const permission = await pendingPermission(id)
    await run.host.request('sessions.cancel', { id })
    expect((await waiting).stopReason).toBe('cancelled')
    expect((await run.host.request('sessions.states', {})).find((s) => s.id === id)?.permissions ?? []).toEqual([])
    expect(existsSync(never)).toBe(false)
    expect(entriesOf(fold((await run.host.request('sessions.open', { id })).records), 'permission')).toMatchObject([
      { title: expect.stringContaining(`touch ${never}`), allowed: false }
    ])
    const cancelledCall = async () => (await toolCalls(id)).find((c) => c.toolCallId === permission.toolCallId)
    expect(await cancelledCall(), JSON.stringify(await toolCalls(id))).toMatchObject({ status: 'cancelled' })

    // The session goes on.
    expect((await run.host.request('sessions.prompt', { id, text: 'Still there?' })).stopReason).toBe('end_turn')
    expect(said(await entries(id)).slice(-2)).toEqual(['user: Still there?', 'assistant: Echo: Still there?'])
    expect(await cancelledCall()).toMatchObject({ status: 'cancelled' })

    // And so it reads after a restart.
    await run.host.close()
    run.host = await openHost(run.dataDir)
    expect(await cancelledCall()).toMatchObject({ status: 'cancelled' })
    expect((await run.host.request('sessions.prompt', { id, text: 'After the restart?' })).stopReason).toBe('end_turn')
    expect(said(await entries(id)).slice(-2)).toEqual(['user: After the restart?', 'assistant: Echo: After the restart?'])
    expect(await cancelledCall()).toMatchObject({ status: 'cancelled' })
  }, 120_000)

  it('an API failure ends the turn with its reason shown', async () => {
    const id = await newSession()
    const errorsOf = async () => (await entries(id)).filter((e) => e.kind === 'error') as Extract<ThreadEntry, { kind: 'error' }>[]
    const result = await run.host.handle('sessions.prompt', { id, text: 'FAIL400' })
    expect(result).toMatchObject({ ok: false, error: { message: expect.stringContaining(FAIL400_MESSAGE) } })
    const errors = await errorsOf()
    expect(errors, JSON.stringify({ result, entries: await entries(id) })).toHaveLength(1)
    expect(errors[0]?.message).toBe(`Codex failed the turn: ${FAIL400_MESSAGE}`)
    // The reason as a sentence, not the API's JSON body that Codex passes on as its reply's text.
    expect((await entries(id)).at(-1)).toMatchObject({ kind: 'error' })
    expect(said(await entries(id)).at(-1)).toBe('user: FAIL400')
    expect((await run.host.request('sessions.states', {})).find((s) => s.id === id)).toMatchObject({ status: 'error', errorInThread: true })
    // One attempt (request_max_retries and stream_max_retries 0), then the session goes on.
    expect(run.api.main().filter((r) => textOfItem(r.body.input?.at(-1)).includes('FAIL400'))).toHaveLength(1)
    expect((await run.host.request('sessions.prompt', { id, text: 'And now?' })).stopReason).toBe('end_turn')
    expect(said(await entries(id)).slice(-2)).toEqual(['user: And now?', 'assistant: Echo: And now?'])

    // An HTTP 500: Codex itself puts its own words in place of the body ("We're currently experiencing
    // high demand", its InternalServerError), so that is the reason there is to show, once.
    const failed = await run.host.handle('sessions.prompt', { id, text: 'FAIL500' })
    expect(failed).toMatchObject({ ok: false })
    const after = await errorsOf()
    expect(after).toHaveLength(2)
    expect(after[1]?.message).toMatch(/^Codex failed the turn: .*experiencing high demand/)
    expect(said(await entries(id)).at(-1)).toBe('user: FAIL500')
    expect(run.api.main().filter((r) => textOfItem(r.body.input?.at(-1)).includes('FAIL500'))).toHaveLength(1)
    expect((await run.host.request('sessions.prompt', { id, text: 'And again?' })).stopReason).toBe('end_turn')
    expect(said(await entries(id)).slice(-2)).toEqual(['user: And again?', 'assistant: Echo: And again?'])

    // Reopened after a restart, the failures read the same.
    const before = await entries(id)
    await run.host.close()
    run.host = await openHost(run.dataDir)
    expect(await entries(id)).toEqual(before)
    expect((await errorsOf()).map((e) => e.message)).toEqual([`Codex failed the turn: ${FAIL400_MESSAGE}`, after[1]?.message])
    expect(said(await entries(id))).toEqual([
      'user: FAIL400',
      'user: And now?',
      'assistant: Echo: And now?',
      'user: FAIL500',
      'user: And again?',
      'assistant: Echo: And again?'
    ])
  }, 120_000)

  it('continues the conversation after a restart, and after a second one', async () => {
    const id = await newSession()
    const notes = join(run.project, 'notes.md')
    await writeFile(notes, 'draft\n')
    expect((await run.host.request('sessions.prompt', { id, text: 'First message' })).stopReason).toBe('end_turn')
    const turn = run.host.request('sessions.prompt', { id, text: `Second message\nEDIT ${notes} draft => final` })
    await answer(id, 'allow')
    expect((await turn).stopReason).toBe('end_turn')
    const before = said(await entries(id))
    expect(before).toEqual([
      'user: First message',
      'assistant: Echo: First message',
      `user: Second message\nEDIT ${notes} draft => final`,
      'assistant: Done: apply_patch finished.'
    ])

    for (const [restart, text] of [
      [1, 'Third message'],
      [2, 'Fourth message']
    ] as const) {
      await run.host.close()
      run.host = await openHost(run.dataDir)
      const result = await run.host.handle('sessions.prompt', { id, text })
      expect(result, `restart ${restart}: ${JSON.stringify(result)}`).toMatchObject({ ok: true, result: { stopReason: 'end_turn' } })
      const list = await entries(id)
      // What the user sees: everything said before, in order, then the new message and its own reply, last.
      const shown = said(list)
      expect(shown, `restart ${restart}`).toEqual([...before, `user: ${text}`, `assistant: Echo: ${text}`])
      expect.soft(list.filter((e) => e.kind === 'error' || e.kind === 'notice' || e.kind === 'unsupported')).toEqual([])
      const newPrompt = list.findIndex((e) => e.kind === 'user' && e.text === text)
      const calls = list.flatMap((e, i) => (e.kind === 'tool_call' ? [{ i, ...e }] : []))
      expect.soft(calls.map((c) => c.status)).toEqual(['completed'])
      expect.soft(calls.every((c) => c.i < newPrompt)).toBe(true)
      expect.soft(calls[0]?.content).toContainEqual(expect.objectContaining({ type: 'diff', path: notes, oldText: 'draft\n', newText: 'final\n' }))
      // Codex really continued its conversation: the model was shown the earlier turns.
      expect(lastInput()).toContain('First message')
      expect(lastInput()).toContain('Done: apply_patch finished.')
      before.push(`user: ${text}`, `assistant: Echo: ${text}`)
    }
  }, 150_000)

  it('imports a conversation Codex has from elsewhere and continues it (session/load replays it)', async () => {
    const first = await newSession()
    const notes = join(run.project, 'notes.md')
    await writeFile(notes, 'draft\n')
    expect((await run.host.request('sessions.prompt', { id: first, text: 'First message' })).stopReason).toBe('end_turn')
    const turn = run.host.request('sessions.prompt', { id: first, text: `Second message\nEDIT ${notes} draft => final` })
    await answer(first, 'allow')
    expect((await turn).stopReason).toBe('end_turn')

    // Another Switchboard (a new data folder) with the same Codex home lists it and continues it.
    await run.host.close()
    run.host = await openHost(join(run.root, 'data-elsewhere'))
    const { agentId, projectId } = await addCodex()
    const { imported } = await run.host.request('sessions.import', { projectId, agentId })
    expect(imported).toHaveLength(1)
    const id = imported[0]!.id
    expect(await entries(id)).toEqual([])
    const result = await run.host.handle('sessions.prompt', { id, text: 'Third message' })
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, result: { stopReason: 'end_turn' } })
    const list = await entries(id)
    expect(said(list)).toEqual([
      'user: First message',
      'assistant: Echo: First message',
      `user: Second message\nEDIT ${notes} draft => final`,
      'assistant: Done: apply_patch finished.',
      'user: Third message',
      'assistant: Echo: Third message'
    ])
    // The edit replayed as Codex rebuilds it from its rollout (its diff without the line ends).
    const calls = list.filter((e): e is ToolCallEntry => e.kind === 'tool_call')
    expect(calls).toMatchObject([{ toolKind: 'edit', status: 'completed' }])
    expect(calls[0]?.content).toContainEqual(expect.objectContaining({ type: 'diff', path: notes, newText: expect.stringMatching(/^final\n?$/) }))
    expect(list.filter((e) => e.kind === 'error' || e.kind === 'notice' || e.kind === 'unsupported')).toEqual([])
    expect(list.at(-1)).toMatchObject({ kind: 'stop', stopReason: 'end_turn' })
    // Codex continued that conversation: the model was shown it.
    expect(lastInput()).toContain('First message')
    expect(lastInput()).toContain('Done: apply_patch finished.')
  }, 120_000)
})
