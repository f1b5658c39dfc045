// @vitest-environment happy-dom
import '../component/happy-dom-fixes'
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPinia, setActivePinia } from 'pinia'
import type { SessionRecord } from '../../shared/domain'
import type { TranscriptRecord } from '../../shared/transcript'
import { readTranscriptLater, readTranscriptPage, readTranscriptTail } from '../../electron/host/storage/transcript-pages'
import { useThreadsStore, WINDOW_RECORDS } from '../../renderer/src/stores/threads'
import { FakeHost } from '../component/fake-host'

/**
 * A conversation of any length in the window (issue 40): the thread store
 * over a real transcript of 60,000 records, paged by the Host's own readers.
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

let dir: string
let file: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'thread-window-'))
  file = join(dir, 's1.jsonl')
  const lines = [
    JSON.stringify({ t: 'header', v: 2, id: 's1', acpSessionId: 'acp-1', agentId: 'a1', projectId: 'p1', cwd: '/work/app', createdAt: at })
  ]
  for (let i = 0; i < TURNS; i++) for (const r of turn(i)) lines.push(JSON.stringify(r))
  await writeFile(file, lines.join('\n') + '\n')
  setActivePinia(createPinia())
  new FakeHost()
    .answer('sessions.open', async (p: { tail: number }) => {
      const page = await readTranscriptTail(file, { limit: p.tail })
      return { record, state: { id: 's1', status: 'idle' }, ...page }
    })
    .answer('transcripts.read', (p: { before: number; offset: number; limit: number }) =>
      readTranscriptPage(file, p.before, p.offset, { limit: p.limit })
    )
    .answer('transcripts.readLater', (p: { from: number; offset: number; limit: number }) =>
      readTranscriptLater(file, p.from, p.offset, { limit: p.limit })
    )
    .install()
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
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
    await appendFile(file, more.map((r) => JSON.stringify(r)).join('\n') + '\n')
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
    threads.receiveRecords('s1', 1 + (TURNS + 1) * 3, turn(TURNS + 1))
    threads.flushRecords()
    expect(texts('user').at(-1)).toBe(`question ${TURNS + 1}`)
    expect(texts('user').filter((t) => t === `question ${TURNS}`)).toHaveLength(1)
  }, 120_000)
})
