import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { HostEvent } from '../../shared/contract'
import type { Project, SessionRecord } from '../../shared/domain'
import { applyRecord, foldTail, TAIL_RECORDS } from '../../shared/thread-fold'
import { createThread, type Thread } from '../../shared/thread'
import type { TranscriptRecord } from '../../shared/transcript'
import { SearchIndex } from '../../electron/host/search/search-index'
import { IndexSaves } from '../../electron/host/search/index-file'
import { snippet } from '../../electron/host/search/query'
import { fold, removeDir, tempDir } from '../helpers'

let dir: string
let projects: Project[]
let sessions: SessionRecord[]
const live = new Map<string, Thread>()
let index: SearchIndex

const at = '2026-01-01T00:00:00.000Z'

function project(id: string, name: string, cwd: string): Project {
  return { id, name, cwd, createdAt: at }
}

function session(id: string, title: string, projectId = 'p1'): SessionRecord {
  return {
    id,
    acpSessionId: `acp-${id}`,
    agentId: 'agent-a',
    projectId,
    cwd: '/code/app',
    title,
    titleSource: 'prompt',
    createdAt: at,
    updatedAt: at
  }
}

const header = (id: string): TranscriptRecord => ({
  t: 'header',
  v: 2,
  id,
  acpSessionId: `acp-${id}`,
  agentId: 'agent-a',
  projectId: 'p1',
  cwd: '/code/app',
  createdAt: at
})
const prompt = (text: string): TranscriptRecord => ({ t: 'prompt', at, content: [{ type: 'text', text }] })
const chunk = (text: string, messageId = 'm1'): TranscriptRecord => ({
  t: 'update',
  at,
  update: { sessionUpdate: 'agent_message_chunk', messageId, content: { type: 'text', text } }
})

async function writeTranscript(id: string, records: TranscriptRecord[], extraLines: string[] = []): Promise<void> {
  const lines = records.map((r) => JSON.stringify(r))
  await writeFile(join(dir, `${id}.jsonl`), [...lines, ...extraLines].join('\n') + '\n')
}

function openIndex(file?: string): SearchIndex {
  index = new SearchIndex({
    transcriptDir: dir,
    file,
    projects: () => projects,
    sessions: () => sessions,
    threadOf: (id) => live.get(id)
  })
  return index
}

/** What the Host does on each append: fold into the live thread, then emit. */
function append(id: string, seq: number, record: TranscriptRecord): void {
  let thread = live.get(id)
  if (!thread) {
    thread = createThread()
    live.set(id, thread)
  }
  applyRecord(thread, record)
  index.noteEvent({ type: 'session.records', payload: { id, seq, records: [record] } })
}

function emit(event: HostEvent): void {
  index.noteEvent(event)
}

beforeEach(async () => {
  dir = join(await tempDir('search'), 'transcripts')
  await mkdir(dir, { recursive: true })
  projects = [project('p1', 'acme-api', '/code/acme-api'), project('p2', 'website', '/code/www')]
  sessions = []
  live.clear()
})

afterEach(async () => {
  await index?.close()
  await removeDir(join(dir, '..'))
})

