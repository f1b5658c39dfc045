import { describe, expect, it } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { applyRecord, applyRecordAt, applyRecordsAt, foldTail } from '../../shared/thread-fold'
import { createThread, modelsShown, modesShown, turnUsageOf } from '../../shared/thread'
import type { TranscriptRecord } from '../../shared/transcript'

const at = '2026-01-01T00:00:00.000Z'
const update = (u: SessionUpdate): TranscriptRecord => ({ t: 'update', at, update: u })
const text = (t: string) => ({ type: 'text' as const, text: t })

function fold(records: TranscriptRecord[]) {
  const thread = createThread()
  for (const r of records) applyRecord(thread, r)
  return thread
}

describe('the thread fold', () => {
  it('joins chunks of one message by messageId and starts a new entry when the id changes', () => {
    const thread = fold([
      { t: 'prompt', at, content: [text('hi')] },
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'a', content: text('Hel') }),
      update({ sessionUpdate: 'agent_thought_chunk', messageId: 't', content: text('hmm') }),
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'a', content: text('lo') }),
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'b', content: text('Again') })
    ])
    expect(thread.entries.map((e) => [e.kind, 'text' in e ? e.text : ''])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello'],
      ['thought', 'hmm'],
      ['assistant', 'Again']
    ])
  })

  it('folds a batch of records, its runs of chunks appended at once, to the same thread as one record at a time', () => {
    const chunk = (kind: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk', t: string, messageId?: string) => {
      const u: SessionUpdate = { sessionUpdate: kind, content: text(t), ...(messageId ? { messageId } : {}) }
      return update(u)
    }
    const records: TranscriptRecord[] = [
      { t: 'prompt', at, content: [text('hi')] },
      chunk('agent_message_chunk', 'Hel', 'a'),
      chunk('agent_message_chunk', 'lo ', 'a'),
      chunk('agent_message_chunk', 'there', 'a'),
      chunk('agent_thought_chunk', 'hm', 't'),
      chunk('agent_thought_chunk', 'm', 't'),
      chunk('agent_message_chunk', '!', 'a'),
      chunk('agent_message_chunk', 'Next', 'b'),
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'b', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } }),
      chunk('agent_message_chunk', ' and', 'b'),
      // Without ids (as Gemini CLI sends them): one entry per run of a kind, named after the run's first record.
      chunk('agent_message_chunk', 'no '),
      chunk('agent_message_chunk', 'id'),
      chunk('agent_thought_chunk', 'think'),
      chunk('agent_message_chunk', 'again'),
      chunk('user_message_chunk', 'replayed '),
      chunk('user_message_chunk', 'prompt'),
      { t: 'stop', at, stopReason: 'end_turn' }
    ]
    const one = createThread()
    records.forEach((record, i) => applyRecordAt(one, record, 10 + i))
    const batch = createThread()
    applyRecordsAt(batch, records, 10)
    expect(batch.entries).toEqual(one.entries)
    expect(batch.entries.map((e) => [e.id, 'text' in e ? e.text : ''])).toEqual([
      ['r10', 'hi'],
      ['assistant:a', 'Hello there!'],
      ['thought:t', 'hmm'],
      ['assistant:b', 'Next[image] and'],
      // A chunk without an id after a message that had one starts its own (issue 36: not glued to the reply).
      ['r20', 'no id'],
      ['r22', 'think'],
      ['r23', 'again'],
      ['r24', 'replayed prompt'],
      ['r26', '']
    ])
  })

  it('starts a new message when a messageId of an earlier turn comes again (an agent restarted, counting from 1), live and reopened alike', () => {
    const chunk = (kind: 'agent_message_chunk' | 'agent_thought_chunk', t: string, messageId: string) =>
      update({ sessionUpdate: kind, content: text(t), messageId })
    const records: TranscriptRecord[] = [
      { t: 'prompt', at, content: [text('first')] },
      chunk('agent_thought_chunk', 'thinking once', '1'),
      chunk('agent_message_chunk', 'First ', '1'),
      chunk('agent_message_chunk', 'answer', '1'),
      { t: 'stop', at, stopReason: 'end_turn' },
      { t: 'prompt', at, content: [text('second')] },
      chunk('agent_thought_chunk', 'thinking again', '1'),
      chunk('agent_message_chunk', 'Second ', '1'),
      chunk('agent_message_chunk', 'answer', '1'),
      { t: 'stop', at, stopReason: 'end_turn' }
    ]
    // Live: one record at a time as they are written; reopened: the transcript's tail folded at once.
    const live = createThread()
    records.forEach((record, i) => applyRecordAt(live, record, i))
    const reopened = foldTail(records, records.length)
    expect(reopened.entries).toEqual(live.entries)
    expect(live.entries.map((e) => [e.kind, 'text' in e ? e.text : ''])).toEqual([
      ['user', 'first'],
      ['thought', 'thinking once'],
      ['assistant', 'First answer'],
      ['stop', ''],
      ['user', 'second'],
      ['thought', 'thinking again'],
      ['assistant', 'Second answer'],
      ['stop', '']
    ])
    const ids = live.entries.map((e) => e.id)
    expect(new Set(ids).size).toBe(ids.length)
    // One record at a time without seqs (the plain fold) agrees too.
    expect(fold(records).entries.map((e) => [e.kind, 'text' in e ? e.text : ''])).toEqual(
      live.entries.map((e) => [e.kind, 'text' in e ? e.text : ''])
    )
  })

  it('appends chunks without messageId to the last entry of the same kind only', () => {
    const thread = fold([
      update({ sessionUpdate: 'agent_message_chunk', content: text('one ') }),
      update({ sessionUpdate: 'agent_message_chunk', content: text('two') }),
      { t: 'stop', at, stopReason: 'end_turn' },
      update({ sessionUpdate: 'agent_message_chunk', content: text('three') })
    ])
    expect(thread.entries.map((e) => e.kind)).toEqual(['assistant', 'stop', 'assistant'])
    expect(thread.entries[0]).toMatchObject({ text: 'one two' })
  })

  it("a cancelled turn's unfinished tool calls read cancelled, a failed turn's failed, a call that never ran cancelled; finished calls untouched", () => {
    const call = (id: string, status: 'pending' | 'in_progress' | 'completed') =>
      update({ sessionUpdate: 'tool_call', toolCallId: id, title: id, kind: 'edit', status })
    const thread = fold([
      { t: 'prompt', at, content: [text('one')] },
      call('early', 'pending'),
      call('working', 'in_progress'),
      { t: 'stop', at, stopReason: 'end_turn' },
      { t: 'prompt', at, content: [text('two')] },
      call('asked', 'pending'),
      call('running', 'in_progress'),
      call('done', 'completed'),
      { t: 'stop', at, stopReason: 'cancelled' },
      { t: 'prompt', at, content: [text('three')] },
      call('broken', 'in_progress'),
      // A refusal mid-turn (a path outside the project) is not the turn's end: the calls still run.
      { t: 'error', at, message: 'The agent asked to read a path outside the project.' },
      call('still', 'in_progress'),
      { t: 'error', at, message: 'Codex failed the turn', endsTurn: true },
      { t: 'prompt', at, content: [text('four')] },
      call('later', 'in_progress'),
      { t: 'error', at, message: 'The agent asked to write a path outside the project.' }
    ])
    const status = Object.fromEntries(thread.entries.flatMap((e) => (e.kind === 'tool_call' ? [[e.toolCallId, e.status]] : [])))
    expect(status).toEqual({
      early: 'cancelled',
      working: 'in_progress',
      asked: 'cancelled',
      running: 'cancelled',
      done: 'completed',
      broken: 'failed',
      still: 'failed',
      later: 'in_progress'
    })
  })

  it("a failure the agent streamed as text and then failed the turn with is shown once, as the error (Claude Code's API errors)", () => {
    const said = 'API Error: 500 {"type":"error","error":{"type":"api_error","message":"the model is overloaded"}}'
    const thread = fold([
      { t: 'prompt', at, content: [text('hi')] },
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: text('Working on it.') }),
      update({ sessionUpdate: 'tool_call', toolCallId: 't', title: 'Read', kind: 'read', status: 'completed' }),
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'm2', content: text(said) }),
      { t: 'error', at, message: `Claude Code failed the turn: Internal error: ${said}`, endsTurn: true }
    ])
    expect(thread.entries.map((e) => e.kind)).toEqual(['user', 'assistant', 'tool_call', 'error'])
    expect(thread.keyed.has('assistant:m2')).toBe(false)
    // Text that is not the error stays.
    const other = fold([
      { t: 'prompt', at, content: [text('hi')] },
      update({ sessionUpdate: 'agent_message_chunk', content: text('Here is half an answer') }),
      { t: 'error', at, message: 'Codex failed the turn: Internal error: stream disconnected', endsTurn: true }
    ])
    expect(other.entries.map((e) => e.kind)).toEqual(['user', 'assistant', 'error'])
  })

  it("a failure the Host read from the agent's reply (Codex 2.x's HTTP error body, its echo) is taken off the reply, live and reopened", () => {
    const body = '{"error":{"message":"The model refuses this.","type":"invalid_request_error","code":null,"param":null}}\n\n'
    const failed = (before: ReturnType<typeof update>[]) =>
      fold([
        { t: 'prompt', at, content: [text('hi')] },
        ...before,
        update({ sessionUpdate: 'agent_message_chunk', content: text(body) }),
        { t: 'error', at, message: 'Codex failed the turn: The model refuses this.', endsTurn: true, echo: body }
      ])
    expect(failed([]).entries.map((e) => e.kind)).toEqual(['user', 'error'])
    // A reply of its own before the failure stays; so does a warning the failure's text was streamed after.
    const replied = failed([update({ sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: text('Half an answer') })])
    expect(replied.entries.map((e) => (e.kind === 'assistant' ? e.text : e.kind))).toEqual(['user', 'Half an answer', 'error'])
    const warned = failed([update({ sessionUpdate: 'agent_message_chunk', content: text('Warning: model metadata not found.\n\n') })])
    expect(warned.entries.map((e) => (e.kind === 'assistant' ? e.text : e.kind))).toEqual(['user', 'Warning: model metadata not found.', 'error'])
  })

  it('a usage update without a cost (as Claude Code sends while a turn runs) keeps the last cost', () => {
    const usage = (used: number, cost?: number) =>
      update({ sessionUpdate: 'usage_update', used, size: 1000, ...(cost === undefined ? {} : { cost: { amount: cost, currency: 'USD' } }) })
    const thread = fold([usage(10, 0.5), usage(20)])
    expect(thread.usage).toEqual({ used: 20, size: 1000, cost: { amount: 0.5, currency: 'USD' } })
    const later = fold([usage(10, 0.5), usage(20), usage(30, 0.75)])
    expect(later.usage?.cost).toEqual({ amount: 0.75, currency: 'USD' })
  })

  it("a prompt response's usage is kept with the turn's end; a malformed one is left out", () => {
    const response = {
      stopReason: 'end_turn',
      usage: { totalTokens: 30, inputTokens: 12, outputTokens: 8, cachedReadTokens: 10, thoughtTokens: null }
    }
    const usage = turnUsageOf(response)
    expect(usage).toEqual({ totalTokens: 30, inputTokens: 12, outputTokens: 8, cachedReadTokens: 10 })
    expect(turnUsageOf({ stopReason: 'end_turn', usage: { inputTokens: 'many' } })).toBeUndefined()
    const thread = fold([{ t: 'stop', at, stopReason: 'end_turn', usage }])
    expect(thread.entries[0]).toMatchObject({ kind: 'stop', usage: { inputTokens: 12, cachedReadTokens: 10 } })
  })

  it('one Mode selector: a config option of category mode supersedes the modes list (and one of category model the models)', () => {
    const modes = { currentModeId: 'default', availableModes: [{ id: 'default', name: 'Default' }] }
    const models = { currentModelId: 'm', availableModels: [{ modelId: 'm', name: 'M' }] }
    const option = (category: string) => ({
      id: category,
      name: category,
      category,
      type: 'select' as const,
      currentValue: 'a',
      options: [{ value: 'a', name: 'A' }]
    })
    expect(modesShown({ modes })).toBe(modes)
    expect(modesShown({ modes, configOptions: [option('mode')] })).toBeUndefined()
    expect(modesShown({ modes, configOptions: [option('model')] })).toBe(modes)
    expect(modelsShown({ models, configOptions: [option('model')] })).toBeUndefined()
    expect(modelsShown({ models, configOptions: [option('mode')] })).toBe(models)
  })

  it('updates a tool call in place by toolCallId, keeping fields an update leaves out', () => {
    const thread = fold([
      update({ sessionUpdate: 'tool_call', toolCallId: 'x', title: 'Read file', kind: 'read', status: 'pending' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'x', status: 'completed', content: [{ type: 'content', content: text('ok') }] })
    ])
    expect(thread.entries).toHaveLength(1)
    expect(thread.entries[0]).toMatchObject({ kind: 'tool_call', title: 'Read file', toolKind: 'read', status: 'completed' })
  })

  it('replaces the plan within a turn and clears everything on reset', () => {
    const plan = (s: 'pending' | 'completed') => update({ sessionUpdate: 'plan', entries: [{ content: 'step', priority: 'high', status: s }] })
    const thread = fold([plan('pending'), plan('completed')])
    expect(thread.entries).toHaveLength(1)
    expect(thread.entries[0]).toMatchObject({ kind: 'plan', entries: [{ status: 'completed' }] })
    applyRecord(thread, { t: 'reset', at, reason: 'load' })
    expect(thread.entries).toEqual([])
  })

  it('shows nothing for session_info_update (the title belongs to the session record)', () => {
    const thread = fold([update({ sessionUpdate: 'session_info_update', title: '  Fix the build ' })])
    expect(thread.entries).toEqual([])
  })
})

