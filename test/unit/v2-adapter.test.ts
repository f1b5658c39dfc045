import { createTwoFilesPatch } from 'diff'
import { describe, expect, it } from 'vitest'
import { sessionAnswer, toV1ToolContent } from '../../electron/host/connection/v2-forms'
import { toV1PermissionRequest, V2SessionAdapter, type Adapted } from '../../electron/host/connection/v2-adapter'
import { applyRecord } from '../../shared/thread-fold'
import { createThread, type Thread, type ToolCallEntry } from '../../shared/thread'

/** Folds what the adapter made of some version 2 updates, as the Host records them. */
function foldAdapted(items: Adapted[], thread: Thread = createThread()): Thread {
  for (const item of items) {
    if (item.kind === 'update') applyRecord(thread, { t: 'update', at: '', update: item.update })
    else if (item.kind === 'unsupported') applyRecord(thread, { t: 'unsupported', at: '', raw: item.raw, reason: item.reason })
    else if (item.kind === 'terminal') {
      const { kind: _, ...terminal } = item
      applyRecord(thread, { t: 'terminal', at: '', ...terminal })
    }
  }
  return thread
}

function adaptAll(adapter: V2SessionAdapter, updates: unknown[]): Adapted[] {
  return updates.flatMap((u) => adapter.adapt(u))
}

const text = (t: string) => ({ type: 'text', text: t })

