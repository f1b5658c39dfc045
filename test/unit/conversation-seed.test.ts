import { describe, expect, it } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import type { TranscriptRecord } from '../../shared/transcript'
import { conversationSeed, seedBlocks, tooLong, MIN_SEED_BUDGET, type SeedAbout } from '../../electron/host/sessions/conversation-seed'

const at = '2026-11-28T00:00:00.000Z'
const prompt = (text: string, image = false): TranscriptRecord => ({
  t: 'prompt',
  at,
  content: [{ type: 'text', text }, ...(image ? [{ type: 'image' as const, data: 'aGk=', mimeType: 'image/png' }] : [])]
})
const update = (u: SessionUpdate): TranscriptRecord => ({ t: 'update', at, update: u })
const reply = (text: string): TranscriptRecord => update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } })
const stop: TranscriptRecord = { t: 'stop', at, stopReason: 'end_turn' }
const about: SeedAbout = { title: 'Fix the parser', agentName: 'Claude Code', cwd: '/work/p', branch: 'claude/fix' }

function turn(i: number, size = 10): TranscriptRecord[] {
  return [prompt(`question ${i} ${'q'.repeat(size)}`), reply(`answer ${i} ${'a'.repeat(size)}`), stop]
}

describe('conversationSeed', () => {
  it('holds the prompts, the replies, tool calls in a line each, the files changed, the latest plan, review notes and the diff', () => {
    const records: TranscriptRecord[] = [
      prompt('Make the tests pass'),
      update({ sessionUpdate: 'plan', entries: [{ content: 'old plan', status: 'pending', priority: 'low' }] }),
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 't1',
        title: 'Terminal',
        kind: 'execute',
        status: 'completed',
        rawInput: { command: 'npm test' }
      }),
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 't2',
        title: 'Read a.ts',
        kind: 'read',
        status: 'completed',
        locations: [{ path: '/work/p/a.ts' }]
      }),
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 't3',
        title: 'Write b.ts',
        kind: 'edit',
        status: 'failed',
        content: [{ type: 'diff', path: '/work/p/b.ts', oldText: null, newText: 'x' }]
      }),
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 't4',
        title: 'Edit c.ts',
        kind: 'edit',
        status: 'completed',
        locations: [{ path: '/work/p/c.ts' }]
      }),
      reply('Done: the parser is fixed.'),
      stop,
      prompt('Now the docs'),
      update({
        sessionUpdate: 'plan',
        entries: [
          { content: 'write docs', status: 'completed', priority: 'high' },
          { content: 'review docs', status: 'pending', priority: 'high' }
        ]
      }),
      stop
    ]
    const seed = conversationSeed(
      records,
      {
        ...about,
        reviewNotes: [{ path: 'c.ts', line: 3, side: 'new', quote: 'let x = 1', text: 'use const' }],
        changes: {
          files: [{ path: 'c.ts', status: 'modified', binary: false, tooLarge: false, oldText: 'let x = 0\n', newText: 'let x = 1\n' }],
          truncated: false
        }
      },
      { images: false }
    )
    const text = seed.text
    expect(text).toContain('### User\n\nMake the tests pass')
    expect(text).toContain('### Claude Code\n\n')
    expect(text).toContain('Done: the parser is fixed.')
    expect(text).toContain('- Ran `npm test`')
    expect(text).toContain('- Read `/work/p/a.ts`')
    expect(text).toContain('- Edited `/work/p/b.ts` (failed)')
    // The files changed: the edit that worked, not the one that failed.
    expect(text).toMatch(/## Files the conversation changed\n\n- `\/work\/p\/c.ts`\n\n/)
    // The latest plan only.
    expect(text).toContain('- [x] write docs\n- [ ] review docs')
    expect(text).not.toContain('old plan')
    expect(text).toContain('`c.ts`, line 3: use const')
    expect(text).toContain('-let x = 0\n+let x = 1')
    expect(text).toContain('branch `claude/fix`')
    expect(seed.notes).toEqual([])
    expect(seed.chars).toBe(text.length)
  })

  it('keeps a long conversation within its budget: the first request and the newest turns, the cut said to the agent and the user', () => {
    const records = Array.from({ length: 60 }, (_, i) => turn(i, 400)).flat()
    const seed = conversationSeed(records, about, { images: false, budget: 10_000 })
    expect(seed.chars).toBeLessThanOrEqual(10_000)
    expect(seed.text).toContain('answer 59')
    expect(seed.text).toContain('### The first request\n\nquestion 0')
    expect(seed.text).not.toContain('answer 0 ')
    const cut = /Switchboard left out the first (\d+) of 60 turns \(([\d,]+) characters\)/.exec(seed.text)
    expect(cut).not.toBeNull()
    const left = Number(cut![1])
    expect(seed.text).not.toContain(`question ${left - 1} `)
    expect(seed.text).toContain(`question ${left} `)
    expect(seed.notes.join(' ')).toContain(`the first ${left} of 60 turns`)
    // The same conversation with room for all of it says nothing was cut.
    const whole = conversationSeed(records, about, { images: false, budget: 100_000 })
    expect(whole.notes).toEqual([])
    expect(whole.text).toContain('answer 0 ')
  })

  it('shares a small budget between a long diff and the conversation, and says the diff was cut', () => {
    const big = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n')
    const seed = conversationSeed(
      turn(1),
      {
        ...about,
        changes: { files: [{ path: 'big.txt', status: 'added', binary: false, tooLarge: false, oldText: null, newText: big }], truncated: false }
      },
      { images: false, budget: MIN_SEED_BUDGET * 2 }
    )
    expect(seed.chars).toBeLessThanOrEqual(MIN_SEED_BUDGET * 2)
    expect(seed.text).toContain('answer 1')
    expect(seed.text).toContain('[… the rest of the diff left out]\n```')
    expect(seed.notes.join(' ')).toMatch(/The diff was cut to [\d,]+ of its [\d,]+ characters/)
  })

  it('stops before the entry it is bounded by (a conversation up to a message)', () => {
    const records = [...turn(1), ...turn(2), ...turn(3)]
    // Entries: user 1, assistant 1, stop, user 2, ...: before the fourth (user 2) is the first turn only.
    const seed = conversationSeed(records, about, { images: false, beforeEntry: 3 })
    expect(seed.text).toContain('answer 1')
    expect(seed.text).not.toContain('question 2')
  })

  it('sends the newest images to an agent that takes them, and leaves them out, said, for one that does not', () => {
    const records = [prompt('look at this', true), reply('a cat'), stop]
    const withImages = conversationSeed(records, about, { images: true })
    expect(withImages.images).toEqual([{ data: 'aGk=', mimeType: 'image/png' }])
    expect(withImages.notes).toEqual([])
    const without = conversationSeed(records, about, { images: false })
    expect(without.images).toEqual([])
    expect(without.notes).toEqual(['1 image of the conversation left out: the agent does not take images.'])
  })
})

