// @vitest-environment happy-dom
import './happy-dom-fixes'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPinia, setActivePinia } from 'pinia'
import type { SessionRecord } from '../../shared/domain'
import type { TranscriptRecord } from '../../shared/transcript'
import { useThreadsStore, WINDOW_RECORDS } from '../../renderer/src/stores/threads'
import { FakeHost } from './fake-host'

/**
 * A conversation of any length in the window (issue 40): the thread store
 * over a transcript of 60,000 records, paged as the Host pages it (each page
 * from the start of a turn; the Host's readers are tested in
 * test/unit/transcripts.test.ts).
 * Scrolled to its first message and back to its end, it holds a few pages at
 * a time, and nothing is lost on the way (the records appended meanwhile
 * included).
 */

const at = '2026-01-01T00:00:00.000Z'
const record: SessionRecord = {
  id: 's1',
  acpSessionId: 'acp-1',
  agentId: 'a1',
  projectId: 'p1',
  cwd: '/work/app',
  title: 'A long day',
  titleSource: 'prompt',
  createdAt: at,
  updatedAt: at
}
const TURNS = 20_000

function turn(i: number): TranscriptRecord[] {
  return [
    { t: 'prompt', at, content: [{ type: 'text', text: `question ${i}` }] },
    { t: 'update', at, update: { sessionUpdate: 'agent_message_chunk', messageId: `m${i}`, content: { type: 'text', text: `answer ${i}` } } },
    { t: 'stop', at, stopReason: 'end_turn' }
  ]
}

/** The transcript's lines (line = seq), and a Host that pages them as the Host does (a page begins at a turn's start). */
const lines: TranscriptRecord[] = []
const startsTurn = (seq: number): boolean => seq === 0 || lines[seq]?.t === 'prompt'

beforeAll(() => {
  lines.push({ t: 'header', v: 2, id: 's1', acpSessionId: 'acp-1', agentId: 'a1', projectId: 'p1', cwd: '/work/app', createdAt: at })
  for (let i = 0; i < TURNS; i++) lines.push(...turn(i))
  setActivePinia(createPinia())
  const back = (before: number, limit: number): number => {
    let first = Math.max(0, before - limit)
    while (!startsTurn(first)) first--
    return first
  }
  new FakeHost()
    .answer('sessions.open', (p: { tail: number }) => {
      const first = back(lines.length, p.tail)
      const records = lines.slice(first)
      return { record, state: { id: 's1', status: 'idle' }, records, nextSeq: lines.length, skippedLines: 0, firstSeq: first, firstOffset: first }
    })
    .answer('transcripts.read', (p: { before: number; offset: number; limit: number }) => {
      expect(p.offset).toBe(p.before)
      const first = back(p.before, p.limit)
      return { records: lines.slice(first, p.before), firstSeq: first, firstOffset: first, skippedLines: 0 }
    })
    .answer('transcripts.readLater', (p: { from: number; offset: number; limit: number }) => {
      expect(p.offset).toBe(p.from)
      let end = Math.min(lines.length, p.from + p.limit)
      while (end < lines.length && !startsTurn(end)) end++
      return { records: lines.slice(p.from, end), endSeq: end, endOffset: end, skippedLines: 0, atEnd: end === lines.length }
    })
    .install()
})

const texts = (kind: 'user' | 'assistant'): string[] =>
  useThreadsStore().threads.s1.thread.entries.flatMap((e) => (e.kind === kind && 'text' in e ? [e.text] : []))

describe('a long conversation in the window', () => {
  it('scrolled to its first message and back to its end, holds a few pages at a time and loses nothing', async () => {
    const threads = useThreadsStore()
    await threads.load('s1')
    expect(texts('user').at(-1)).toBe(`question ${TURNS - 1}`)

    // Up to the first message: every question comes into view once, in order, and the window stays small.
    const seen: number[] = []
    const note = (): void => {
      for (const text of texts('user')) {
        const n = Number(text.split(' ')[1])
        if (!seen.includes(n)) seen.push(n)
      }
    }
    note()
    let pages = 0
    while (await threads.loadEarlier('s1')) {
      pages++
      note()
      expect(threads.threads.s1.records!.length).toBeLessThanOrEqual(WINDOW_RECORDS + 1_000)
    }
    expect(pages).toBeGreaterThan(50)
    expect(threads.threads.s1.firstSeq).toBe(0)
    expect(texts('user')[0]).toBe('question 0')
    expect(threads.threads.s1.later).not.toBeNull()
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: TURNS }, (_, i) => i))

    // Meanwhile the conversation goes on: what is appended is not shown far up, and is there back at the end.
    const more = turn(TURNS)
    lines.push(...more)
    threads.receiveRecords('s1', 1 + TURNS * 3, more)
    threads.flushRecords()
    expect(texts('user')).not.toContain(`question ${TURNS}`)

    const seenDown = new Set<string>(texts('assistant'))
    while (await threads.loadLater('s1')) {
      for (const text of texts('assistant')) seenDown.add(text)
      expect(threads.threads.s1.records?.length ?? 0).toBeLessThanOrEqual(WINDOW_RECORDS + 1_000)
    }
    expect(seenDown.size).toBe(TURNS + 1)
    expect(threads.threads.s1.later).toBeNull()
    expect(texts('assistant').at(-1)).toBe(`answer ${TURNS}`)
    expect(threads.threads.s1.firstSeq).toBeGreaterThan(0)

    // At the end again, it follows: the next record is applied as it comes.
    const next = turn(TURNS + 1)
    lines.push(...next)
    threads.receiveRecords('s1', 1 + (TURNS + 1) * 3, next)
    threads.flushRecords()
    expect(texts('user').at(-1)).toBe(`question ${TURNS + 1}`)
    expect(texts('user').filter((t) => t === `question ${TURNS}`)).toHaveLength(1)
  }, 120_000)
})
