// @vitest-environment happy-dom
import './happy-dom-fixes'
import { flushPromises } from '@vue/test-utils'
import { beforeEach, describe, expect, it } from 'vitest'
import { nextTick, watchEffect } from 'vue'
import { createPinia, setActivePinia } from 'pinia'
import type { SessionSnapshot } from '../../shared/contract'
import type { SessionRecord } from '../../shared/domain'
import type { TranscriptRecord } from '../../shared/transcript'
import { routeEvents } from '../../renderer/src/event-router'
import { usePanesStore } from '../../renderer/src/stores/panes'
import { useProjectsStore } from '../../renderer/src/stores/projects'
import { useSessionsStore } from '../../renderer/src/stores/sessions'
import { useThreadsStore } from '../../renderer/src/stores/threads'
import { FakeHost, nextFrame, summaryOf } from './fake-host'

const at = '2026-01-01T00:00:00.000Z'
const record: SessionRecord = {
  id: 's1',
  acpSessionId: 'acp-1',
  agentId: 'a1',
  projectId: 'p1',
  cwd: '/work/app',
  title: 'A session',
  titleSource: 'prompt',
  createdAt: at,
  updatedAt: at
}
const chunk = (text: string): TranscriptRecord => ({
  t: 'update',
  at,
  update: { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text } }
})

function snapshot(records: TranscriptRecord[]): SessionSnapshot {
  return { record, state: { id: 's1', status: 'running' }, records, nextSeq: records.length + 1, skippedLines: 0, firstSeq: 0, firstOffset: 0 }
}

let fake: FakeHost
let transcript: TranscriptRecord[]

beforeEach(() => {
  setActivePinia(createPinia())
  transcript = [{ t: 'prompt', at, content: [{ type: 'text', text: 'hello' }] }]
  // seq of a record is its line: the header is line 0, so transcript[i] has seq i + 1.
  fake = new FakeHost().answer('sessions.open', () => snapshot(transcript)).install()
})

function assistantText(sessions: ReturnType<typeof useSessionsStore>): string | undefined {
  const entry = useThreadsStore().threads.s1?.thread.entries.find((e) => e.kind === 'assistant')
  return entry && 'text' in entry ? entry.text : undefined
}

