import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { currentView, parseTranscript } from '../../electron/host/storage/transcripts'
import type { TranscriptRecord } from '../../shared/transcript'
import { longTurn } from '../../bench/long-data'
import { conversationSeed as seedBefore } from '../unit/seed-oracle'
import { openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * A hand-off and an edit and resend of a long conversation (issue 40: the Host reads it a chunk at a time and
 * folds it as it reads) give the seed the whole conversation gave before (seed-oracle.ts), character for character.
 */

const TURNS = 800

let root: string
let dataDir: string
let project: string
let host: Host
let agentId: string
let original: { id: string; title: string }
let transcript: string

beforeAll(async () => {
  root = await tempDir('long-seed')
  dataDir = join(root, 'data')
  project = join(root, 'project')
  await mkdir(project)
  host = await openHost(dataDir)
  const projectId = (await host.request('projects.add', { cwd: project })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))).id
  original = await host.request('sessions.new', { projectId, agentId })
  await host.request('sessions.prompt', { id: original.id, text: 'The first question' })
  original = (await host.request('sessions.get', { ids: [original.id] }))[0] ?? original
  // A long day's conversation after it, written while the Host is closed (as a long session is found at a start).
  await host.close()
  transcript = join(dataDir, 'transcripts', `${original.id}.jsonl`)
  const at = new Date().toISOString()
  for (let from = 0; from < TURNS; from += 400) {
    const lines = Array.from({ length: 400 }, (_, i) => longTurn(from + i, at).map((r) => JSON.stringify(r))).flat()
    await appendFile(transcript, lines.join('\n') + '\n')
  }
  host = await openHost(dataDir)
}, 120_000)

afterAll(async () => {
  await host.close()
  await removeDir(root)
})

const about = () => ({ title: original.title, agentName: 'Scripted', cwd: project })

describe('the seed of a long conversation', () => {
  it('handed off: the seed the whole conversation gave', async () => {
    const records = currentView(parseTranscript(await readFile(transcript, 'utf8')).records)
    const next = await host.request('sessions.handOff', { id: original.id, agentId })
    const stored = JSON.parse(await readFile(join(dataDir, 'hand-offs', `${next.id}.json`), 'utf8')) as { seed: { text: string } }
    // The folder's files did not change (the conversation was written, not run): the seed says so.
    expect(stored.seed.text).toContain('No file differs from how they were when the conversation began.')
    const expected = seedBefore(records, { ...about(), reviewNotes: [], changes: { files: [], truncated: false } }, { images: false })
    expect(stored.seed).toEqual(expected)
    expect(expected.notes[0]).toMatch(/^Too long to send whole: the first [\d,]+ of 801 turns/)
  })

  it('edited and resent at its last message: the seed the whole conversation before it gave', async () => {
    const lines = (await readFile(transcript, 'utf8')).split('\n')
    const seq = lines.findLastIndex((line) => line.includes('"t":"prompt"'))
    const before = currentView(parseTranscript(lines.join('\n'), seq).records).filter((r: TranscriptRecord) => r.t !== 'checkpoint')
    const { session } = await host.request('sessions.editResend', { id: original.id, seq, text: 'The last question, again', conversationOnly: true })
    await waitUntil(
      'the edited turn to end',
      async () => (await host.request('sessions.states', {})).find((s) => s.id === session.id)?.status === 'ready'
    )
    const copy = await host.request('sessions.open', { id: session.id, tail: 50 })
    const prompt = copy.records.findLast((r) => r.t === 'prompt')
    const note = prompt?.t !== 'prompt' ? undefined : prompt.content.find((b) => b.type === 'text' && b._meta?.switchboard)
    const text = note?.type === 'text' ? note.text : ''
    const preface = text.slice(0, text.indexOf('\n\n## The conversation'))
    expect(preface).toMatch(/^\[Switchboard\] This session continues a conversation .* before the user's message 801,/)
    expect(text).toBe(`${seedBefore(before, { ...about(), preface }, { images: false }).text}\n\n[End of the earlier conversation]`)
  })
})
