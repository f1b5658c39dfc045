import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { currentView, parseTranscript } from '../../electron/host/storage/transcripts'
import type { TranscriptRecord } from '../../shared/transcript'
import { longTurn } from '../../bench/long-data'
import { fold, openHost, recordEvents, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * What a fork's view holds (issue 37): the conversation once, as it is now
 * shown (not a replay a reset superseded), and, taken mid-turn, what the
 * agent's own fork holds.
 */

let root: string
let dataDir: string
let stateDir: string
let host: Host
let projectId: string

beforeEach(async () => {
  root = await tempDir('fork-view')
  dataDir = join(root, 'data')
  stateDir = join(root, 'agent-state')
  const projectDir = join(root, 'project')
  await mkdir(projectDir)
  host = await openHost(dataDir)
  projectId = (await host.request('projects.add', { cwd: projectDir })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

const recordsOf = async (id: string): Promise<TranscriptRecord[]> => (await host.request('sessions.open', { id })).records
const texts = (thread: ReturnType<typeof fold>) => thread.entries.map((e) => `${e.kind}${'text' in e ? `: ${e.text}` : ''}`)
const chunkTexts = (records: TranscriptRecord[]): string[] =>
  records.flatMap((r) =>
    r.t === 'update' && r.update.sessionUpdate === 'agent_message_chunk' && r.update.content.type === 'text' ? [r.update.content.text] : []
  )

describe('a fork copies the view once', () => {
  it('after two reopens through session/load, the fork holds each message of the conversation once', async () => {
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: 'fork' }))
    const parent = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: parent.id, text: 'first question' })
    await host.request('sessions.prompt', { id: parent.id, text: 'second question' })
    for (let reopen = 0; reopen < 2; reopen++) {
      await host.close()
      host = await openHost(dataDir)
      await host.request('sessions.continue', { id: parent.id })
    }
    const fork = await host.request('sessions.fork', { id: parent.id })
    const records = await recordsOf(fork.id)
    expect(records.filter((r) => r.t === 'prompt')).toHaveLength(2)
    expect(records.filter((r) => r.t === 'update' && r.update.sessionUpdate === 'user_message_chunk')).toEqual([])
    expect(records.some((r) => r.t === 'reset')).toBe(false)
    expect(texts(fold(records))).toEqual(texts(fold(await recordsOf(parent.id))))
  })

  it('a transcript that holds a replay an earlier version wrote: the fork copies only what the reset left in view', async () => {
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: 'fork' }))
    const parent = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: parent.id, text: 'first question' })
    await host.close()
    // What Switchboard wrote at a reopen before it kept its own view: a reset, then the agent's replay of the same conversation.
    const at = new Date().toISOString()
    const replay: TranscriptRecord[] = [
      { t: 'reset', at, reason: 'load' },
      { t: 'update', at, update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'first question' } } },
      { t: 'update', at, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'You said: first question' } } }
    ]
    await appendFile(join(dataDir, 'transcripts', `${parent.id}.jsonl`), replay.map((r) => `${JSON.stringify(r)}\n`).join(''))
    host = await openHost(dataDir)

    const fork = await host.request('sessions.fork', { id: parent.id })
    const records = await recordsOf(fork.id)
    expect(records.some((r) => r.t === 'reset')).toBe(false)
    expect(records.filter((r) => r.t === 'prompt')).toEqual([])
    expect(chunkTexts(records)).toEqual(['You said: first question'])
    expect(texts(fold(records))).toEqual(texts(fold(await recordsOf(parent.id))))
  })
})