describe('the sessions store', () => {
  it('opens a session from its snapshot', async () => {
    const sessions = useSessionsStore()
    await sessions.open('s1')
    expect(sessions.openId).toBe('s1')
    expect(useThreadsStore().threads.s1.thread.entries).toEqual([{ kind: 'user', id: 'r1', text: 'hello' }])
    expect(useThreadsStore().threads.s1.nextSeq).toBe(2)
    expect(sessions.stateOf('s1').status).toBe('running')
  })

  it('applies streamed records once per animation frame, in order, as one update of the view', async () => {
    const sessions = useSessionsStore()
    await sessions.open('s1')
    let runs = 0
    watchEffect(() => {
      void assistantText(sessions)
      runs++
    })
    expect(runs).toBe(1)
    // Three messages from the Host, each its own task, as over a WebSocket.
    for (const [i, text] of ['Hel', 'lo ', 'there'].entries()) {
      useThreadsStore().receiveRecords('s1', 2 + i, [chunk(text)])
      await nextTick()
    }
    expect(assistantText(sessions)).toBeUndefined()
    expect(runs).toBe(1)
    await nextFrame()
    await nextTick()
    expect(assistantText(sessions)).toBe('Hello there')
    expect(runs).toBe(2)
    expect(useThreadsStore().threads.s1.nextSeq).toBe(5)
  })

  it('when frames run late, leaves a frame to the browser, then shows one session at a time; nothing is lost or reordered', async () => {
    const threads = useThreadsStore()
    fake.answer('sessions.open', ({ id }: { id: string }) => ({
      ...snapshot([transcript[0]]),
      record: { ...record, id },
      state: { id, status: 'running' }
    }))
    await threads.load('s1')
    await threads.load('s2')
    const text = (id: string): string | undefined => {
      const entry = threads.threads[id]?.thread.entries.find((e) => e.kind === 'assistant')
      return entry && 'text' in entry ? entry.text : undefined
    }
    // The page's frames, run by hand at chosen times.
    const callbacks: FrameRequestCallback[] = []
    const realFrame = globalThis.requestAnimationFrame
    const realCancel = globalThis.cancelAnimationFrame
    globalThis.requestAnimationFrame = (callback) => callbacks.push(callback)
    globalThis.cancelAnimationFrame = () => undefined
    const frame = (at: number): void => {
      for (const callback of callbacks.splice(0)) callback(at)
    }
    try {
      let seq = 2
      const send = (one: string, two: string): void => {
        threads.receiveRecords('s1', seq, [chunk(one)])
        threads.receiveRecords('s2', seq, [chunk(two)])
        seq += 1
      }
      send('a', 'b')
      frame(1000)
      expect([text('s1'), text('s2')]).toEqual(['a', 'b'])
      send('c', 'd')
      // 50 ms after the last: late. This frame shows nothing...
      frame(1050)
      expect([text('s1'), text('s2')]).toEqual(['a', 'b'])
      // ...the next one the session that waited longest...
      frame(1066)
      expect([text('s1'), text('s2')]).toEqual(['ac', 'b'])
      send('e', 'f')
      // ...and once frames are on time again, everything.
      frame(1083)
      expect([text('s1'), text('s2')]).toEqual(['ace', 'bdf'])
      // One session streaming alone is never split.
      threads.receiveRecords('s1', seq, [chunk('g')])
      frame(1150)
      frame(1170)
      expect(text('s1')).toBe('aceg')
      // An explicit flush takes everything at once, late or not.
      threads.receiveRecords('s1', seq + 1, [chunk('h')])
      threads.receiveRecords('s2', seq, [chunk('i')])
      threads.flushRecords()
      expect([text('s1'), text('s2')]).toEqual(['acegh', 'bdfi'])
    } finally {
      globalThis.requestAnimationFrame = realFrame
      globalThis.cancelAnimationFrame = realCancel
    }
  })

  it('a question asked, or the turn ended, never shows before the words streamed ahead of it; other sessions still wait for their frame', async () => {
    const sessions = useSessionsStore()
    await sessions.open('s1')
    const threads = useThreadsStore()
    const s2: SessionSnapshot = { ...snapshot([]), record: { ...record, id: 's2' }, state: { id: 's2', status: 'running' }, nextSeq: 1 }
    fake.answer('sessions.open', (params) => ((params as { id: string }).id === 's2' ? s2 : snapshot(transcript)))
    await threads.load('s2')
    const asked = { requestId: 'r1', title: 'Run tests', options: [] }
    // As the Host sends them: the last chunks, another session's chunk, then the question, in one batch.
    routeEvents([
      { type: 'session.records', payload: { id: 's1', seq: 2, records: [chunk('chunk 29 '), chunk('chunk 30')] } },
      { type: 'session.records', payload: { id: 's2', seq: 1, records: [chunk('elsewhere')] } },
      { type: 'session.state', payload: { id: 's1', status: 'running', permissions: [asked] } }
    ])
    expect(sessions.stateOf('s1').permissions).toHaveLength(1)
    expect(assistantText(sessions)).toBe('chunk 29 chunk 30')
    expect(threads.threads.s2.thread.entries).toEqual([])
    // A state that shows nothing new (the same status, the same questions) does not hurry the stream.
    routeEvents([
      { type: 'session.records', payload: { id: 's1', seq: 4, records: [chunk(' more')] } },
      { type: 'session.state', payload: { id: 's1', status: 'running', permissions: [asked] } }
    ])
    expect(assistantText(sessions)).toBe('chunk 29 chunk 30')
    await nextFrame()
    expect(assistantText(sessions)).toBe('chunk 29 chunk 30 more')
    expect(threads.threads.s2.thread.entries).toHaveLength(1)
    // The turn ends: its last words are in before "idle" is.
    routeEvents([
      { type: 'session.records', payload: { id: 's1', seq: 5, records: [chunk('. Done')] } },
      { type: 'session.state', payload: { id: 's1', status: 'idle' } }
    ])
    expect(assistantText(sessions)).toBe('chunk 29 chunk 30 more. Done')
  })

  it('skips what the snapshot already holds when a session is opened mid-stream', async () => {
    transcript.push(chunk('one '), chunk('two '))
    const sessions = useSessionsStore()
    await sessions.open('s1')
    // An event sent before the snapshot was read, arriving after it, then a new one.
    useThreadsStore().receiveRecords('s1', 2, [chunk('one '), chunk('two ')])
    useThreadsStore().receiveRecords('s1', 4, [chunk('three')])
    useThreadsStore().flushRecords()
    expect(assistantText(sessions)).toBe('one two three')
  })

  it('fetches the snapshot again when records were missed, and shows each record once', async () => {
    const sessions = useSessionsStore()
    await sessions.open('s1')
    transcript.push(chunk('lost '), chunk('found'))
    // seq 3 arrives but 2 never did (the connection dropped).
    useThreadsStore().receiveRecords('s1', 3, [chunk('found')])
    useThreadsStore().flushRecords()
    await expect.poll(() => assistantText(sessions)).toBe('lost found')
    expect(fake.calls('sessions.open')).toHaveLength(2)
    expect(useThreadsStore().threads.s1.nextSeq).toBe(4)
  })

  it('shows an entry asked for from elsewhere: opens its session and names the entry', async () => {
    const sessions = useSessionsStore()
    await sessions.revealEntry('s1', 'e0')
    expect(sessions.openId).toBe('s1')
    expect(sessions.entryToReveal).toEqual({ sessionId: 's1', entry: 'e0' })
  })
})

