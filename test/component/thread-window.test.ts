// @vitest-environment happy-dom
import './happy-dom-fixes'
import { beforeAll, describe, expect, it } from 'vitest'
import { createPinia, setActivePinia } from 'pinia'
import type { TranscriptRecord } from '../../shared/transcript'
import { toRaw } from 'vue'
import { foldTail } from '../../shared/thread-fold'
import type { ThreadEntry } from '../../shared/thread'
import { useThreadsStore, WINDOW_RECORDS } from '../../renderer/src/stores/threads'
import { FakeHost, sessionRecord } from './fake-host'

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
const record = sessionRecord('A long day', at)
const TURNS = 20_000

function turn(i: number): TranscriptRecord[] {
  return [
    { t: 'prompt', at, content: [{ type: 'text', text: `question ${i}` }] },
    { t: 'update', at, update: { sessionUpdate: 'agent_message_chunk', messageId: `m${i}`, content: { type: 'text', text: `answer ${i}` } } },
    { t: 'stop', at, stopReason: 'end_turn' }
  ]
}

/** The transcripts' lines (line = seq), by session, and a Host that pages them as the Host does (a page begins at a turn's start). */
const lines: TranscriptRecord[] = []
const transcripts: Record<string, TranscriptRecord[]> = { s1: lines }