describe('ACP v2 session updates in version 1 terms', () => {
  it('streams message chunks, and turns full message upserts into chunks where they extend what is shown', () => {
    const adapter = new V2SessionAdapter()
    const items = adaptAll(adapter, [
      { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: text('Hel') },
      { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: text('lo') },
      // A snapshot of the whole message so far, longer: only the new part is added.
      { sessionUpdate: 'agent_message', messageId: 'm1', content: [text('Hello, world')] },
      // The same again: nothing.
      { sessionUpdate: 'agent_message', messageId: 'm1', content: [text('Hello, world')] },
      // A new message given whole, in two blocks.
      { sessionUpdate: 'agent_thought', messageId: 't1', content: [text('first'), text('second')] },
      // Only metadata: nothing to show.
      { sessionUpdate: 'agent_message', messageId: 'm1', _meta: { x: 1 } }
    ])
    const thread = foldAdapted(items)
    expect(thread.entries.map((e) => [e.kind, (e as { text: string }).text])).toEqual([
      ['assistant', 'Hello, world'],
      ['thought', 'first\nsecond']
    ])
    // A real rewrite cannot be shown in version 1: kept verbatim, the first version stays.
    const rewrite = adapter.adapt({ sessionUpdate: 'agent_message', messageId: 'm1', content: [text('Goodbye')] })
    expect(rewrite).toEqual([
      {
        kind: 'unsupported',
        raw: expect.objectContaining({ sessionUpdate: 'agent_message' }),
        reason: 'agent_message rewrote a message already shown; the first version stays on screen'
      }
    ])
  })

  it('does not show the echo of our own prompt twice, but shows replayed user messages', () => {
    const adapter = new V2SessionAdapter()
    adapter.promptPending = true
    expect(adapter.adapt({ sessionUpdate: 'user_message_chunk', messageId: 'u1', content: text('hi') })).toEqual([])
    adapter.promptPending = false
    // More of the same message, after the prompt was answered: still ours.
    expect(adapter.adapt({ sessionUpdate: 'user_message', messageId: 'u1', content: [text('hi')] })).toEqual([])
    // The answer's messageId, when the echo comes late.
    adapter.noteOwnMessage('u2')
    expect(adapter.adapt({ sessionUpdate: 'user_message_chunk', messageId: 'u2', content: text('again') })).toEqual([])
    // Someone else's message (a replay, another client): shown.
    expect(adapter.adapt({ sessionUpdate: 'user_message_chunk', messageId: 'u0', content: text('from before') })).toEqual([
      { kind: 'update', update: { sessionUpdate: 'user_message_chunk', messageId: 'u0', content: text('from before') } }
    ])
  })

  it('turns tool call upserts into tool_call then tool_call_update, with null resetting and content chunks appending', () => {
    const adapter = new V2SessionAdapter()
    const first = adapter.adapt({
      sessionUpdate: 'tool_call_update',
      toolCallId: 'c1',
      title: 'Edit a file',
      kind: 'edit',
      status: 'in_progress',
      capabilities: { cancel: {} }
    })
    expect(first).toEqual([
      { kind: 'update', update: { sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Edit a file', kind: 'edit', status: 'in_progress' } }
    ])
    const more = adaptAll(adapter, [
      { sessionUpdate: 'tool_call_content_chunk', toolCallId: 'c1', content: { type: 'content', content: text('line 1') } },
      { sessionUpdate: 'tool_call_content_chunk', toolCallId: 'c1', content: { type: 'content', content: text('line 2') } },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: null, locations: [{ path: '/p/a.ts', line: 3 }] }
    ])
    expect(more.map((i) => (i.kind === 'update' ? i.update : i))).toEqual([
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', content: [{ type: 'content', content: text('line 1') }] },
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: 'c1',
        content: [
          { type: 'content', content: text('line 1') },
          { type: 'content', content: text('line 2') }
        ]
      },
      { sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'pending', locations: [{ path: '/p/a.ts', line: 3 }] }
    ])
    const thread = foldAdapted([...first, ...more])
    expect(thread.entries).toHaveLength(1)
    expect(thread.entries[0]).toMatchObject({
      kind: 'tool_call',
      title: 'Edit a file',
      toolKind: 'edit',
      status: 'pending',
      locations: [{ path: '/p/a.ts', line: 3 }]
    })
    expect((thread.entries[0] as ToolCallEntry).content).toHaveLength(2)
    expect(adapter.toolKind('c1')).toBe('edit')
    // A call first seen without a title is still a card (version 1's update for an unknown call).
    expect(adapter.adapt({ sessionUpdate: 'tool_call_update', toolCallId: 'c2', status: 'pending' })).toEqual([
      { kind: 'update', update: { sessionUpdate: 'tool_call_update', toolCallId: 'c2', status: 'pending' } }
    ])
    // Content with no version 1 form is kept verbatim beside the rest.
    const odd = adapter.adapt({
      sessionUpdate: 'tool_call_update',
      toolCallId: 'c2',
      content: [
        { type: '_hologram', beam: 1 },
        { type: 'content', content: text('ok') }
      ]
    })
    expect(odd).toEqual([
      { kind: 'update', update: { sessionUpdate: 'tool_call_update', toolCallId: 'c2', content: [{ type: 'content', content: text('ok') }] } },
      {
        kind: 'unsupported',
        raw: { type: '_hologram', beam: 1 },
        reason: 'tool call content this version of Switchboard cannot show (ACP protocol version 2)'
      }
    ])
  })

  it('turns version 2 diffs (changes plus a git patch) into version 1 diffs, and names changes without patch text', () => {
    const patch = createTwoFilesPatch('a/src/app.ts', 'b/src/app.ts', 'one\ntwo\nthree\n', 'one\n2\nthree\n')
    expect(
      toV1ToolContent({ type: 'diff', changes: [{ operation: 'modify', path: '/work/src/app.ts' }], patch: { format: 'git_patch', text: patch } })
    ).toEqual([{ type: 'diff', path: '/work/src/app.ts', oldText: 'one\ntwo\nthree', newText: 'one\n2\nthree' }])
    const added = createTwoFilesPatch('/dev/null', 'b/new.txt', '', 'hello\n')
    expect(
      toV1ToolContent({
        type: 'diff',
        changes: [
          { operation: 'add', path: '/work/new.txt' },
          { operation: 'move', oldPath: '/work/old.md', path: '/work/moved.md' },
          { operation: 'delete', path: '/work/gone.txt' }
        ],
        patch: { format: 'git_patch', text: added }
      })
    ).toEqual([
      { type: 'diff', path: '/work/new.txt', oldText: null, newText: 'hello' },
      { type: 'content', content: text('Moved /work/old.md → /work/moved.md') },
      { type: 'content', content: text('Deleted /work/gone.txt') }
    ])
    expect(toV1ToolContent({ type: 'terminal', terminalId: 't1' })).toEqual([{ type: 'terminal', terminalId: 't1' }])
    expect(toV1ToolContent({ type: 'diff' })).toBeNull()
  })

  it('shows agent-owned terminals: command, output chunks (split characters too), snapshots that replace, exit', () => {
    const adapter = new V2SessionAdapter()
    const euro = Buffer.from('€', 'utf8') // three bytes, split across two chunks
    const items = adaptAll(adapter, [
      { sessionUpdate: 'terminal_update', terminalId: 't1', command: 'make', cwd: '/work' },
      {
        sessionUpdate: 'terminal_output_chunk',
        terminalId: 't1',
        data: Buffer.concat([Buffer.from('cost: '), euro.subarray(0, 1)]).toString('base64')
      },
      { sessionUpdate: 'terminal_output_chunk', terminalId: 't1', data: Buffer.concat([euro.subarray(1), Buffer.from('5\n')]).toString('base64') }
    ])
    let thread = foldAdapted(items)
    expect(thread.terminals.t1).toEqual({ command: 'make', output: 'cost: €5\n' })
    thread = foldAdapted(
      adaptAll(adapter, [
        { sessionUpdate: 'terminal_update', terminalId: 't1', output: { data: Buffer.from('redrawn\n').toString('base64') } },
        { sessionUpdate: 'terminal_output_chunk', terminalId: 't1', data: Buffer.from('more').toString('base64') },
        { sessionUpdate: 'terminal_update', terminalId: 't1', exitStatus: { exitCode: 2 } }
      ]),
      thread
    )
    expect(thread.terminals.t1).toEqual({ command: 'make', output: 'redrawn\nmore', exitStatus: { exitCode: 2, signal: null } })
  })

  it('reads state updates (how a turn ends), plans, commands and configuration options', () => {
    const adapter = new V2SessionAdapter()
    expect(adapter.adapt({ sessionUpdate: 'state_update', state: 'running' })).toEqual([{ kind: 'state', state: 'running' }])
    expect(adapter.adapt({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error: { code: -32603, message: 'boom' } })).toEqual([
      { kind: 'state', state: 'idle', stopReason: 'error', error: { code: -32603, message: 'boom', data: undefined } }
    ])
    const entries = [{ content: 'Read', priority: 'high', status: 'completed' }]
    expect(adapter.adapt({ sessionUpdate: 'plan_update', plan: { type: 'items', planId: 'p', entries } })).toEqual([
      { kind: 'update', update: { sessionUpdate: 'plan', entries } }
    ])
    expect(adapter.adapt({ sessionUpdate: 'plan_update', plan: { type: '_markdown', planId: 'p', text: '# plan' } })[0]).toMatchObject({
      kind: 'unsupported'
    })
    expect(
      adapter.adapt({
        sessionUpdate: 'available_commands_update',
        availableCommands: [
          { type: 'command', name: 'test', description: 'Run tests', input: { type: 'text', hint: 'which' } },
          { type: 'command', name: 'review', description: 'Review' }
        ]
      })
    ).toEqual([
      {
        kind: 'update',
        update: {
          sessionUpdate: 'available_commands_update',
          availableCommands: [
            { name: 'test', description: 'Run tests', input: { hint: 'which' } },
            { name: 'review', description: 'Review' }
          ]
        }
      }
    ])
    const options = [
      { type: 'select', configId: 'model', name: 'Model', category: 'model', currentValue: 'fast', options: [{ value: 'fast', name: 'Fast' }] },
      { type: 'boolean', configId: 'verbose', name: 'Verbose', currentValue: false },
      { type: '_slider', configId: 'x', name: 'X', currentValue: 3 }
    ]
    expect(adapter.adapt({ sessionUpdate: 'config_option_update', configOptions: options })).toEqual([
      {
        kind: 'update',
        update: {
          sessionUpdate: 'config_option_update',
          configOptions: [
            { id: 'model', name: 'Model', category: 'model', type: 'select', currentValue: 'fast', options: [{ value: 'fast', name: 'Fast' }] },
            { id: 'verbose', name: 'Verbose', type: 'boolean', currentValue: false }
          ]
        }
      }
    ])
    expect(sessionAnswer({ sessionId: 's', configOptions: options.slice(1, 2), availableCommands: [] })).toEqual({
      configOptions: [{ id: 'verbose', name: 'Verbose', type: 'boolean', currentValue: false }]
    })
  })

  it('keeps what it cannot map, verbatim, with the reason', () => {
    const adapter = new V2SessionAdapter()
    expect(adapter.adapt({ sessionUpdate: '_vendor_thing', x: 1 })).toEqual([
      {
        kind: 'unsupported',
        raw: { sessionUpdate: '_vendor_thing', x: 1 },
        reason: "an update kind this version of Switchboard does not know ('_vendor_thing', ACP protocol version 2)"
      }
    ])
    expect(adapter.adapt(42)).toEqual([{ kind: 'unsupported', raw: 42, reason: 'not a session update (no sessionUpdate kind)' }])
    expect(adapter.adapt({ sessionUpdate: 'tool_call_update' })[0]).toMatchObject({
      kind: 'unsupported',
      reason: 'tool_call_update without a toolCallId'
    })
    // Kinds with the same shape in both versions pass as they are.
    const usage = { sessionUpdate: 'usage_update', used: 10, size: 100 }
    expect(adapter.adapt(usage)).toEqual([{ kind: 'update', update: usage }])
  })
})