describe('the fold never breaks on the rest of the update kinds', () => {
  it('keeps config options, usage, notices and compactions', () => {
    const thread = fold([
      update({
        sessionUpdate: 'config_option_update',
        configOptions: [{ id: 'm', name: 'Model', type: 'select', currentValue: 'a', options: [{ value: 'a', name: 'A' }] }]
      }),
      update({ sessionUpdate: 'usage_update', used: 5, size: 10 }),
      update({ sessionUpdate: 'notice', severity: 'warning', title: 'Rate limited', description: 'retrying' }),
      update(loose({ sessionUpdate: 'compaction_update', compactionId: 'c1', status: 'completed' })),
      update(loose({ sessionUpdate: 'compaction_summary_chunk', compactionId: 'c1', content: text('summary') })),
      update({ sessionUpdate: 'current_mode_update', currentModeId: 'code' })
    ])
    expect(thread.configOptions?.[0].currentValue).toBe('a')
    expect(thread.usage).toEqual({ used: 5, size: 10, cost: undefined })
    expect(thread.modes).toEqual({ currentModeId: 'code', availableModes: [] })
    expect(thread.entries).toEqual([
      { kind: 'notice', id: 'e0', severity: 'warning', title: 'Rate limited', description: 'retrying' },
      { kind: 'compaction', id: 'compaction:c1', compactionId: 'c1', status: 'completed', summary: 'summary' }
    ])
  })
})