describe('deleting the session a pane shows', () => {
  const parent: SessionRecord = { ...record, id: 'parent', title: 'The original' }
  const fork: SessionRecord = { ...record, id: 'fork', title: 'Fork of The original', forkedFrom: 'parent' }
  const plain: SessionRecord = { ...record, id: 'plain', title: 'Another' }

  beforeEach(() => {
    useProjectsStore().setAll([], summaryOf([parent, fork, plain]))
    fake
      .answer('sessions.open', ({ id }: { id: string }) => ({
        ...snapshot([{ t: 'prompt', at, content: [{ type: 'text', text: `in ${id}` }] }]),
        record: [parent, fork, plain].find((s) => s.id === id)
      }))
      .answer('sessions.delete', () => ({ agentDeleted: true }))
  })

  it('shows the session it was forked from in that pane, loaded', async () => {
    const sessions = useSessionsStore()
    await sessions.open('fork')
    expect(usePanesStore().focused.sessionId).toBe('fork')
    await sessions.remove('fork', false)
    expect(usePanesStore().focused.sessionId).toBe('parent')
    await flushPromises()
    expect(useThreadsStore().threads.parent.thread.entries).toEqual([{ kind: 'user', id: 'r1', text: 'in parent' }])
  })

  it('also when the removal comes as an event (another window deleted it)', async () => {
    const sessions = useSessionsStore()
    await sessions.open('fork')
    routeEvents([{ type: 'session.removed', payload: { id: 'fork' } }])
    expect(usePanesStore().focused.sessionId).toBe('parent')
    expect(useProjectsStore().sessionById('fork')).toBeUndefined()
  })

  it('leaves the pane empty when the origin is gone or already shown in another pane', async () => {
    const sessions = useSessionsStore()
    const panes = usePanesStore()
    await sessions.open('parent')
    await sessions.openInNewPane('fork')
    await sessions.remove('fork', false)
    expect(panes.panes.map((p) => p.sessionId)).toEqual(['parent', null])

    await sessions.open('plain')
    await sessions.remove('plain', false)
    expect(panes.panes.map((p) => p.sessionId)).toEqual(['parent', null])
  })

  it('asks for the origin by id when the pages the window holds do not have it', async () => {
    useProjectsStore().removeSession('parent')
    fake.answer('sessions.get', ({ ids }: { ids: string[] }) => [parent].filter((s) => ids.includes(s.id)))
    const sessions = useSessionsStore()
    await sessions.open('fork')
    routeEvents([{ type: 'session.removed', payload: { id: 'fork' } }])
    await flushPromises()
    expect(fake.sent('sessions.get')).toEqual([{ ids: ['parent'] }])
    expect(usePanesStore().focused.sessionId).toBe('parent')
    expect(useProjectsStore().sessionById('parent')?.title).toBe('The original')
  })
})

describe('reading every state again (a reconnect)', () => {
  it('replaces the states: a session the Host no longer lists is idle, one that changed meanwhile keeps its newer state', async () => {
    const sessions = useSessionsStore()
    const permission = { requestId: 'r1', toolCallId: 't1', title: 'Run dangerous command', options: [] }
    sessions.receiveState({ id: 's1', status: 'running', permissions: [permission] })
    sessions.receiveState({ id: 's2', status: 'running' })
    sessions.receiveState({ id: 's3', status: 'ready' })
    let answer: (states: { id: string; status: 'ready' | 'running' }[]) => void = () => undefined
    const read = sessions.readStates(new Promise((resolve) => (answer = resolve)))
    // While the answer is on its way, s3's turn starts: that event is newer than the answer.
    sessions.receiveState({ id: 's3', status: 'running' })
    answer([
      { id: 's2', status: 'ready' },
      { id: 's3', status: 'ready' }
    ])
    await read
    expect(sessions.stateOf('s1')).toEqual({ id: 's1', status: 'idle' })
    expect(sessions.stateOf('s2')).toEqual({ id: 's2', status: 'ready' })
    expect(sessions.stateOf('s3')).toEqual({ id: 's3', status: 'running' })
    // Later events apply as ever.
    sessions.receiveState({ id: 's3', status: 'ready' })
    expect(sessions.stateOf('s3').status).toBe('ready')
  })
})
