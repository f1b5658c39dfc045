import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import type { TranscriptRecord } from '../../shared/transcript'
import { conversationSeed, seedBudget, seedOf, type SeedAbout, type SeedOptions } from '../../electron/host/sessions/conversation-seed'
import { ConversationFold, foldConversation } from '../../electron/host/sessions/conversation-fold'
import { currentViewOf } from '../../electron/host/storage/transcript-stream'
import { LONG_ENTRIES_PER_TURN, longTurn } from '../../bench/long-data'
import { conversationSeed as seedBefore } from './seed-oracle'
import { seededRandom } from '../seeded-random'

/**
 * The seed folded a record at a time, letting go of what it told (conversation-fold.ts), is the seed the whole
 * conversation gave (seed-oracle.ts, the code before), character for character: for a long day's conversation read
 * from its file, up to any message, and for conversations of every odd shape (late tool call updates, named and
 * unnamed messages, replays, refusals, one long turn) at small budgets, where most of it is let go.
 */

const at = '2026-11-29T00:00:00.000Z'
const about: SeedAbout = { title: 'A long day', agentName: 'Claude Code', cwd: '/work/p', branch: 'claude/long' }

/** A record written loosely (the generator's optional fields). */
const record = (value: unknown): TranscriptRecord => value as TranscriptRecord

/** A conversation of odd shapes: every kind of record the seed reads, in orders an agent may send them. */
function oddConversation(seed: number, records: number): TranscriptRecord[] {
  const rnd = seededRandom(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
  const words = (n: number): string =>
    Array.from({ length: n }, () => pick(['alpha', 'beta', 'gamma', ' ', '\n', 'delta  ', 'src/a.ts', 'é', '```'])).join(' ')
  const update = (u: Record<string, unknown>, child?: string): TranscriptRecord => ({
    t: 'update',
    at,
    update: u as SessionUpdate,
    ...(child ? { child } : {})
  })
  const out: TranscriptRecord[] = []
  const calls: string[] = []
  let n = 0
  // A long single turn now and then: many records with no prompt between them.
  const quietUntil = (): number => (rnd() < 0.1 ? n + Math.floor(rnd() * 400) : n)
  let quiet = 0
  while (out.length < records) {
    n++
    const r = rnd()
    if (n > quiet && r < 0.08) {
      out.push({
        t: 'prompt',
        at,
        content: [
          { type: 'text', text: words(Math.floor(rnd() * 30)) },
          ...(rnd() < 0.2 ? [{ type: 'image' as const, data: `img${n}`, mimeType: 'image/png' }] : [])
        ],
        ...(rnd() < 0.05 ? { steered: true } : {})
      })
      quiet = quietUntil()
    } else if (r < 0.12)
      out.push(
        update({
          sessionUpdate: 'user_message_chunk',
          messageId: rnd() < 0.5 ? `u${Math.floor(rnd() * 5)}` : undefined,
          content: { type: 'text', text: words(4) }
        })
      )
    else if (r < 0.4) {
      const id = rnd() < 0.4 ? `m${Math.floor(rnd() * 8)}` : undefined
      out.push(update({ sessionUpdate: 'agent_message_chunk', messageId: id, content: { type: 'text', text: words(Math.floor(rnd() * 40)) } }))
    } else if (r < 0.45) out.push(update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: words(6) } }))
    else if (r < 0.55) {
      const id = `c${n}`
      calls.push(id)
      out.push(
        update({
          sessionUpdate: 'tool_call',
          toolCallId: id,
          title: rnd() < 0.1 ? '' : words(3),
          kind: pick(['read', 'edit', 'execute', 'delete', 'move', 'search', 'fetch', 'other']),
          status: pick(['pending', 'in_progress', 'completed', 'failed']),
          locations: rnd() < 0.5 ? [{ path: `/work/p/${pick(['a', 'b', 'c', 'd'])}.ts` }] : [],
          rawInput: rnd() < 0.3 ? { command: words(2), other: 'x'.repeat(50) } : rnd() < 0.1 ? { cmd: ['ls', '-la'] } : undefined
        })
      )
    } else if (r < 0.65 && calls.length) {
      // An update to any call so far, an old one too (a late status, a title, a diff).
      out.push(
        update({
          sessionUpdate: 'tool_call_update',
          toolCallId: rnd() < 0.7 ? calls[calls.length - 1] : pick(calls),
          ...(rnd() < 0.7 ? { status: pick(['in_progress', 'completed', 'failed']) } : {}),
          ...(rnd() < 0.3 ? { title: words(2) } : {}),
          ...(rnd() < 0.3
            ? { content: [{ type: 'diff', path: `/work/p/${pick(['e', 'f', 'g'])}.ts`, oldText: 'a', newText: 'b'.repeat(100) }] }
            : {}),
          ...(rnd() < 0.1 ? { _meta: { claudeCode: { nonExecutionKind: 'user-rejected' } } } : {})
        })
      )
    } else if (r < 0.68 && calls.length) {
      out.push(
        record({
          t: 'permission',
          at,
          title: words(2),
          toolCallId: pick(calls),
          optionId: rnd() < 0.5 ? null : 'no',
          optionName: 'No',
          optionKind: 'reject_once'
        })
      )
    } else if (r < 0.72) out.push({ t: 'stop', at, stopReason: pick(['end_turn', 'end_turn', 'cancelled', 'max_tokens', 'refusal']) })
    else if (r < 0.74)
      out.push(
        record({
          t: 'error',
          at,
          message: words(5),
          ...(rnd() < 0.5 ? { endsTurn: true } : {}),
          ...(rnd() < 0.3 ? { echo: 'gamma' } : {})
        })
      )
    else if (r < 0.77)
      out.push(
        update({ sessionUpdate: 'plan', entries: [{ content: words(3), status: pick(['pending', 'in_progress', 'completed']), priority: 'low' }] })
      )
    else if (r < 0.8)
      out.push(update({ sessionUpdate: 'subagent_update', sessionId: `s${Math.floor(rnd() * 3)}`, title: rnd() < 0.5 ? words(2) : null }))
    else if (r < 0.83)
      out.push(update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: words(5) } }, `s${Math.floor(rnd() * 3)}`))
    else if (r < 0.86)
      out.push(
        update({
          sessionUpdate: 'session_message',
          messageId: `sm${Math.floor(rnd() * 4)}`,
          senderSessionId: 's1',
          content: [{ type: 'text', text: words(6) }]
        })
      )
    else if (r < 0.88) out.push(update({ sessionUpdate: 'notice', severity: 'info', title: words(2) }))
    else if (r < 0.9) out.push(record({ t: 'terminal', at, terminalId: `t${Math.floor(rnd() * 3)}`, data: words(20) }))
    else if (r < 0.92) out.push({ t: 'checkpoint', at, index: n })
    else if (r < 0.94)
      out.push(
        update({ sessionUpdate: 'compaction_summary_chunk', compactionId: `k${Math.floor(rnd() * 2)}`, content: { type: 'text', text: words(8) } })
      )
    else out.push(update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: words(Math.floor(rnd() * 200)) } }))
  }
  return out
}