describe('ACP v2 permission requests in version 1 terms', () => {
  it('takes the request title, and the kind of the call it is about (for remembered answers)', () => {
    const adapter = new V2SessionAdapter()
    adapter.adapt({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', title: 'rm -rf build', kind: 'delete' })
    const options = [{ optionId: 'ok', name: 'Allow', kind: 'allow_once' }]
    expect(
      toV1PermissionRequest(
        {
          sessionId: 's',
          title: 'Delete the build folder?',
          description: 'It is regenerated.',
          subject: { type: 'tool_call', toolCall: { toolCallId: 'c1' } },
          options
        },
        adapter
      )
    ).toEqual({ sessionId: 's', toolCall: { toolCallId: 'c1', kind: 'delete', title: 'Delete the build folder? — It is regenerated.' }, options })
    expect(
      toV1PermissionRequest(
        { sessionId: 's', title: 'Run it?', subject: { type: 'command', command: 'npm test', cwd: '/w', toolCallId: 'c9' }, options },
        adapter
      )
    ).toEqual({
      sessionId: 's',
      toolCall: { toolCallId: 'c9', kind: 'execute', title: 'Run it?', rawInput: { command: 'npm test', cwd: '/w' } },
      options
    })
    expect(toV1PermissionRequest({ sessionId: 's', title: 'Go on?', options }, adapter).toolCall).toMatchObject({ kind: 'other', title: 'Go on?' })
  })
})