describe('an edit and resend copies the view once', () => {
  it('after a replay an earlier version wrote: its copy and its seed hold only what the reset left in view', async () => {
    const agent = await host.request('agents.add', scriptedAgent(stateDir))
    const parent = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: parent.id, text: 'first question' })
    await host.request('sessions.prompt', { id: parent.id, text: 'second question' })
    await host.close()
    const transcript = join(dataDir, 'transcripts', `${parent.id}.jsonl`)
    const at = new Date().toISOString()
    const replay: TranscriptRecord[] = [
      { t: 'reset', at, reason: 'load' },
      { t: 'update', at, update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'first question' } } },
      { t: 'update', at, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'You said: first question' } } }
    ]
    await appendFile(transcript, replay.map((r) => `${JSON.stringify(r)}\n`).join(''))
    host = await openHost(dataDir)
    await host.request('sessions.continue', { id: parent.id })
    await host.request('sessions.prompt', { id: parent.id, text: 'third question' })

    // The message edited: the last prompt, after the replay.
    const seq = (await readFile(transcript, 'utf8')).split('\n').findLastIndex((line) => line.includes('"t":"prompt"'))
    const { session } = await host.request('sessions.editResend', { id: parent.id, seq, text: 'third, again', conversationOnly: true })
    await waitUntil(
      'the edited turn to end',
      async () => (await host.request('sessions.states', {})).find((s) => s.id === session.id)?.status === 'ready'
    )
    const records = await recordsOf(session.id)
    expect(records.some((r) => r.t === 'reset')).toBe(false)
    // Before the branch: the replay's reply once; nothing the reset superseded (the second question and its reply).
    const branch = records.findIndex((r) => r.t === 'branch')
    expect(branch).toBeGreaterThan(0)
    expect(chunkTexts(records.slice(0, branch))).toEqual(['You said: first question'])
    expect(records.slice(0, branch).filter((r) => r.t === 'prompt')).toEqual([])
    // The seed the new session was sent: the conversation in view, the superseded turn not in it.
    const resent = records.findLast((r) => r.t === 'prompt')
    const note = resent?.t === 'prompt' ? resent.content.find((b) => b.type === 'text' && b._meta?.switchboard) : undefined
    const seed = note?.type === 'text' ? note.text : ''
    expect(seed).toContain('You said: first question')
    expect(seed).not.toContain('second question')
  })
})

describe('an edit and resend of a long conversation', () => {
  it('counts the messages from the last reset, and its copy holds the view before the message whole and in order (a transcript of many reads)', async () => {
    const agent = await host.request('agents.add', scriptedAgent(stateDir))
    const parent = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: parent.id, text: 'first question' })
    await host.close()
    // A long day (~3.5 MB: its lines straddle the reader's pieces), a replay an earlier version wrote (a reset), and
    // another long day after it: the messages before the reset are not in view, and are not counted.
    const transcript = join(dataDir, 'transcripts', `${parent.id}.jsonl`)
    const at = new Date().toISOString()
    const day = (from: number) =>
      Array.from({ length: 250 }, (_, i) =>
        longTurn(from + i, at)
          .map((r) => `${JSON.stringify(r)}\n`)
          .join('')
      ).join('')
    await appendFile(transcript, day(0))
    await appendFile(transcript, `${JSON.stringify({ t: 'reset', at, reason: 'load' } satisfies TranscriptRecord)}\n`)
    await appendFile(transcript, day(1_000))
    host = await openHost(dataDir)

    const lines = (await readFile(transcript, 'utf8')).split('\n')
    const seq = lines.findLastIndex((line) => line.includes('"t":"prompt"'))
    const { session } = await host.request('sessions.editResend', { id: parent.id, seq, text: 'the last question, again', conversationOnly: true })
    // The last of the 250 messages after the reset.
    expect(session.title).toMatch(/\(edited at message 250\)$/)
    const before = currentView(parseTranscript(lines.join('\n'), seq).records).filter((r) => r.t !== 'checkpoint')
    expect(before.filter((r) => r.t === 'prompt')).toHaveLength(249)
    const copied = (await recordsOf(session.id)).filter((r) => r.t !== 'header')
    expect(copied.slice(0, before.length)).toEqual(before)
    expect(copied[before.length]).toMatchObject({ t: 'branch', from: parent.id, message: 250, seq })
  }, 120_000)
})

describe('a fork taken mid-turn', () => {
  it('holds every chunk the agent’s own fork holds, the ones streamed while the fork was asked for included', async () => {
    const agent = await host.request(
      'agents.add',
      scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: 'fork', SCRIPTED_AGENT_CHUNK_DELAY_MS: '1', SCRIPTED_AGENT_CHUNKS_PER_DELAY: '2' })
    )
    const parent = await host.request('sessions.new', { projectId, agentId: agent.id })
    const turn = host.request('sessions.prompt', { id: parent.id, text: '/stream 1500' })
    await waitUntil('the turn to stream', async () => chunkTexts(await recordsOf(parent.id)).length >= 20)
    const fork = await host.request('sessions.fork', { id: parent.id })
    await turn

    const agentFork = JSON.parse(await readFile(join(stateDir, `${fork.acpSessionId}.json`), 'utf8')) as SessionUpdate[]
    const held = agentFork.flatMap((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : []))
    // Mid-turn: the agent's fork holds part of the stream, not all of it.
    expect(held.length).toBeGreaterThanOrEqual(20)
    expect(held.length).toBeLessThan(1500)
    expect(chunkTexts(await recordsOf(fork.id))).toEqual(held)
  }, 60_000)
})