describe("an agent's notices are notices, never its reply (issue 36)", () => {
  it("Claude Code's informational chunk (no messageId, after a message that had one) is a notice with its level, not glued to the reply", () => {
    const thread = fold([
      { t: 'prompt', at, content: [text('go')] },
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: text('Done: `code`.') }),
      update({
        sessionUpdate: 'agent_message_chunk',
        content: text("**Warning:** We're changing auto mode.\nRead more in the docs."),
        _meta: { claudeCode: { kind: 'informational', level: 'warning' } }
      }),
      update({
        sessionUpdate: 'agent_message_chunk',
        content: text('**Notice:** Hook blocked'),
        _meta: { claudeCode: { kind: 'informational', level: 'notice' } }
      })
    ])
    expect(thread.entries).toEqual([
      expect.objectContaining({ kind: 'user', text: 'go' }),
      { kind: 'assistant', id: 'assistant:m1', text: 'Done: `code`.' },
      { kind: 'notice', id: 'e1', severity: 'warning', title: "We're changing auto mode.", description: 'Read more in the docs.' },
      { kind: 'notice', id: 'e2', severity: 'info', title: 'Hook blocked' }
    ])
  })

  it('a chunk without a messageId after a message that had one starts a message of its own; chunks without ids still join each other', () => {
    const thread = fold([
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: text('First.') }),
      update({ sessionUpdate: 'agent_message_chunk', content: text('Second') }),
      update({ sessionUpdate: 'agent_message_chunk', content: text(' part.') })
    ])
    expect(thread.entries.map((e) => ('text' in e ? e.text : e.kind))).toEqual(['First.', 'Second part.'])
  })

  it('a compaction is one entry, patched in place: its summary streams, a null summary clears it, an error is kept', () => {
    const thread = fold([
      { t: 'prompt', at, content: [text('/compact')] },
      update(loose({ sessionUpdate: 'compaction_update', compactionId: 'k', status: 'in_progress' })),
      update(loose({ sessionUpdate: 'compaction_summary_chunk', compactionId: 'k', content: text('We fixed ') })),
      update(loose({ sessionUpdate: 'compaction_summary_chunk', compactionId: 'k', content: text('the build.') })),
      update({ sessionUpdate: 'agent_message_chunk', messageId: 'm', content: text('ok') }),
      update(loose({ sessionUpdate: 'compaction_update', compactionId: 'k', status: 'completed' })),
      update(loose({ sessionUpdate: 'compaction_update', compactionId: 'x', status: 'failed', summary: null, error: 'context too small' }))
    ])
    expect(thread.entries.slice(1)).toEqual([
      { kind: 'compaction', id: 'compaction:k', compactionId: 'k', status: 'completed', summary: 'We fixed the build.' },
      { kind: 'assistant', id: 'assistant:m', text: 'ok' },
      { kind: 'compaction', id: 'compaction:x', compactionId: 'x', status: 'failed', summary: '', error: 'context too small' }
    ])
  })
})

