import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { openHost, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * The core use of Switchboard: several agents streaming side by side, after a
 * search built the index. Each growing reply's document is replaced in the
 * index every 250 ms (search/search-index.ts, FLUSH_MS) while what the replaced ones left
 * is vacuumed. Left to MiniSearch, its vacuum walked the index in batches
 * while those documents were added, met a node one of them had split, and
 * threw `TypeError: Cannot read properties of undefined` where nothing caught
 * it (lucaong/minisearch#306): `npm run serve` stopped in 5 runs of 5 with six
 * agents. Here the six sessions stream at once; nothing may be thrown
 * unhandled, and every reply's last words are found once the turns end.
 */

const SESSIONS = 6
/** Long replies each session streams in turn. */
const TURNS = 3
/** Chunks per reply, each of WORDS_PER_CHUNK distinct words, a pause between them: the reply grows over a few seconds. */
const CHUNKS = 150
const WORDS_PER_CHUNK = 25
const PAUSE_MS = 40

let root: string
let host: Host
const unhandled: unknown[] = []
const note = (reason: unknown): void => {
  unhandled.push(reason)
}

beforeEach(async () => {
  root = await tempDir('search-streaming')
  await mkdir(join(root, 'project'))
  host = await openHost(join(root, 'data'))
  unhandled.length = 0
  process.on('unhandledRejection', note)
  process.on('uncaughtException', note)
})

afterEach(async () => {
  process.off('unhandledRejection', note)
  process.off('uncaughtException', note)
  await host.close()
  await removeDir(root)
})

/** Words of letters from a seeded generator: many distinct terms sharing prefixes, as prose does, so the index is deep and wide. */
function wordsFrom(seed: number): () => string {
  let state = seed
  const next = (): number => (state = (state * 16807) % 2147483647)
  return () => Array.from({ length: 4 + (next() % 7) }, () => 'abcdefghijklmnopqrstuvwxyz'[next() % 26]).join('')
}

/** A prompt the scripted agent answers with one message streamed in CHUNKS chunks, and the reply's last word. */
function longReply(seed: number): { prompt: string; last: string } {
  const word = wordsFrom(seed)
  const lines: string[] = []
  for (let i = 0; i < CHUNKS; i++) {
    lines.push(`/say ${Array.from({ length: WORDS_PER_CHUNK }, word).join(' ')} `)
    lines.push(`/sleep ${PAUSE_MS}`)
  }
  const last = `zzfinal${'abcdefghijklmnopqrstuvwxyz'[seed % 26]}${'abcdefghijklmnopqrstuvwxyz'[(seed * 7) % 26]}`
  lines.push(`/say ${last}`)
  return { prompt: lines.join('\n'), last }
}

describe('search while six agents stream', () => {
  it('keeps the Host up and finds every reply as six sessions stream long replies at once after a search', async () => {
    const projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent')))
    const ids: string[] = []
    for (let i = 0; i < SESSIONS; i++) ids.push((await host.request('sessions.new', { projectId, agentId: agent.id })).id)
    // One search: the index is built, and from then on follows every reply as it grows.
    await expect.poll(async () => (await host.request('search.query', { q: 'anything' })).indexing).toBeNull()

    // Each session streams TURNS long replies one after another, the six side by side: each vacuum that starts while
    // they grow is a chance for the crash, and on the old code one run in two met it with a single reply each.
    const replies = ids.map((_, i) => longReply(i + 1 + SESSIONS * (TURNS - 1)))
    await Promise.all(
      ids.map(async (id, i) => {
        for (let turn = 0; turn < TURNS - 1; turn++) await host.request('sessions.prompt', { id, text: longReply(i + 1 + SESSIONS * turn).prompt })
        await host.request('sessions.prompt', { id, text: replies[i].prompt })
      })
    )

    expect(unhandled).toEqual([])
    for (const [i, id] of ids.entries()) {
      // The prompt holds the word too: the reply is the one answer found for it.
      const answers = async (): Promise<string[]> =>
        (await host.request('search.query', { q: `"${replies[i].last}"` })).entries
          .filter((e) => e.entryKind === 'assistant')
          .map((e) => e.sessionId ?? '')
      await expect.poll(answers).toEqual([id])
    }
    expect(unhandled).toEqual([])
    expect((await host.request('app.info', {})).warnings).toEqual([])
  }, 180_000)
})
