import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { currentModeOf, permissionSkipOf } from '../../shared/modes'
import type { ThreadEntry, ToolCallEntry } from '../../shared/thread'
import { entriesOf, fold, openHost, waitUntil } from '../helpers'
import { said, threadReader } from '../real/thread'
import { FAIL500_MESSAGE, textOfContent } from '../real/fake-gemini'
import { addGeminiAgent, backdateGeminiSessions, geminiSettings, offlineGeminiPerTest } from '../real/gemini'

/**
 * Real Gemini CLI (from npm, `--acp`) running whole turns through the Host,
 * offline, against a local fake of Google's Gemini API (test/real/fake-gemini.ts):
 * what a user sees of streamed text, tool calls and their permissions, edits,
 * cancelling, API failures, and a conversation continued after restarts. How
 * Gemini CLI is pointed at the fake: test/real/gemini.ts.
 */

const run = offlineGeminiPerTest()
const { entries, toolCalls, pendingPermission, answer } = threadReader(() => run.host, 'Gemini CLI')

/** Adds Gemini CLI pointed at the fake, the project, and a new session in it. */
async function newSession(): Promise<string> {
  const { agentId, projectId } = await addGemini()
  return (await run.host.request('sessions.new', { projectId, agentId })).id
}

/** Gemini CLI pointed at the fake (with the key in its environment unless `withKey` is false), and the project. */
async function addGemini(withKey = true): Promise<{ agentId: string; projectId: string }> {
  const agentId = await addGeminiAgent(run, withKey)
  const projectId = (await run.host.request('projects.add', { cwd: run.project })).id
  return { agentId, projectId }
}

/** The last model request Gemini CLI streamed: what the model was shown. */
function lastStreamed(): string {
  const last = run.api.streamed().at(-1)
  return JSON.stringify(last?.body.contents ?? [])
}