function same(records: TranscriptRecord[], options: SeedOptions): void {
  expect(conversationSeed(records, about, options)).toEqual(seedBefore(records, about, options))
}

describe('the seed folded a record at a time', () => {
  it('is the seed of the whole conversation, for conversations of every shape, at any budget and up to any entry', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const records = oddConversation(seed, 300 + seed * 40)
      for (const budget of [4_000, 9_000, 60_000]) same(records, { images: seed % 2 === 0, budget })
      const entries = new ConversationFold(about.agentName, 4_000).entries
      expect(entries).toBe(0)
      for (const beforeEntry of [0, 1, 5, 50, 200, 1_000]) same(records, { images: true, budget: 4_000, beforeEntry })
    }
  })

  it('of a replayed conversation (its messages named to the end), whose first request is quoted', () => {
    // Named messages are read at the end: the fold lets go of a told user message, never of one still named.
    const update = (u: Record<string, unknown>): TranscriptRecord => ({ t: 'update', at, update: u as SessionUpdate })
    const records = Array.from({ length: 120 }, (_, i) => [
      update({ sessionUpdate: 'user_message_chunk', messageId: `u${i}`, content: { type: 'text', text: `Request ${i}: ${'why '.repeat(40)}` } }),
      update({ sessionUpdate: 'agent_message_chunk', messageId: `a${i}`, content: { type: 'text', text: `Answer ${i}: ${'because '.repeat(30)}` } })
    ]).flat()
    const seed = conversationSeed(records, about, { images: false, budget: 4_000 })
    expect(seed.text).toContain('Request 0: why')
    expect(seed).toEqual(seedBefore(records, about, { images: false, budget: 4_000 }))
  })

  it('of a long day read from its file, with the hand-off’s budget, the smaller one, and up to a message', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fold-'))
    try {
      const turns = 600
      const records = Array.from({ length: turns }, (_, i) => longTurn(i, at)).flat()
      const file = join(dir, 'long.jsonl')
      await writeFile(file, [{ t: 'header' }, ...records].map((r) => JSON.stringify(r)).join('\n') + '\n')
      for (const options of [{ images: true }, { images: false, budget: 20_000 }, { images: false, beforeEntry: 300 * LONG_ENTRIES_PER_TURN + 3 }]) {
        const folded = await foldConversation(currentViewOf(file), about.agentName, seedBudget(options), options.beforeEntry)
        const seed = seedOf(folded, about, options)
        expect(seed).toEqual(seedBefore(records, about, options))
        expect(seed.notes[0]).toMatch(/^Too long to send whole: the first \d+ of \d+ turns/)
        // What the fold still holds of the conversation's text: the budget's worth, not the transcript's.
        const held = folded.turns.reduce((n, t) => n + t.text.length, 0)
        expect(held).toBeLessThan(3 * seedBudget(options))
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