describe('the search index', () => {
  it('is built from the transcripts on disk: a phrase streamed over many chunks is one hit, naming its entry and first record', async () => {
    sessions = [session('s1', 'Port configuration'), session('s2', 'Unrelated')]
    const records = [
      header('s1'),
      prompt('How is the port chosen?'),
      chunk('The server reads the '),
      chunk('PORT environment vari'),
      chunk('able and falls back to 8080.'),
      { t: 'stop', at, stopReason: 'end_turn' } satisfies TranscriptRecord
    ]
    // A line torn by a crash is skipped, as everywhere else.
    await writeTranscript('s1', records, ['{"t":"update","at":'])
    await writeTranscript('s2', [header('s2'), prompt('Something else entirely')])
    await openIndex().build()

    const results = index.query('environment variable')
    expect(results.indexing).toBeNull()
    expect(results.entries).toHaveLength(1)
    const [hit] = results.entries
    const thread = fold(records)
    const assistant = thread.entries.find((e) => e.kind === 'assistant')!
    expect(hit).toMatchObject({
      kind: 'entry',
      sessionId: 's1',
      projectId: 'p1',
      entryId: assistant.id,
      entryKind: 'assistant',
      seq: 2,
      title: 'Port configuration'
    })
    expect(hit.snippet.text).toBe('The server reads the PORT environment variable and falls back to 8080.')
    expect(hit.snippet.marks.map(([a, b]) => hit.snippet.text.slice(a, b))).toEqual(['environment variable'])

    // The user's own words, titles and projects are found too.
    expect(index.query('port chosen').entries[0]).toMatchObject({ sessionId: 's1', entryKind: 'user', seq: 1 })
    expect(index.query('configuration').sessions.map((h) => h.sessionId)).toEqual(['s1'])
    expect(index.query('acme').projects.map((h) => h.projectId)).toEqual(['p1'])
    expect(index.query('www').projects[0].snippet.text).toBe('/code/www')
    // Search as you type: the last word is a prefix.
    expect(index.query('falls ba').entries).toHaveLength(1)
    // Every word must match.
    expect(index.query('environment website').entries).toHaveLength(0)
  })

  it('shows a message found in markdown as the words the window shows: no pipes, backticks, stars or hashes', async () => {
    const answer =
      '## Ports\n\n| name | port |\n| --- | --- |\n| **web** | `8080` |\n\nRun `npm run serve` and open [the page](http://localhost:8080).'
    sessions = [session('s1', 'Ports')]
    await writeTranscript('s1', [header('s1'), prompt('Which *port*?'), chunk(answer)])
    await openIndex().build()
    const [hit] = index.query('npm run serve').entries
    expect(hit.snippet.text).toBe('Ports name port web 8080 Run npm run serve and open the page.')
    expect(hit.snippet.marks.map(([a, b]) => hit.snippet.text.slice(a, b))).toEqual(['Run', 'npm run serve'])
    expect(index.query('port').entries.find((h) => h.entryKind === 'user')?.snippet.text).toBe('Which port?')
  })

  it('ranks text holding the exact phrase above text holding only its words, and "quotes" keep only the phrase', async () => {
    sessions = [session('s1', 'One'), session('s2', 'Two')]
    await writeTranscript('s1', [header('s1'), chunk('keys then rotate')])
    await writeTranscript('s2', [
      header('s2'),
      chunk('Before every release we rotate keys for the staging and production services, then deploy the new build to all regions.')
    ])
    await openIndex().build()

    const ranked = index.query('rotate keys').entries
    expect(ranked.map((h) => h.sessionId)).toEqual(['s2', 's1'])
    expect(ranked[0].score).toBeGreaterThan(ranked[1].score)
    expect(index.query('"rotate keys"').entries.map((h) => h.sessionId)).toEqual(['s2'])
  })

  it('follows a live session as it grows, in batches, and sees everything appended before a query', async () => {
    sessions = [session('s1', 'New session')]
    await writeTranscript('s1', [header('s1')])
    await openIndex().build()

    append('s1', 1, prompt('Deploy the billing service'))
    append('s1', 2, chunk('Deploying billing '))
    expect(
      index
        .query('billing')
        .entries.map((h) => h.entryKind)
        .sort()
    ).toEqual(['assistant', 'user'])
    append('s1', 3, chunk('to eu-west-1 now'))
    const hit = index.query('eu-west-1').entries[0]
    expect(hit).toMatchObject({ sessionId: 's1', entryKind: 'assistant', seq: 2 })
    expect(hit.snippet.text).toBe('Deploying billing to eu-west-1 now')

    // A tool call's title changes as it runs: the old title is no longer found.
    append('s1', 4, { t: 'update', at, update: { sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Pending step', status: 'pending' } })
    expect(index.query('pending step').entries).toHaveLength(1)
    append('s1', 5, {
      t: 'update',
      at,
      update: { sessionUpdate: 'tool_call_update', toolCallId: 't1', title: 'Run database migrations', status: 'completed' }
    })
    expect(index.query('pending step').entries).toHaveLength(0)
    expect(index.query('migrations').entries[0]).toMatchObject({ entryKind: 'tool_call', seq: 4 })

    // A session/load replay replaces the view: what was there before is gone unless replayed.
    append('s1', 6, { t: 'reset', at, reason: 'load' })
    append('s1', 7, {
      t: 'update',
      at,
      update: { sessionUpdate: 'user_message_chunk', messageId: 'u1', content: { type: 'text', text: 'Replayed question about caching' } }
    })
    expect(index.query('billing').entries).toHaveLength(0)
    expect(index.query('caching').entries[0]).toMatchObject({ entryKind: 'user', seq: 7 })
  })

  it('finds a message still streaming whole, once its batch has gone by, and once its turn has ended', async () => {
    sessions = [session('s1', 'New session')]
    await writeTranscript('s1', [header('s1')])
    await openIndex().build()
    const batchGoneBy = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 300))
    append('s1', 1, prompt('Deploy the billing service'))
    append('s1', 2, chunk('Deploying billing '))
    await batchGoneBy()
    append('s1', 3, chunk('to eu-west-1 '))
    await batchGoneBy()
    expect(index.query('eu-west-1').entries[0]?.snippet.text).toBe('Deploying billing to eu-west-1')
    append('s1', 4, chunk('and then to us-east-2'))
    append('s1', 5, { t: 'stop', at, stopReason: 'end_turn' })
    await batchGoneBy()
    expect(index.query('us-east-2').entries[0]?.snippet.text).toBe('Deploying billing to eu-west-1 and then to us-east-2')
    expect(index.query('billing').entries).toHaveLength(2)
  })

  it('follows titles, removed sessions and projects', async () => {
    sessions = [session('s1', 'Old title'), session('s2', 'Keep me', 'p2')]
    await writeTranscript('s1', [header('s1'), prompt('a message about kittens')])
    await writeTranscript('s2', [header('s2'), prompt('a message about puppies')])
    await openIndex().build()

    sessions[0] = { ...sessions[0], title: 'Renamed conversation' }
    emit({ type: 'session.record', payload: sessions[0] })
    expect(index.query('old title').sessions).toHaveLength(0)
    expect(index.query('renamed').sessions.map((h) => h.sessionId)).toEqual(['s1'])
    expect(index.query('kittens').entries[0].title).toBe('Renamed conversation')

    sessions = sessions.filter((s) => s.id !== 's1')
    emit({ type: 'session.removed', payload: { id: 's1' } })
    expect(index.query('kittens').entries).toHaveLength(0)
    expect(index.query('renamed').sessions).toHaveLength(0)
    expect(index.query('puppies').entries).toHaveLength(1)

    projects = [project('p2', 'marketing site', '/code/www')]
    emit({ type: 'projects.changed', payload: projects })
    expect(index.query('acme').projects).toHaveLength(0)
    expect(index.query('marketing').projects.map((h) => h.projectId)).toEqual(['p2'])
  })

  it('reports its progress while it is still being built', async () => {
    sessions = Array.from({ length: 30 }, (_, i) => session(`s${i}`, `Session ${i}`))
    for (const s of sessions) await writeTranscript(s.id, [header(s.id), prompt(`needle number ${s.id}`)])
    const building = openIndex().build()
    const early = index.query('needle')
    expect(early.indexing).toEqual({ done: expect.any(Number), total: 30 })
    expect(early.indexing!.done).toBeLessThan(30)
    await building
    const done = index.query('needle', 100)
    expect(done.indexing).toBeNull()
    expect(done.entries).toHaveLength(30)
  })

  it('finds every conversation by its title from the start of a build, before the transcripts before it are read', async () => {
    sessions = Array.from({ length: 40 }, (_, i) => session(`s${i}`, `Session ${i}: a title`))
    for (const s of sessions) await writeTranscript(s.id, [header(s.id), prompt(`words of ${s.id}`)])
    const read: string[] = []
    let found: (string | undefined)[] | null = null
    index = new SearchIndex({
      transcriptDir: dir,
      projects: () => projects,
      sessions: () => sessions,
      threadOf: (id) => live.get(id),
      onTranscriptRead: (id) => {
        read.push(id)
        // While the first transcript is taken in, the last session is asked for by its title.
        if (read.length === 1) found = index.query('Session 39:').sessions.map((hit) => hit.sessionId)
      }
    })
    await index.build()
    expect(found).toEqual(['s39'])
  })

  it('reads transcripts ahead of the one it indexes, yet a session removed or gone live meanwhile is not taken from disk', async () => {
    sessions = Array.from({ length: 40 }, (_, i) => session(`s${i}`, `Session ${i}`))
    for (const s of sessions) await writeTranscript(s.id, [header(s.id), prompt(`needle number ${s.id}`)])
    const indexed: string[] = []
    index = new SearchIndex({
      transcriptDir: dir,
      projects: () => projects,
      sessions: () => sessions,
      threadOf: (id) => live.get(id),
      onTranscriptRead: (id) => {
        indexed.push(id)
        // While s10 is taken in, the transcripts after it are being read already: s11 is deleted, s12 goes live.
        if (id !== 's10') return
        sessions = sessions.filter((s) => s.id !== 's11')
        emit({ type: 'session.removed', payload: { id: 's11' } })
        append('s12', 2, prompt('live words only'))
      }
    })
    await index.build()
    expect(indexed).not.toContain('s11')
    expect(indexed).not.toContain('s12')
    const found = index.query('needle', 100).entries.map((e) => e.sessionId)
    expect(found).toHaveLength(38)
    expect(found).not.toContain('s11')
    // s12 is indexed from the Host's fold, which is newer than its transcript.
    expect(index.query('live words', 100).entries.map((e) => e.sessionId)).toEqual(['s12'])
    // The rest were indexed in the order of the sessions.
    expect(indexed).toEqual(sessions.map((s) => s.id).filter((id) => id !== 's12'))
  })
})

describe('when the index is built', () => {
  it('once the Host has been quiet for a second after its requests, after 10 s if nothing asks, at 30 s at the latest, or at a search', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      const started = (hooks: { buildOnSearchOnly?: boolean } = {}): { started: () => boolean } => {
        let began = false
        index = new SearchIndex({
          transcriptDir: dir,
          projects: () => projects,
          sessions: () => sessions,
          threadOf: (id) => live.get(id),
          onBuildStep: (step) => void (began ||= step.step === 'start'),
          ...hooks
        })
        index.buildWhenQuiet()
        return { started: () => began }
      }
      // The window's first requests keep it waiting; a second of quiet starts it.
      let build = started()
      for (let i = 0; i < 5; i++) {
        vi.advanceTimersByTime(900)
        index.noteRequest()
      }
      expect(build.started()).toBe(false)
      vi.advanceTimersByTime(1_000)
      expect(build.started()).toBe(true)
      // Nothing asks (no window): 10 s after the start.
      build = started()
      vi.advanceTimersByTime(9_900)
      expect(build.started()).toBe(false)
      vi.advanceTimersByTime(100)
      expect(build.started()).toBe(true)
      // A window that never stops asking: at 30 s.
      build = started()
      for (let i = 0; i < 59; i++) {
        vi.advanceTimersByTime(500)
        index.noteRequest()
      }
      expect(build.started()).toBe(false)
      vi.advanceTimersByTime(500)
      expect(build.started()).toBe(true)
      // A search starts it at once; with buildOnSearchOnly nothing else does.
      build = started({ buildOnSearchOnly: true })
      vi.advanceTimersByTime(60_000)
      expect(build.started()).toBe(false)
      index.query('anything')
      expect(build.started()).toBe(true)
    } finally {
      vi.useRealTimers()
    }
  })

  it('not while a request is still being answered (a long fork): a second after its answer, or at 30 s at the latest', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      const started = (): { started: () => boolean } => {
        let began = false
        index = new SearchIndex({
          transcriptDir: dir,
          projects: () => projects,
          sessions: () => sessions,
          threadOf: (id) => live.get(id),
          onBuildStep: (step) => void (began ||= step.step === 'start')
        })
        index.buildWhenQuiet()
        return { started: () => began }
      }
      const request = (): { answer: () => Promise<void> } => {
        let answer!: () => void
        index.noteRequest(new Promise<void>((resolve) => (answer = resolve)))
        return { answer: async () => void (answer(), await vi.advanceTimersByTimeAsync(0)) }
      }
      let build = started()
      const fork = request()
      await vi.advanceTimersByTimeAsync(8_000)
      expect(build.started()).toBe(false)
      await fork.answer()
      await vi.advanceTimersByTimeAsync(900)
      expect(build.started()).toBe(false)
      await vi.advanceTimersByTimeAsync(100)
      expect(build.started()).toBe(true)
      // One that is never answered: at 30 s.
      build = started()
      request()
      await vi.advanceTimersByTimeAsync(29_900)
      expect(build.started()).toBe(false)
      await vi.advanceTimersByTimeAsync(100)
      expect(build.started()).toBe(true)
    } finally {
      vi.useRealTimers()
    }
  })

  it('once under way, reads no transcript while a request is being answered (a window opening a conversation), nor waits for one asked 250 ms before, and waits 300 ms more after an answer the window draws', async () => {
    sessions = [session('s1', 'One'), session('s2', 'Two'), session('s3', 'Three')]
    for (const { id } of sessions) await writeTranscript(id, [header(id), prompt(`words of ${id}`)])
    // The clock stands still but for the test's moves: a request stays as young as it was asked.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    /** Turns of the event loop with what the build reads from disk in between: far more than reading three transcripts takes. */
    const turns = async (): Promise<void> => {
      for (let i = 0; i < 20; i++) {
        await new Promise((resolve) => setImmediate(resolve))
        await readFile(join(dir, 's1.jsonl'))
      }
    }
    try {
      for (const how of ['answered', 'drawn', 'unanswered'] as const) {
        const read: string[] = []
        let started = false
        index = new SearchIndex({
          transcriptDir: dir,
          projects: () => projects,
          sessions: () => sessions,
          threadOf: () => undefined,
          onTranscriptRead: (id) => read.push(id),
          onBuildStep: (step) => void (started ||= step.step === 'start')
        })
        let answer!: () => void
        index.noteRequest(new Promise<void>((resolve) => (answer = resolve)), how === 'drawn')
        const built = index.build()
        await turns()
        expect(started).toBe(true)
        expect(read).toEqual([])
        if (how === 'answered') {
          answer()
          await vi.advanceTimersByTimeAsync(0)
        } else if (how === 'drawn') {
          // A conversation's tail, answered: the window draws it, and the build holds 300 ms more (not forever).
          answer()
          await vi.advanceTimersByTimeAsync(0)
          await turns()
          expect(read).toEqual([])
          await vi.advanceTimersByTimeAsync(299)
          await turns()
          expect(read).toEqual([])
          await vi.advanceTimersByTimeAsync(1)
        } else {
          // A request still not answered 250 ms after it was asked (a turn, a fork) holds the build no longer.
          await vi.advanceTimersByTimeAsync(249)
          await turns()
          expect(read).toEqual([])
          await vi.advanceTimersByTimeAsync(1)
        }
        await built
        expect(read).toEqual(['s1', 's2', 's3'])
        expect(index.query('words of s3').entries.map((e) => e.sessionId)).toEqual(['s3'])
        await index.stop()
      }
    } finally {
      vi.useRealTimers()
    }
  })

  it('saves the index a build read, but not while a request is being answered (a long fork): a second after its answer, or 30 s later at the latest', async () => {
    // More sessions than a line of the file holds (100).
    sessions = Array.from({ length: 150 }, (_, i) => session(`s${i}`, `Session ${i}`))
    for (const { id } of sessions) await writeTranscript(id, [header(id), prompt(`saved words of ${id}`)])
    const file = join(dir, '..', 'search-index.json')
    const saves = vi.spyOn(IndexSaves.prototype, 'save')
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      for (const answered of [true, false]) {
        await rm(file, { force: true })
        saves.mockClear()
        // No usable file: the build's reads are saved soon after it completes (2 s), once the Host is quiet.
        await openIndex(file).build()
        let answer!: () => void
        index.noteRequest(new Promise<void>((resolve) => (answer = resolve)))
        await vi.advanceTimersByTimeAsync(answered ? 10_000 : 31_900)
        expect(saves).not.toHaveBeenCalled()
        if (answered) {
          answer()
          await vi.advanceTimersByTimeAsync(900)
          expect(saves).not.toHaveBeenCalled()
        }
        await vi.advanceTimersByTimeAsync(100)
        expect(saves).toHaveBeenCalledTimes(1)
        await saves.mock.results[0].value
        await index.stop()
        // What was saved is the index: a Host started on it finds the words without reading the transcript.
        const read: string[] = []
        index = new SearchIndex({
          transcriptDir: dir,
          file,
          projects: () => projects,
          sessions: () => sessions,
          threadOf: () => undefined,
          onTranscriptRead: (id) => read.push(id)
        })
        await index.build()
        expect(index.query('saved words', 200).entries).toHaveLength(150)
        expect(index.query('saved words of s149').entries.map((e) => e.sessionId)).toEqual(['s149'])
        expect(read).toEqual([])
        await index.stop()
      }
    } finally {
      vi.useRealTimers()
      saves.mockRestore()
    }
  })
})

