import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SessionState } from '../../shared/domain'
import type { Host } from '../../electron/host/host'
import { RESTART_HOLD } from '../../electron/host/sessions/queue'
import { entriesOf, fold, openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * Queued prompts through the Host and the scripted agent: written while a turn
 * runs, sent one by one as turns end, edited and removed while they wait, held
 * (and said so) after a cancelled or failed turn and after a restart, and
 * handed to the running turn ("send now") only by an agent that announces it
 * takes prompts mid-turn. The agent's turns wait on a gate file (`/await`),
 * so nothing depends on timing.
 */

let root: string
let dataDir: string
let host: Host
let projectId: string
let gateCount = 0

beforeEach(async () => {
  root = await tempDir('queue')
  dataDir = join(root, 'data')
  await mkdir(join(root, 'project'))
  host = await openHost(dataDir)
  projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function session(env: Record<string, string> = {}): Promise<string> {
  const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent'), env))
  return (await host.request('sessions.new', { projectId, agentId: agent.id })).id
}

/** A gate file the agent's `/await` waits for, and the way to open it. */
function gate(): { path: string; open: () => Promise<void> } {
  const path = join(root, `gate-${++gateCount}`)
  return { path, open: () => writeFile(path, 'open') }
}

async function stateOf(id: string): Promise<SessionState> {
  return (await host.request('sessions.states', {})).find((s) => s.id === id) ?? { id, status: 'idle' }
}

async function queueTexts(id: string): Promise<string[]> {
  return ((await stateOf(id)).queue ?? []).map((q) => q.text)
}

async function userTexts(id: string): Promise<string[]> {
  const thread = fold((await host.request('sessions.open', { id })).records)
  return entriesOf(thread, 'user').map((e) => (e as { text: string }).text)
}

async function assistantTexts(id: string): Promise<string[]> {
  const thread = fold((await host.request('sessions.open', { id })).records)
  return entriesOf(thread, 'assistant').map((e) => (e as { text: string }).text)
}

/** Every file under `dir` with its size and time of change, to see that nothing is written any more. */
async function filesIn(dir: string): Promise<string[]> {
  const files: string[] = []
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    const { size, mtimeMs } = await stat(path)
    files.push(`${path} ${size} ${mtimeMs}`)
  }
  return files.sort()
}

async function running(id: string): Promise<void> {
  await waitUntil('the turn to run', async () => (await stateOf(id)).status === 'running')
}

describe('queued prompts', () => {
  it('go one by one, in order, as turns end; edited and removed ones as they were left', async () => {
    const id = await session()
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}\n/say first done` })
    await running(id)

    await host.request('sessions.queue', { id, text: 'second' })
    const third = (await host.request('sessions.queue', { id, text: 'third' })).queued
    const fourth = (await host.request('sessions.queue', { id, text: 'fourth' })).queued
    await host.request('sessions.queue', { id, text: 'fifth' })
    await host.request('sessions.editQueued', { id, queuedId: third.id, text: 'third, edited' })
    await host.request('sessions.removeQueued', { id, queuedId: fourth.id })
    expect(await queueTexts(id)).toEqual(['second', 'third, edited', 'fifth'])
    // Kept with the session's record (db.json), not only in memory.
    const record = (await host.request('sessions.list', { projectId })).find((s) => s.id === id)
    expect(record?.queue?.map((q) => q.text)).toEqual(['second', 'third, edited', 'fifth'])
    // Nothing queued has gone to the agent while the turn runs.
    expect(await userTexts(id)).toHaveLength(1)

    await first.open()
    await turn
    await waitUntil('the queue to empty', async () => (await queueTexts(id)).length === 0 && (await stateOf(id)).status === 'ready')
    await waitUntil('the last answer', async () => (await assistantTexts(id)).length === 4)
    expect((await userTexts(id)).slice(1)).toEqual(['second', 'third, edited', 'fifth'])
    expect(await assistantTexts(id)).toEqual(['first done', 'You said: second', 'You said: third, edited', 'You said: fifth'])
    const after = (await host.request('sessions.list', { projectId })).find((s) => s.id === id)
    expect(after?.queue).toBeUndefined()
  })

  it('is sent at once when nothing runs', async () => {
    const id = await session()
    await host.request('sessions.queue', { id, text: 'straight away' })
    await waitUntil('the answer', async () => (await assistantTexts(id)).includes('You said: straight away'))
    expect(await queueTexts(id)).toEqual([])
  })

  it('is held after a failed turn, says so, and goes on when resumed', async () => {
    const id = await session()
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}\n/fail the model is overloaded` })
    await running(id)
    await host.request('sessions.queue', { id, text: 'after the failure' })
    await first.open()
    await expect(turn).rejects.toThrow(/the model is overloaded/)

    const held = await waitUntil('the queue to be held', async () => (await stateOf(id)).queueHeld)
    expect(held).toMatch(/last turn failed.*queue waits/)
    expect(await queueTexts(id)).toEqual(['after the failure'])
    expect(await userTexts(id)).toHaveLength(1)

    // A prompt sent by hand meanwhile leaves the queue held.
    await host.request('sessions.prompt', { id, text: 'by hand' })
    expect(await queueTexts(id)).toEqual(['after the failure'])
    expect((await stateOf(id)).queueHeld).toBe(held)

    await host.request('sessions.resumeQueue', { id })
    await waitUntil('the queued prompt to be answered', async () => (await assistantTexts(id)).includes('You said: after the failure'))
    const state = await stateOf(id)
    expect(state.queue).toEqual([])
    expect(state.queueHeld).toBeUndefined()
  })

  it('is held after a cancelled turn, and can be cleared', async () => {
    const id = await session()
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}` })
    await running(id)
    await host.request('sessions.queue', { id, text: 'one' })
    await host.request('sessions.queue', { id, text: 'two' })
    await host.request('sessions.cancel', { id })
    expect((await turn).stopReason).toBe('cancelled')
    expect(await waitUntil('the queue to be held', async () => (await stateOf(id)).queueHeld)).toMatch(/cancelled/)
    expect(await queueTexts(id)).toEqual(['one', 'two'])

    await host.request('sessions.clearQueue', { id })
    expect(await queueTexts(id)).toEqual([])
    expect((await stateOf(id)).queueHeld).toBeUndefined()
    expect(await userTexts(id)).toHaveLength(1)
  })

  it('refuses what cannot be queued or changed, losing nothing', async () => {
    const id = await session()
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}` })
    await running(id)
    const queued = (await host.request('sessions.queue', { id, text: 'keep me' })).queued
    await expect(host.request('sessions.queue', { id, text: '   ' })).rejects.toThrow(/needs text or an attachment/)
    await expect(host.request('sessions.editQueued', { id, queuedId: queued.id, text: ' ' })).rejects.toThrow(/needs text; remove it instead/)
    await expect(host.request('sessions.removeQueued', { id, queuedId: 'gone' })).rejects.toThrow(/no longer queued/)
    // The scripted agent does not announce promptQueueing: "send now" cannot go into the running turn.
    await expect(host.request('sessions.sendQueuedNow', { id, queuedId: queued.id })).rejects.toThrow(/does not take prompts while a turn runs/)
    expect(await queueTexts(id)).toEqual(['keep me'])
    await first.open()
    await turn
    await waitUntil('the queued prompt to be answered', async () => (await assistantTexts(id)).includes('You said: keep me'))
  })

  it('is kept across a restart, held and not sent by itself, and goes on when resumed', async () => {
    const id = await session()
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}` }).catch(() => null)
    await running(id)
    await host.request('sessions.queue', { id, text: 'after the restart' })
    await host.close()
    await turn

    host = await openHost(dataDir)
    const state = await stateOf(id)
    expect(state.queue?.map((q) => q.text)).toEqual(['after the restart'])
    expect(state.queueHeld).toBeTruthy()
    expect(state.status).toBe('idle')
    await new Promise((r) => setTimeout(r, 300))
    expect(await userTexts(id)).toHaveLength(1)

    await host.request('sessions.resumeQueue', { id })
    await waitUntil('the queued prompt to be answered', async () => (await assistantTexts(id)).includes('You said: after the restart'), {
      timeoutMs: 60_000
    })
    expect(await queueTexts(id)).toEqual([])
  })

  it('is not sent by a turn that ends as Switchboard closes, and close has written everything when it resolves', async () => {
    const id = await session()
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}\n/say first done` }).catch(() => null)
    await running(id)
    await host.request('sessions.queue', { id, text: 'not while closing' })
    // The turn ends while the Host closes: its end and the queue are written before close resolves, and nothing after.
    await first.open()
    await host.close()
    const written = await filesIn(dataDir)
    await new Promise((r) => setTimeout(r, 300))
    expect(await filesIn(dataDir)).toEqual(written)
    await turn

    host = await openHost(dataDir)
    const state = await stateOf(id)
    expect(state.queue?.map((q) => q.text)).toEqual(['not while closing'])
    expect(state.queueHeld).toBe(RESTART_HOLD)
    expect(await userTexts(id)).toHaveLength(1)
    const thread = fold((await host.request('sessions.open', { id })).records)
    expect(thread.entries.at(-1)?.kind).toMatch(/^(stop|error)$/)
  })

  it('says a queue left from a restart waits for the user', async () => {
    const id = await session()
    // A queue written to the record while nothing ran to hold it (as if the app quit between two turns).
    const record = (await host.request('sessions.list', { projectId })).find((s) => s.id === id)
    expect(record).toBeTruthy()
    await host.close()
    const db = join(dataDir, 'db.json')
    const data = JSON.parse(await readFile(db, 'utf8')) as { sessions: { id: string; queue?: unknown[] }[] }
    data.sessions.find((s) => s.id === id)!.queue = [{ id: 'q1', text: 'waiting', attachments: [], queuedAt: new Date().toISOString() }]
    await writeFile(db, JSON.stringify(data))

    host = await openHost(dataDir)
    const state = await stateOf(id)
    expect(state.queueHeld).toBe(RESTART_HOLD)
    expect(state.queue?.map((q) => q.text)).toEqual(['waiting'])
  })
})