describe('real Gemini CLI through the Host, offline against a fake Gemini API', () => {
  it('signs in with an API key typed in the app (its method asks for one), given again to a new process', async () => {
    await writeFile(
      join(run.home, '.gemini', 'settings.json'),
      JSON.stringify({ ...geminiSettings(), security: { folderTrust: { enabled: false } } }, null, 2)
    )
    const { agentId, projectId } = await addGemini(false)
    await run.host.request('agents.restart', { agentId })
    const method = (await run.host.request('agents.states', {}))
      .find((s) => s.agentId === agentId)
      ?.authMethods?.find((m) => m.id === 'gemini-api-key')
    expect(method).toMatchObject({ apiKey: { provider: 'google' } })
    await run.host.request('agents.authenticate', { agentId, methodId: 'gemini-api-key', values: { 'api-key': 'key-typed-in-the-app' } })
    const id = (await run.host.request('sessions.new', { projectId, agentId })).id
    expect(await run.host.request('sessions.prompt', { id, text: 'Hello with my key' })).toEqual({ stopReason: 'end_turn' })
    expect(run.api.streamed().at(-1)?.apiKey).toBe('key-typed-in-the-app')
    // A new process of the agent is given the key again from the secret store (a new session: reloading one
    // within the minute it started trips Gemini CLI's own file naming, see the restart test).
    await run.host.request('agents.restart', { agentId })
    const next = (await run.host.request('sessions.new', { projectId, agentId })).id
    expect(await run.host.request('sessions.prompt', { id: next, text: 'Still me' })).toEqual({ stopReason: 'end_turn' })
    expect(run.api.streamed().at(-1)?.apiKey).toBe('key-typed-in-the-app')
    // The Check's run apart is given the key too: signed in, not reported as needing sign-in.
    const report = await run.host.request('agents.check', { agentId })
    expect(report.lines.find((l) => l.id === 'session/new')).toMatchObject({ outcome: 'worked' })
    // What Gemini CLI does not announce is not offered, not failed.
    expect(report.lines.find((l) => l.id === 'session/fork')).toMatchObject({ announced: false, outcome: 'not offered' })
  }, 90_000)

  it('streams a text reply into one assistant entry', async () => {
    const id = await newSession()
    expect(await run.host.request('sessions.prompt', { id, text: 'Hello there, tell me a story' })).toEqual({ stopReason: 'end_turn' })
    const { records } = await run.host.request('sessions.open', { id })
    const thread = fold(records)
    expect(said(thread.entries)).toEqual(['user: Hello there, tell me a story', 'assistant: Echo: Hello there, tell me a story'])
    expect(thread.entries.at(-1)).toMatchObject({ kind: 'stop', stopReason: 'end_turn' })
    expect(entriesOf(thread, 'error')).toEqual([])
    // It came in pieces, as streamed, and the prompt reached the model.
    const chunks = records.filter((r) => r.t === 'update' && r.update.sessionUpdate === 'agent_message_chunk')
    expect(chunks.length).toBeGreaterThan(1)
    expect(textOfContent(run.api.streamed()[0]?.body.contents?.at(-1))).toContain('Hello there, tell me a story')
  }, 60_000)

  it('a shell command asks permission: allowed, it runs; rejected, it does not', async () => {
    const id = await newSession()
    // The new session is in a mode that asks (the starting mode Switchboard sets), so the command below is asked.
    const mode = currentModeOf(fold((await run.host.request('sessions.open', { id })).records))
    expect(mode).not.toBeNull()
    expect(permissionSkipOf(mode), JSON.stringify(mode)).toBeNull()
    const allowed = join(run.project, 'allowed.txt')
    const turn = run.host.request('sessions.prompt', { id, text: `Please run it.\nSHELL touch ${allowed}` })
    const permission = await answer(id, 'allow')
    expect(permission.title).toBe(`touch ${allowed}`)
    expect((await turn).stopReason).toBe('end_turn')
    expect(existsSync(allowed)).toBe(true)
    const [ran] = await toolCalls(id)
    expect(ran).toMatchObject({ toolKind: 'execute', status: 'completed', title: `touch ${allowed}` })
    expect(said(await entries(id)).at(-1)).toBe('assistant: Done: run_shell_command finished.')

    const rejected = join(run.project, 'rejected.txt')
    const second = run.host.request('sessions.prompt', { id, text: `And this one.\nSHELL touch ${rejected}` })
    const refused = await answer(id, 'reject')
    expect((await second).stopReason).toBe('end_turn')
    expect(existsSync(rejected)).toBe(false)
    const thread = fold((await run.host.request('sessions.open', { id })).records)
    expect(entriesOf(thread, 'permission')).toMatchObject([
      { title: `touch ${allowed}`, allowed: true },
      { title: `touch ${rejected}`, allowed: false }
    ])
    // Not shown as run, nor as still waiting; the model was told it was refused.
    const shown = (entriesOf(thread, 'tool_call') as ToolCallEntry[]).filter((c) => c.toolCallId === refused.toolCallId)
    for (const call of shown) expect(['failed', 'cancelled']).toContain(call.status)
    expect(said(thread.entries).at(-1)).toMatch(/^assistant: The run_shell_command call failed: .*canceled by the user/)
    expect((await run.host.request('sessions.states', {})).find((s) => s.id === id)?.permissions ?? []).toEqual([])
  }, 90_000)

  it('edits an existing file (the diff shows in the tool call) and writes a new one', async () => {
    const id = await newSession()
    const existing = join(run.project, 'notes.md')
    await writeFile(existing, 'old line\n')
    const turn = run.host.request('sessions.prompt', { id, text: `Update the notes.\nWRITE ${existing} new line\\n` })
    const permission = await answer(id, 'allow')
    expect(permission.title).toBe('Writing to notes.md')
    expect((await turn).stopReason).toBe('end_turn')
    expect(await readFile(existing, 'utf8')).toBe('new line\n')
    const [edit] = await toolCalls(id)
    expect(edit).toMatchObject({ toolKind: 'edit', status: 'completed', locations: [{ path: existing }] })
    expect(edit?.content).toContainEqual(expect.objectContaining({ type: 'diff', path: existing, oldText: 'old line\n', newText: 'new line\n' }))

    // A file that does not exist yet: Gemini CLI first reads it through the client (fs/read_text_file)
    // to see whether it exists, and must learn from the answer that it does not.
    const fresh = join(run.project, 'fresh.md')
    const second = run.host.request('sessions.prompt', { id, text: `Now a new file.\nWRITE ${fresh} brand new\\n` })
    const asked = await Promise.race([answer(id, 'allow'), second.then(() => null)])
    expect((await second).stopReason).toBe('end_turn')
    const write = (await toolCalls(id))[1]
    expect(write, 'the write_file tool call of the new file').toMatchObject({ toolKind: 'edit', status: 'completed' })
    expect(asked, 'a permission asked for the new file').toMatchObject({ title: 'Writing to fresh.md' })
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
      { title: `touch ${never}`, allowed: false }
    ])

    // The session goes on.
    expect((await run.host.request('sessions.prompt', { id, text: 'Still there?' })).stopReason).toBe('end_turn')
    expect(said(await entries(id)).slice(-2)).toEqual(['user: Still there?', 'assistant: Echo: Still there?'])

    // The tool call the permission was asked for shows as cancelled (Gemini CLI announces it only
    // in session/request_permission; it sends no tool_call update of its own before or after).
    const calls = await toolCalls(id)
    expect(
      calls.find((c) => c.toolCallId === permission.toolCallId),
      `tool call ${permission.toolCallId} among ${JSON.stringify(calls)}`
    ).toMatchObject({
      title: `touch ${never}`,
      status: 'cancelled'
    })
  }, 90_000)

  it('an API failure ends the turn with its reason shown', async () => {
    const id = await newSession()
    const result = await run.host.handle('sessions.prompt', { id, text: 'FAIL500' })
    const list = await entries(id)
    const errors = list.filter((e) => e.kind === 'error') as Extract<ThreadEntry, { kind: 'error' }>[]
    expect(errors, JSON.stringify({ result, list })).toHaveLength(1)
    expect(errors[0]?.message).toContain(FAIL500_MESSAGE)
    // One attempt (settings: general.maxAttempts 1), then the session goes on.
    expect(run.api.streamed().filter((r) => textOfContent(r.body.contents?.at(-1)).includes('FAIL500'))).toHaveLength(1)
    expect((await run.host.request('sessions.prompt', { id, text: 'And now?' })).stopReason).toBe('end_turn')
    expect(said(await entries(id)).slice(-2)).toEqual(['user: And now?', 'assistant: Echo: And now?'])
  }, 60_000)

  it('continues the conversation after a restart, and after a second one', async () => {
    const id = await newSession()
    const notes = join(run.project, 'notes.md')
    await writeFile(notes, 'draft\n')
    expect((await run.host.request('sessions.prompt', { id, text: 'First message' })).stopReason).toBe('end_turn')
    const turn = run.host.request('sessions.prompt', { id, text: `Second message\nWRITE ${notes} final\\n` })
    await answer(id, 'allow')
    expect((await turn).stopReason).toBe('end_turn')
    const before = said(await entries(id))
    expect(before).toEqual([
      'user: First message',
      'assistant: Echo: First message',
      `user: Second message\nWRITE ${notes} final\\n`,
      'assistant: Done: write_file finished.'
    ])

    // Gemini CLI cannot load a conversation within the minute it began (test/real/gemini.ts): a person restarts
    // later; this test moves the saved conversation a minute back instead, once Gemini CLI has stopped.
    for (const [restart, text] of [
      [1, 'Third message'],
      [2, 'Fourth message']
    ] as const) {
      await run.host.close()
      if (restart === 1) expect(await backdateGeminiSessions(run.home), 'the saved conversation, a minute back').not.toEqual([])
      run.host = await openHost(run.dataDir)
      const result = await run.host.handle('sessions.prompt', { id, text })
      expect(result, `restart ${restart}: ${JSON.stringify(result)}`).toMatchObject({ ok: true, result: { stopReason: 'end_turn' } })
      const list = await entries(id)
      // What the user sees: everything said before, in order (as Gemini CLI replays it: its own context block
      // and function-call markers come as chat text too), then the new message and its own reply, last.
      const shown = said(list)
      let from = 0
      for (const line of before) {
        const at = shown.findIndex(
          (s, i) => i >= from && s.startsWith(line.slice(0, line.indexOf(':') + 1)) && s.includes(line.split('\n')[0]!.replace(/^\w+: /, ''))
        )
        expect(at, `restart ${restart}: "${line}" shown, in order, in ${JSON.stringify(shown)}`).toBeGreaterThanOrEqual(from)
        from = at + 1
      }
      expect(shown.slice(-2), `restart ${restart}: the new exchange, last`).toEqual([`user: ${text}`, `assistant: Echo: ${text}`])
      expect(shown.filter((s) => s === `user: ${text}`)).toHaveLength(1)
      expect.soft(list.filter((e) => e.kind === 'error' || e.kind === 'notice' || e.kind === 'unsupported')).toEqual([])
      const newPrompt = list.findIndex((e) => e.kind === 'user' && e.text === text)
      const calls = list.flatMap((e, i) => (e.kind === 'tool_call' ? [{ i, ...e }] : []))
      expect.soft(calls.map((c) => c.status)).toEqual(['completed'])
      expect.soft(calls.every((c) => c.i < newPrompt)).toBe(true)
      expect
        .soft(calls[0]?.content)
        .toContainEqual(expect.objectContaining({ type: 'diff', path: expect.stringMatching(/notes\.md$/), oldText: 'draft\n', newText: 'final\n' }))
      // Gemini CLI really continued its conversation: the model was shown the earlier turns.
      expect(lastStreamed()).toContain('First message')
      expect(lastStreamed()).toContain('Done: write_file finished.')
      before.push(`user: ${text}`, `assistant: Echo: ${text}`)
    }
  }, 150_000)
})