describe('the index under churn', () => {
  it('keeps up with answers that change while it is vacuumed: no crash, and the newest text found', async () => {
    // Many distinct words, so that vacuuming the index takes more than one of MiniSearch's batches.
    let seed = 7
    const word = (): string =>
      Array.from(
        { length: 3 + ((seed = (seed * 16807) % 2147483647) % 8) },
        () => 'abcdefghijklmnopqrstuvwxyz'[(seed = (seed * 16807) % 2147483647) % 26]
      ).join('')
    const words = (n: number): string => Array.from({ length: n }, word).join(' ')
    sessions = Array.from({ length: 20 }, (_, i) => session(`s${i}`, `Session ${i}`))
    for (const s of sessions) await writeTranscript(s.id, [header(s.id), prompt(words(400))])
    await openIndex().build()
    const unhandled: unknown[] = []
    const note = (reason: unknown): number => unhandled.push(reason)
    process.on('unhandledRejection', note)
    try {
      // Each round, every session's answer grows: its entry is replaced (discarded, added again).
      for (let round = 0; round < 120; round++) {
        for (const [i, s] of sessions.entries())
          append(s.id, 2 + round, chunk(` ${words(6)}${round === 119 ? ` marker${'abcdefghijklmnopqrst'[i].repeat(4)}` : ''}`))
        index.flush()
        await new Promise((resolve) => setTimeout(resolve, 3))
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    } finally {
      process.off('unhandledRejection', note)
    }
    expect(unhandled).toEqual([])
    // Found once a vacuum under way is done (the index adds nothing meanwhile).
    await vi.waitFor(() => expect(index.query('markerhhhh').entries.map((e) => e.sessionId)).toEqual(['s7']), { timeout: 10_000 })
  })
})

describe('the index kept on disk', () => {
  it('takes in what a live session appended while the file was being read, and what was indexed before', async () => {
    const file = join(dir, '..', 'search-index.json')
    sessions = [session('s1', 'Billing'), session('s2', 'Other')]
    const s1 = [header('s1'), prompt('Deploy the billing service')]
    await writeTranscript('s1', s1)
    await writeTranscript('s2', [header('s2'), prompt('Rotate the staging keys')])
    await openIndex(file).build()
    await index.close()

    // The next start: the session goes live (folded from its transcript, as the Host does) and is renamed before the file has been read.
    const building = openIndex(file).build()
    live.set('s1', foldTail(s1, s1.length))
    append('s1', 2, chunk('Billing is deployed to eu-west-1'))
    sessions[0] = { ...sessions[0], title: 'Billing rollout' }
    emit({ type: 'session.record', payload: sessions[0] })
    expect(index.query('billing').indexing).not.toBeNull()
    await building

    const results = index.query('billing')
    expect(results.indexing).toBeNull()
    expect(results.entries.map((h) => [h.entryKind, h.seq]).sort()).toEqual([
      ['assistant', 2],
      ['user', 1]
    ])
    expect(results.sessions.map((h) => h.title)).toEqual(['Billing rollout'])
    expect(index.query('staging keys').entries.map((h) => h.sessionId)).toEqual(['s2'])
  })
})

describe('a long conversation, of which the Host folds the tail only', () => {
  /** 300 turns of a prompt and a reply: 601 records, more than the tail the Host folds (TAIL_RECORDS, 400). */
  const longDay = (id: string): TranscriptRecord[] => [
    header(id),
    ...Array.from({ length: 300 }, (_, i) => [prompt(`question about widget${i}`), chunk(`answer ${i}`, `m${i}`)]).flat()
  ]
  const sessionsWith = (q: string): string[] => [...new Set(index.query(q).entries.map((h) => String(h.sessionId)))].sort()

  it('keeps what it indexed before the tail when the conversation goes on', async () => {
    sessions = [session('s1', 'Long day')]
    const records = longDay('s1')
    await writeTranscript('s1', records)
    await openIndex().build()
    expect(sessionsWith('widget0')).toEqual(['s1'])
    // Continued after a start: the Host folds the transcript's tail, then what comes.
    live.set('s1', foldTail(records.slice(-TAIL_RECORDS), records.length))
    append('s1', records.length, prompt('one more question about gadgets'))
    expect(sessionsWith('gadgets')).toEqual(['s1'])
    expect(sessionsWith('widget0')).toEqual(['s1'])
    expect(sessionsWith('widget299')).toEqual(['s1'])
  })

  it('still forgets what came before a session/load replay, the replay the first it hears of the conversation', async () => {
    sessions = [session('s1', 'Long day')]
    const records = longDay('s1')
    await writeTranscript('s1', records)
    await openIndex().build()
    live.set('s1', foldTail(records.slice(-TAIL_RECORDS), records.length))
    append('s1', records.length, { t: 'reset', at, reason: 'load' })
    append('s1', records.length + 1, prompt('Replayed question about sprockets'))
    expect(sessionsWith('sprockets')).toEqual(['s1'])
    expect(sessionsWith('widget0')).toEqual([])
    expect(sessionsWith('widget299')).toEqual([])
  })

  it('finds a copied conversation (a fork) whole: what its tail does not hold is read from its transcript', async () => {
    sessions = [session('s1', 'Long day')]
    const records = longDay('s1')
    await writeTranscript('s1', records)
    await openIndex().build()
    // The fork: its transcript written as the records are told to the index (its view still empty), then its tail folded.
    const copy = [header('s2'), ...records.slice(1)]
    await writeTranscript('s2', copy)
    sessions = [...sessions, session('s2', 'Fork of long day')]
    live.set('s2', createThread())
    copy.slice(1).forEach((record, i) => emit({ type: 'session.records', payload: { id: 's2', seq: i + 1, records: [record] } }))
    live.set('s2', foldTail(copy.slice(-TAIL_RECORDS), copy.length))
    index.copied('s2')
    append('s2', copy.length, prompt('the fork goes on about gadgets'))
    await expect.poll(() => sessionsWith('widget0')).toEqual(['s1', 's2'])
    expect(sessionsWith('widget299')).toEqual(['s1', 's2'])
    expect(sessionsWith('gadgets')).toEqual(['s2'])
  })
})

describe('snippets', () => {
  it('show a window around the first match, cut at words, with every match marked', () => {
    const text = `${'lorem ipsum '.repeat(30)}the needle is here ${'dolor sit '.repeat(30)}`
    const result = snippet(text, 'needle', ['needle'])
    expect(result.text.startsWith('…')).toBe(true)
    expect(result.text.endsWith('…')).toBe(true)
    expect(result.text.length).toBeLessThan(200)
    expect(result.marks.map(([a, b]) => result.text.slice(a, b))).toEqual(['needle'])
    expect(result.text).toMatch(/^… ?\w/)
  })
})

describe('a long reply’s snippet', () => {
  /** A reply streamed as the soak's agent streams it: `chunk 1 chunk 2 …`, 6,000 chunks (~60,000 characters). */
  const longReply = (chunks: number): TranscriptRecord[] => Array.from({ length: chunks }, (_, i) => chunk(`chunk ${i + 1} `))
  const marked = (hit: { snippet: { text: string; marks: [number, number][] } }): string[] =>
    hit.snippet.marks.map(([a, b]) => hit.snippet.text.slice(a, b))

  it('shows the match deep in it, marked, cut on both sides', async () => {
    sessions = [session('s1', 'Streaming')]
    await writeTranscript('s1', [header('s1'), prompt('/stream 6000'), ...longReply(6000)])
    await openIndex().build()
    const [hit] = index.query('chunk 4321').entries
    expect(hit.snippet.text).toMatch(/^….*chunk 4321 chunk 4322.*…$/)
    expect(hit.snippet.text.length).toBeLessThan(200)
    expect(marked(hit)).toContain('chunk 4321')
    // The other matches in the window are marked too (the query's words: every `chunk`).
    expect(marked(hit).filter((m) => m === 'chunk').length).toBeGreaterThan(5)
  })

  it('shows its first word the query matched when the phrase is not in it, and its start uncut when the match is there', async () => {
    sessions = [session('s1', 'Streaming')]
    const words = [...longReply(3000), chunk('and then the **needle** appears '), ...longReply(3000), chunk('where a haystack ends')]
    await writeTranscript('s1', [header('s1'), prompt('/stream'), ...words])
    await openIndex().build()
    // The words apart, not the phrase: the first of them is shown, its markdown read as the window shows it.
    const [apart] = index.query('haystack needle').entries
    expect(apart.snippet.text).toMatch(/^….*and then the needle appears chunk 1 chunk 2.*…$/)
    expect(marked(apart)).toEqual(['needle'])
    const [first] = index.query('chunk 1').entries
    expect(first.snippet.text).toMatch(/^chunk 1 chunk 2 /)
    expect(first.snippet.text.endsWith('…')).toBe(true)
    const [last] = index.query('haystack').entries
    expect(last.snippet.text).toMatch(/^….*where a haystack ends$/)
  })
})