describe('send now', () => {
  it('hands a queued prompt to the running turn of an agent that takes prompts mid-turn', async () => {
    const id = await session({ SCRIPTED_AGENT_PROMPT_QUEUEING: '1' })
    const agentState = (await host.request('agents.states', {}))[0]
    expect(agentState?.capabilities?.promptQueueing).toBe(true)
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}\n/say never said` })
    await running(id)
    await host.request('sessions.queue', { id, text: 'later' })
    const steer = (await host.request('sessions.queue', { id, text: 'look at the tests first' })).queued

    await host.request('sessions.sendQueuedNow', { id, queuedId: steer.id })
    // In the thread at once, out of the queue; the other queued prompt still waits.
    expect(await queueTexts(id)).toEqual(['later'])
    expect((await userTexts(id)).at(-1)).toBe('look at the tests first')

    // The first prompt hands over (end_turn) without finishing its script; the steer runs on in the same turn.
    expect((await turn).stopReason).toBe('end_turn')
    await waitUntil('the queue to empty', async () => (await queueTexts(id)).length === 0 && (await stateOf(id)).status === 'ready')
    await waitUntil('the last answer', async () => (await assistantTexts(id)).includes('You said: later'))
    expect(await assistantTexts(id)).toEqual(['You said: look at the tests first', 'You said: later'])
    const thread = fold((await host.request('sessions.open', { id })).records)
    // One turn end for the steered turn, one for the queued prompt after it: none for the prompt that handed over.
    expect(entriesOf(thread, 'stop')).toHaveLength(2)
  })
})

describe('send now by steering (issue 36.5)', () => {
  it('steers the running turn of an agent that announces steering: no second session/prompt, the prompt in the thread as sent into the turn, one turn end', async () => {
    const id = await session({ SCRIPTED_AGENT_STEERING: '1' })
    const agentState = (await host.request('agents.states', {}))[0]
    expect(agentState?.capabilities?.steering).toBe(true)
    // Without prompt queueing, a second session/prompt mid-turn would fail (-32600): only steering can get it in.
    expect(agentState?.capabilities?.promptQueueing).toBeUndefined()
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}\n/say finished` })
    await running(id)
    await host.request('sessions.queue', { id, text: 'later' })
    const steer = (await host.request('sessions.queue', { id, text: 'look at the tests first' })).queued

    await host.request('sessions.sendQueuedNow', { id, queuedId: steer.id })
    expect(await queueTexts(id)).toEqual(['later'])
    const thread = fold((await host.request('sessions.open', { id })).records)
    expect(entriesOf(thread, 'user').at(-1)).toMatchObject({ text: 'look at the tests first', steered: true })
    await waitUntil('the turn to take the steer', async () => (await assistantTexts(id)).length === 1)
    expect(await assistantTexts(id)).toEqual(['steered: look at the tests first'])
    // In the thread: the prompt first, then what the steer brought.
    const order = fold((await host.request('sessions.open', { id })).records).entries.map((e) => e.kind)
    expect(order.slice(-2)).toEqual(['user', 'assistant'])
    const steering = (await readFile(join(root, 'agent', 'steering.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown)
    expect(steering).toEqual([{ sessionId: expect.any(String), text: 'look at the tests first', running: true }])

    // The turn goes on to its own end; then the queue goes on.
    await first.open()
    expect((await turn).stopReason).toBe('end_turn')
    await waitUntil('the queue to empty', async () => (await queueTexts(id)).length === 0 && (await stateOf(id)).status === 'ready')
    await waitUntil('the last answer', async () => (await assistantTexts(id)).includes('You said: later'))
    expect(await assistantTexts(id)).toEqual(['steered: look at the tests first', 'finished', 'You said: later'])
    expect(entriesOf(fold((await host.request('sessions.open', { id })).records), 'stop')).toHaveLength(2)
  })

  it('a steer that finds the turn over (promptRequired) goes first in the queue and is sent once, as a prompt, when the turn ends', async () => {
    const id = await session({ SCRIPTED_AGENT_STEERING: 'idle' })
    const first = gate()
    const turn = host.request('sessions.prompt', { id, text: `/await ${first.path}` })
    await running(id)
    await host.request('sessions.queue', { id, text: 'later' })
    const steer = (await host.request('sessions.queue', { id, text: 'steer me' })).queued
    await host.request('sessions.sendQueuedNow', { id, queuedId: steer.id })
    expect(await queueTexts(id)).toEqual(['steer me', 'later'])
    expect(await userTexts(id)).not.toContain('steer me')

    await first.open()
    await turn
    await waitUntil('the queue to empty', async () => (await queueTexts(id)).length === 0 && (await stateOf(id)).status === 'ready')
    await waitUntil('the last answer', async () => (await assistantTexts(id)).includes('You said: later'))
    expect(await assistantTexts(id)).toEqual(['You said: steer me', 'You said: later'])
    expect((await userTexts(id)).filter((t) => t === 'steer me')).toHaveLength(1)
  })
})
