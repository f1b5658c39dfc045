import { existsSync } from 'node:fs'
import { appendFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Host } from '../../electron/host/host'
import { SEARCH_INDEX_FILE } from '../../electron/host/search/search-index'
import type { BuildStep, SearchHooks } from '../../electron/host/search/build'
import type { SearchResults } from '../../shared/search'
import type { TranscriptRecord } from '../../shared/transcript'
import { confirmEverything, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * The search index kept in the data folder: a restart finds what it found
 * before without reading the transcripts again; what changed while the Host
 * was down (a transcript appended, a session added or deleted) is read or
 * dropped; a damaged index file is rebuilt from the transcripts; a Host closed
 * while the index is being built leaves the file as it was; a long transcript is
 * taken in in slices, the Host answering between them.
 *
 * Every Host here builds its index at the first search only (no timer
 * decides), and a close saves only a complete index: `settled()` waits for it.
 */

let root: string
let dataDir: string
let host: Host | null = null
/** The transcripts the search index read at the last start, by session id. */
let read: string[] = []

beforeEach(async () => {
  root = await tempDir('search-restart')
  dataDir = join(root, 'data')
})

afterEach(async () => {
  vi.restoreAllMocks()
  await host?.close()
  host = null
  await removeDir(root)
})

async function open(hooks: SearchHooks = {}): Promise<Host> {
  read = []
  host = await Host.open({
    dataDir,
    version: 'test',
    presets: [],
    initializeTimeoutMs: 20_000,
    confirmCommand: confirmEverything,
    search: { onTranscriptRead: (id) => read.push(id), buildOnSearchOnly: true, ...hooks }
  })
  return host
}

/** Starts the build (a search) and waits until it is complete: every session is in once the index no longer says it is indexing. */
async function settled(): Promise<void> {
  const opened = host!
  await expect.poll(async () => (await opened.request('search.query', { q: '' })).indexing, { timeout: 60_000 }).toBeNull()
}

async function restart(): Promise<Host> {
  await host?.close()
  host = null
  const opened = await open()
  await settled()
  return opened
}

/** A build that stops at the first step `at` accepts and waits there until `release()`; `reached` resolves once it is there. */
function holdBuild(at: (step: BuildStep) => boolean): { hooks: SearchHooks; reached: Promise<BuildStep>; release: () => void } {
  let release!: () => void
  let reach!: (step: BuildStep) => void
  const reached = new Promise<BuildStep>((resolve) => (reach = resolve))
  const held = new Promise<void>((resolve) => (release = resolve))
  let holding = true
  const onBuildStep = (step: BuildStep): Promise<void> | undefined => {
    if (!holding || !at(step)) return undefined
    holding = false
    reach(step)
    return held
  }
  return { hooks: { onBuildStep }, reached, release }
}

async function search(q: string): Promise<SearchResults> {
  return host!.request('search.query', { q })
}

/** What the palette shows for a query: every hit with its place and snippet (the score is an order, not shown). */
async function shown(q: string): Promise<unknown> {
  const results = await search(q)
  const strip = <T extends { score: number }>(hits: T[]): Omit<T, 'score'>[] => hits.map(({ score: _, ...hit }) => hit)
  return { projects: strip(results.projects), sessions: strip(results.sessions), entries: strip(results.entries), indexing: results.indexing }
}

const transcript = (id: string): string => join(dataDir, 'transcripts', `${id}.jsonl`)

/** Three sessions, each with words of its own, made through the Host as a user makes them. */
async function threeSessions(): Promise<{ projectId: string; agentId: string; ids: Record<'alpha' | 'bravo' | 'charlie', string> }> {
  const h = await open()
  const cwd = join(root, 'project')
  await mkdir(cwd, { recursive: true })
  const projectId = (await h.request('projects.add', { cwd })).id
  const agentId = (await h.request('agents.add', scriptedAgent(join(root, 'agent-state')))).id
  const ids: Record<'alpha' | 'bravo' | 'charlie', string> = { alpha: '', bravo: '', charlie: '' }
  for (const [name, words] of [
    ['alpha', 'marmalade sandwiches'],
    ['bravo', 'xylophone lessons'],
    ['charlie', 'quokka photographs']
  ] as const) {
    const session = await h.request('sessions.new', { projectId, agentId })
    await h.request('sessions.prompt', { id: session.id, text: `Tell me about ${words}\n/say The ${words} are in the ${name} folder.` })
    ids[name] = session.id
  }
  await settled()
  return { projectId, agentId, ids }
}

describe('the search index kept in the data folder', () => {
  it('finds after a restart what it found before without reading a transcript; a close before or during the build keeps the file', async () => {
    const { ids } = await threeSessions()
    const queries = ['marmalade', 'xylophone lessons', '"quokka photographs"', 'folder', 'Tell me']
    const before = new Map<string, unknown>()
    for (const q of queries) before.set(q, await shown(q))
    expect((await search('marmalade')).entries.map((h) => [h.sessionId, h.entryKind]).sort()).toEqual([
      [ids.alpha, 'assistant'],
      [ids.alpha, 'user']
    ])

    // Closing writes the index, with the sessions used in this run read from their transcripts.
    await host!.close()
    host = null
    const file = join(dataDir, SEARCH_INDEX_FILE)
    expect(existsSync(file)).toBe(true)
    const written = (await stat(file)).mtimeMs

    await restart()
    expect(read).toEqual([])
    for (const q of queries) expect(await shown(q), q).toEqual(before.get(q))

    // Nothing changed: the file is left as it was, and the next start reads nothing either.
    await restart()
    expect(read).toEqual([])
    expect((await stat(file)).mtimeMs).toBe(written)
    expect(await shown('marmalade')).toEqual(before.get('marmalade'))

    // A Host closed before it has read the index (no search yet) leaves the file as it was.
    await host!.close()
    host = null
    await (await open()).close()
    host = null
    expect((await stat(file)).mtimeMs).toBe(written)

    // So does a Host closed while its index is being built: the file stays the last complete save.
    const saved = await readFile(file, 'utf8')
    // While the Host was down: a turn appended to alpha's transcript.
    const at = new Date().toISOString()
    await appendFile(transcript(ids.alpha), JSON.stringify({ t: 'prompt', at, content: [{ type: 'text', text: 'What about the zeppelin?' }] }) + '\n')

    // The build holds once it has taken in the file, before it has looked at any transcript; charlie is used meanwhile.
    const hold = holdBuild((step) => step.step === 'file')
    const h = await open(hold.hooks)
    expect((await h.request('search.query', { q: 'zeppelin' })).indexing).not.toBeNull()
    expect(await hold.reached).toEqual({ step: 'file', found: true })
    await h.request('sessions.prompt', { id: ids.charlie, text: 'And the pangolins?\n/say Pangolins are in the charlie folder too.' })
    const closing = h.close()
    hold.release()
    await closing
    host = null
    expect(await readFile(file, 'utf8')).toBe(saved)

    // The next start reads the two transcripts that changed since that save, and finds what both say.
    await restart()
    expect(read.sort()).toEqual([ids.alpha, ids.charlie].sort())
    expect((await search('zeppelin')).entries.map((h) => h.sessionId)).toEqual([ids.alpha])
    expect((await search('pangolins')).entries.map((h) => [h.sessionId, h.entryKind]).sort()).toEqual([
      [ids.charlie, 'assistant'],
      [ids.charlie, 'user']
    ])

    // With no file to start from, a Host closed mid-build writes none (never an index holding part of the sessions).
    await host!.close()
    host = null
    await rm(file)
    const again = holdBuild((step) => step.step === 'file')
    const h2 = await open(again.hooks)
    void h2.request('search.query', { q: 'quokka' })
    expect(await again.reached).toEqual({ step: 'file', found: false })
    const closing2 = h2.close()
    again.release()
    await closing2
    host = null
    expect(existsSync(file)).toBe(false)
    await restart()
    expect(read.sort()).toEqual(Object.values(ids).sort())
    expect((await search('quokka')).entries.map((h) => h.sessionId)).toEqual([ids.charlie, ids.charlie])
  })

  it('reads what changed while the Host was down: a transcript appended, a session added, a session deleted', async () => {
    const { projectId, agentId, ids } = await threeSessions()
    await restart()
    expect(read).toEqual([])
    expect((await search('xylophone')).entries).toHaveLength(2)
    await host!.close()
    host = null

    const at = new Date().toISOString()
    // alpha: a turn appended to its transcript (as a Host that crashed after writing it would leave it).
    const appended: TranscriptRecord[] = [
      { t: 'prompt', at, content: [{ type: 'text', text: 'And the zeppelin timetable?' }] },
      {
        t: 'update',
        at,
        update: { sessionUpdate: 'agent_message_chunk', messageId: 'z1', content: { type: 'text', text: 'The zeppelin leaves at noon.' } }
      },
      { t: 'stop', at, stopReason: 'end_turn' }
    ]
    await appendFile(transcript(ids.alpha), appended.map((r) => JSON.stringify(r) + '\n').join(''))
    // bravo: deleted from the list, its transcript gone.
    // delta: a session that was not there before (restored from a backup, say).
    const db = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as { sessions: { id: string }[] }
    const alpha = db.sessions.find((s) => s.id === ids.alpha)!
    db.sessions = db.sessions.filter((s) => s.id !== ids.bravo)
    const delta = { ...alpha, id: 'delta-session', acpSessionId: 'acp-delta', title: 'Wombat census' }
    db.sessions.push(delta)
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(db, null, 2))
    await rm(transcript(ids.bravo))
    const header: TranscriptRecord = {
      t: 'header',
      v: 2,
      id: delta.id,
      acpSessionId: 'acp-delta',
      agentId,
      projectId,
      cwd: join(root, 'project'),
      createdAt: at
    }
    const deltaRecords: TranscriptRecord[] = [
      header,
      { t: 'prompt', at, content: [{ type: 'text', text: 'Count the wombats in the garden' }] },
      { t: 'stop', at, stopReason: 'end_turn' }
    ]
    await writeFile(transcript(delta.id), deltaRecords.map((r) => JSON.stringify(r) + '\n').join(''))

    await restart()
    // Only what changed was read; charlie came from the index on disk.
    expect(read.sort()).toEqual([ids.alpha, delta.id].sort())
    const zeppelin = (await search('zeppelin')).entries
    expect(zeppelin.map((h) => [h.sessionId, h.entryKind, h.snippet.text]).sort()).toEqual([
      [ids.alpha, 'assistant', 'The zeppelin leaves at noon.'],
      [ids.alpha, 'user', 'And the zeppelin timetable?']
    ])
    // The hit names the record its entry starts at: the appended prompt's line in the transcript.
    const lines = (await readFile(transcript(ids.alpha), 'utf8')).trimEnd().split('\n')
    expect(zeppelin.find((h) => h.entryKind === 'user')!.seq).toBe(lines.findIndex((l) => l.includes('zeppelin timetable')))
    // What alpha said before is still found.
    expect((await search('marmalade')).entries.map((h) => h.sessionId)).toEqual([ids.alpha, ids.alpha])
    expect((await search('wombats')).entries.map((h) => [h.sessionId, h.entryKind])).toEqual([[delta.id, 'user']])
    expect((await search('wombat census')).sessions.map((h) => h.sessionId)).toEqual([delta.id])
    expect(await search('xylophone')).toMatchObject({ sessions: [], entries: [] })
    expect((await search('quokka')).entries.map((h) => h.sessionId)).toEqual([ids.charlie, ids.charlie])

    // A title changed while the Host was down is found by its new words, and not by its old ones.
    await host!.close()
    host = null
    const renamed = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as { sessions: { id: string; title: string }[] }
    renamed.sessions.find((s) => s.id === ids.charlie)!.title = 'Marsupial portraits'
    await writeFile(join(dataDir, 'db.json'), JSON.stringify(renamed, null, 2))
    await restart()
    expect(read).toEqual([])
    expect((await search('marsupial')).sessions.map((h) => h.sessionId)).toEqual([ids.charlie])
    expect((await search('wombat census')).sessions.map((h) => h.sessionId)).toEqual([delta.id])
  })

  it('opens a long conversation while the index is still taking it in: its entries go in in slices, the Host answering between them', async () => {
    const { ids } = await threeSessions()
    await host!.close()
    host = null
    // 5,000 turns appended while the Host was down (10,000 entries to take in again at the next start), the last one about a zeppelin.
    const at = new Date().toISOString()
    const turn = (i: number, words: string): TranscriptRecord[] => [
      { t: 'prompt', at, content: [{ type: 'text', text: `Question ${i} about ${words}` }] },
      {
        t: 'update',
        at,
        update: { sessionUpdate: 'agent_message_chunk', messageId: `m${i}`, content: { type: 'text', text: `Answer ${i} on ${words}` } }
      },
      { t: 'stop', at, stopReason: 'end_turn' }
    ]
    const records = Array.from({ length: 5_000 }, (_, i) => turn(i, i === 4_999 ? 'the zeppelin timetable' : 'marmalade jars')).flat()
    await appendFile(transcript(ids.alpha), records.map((r) => JSON.stringify(r) + '\n').join(''))

    // The build held at its first pause in taking alpha's entries in.
    const hold = holdBuild((step) => step.step === 'entries' && step.sessionId === ids.alpha)
    const opened = await open(hold.hooks)
    void search('zeppelin')
    await hold.reached
    // The conversation opens at its end meanwhile (the window's sessions.open), its last turn there...
    const snapshot = await opened.request('sessions.open', { id: ids.alpha, tail: 3 })
    expect(JSON.stringify(snapshot.records)).toContain('the zeppelin timetable')
    // ...while the index has not taken that turn in yet.
    expect(await search('zeppelin')).toMatchObject({ entries: [], indexing: expect.anything() })

    hold.release()
    await settled()
    expect((await search('zeppelin')).entries.map((h) => [h.sessionId, h.entryKind]).sort()).toEqual([
      [ids.alpha, 'assistant'],
      [ids.alpha, 'user']
    ])
  })

  it('reads no transcript while the window draws a conversation it opened: for 300 ms after the open is answered', async () => {
    const { ids } = await threeSessions()
    await host!.close()
    host = null
    await rm(join(dataDir, SEARCH_INDEX_FILE))
    // The build holds once it has looked for the file; the window opens a conversation meanwhile, answered at `answered`.
    const hold = holdBuild((step) => step.step === 'file')
    const readAt: number[] = []
    const h = await open({ ...hold.hooks, onTranscriptRead: () => readAt.push(Date.now()) })
    void h.request('search.query', { q: 'quokka' })
    await hold.reached
    await h.request('sessions.open', { id: ids.alpha })
    const answered = Date.now()
    hold.release()
    await settled()
    // Three transcripts read, the first of them once the window has had its 300 ms (at once, before).
    expect(readAt).toHaveLength(3)
    expect(readAt[0] - answered).toBeGreaterThanOrEqual(290)
  })

  it('rebuilds a damaged index file from the transcripts, says so in the log, and search works', async () => {
    const { ids } = await threeSessions()
    await host!.close()
    host = null
    const file = join(dataDir, SEARCH_INDEX_FILE)
    const good = await readFile(file, 'utf8')
    // Whole, but naming fewer documents than its index holds: bravo taken out of its line of sessions.
    const withoutBravo = good
      .trimEnd()
      .split('\n')
      .map((line) => {
        const value = JSON.parse(line) as unknown
        if (!Array.isArray(value) || value[0] !== 'sessions') return line
        delete (value[1] as Record<string, unknown>)[ids.bravo]
        return JSON.stringify(value)
      })
      .join('\n')
    // Every line there, but a line of terms cut short (the terms' lines are parsed only as the index takes them in).
    const lines = good.trimEnd().split('\n')
    const termLine = lines.findLastIndex((line) => line.startsWith('["index",'))
    const tornTerms = lines.map((line, i) => (i === termLine ? line.slice(0, Math.floor(line.length / 2)) : line)).join('\n') + '\n'
    const damaged = [
      // Torn in the middle (the file is written whole and renamed, but a disk can still lose it).
      good.slice(0, Math.floor(good.length / 2)),
      withoutBravo,
      tornTerms,
      // Not an index at all.
      '[1, 2, 3]'
    ]
    for (const text of damaged) {
      await writeFile(file, text)
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
      await restart()
      expect(warn.mock.calls.some(([message]) => String(message).includes(file) && String(message).includes('rebuilt from the transcripts'))).toBe(
        true
      )
      warn.mockRestore()
      expect(read.sort()).toEqual(Object.values(ids).sort())
      for (const [name, word] of [
        ['alpha', 'marmalade'],
        ['bravo', 'xylophone'],
        ['charlie', 'quokka']
      ] as const) {
        expect((await search(word)).entries.map((h) => h.sessionId)).toEqual([ids[name], ids[name]])
      }
      // The rebuilt index is written back: the next start reads nothing.
      await restart()
      expect(read).toEqual([])
      expect((await search('xylophone')).entries.map((h) => h.sessionId)).toEqual([ids.bravo, ids.bravo])
    }
  })
})
