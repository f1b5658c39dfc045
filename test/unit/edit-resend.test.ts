import { describe, expect, it } from 'vitest'
import { atLeast, lastAgentMessageId } from '../../electron/host/sessions/fork-at-message'
import { seedUpTo } from '../../electron/host/sessions/edit-resend'
import { foldTail } from '../../shared/thread-fold'
import type { TranscriptRecord } from '../../shared/transcript'

/** The pure parts of "Edit and resend": where a fork ends, the seed's bound, the version gate, and the branch marks' fold. */

const at = '2026-01-01T00:00:00.000Z'
const prompt = (text: string): TranscriptRecord => ({ t: 'prompt', at, content: [{ type: 'text', text }] })
const reply = (text: string, messageId?: string): TranscriptRecord => ({
  t: 'update',
  at,
  update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text }, ...(messageId ? { messageId } : {}) }
})

describe('edit and resend, pure parts', () => {
  it('forks at the last agent message before the edited one, and at none when the turn before has no reply', () => {
    expect(lastAgentMessageId([prompt('one'), reply('a', 'msg_1'), reply('b', 'msg_2'), { t: 'stop', at, stopReason: 'end_turn' }])).toBe('msg_2')
    expect(lastAgentMessageId([prompt('one'), reply('a', 'msg_1'), prompt('two')])).toBeUndefined()
    expect(lastAgentMessageId([prompt('one'), reply('a')])).toBeUndefined()
  })

  it('reads versions as numbers', () => {
    expect(atLeast('0.101.0', '0.101.0')).toBe(true)
    expect(atLeast('0.110.2', '0.101.0')).toBe(true)
    expect(atLeast('0.99.9', '0.101.0')).toBe(false)
    expect(atLeast('1.0.0-beta.1', '0.101.0')).toBe(true)
  })

  it('seeds with the entries before the bound only', () => {
    // What comes before the edited message (the caller's bound): the hand-off's seed of it, nothing after.
    const seed = seedUpTo([prompt('first'), reply('answer one')], { title: 'T', agentName: 'Scripted', cwd: '/p' })
    expect(seed).toContain('first')
    expect(seed).toContain('answer one')
    expect(seed).not.toMatch(/second|answer two/)
  })

  it('marks the edited message in the original, or says it at the end when that message is not in the thread', () => {
    const records: TranscriptRecord[] = [
      { t: 'header', v: 2, id: 's', acpSessionId: 'a', agentId: 'g', projectId: 'p', cwd: '/', createdAt: at },
      prompt('first'),
      reply('answer')
    ]
    const to: TranscriptRecord = { t: 'branch', at, to: 'copy', title: 'The copy', message: 1, seq: 1 }
    const whole = foldTail([...records, to], 4)
    expect(whole.entries[0]).toMatchObject({ kind: 'user', edits: [{ sessionId: 'copy', title: 'The copy' }] })
    // A tail that starts after the message: the mark comes last, as an entry of its own.
    const tail = foldTail([reply('more'), to], 4)
    expect(tail.entries.at(-1)).toMatchObject({ kind: 'branch', direction: 'to', sessionId: 'copy', message: 1 })
    const copy = foldTail([prompt('first'), { t: 'branch', at, from: 's', title: 'Original', message: 2, seq: 5 }], 2)
    expect(copy.entries.at(-1)).toMatchObject({ kind: 'branch', direction: 'from', sessionId: 's', title: 'Original', message: 2 })
  })
})