describe('seedBlocks', () => {
  const seed = { text: '# hello', images: [{ data: 'aGk=', mimeType: 'image/png' }] }
  it('is an embedded resource where the agent takes embedded context, with its images where it takes them', () => {
    const blocks = seedBlocks(seed, { embeddedContext: true, image: true }, 'switchboard://hand-off/1')
    expect(blocks[0]).toMatchObject({ type: 'resource', resource: { uri: 'switchboard://hand-off/1', mimeType: 'text/markdown', text: '# hello' } })
    expect(blocks[1]).toMatchObject({ type: 'image', data: 'aGk=', mimeType: 'image/png' })
  })
  it('is plain text marked as Switchboard note otherwise, and no image for an agent without images', () => {
    const blocks = seedBlocks(seed, { embeddedContext: false, image: false }, 'switchboard://hand-off/1')
    expect(blocks).toEqual([{ type: 'text', text: '# hello', _meta: { switchboard: { note: true, seed: true } } }])
  })
})

describe('tooLong', () => {
  it('reads the words agents and their models use for a prompt over the limit', () => {
    expect(tooLong('Claude Code failed the turn: prompt is too long: 250000 tokens > 200000 maximum')).toBe(true)
    expect(tooLong("This model's maximum context length is 128000 tokens")).toBe(true)
    expect(tooLong('Agent exited with code 1')).toBe(false)
  })
})