beforeAll(() => {
  lines.push({ t: 'header', v: 2, id: 's1', acpSessionId: 'acp-1', agentId: 'a1', projectId: 'p1', cwd: '/work/app', createdAt: at })
  for (let i = 0; i < TURNS; i++) lines.push(...turn(i))
  setActivePinia(createPinia())
  const startsTurn = (lines: TranscriptRecord[], seq: number): boolean => seq === 0 || lines[seq]?.t === 'prompt'
  const back = (lines: TranscriptRecord[], before: number, limit: number): number => {
    let first = Math.max(0, before - limit)
    while (!startsTurn(lines, first)) first--
    return first
  }
  new FakeHost()
    .answer('sessions.open', (p: { id: string; tail: number }) => {
      const lines = transcripts[p.id]
      const first = back(lines, lines.length, p.tail)
      const records = lines.slice(first)
      const state = { id: p.id, status: 'idle' }
      return { record: { ...record, id: p.id }, state, records, nextSeq: lines.length, skippedLines: 0, firstSeq: first, firstOffset: first }
    })
    .answer('transcripts.read', (p: { id: string; before: number; offset: number; limit: number }) => {
      expect(p.offset).toBe(p.before)
      const first = back(transcripts[p.id], p.before, p.limit)
      return { records: transcripts[p.id].slice(first, p.before), firstSeq: first, firstOffset: first, skippedLines: 0 }
    })
    .answer('transcripts.readLater', (p: { id: string; from: number; offset: number; limit: number }) => {
      const lines = transcripts[p.id]
      expect(p.offset).toBe(p.from)
      let end = Math.min(lines.length, p.from + p.limit)
      while (end < lines.length && !startsTurn(lines, end)) end++
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

  it('taking in a page, shows the records folded again, and keeps the entries that came out the same as they were', async () => {
    // Each turn's checkpoint is taken before its prompt (the page before holds it), and a later turn edits an earlier
    // question (its branch record names that prompt): entries that change when a page comes in, under the same id.
    const day: TranscriptRecord[] = [
      { t: 'header', v: 2, id: 's2', acpSessionId: 'acp-2', agentId: 'a1', projectId: 'p1', cwd: '/work/app', createdAt: at }
    ]
    for (let i = 0; i < 1_500; i++) {
      day.push({ t: 'checkpoint', at, index: i + 1 })
      const prompt = day.length
      day.push(...turn(i))
      if (i % 100 === 50) day.push({ t: 'branch', at, to: `copy-${i}`, title: `edited ${i}`, message: 0, seq: prompt - 400 })
    }
    // The last turn is still being answered.
    const chunk = (text: string): TranscriptRecord => ({
      t: 'update',
      at,
      update: { sessionUpdate: 'agent_message_chunk', messageId: 'm-live', content: { type: 'text', text } }
    })
    day.push({ t: 'prompt', at, content: [{ type: 'text', text: 'question live' }] }, chunk('so far'))
    transcripts.s2 = day
    const threads = useThreadsStore()
    await threads.load('s2')
    const open = (): (typeof threads.threads)['s2'] => threads.threads.s2
    const shown = (): ThreadEntry[] => toRaw(open().thread).entries
    let changed = 0
    let kept = 0
    const step = async (load: () => Promise<boolean>): Promise<boolean> => {
      const before = new Map(shown().map((entry) => [entry.id, structuredClone(entry)]))
      const objects = new Map(shown().map((entry) => [entry.id, entry]))
      if (!(await load())) return false
      // What is shown is the window's records folded afresh...
      const end = open().later?.seq ?? open().nextSeq
      expect(shown()).toEqual(foldTail(day.slice(open().firstSeq, end), end).entries)
      // ...and an entry the page did not change is the one the list was drawing (its row is not drawn again).
      for (const entry of shown()) {
        const was = before.get(entry.id)
        if (!was) continue
        const same = JSON.stringify(was) === JSON.stringify(entry)
        expect(entry === objects.get(entry.id)).toBe(same)
        if (same) kept++
        else changed++
      }
      return true
    }
    // Scrolled up a page while the answer streams: what streams on joins the reply shown (the one the fold keeps).
    await step(() => threads.loadEarlier('s2'))
    day.push(chunk(' and more'))
    threads.receiveRecords('s2', day.length - 1, day.slice(-1))
    threads.flushRecords()
    expect(shown().at(-1)).toMatchObject({ kind: 'assistant', text: 'so far and more' })
    while (await step(() => threads.loadEarlier('s2')));
    expect(open().firstSeq).toBe(0)
    expect(shown()[0]).toMatchObject({ kind: 'user', text: 'question 0', checkpoint: 1 })
    while (await step(() => threads.loadLater('s2')));
    expect(open().later).toBeNull()
    expect(shown().at(-1)).toMatchObject({ kind: 'assistant', text: 'so far and more' })
    // Both kinds were met: entries a page changed (a checkpoint, an edit), and many more it did not.
    expect(changed).toBeGreaterThan(10)
    expect(kept).toBeGreaterThan(changed * 50)
  }, 60_000)

  it('a reply streaming while an earlier page is taken in keeps every word it streams meanwhile', async () => {
    // The page's fold runs a slice a task (so that a fling's frames are drawn meanwhile): what streams in then is not lost.
    const day: TranscriptRecord[] = [
      { t: 'header', v: 2, id: 's3', acpSessionId: 'acp-3', agentId: 'a1', projectId: 'p1', cwd: '/work/app', createdAt: at }
    ]
    const chunk = (text: string, messageId = 'm-live'): TranscriptRecord => ({
      t: 'update',
      at,
      update: { sessionUpdate: 'agent_message_chunk', messageId, content: { type: 'text', text } }
    })
    // Answers in four chunks: the fold's slices cut some of their runs (folded the same as whole: checked at the end).
    for (let i = 0; i < 1_500; i++) {
      const [prompt, , stop] = turn(i)
      day.push(prompt, ...['one', ' two', ' three', ' four'].map((words) => chunk(`${words} ${i}`, `m${i}`)), stop)
    }
    day.push({ t: 'prompt', at, content: [{ type: 'text', text: 'question live' }] }, chunk('so far'))
    transcripts.s3 = day
    const threads = useThreadsStore()
    await threads.load('s3')
    const open = (): (typeof threads.threads)['s3'] => threads.threads.s3
    const last = (): ThreadEntry | undefined => toRaw(open().thread).entries.at(-1)
    // Scrolled up a few pages: the window holds several pages, its fold takes several tasks.
    for (let page = 0; page < 2; page++) expect(await threads.loadEarlier('s3')).toBe(true)
    expect(open().later).toBeNull()
    const task = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0))
    const taking = threads.loadEarlier('s3')
    await task()
    // The page is in, its fold under way: the reply goes on.
    expect(open().loadingEarlier).toBe(true)
    for (const words of [' and more', ' and the rest']) {
      day.push(chunk(words))
      threads.receiveRecords('s3', day.length - 1, day.slice(-1))
      threads.flushRecords()
    }
    expect(await taking).toBe(true)
    expect(open().later).toBeNull()
    expect(last()).toMatchObject({ kind: 'assistant', text: 'so far and more and the rest' })
    // And it goes on after.
    day.push(chunk('.'))
    threads.receiveRecords('s3', day.length - 1, day.slice(-1))
    threads.flushRecords()
    expect(last()).toMatchObject({ kind: 'assistant', text: 'so far and more and the rest.' })
    expect(toRaw(open().thread).entries).toEqual(foldTail(day.slice(open().firstSeq), day.length).entries)
  })
})