describe('cancel reads as cancel (issue 36)', () => {
  const call = (toolCallId: string) =>
    update({ sessionUpdate: 'tool_call', toolCallId, title: `Run ${toolCallId}`, kind: 'execute', status: 'pending' })
  const failed = (toolCallId: string, meta?: Record<string, unknown>) =>
    update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed', ...(meta ? { _meta: meta } : {}) })
  const answered = (toolCallId: string, optionId: string | null, optionKind?: string): TranscriptRecord => ({
    t: 'permission',
    at,
    title: `Run ${toolCallId}`,
    optionId,
    ...(optionKind ? { optionKind, optionName: optionKind } : {}),
    remembered: false,
    toolCallId
  })

  it("a call whose permission the user rejected, or that was dismissed by a cancel, shows rejected or cancelled although the agent ends it failed; others keep the agent's status", () => {
    const thread = fold([
      { t: 'prompt', at, content: [text('go')] },
      call('a'),
      answered('a', 'reject', 'reject_once'),
      failed('a'),
      call('b'),
      answered('b', null),
      failed('b'),
      call('c'),
      answered('c', 'allow', 'allow_once'),
      failed('c'),
      call('d'),
      failed('d'),
      { t: 'stop', at, stopReason: 'cancelled' }
    ])
    const statuses = Object.fromEntries(thread.entries.flatMap((e) => (e.kind === 'tool_call' ? [[e.toolCallId, e.status]] : [])))
    expect(statuses).toEqual({ a: 'rejected', b: 'cancelled', c: 'failed', d: 'failed' })
  })

  it('a call the agent already ended failed before the answer was recorded shows so once the answer comes', () => {
    const thread = fold([call('a'), failed('a'), answered('a', 'reject', 'reject_once')])
    expect(thread.entries.find((e) => e.kind === 'tool_call')).toMatchObject({ status: 'rejected' })
  })

  it("Claude Code's nonExecutionKind: user-rejected and rule refusals read rejected, interrupted and cancelled read cancelled", () => {
    const thread = fold([
      call('u'),
      failed('u', { claudeCode: { nonExecutionKind: 'user-rejected' } }),
      call('r'),
      failed('r', { claudeCode: { nonExecutionKind: 'permission-rule' } }),
      call('i'),
      failed('i', { claudeCode: { nonExecutionKind: 'interrupted' } }),
      call('k'),
      failed('k', { claudeCode: { nonExecutionKind: 'cancelled' } }),
      call('e'),
      failed('e', { claudeCode: { nonExecutionKind: 'something-new' } })
    ])
    const statuses = Object.fromEntries(thread.entries.flatMap((e) => (e.kind === 'tool_call' ? [[e.toolCallId, e.status]] : [])))
    expect(statuses).toEqual({ u: 'rejected', r: 'rejected', i: 'cancelled', k: 'cancelled', e: 'failed' })
  })
})

/** An update of a kind the SDK's types do not list (the fold must still take it). */
function loose(update: Record<string, unknown>): never {
  return update as never
}