describe('what a fork spent', () => {
  it('is what it spent after the fork: the cost its copy of the parent reports is not counted again', async () => {
    // The past transcripts (none) read first, so what follows is counted live.
    await waitUntil('spend read', async () => (await host.request('spend.report', { timeZone: 'UTC' })).backfill === undefined)
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: 'fork' }))
    const parent = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: parent.id, text: '/cost 3 USD' })
    const fork = await host.request('sessions.fork', { id: parent.id })
    // The fork's count goes on from the parent's, as an agent's cumulative cost may (3.50 USD): the fork spent the rise.
    await host.request('sessions.prompt', { id: fork.id, text: '/cost 3.5 USD' })
    const costOf = async (id: string) => (await host.request('spend.report', { timeZone: 'UTC' })).sessions.find((row) => row.id === id)?.cost
    await waitUntil('the fork’s spend', async () => (await costOf(fork.id)) !== undefined)
    expect(await costOf(fork.id)).toEqual({ USD: 0.5 })
    expect(await costOf(parent.id)).toEqual({ USD: 3 })
  })
})

describe('a fork of a long conversation', () => {
  it('holds every record of the parent, in order, however long (read a chunk at a time, not whole)', async () => {
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: 'fork' }))
    const parent = await host.request('sessions.new', { projectId, agentId: agent.id })
    await host.request('sessions.prompt', { id: parent.id, text: 'first question' })
    await host.close()
    // A long day: 5,000 turns of a prompt, a tool call with a diff and terminal output, a reply (many megabytes, so
    // lines straddle the reader's chunks), with one damaged line in the middle, skipped as everywhere.
    const at = new Date().toISOString()
    const lines: string[] = []
    for (let i = 0; i < 5_000; i++) {
      const turn: TranscriptRecord[] = [
        { t: 'prompt', at, content: [{ type: 'text', text: `question ${i}` }] },
        {
          t: 'update',
          at,
          update: { sessionUpdate: 'tool_call', toolCallId: `t${i}`, title: `Edit file-${i}.ts`, kind: 'edit', status: 'in_progress' }
        },
        {
          t: 'update',
          at,
          update: {
            sessionUpdate: 'tool_call_update',
            toolCallId: `t${i}`,
            status: 'completed',
            content: [
              { type: 'diff', path: `/p/file-${i}.ts`, oldText: 'const a = 1\n'.repeat(20), newText: `const a = ${i}\n`.repeat(20) },
              { type: 'content', content: { type: 'text', text: `$ npm test\n${'ok — ünïcode ✓\n'.repeat(i % 7)}` } }
            ]
          }
        },
        { t: 'update', at, update: { sessionUpdate: 'agent_message_chunk', messageId: `m${i}`, content: { type: 'text', text: `answer ${i}` } } },
        { t: 'stop', at, stopReason: 'end_turn' }
      ]
      lines.push(...turn.map((r) => JSON.stringify(r)))
      if (i === 2_500) lines.push('{"t":"update", damaged')
    }
    await appendFile(join(dataDir, 'transcripts', `${parent.id}.jsonl`), lines.join('\n') + '\n')
    host = await openHost(dataDir)

    const events = recordEvents(host)
    const fork = await host.request('sessions.fork', { id: parent.id })
    const copied = (await recordsOf(parent.id)).filter((r) => r.t !== 'header')
    // No window is sent the copy (none shows the fork before it is made; one that opens it reads it): 25,000 records.
    host.events.flush()
    expect(events.filter((e) => e.type === 'session.records' && e.payload.id === fork.id && e.payload.seq <= copied.length)).toEqual([])
    const forked = await recordsOf(fork.id)
    expect(copied.filter((r) => r.t === 'prompt')).toHaveLength(5_001)
    expect(forked.filter((r) => r.t !== 'header').slice(0, copied.length)).toEqual(copied)
    // Opened at its end, the fork shows its last exchange; its first message is the parent's first.
    const tail = await host.request('sessions.open', { id: fork.id, tail: 400 })
    const shown = fold(tail.records).entries
    expect(shown.filter((e) => e.kind === 'user').at(-1)).toMatchObject({ text: 'question 4999' })
    expect(fold(forked).entries.find((e) => e.kind === 'user')).toMatchObject({ text: 'first question' })
    // Search finds the first message in the fork too (its view holds the tail only: the rest is read from its
    // transcript once the Host is quiet, a second after its last request: asked less often than that), and still in
    // the parent once that goes on (its view the tail too).
    const foundIn = async (): Promise<string[]> =>
      (await host.request('search.query', { q: 'first question' })).entries.filter((e) => e.entryKind === 'user').map((e) => String(e.sessionId))
    await expect.poll(async () => (await foundIn()).sort(), { timeout: 60_000, interval: 1_500 }).toEqual([parent.id, fork.id].sort())
    await host.request('sessions.prompt', { id: parent.id, text: 'one more question' })
    expect((await foundIn()).sort()).toEqual([parent.id, fork.id].sort())
  }, 120_000)
})
