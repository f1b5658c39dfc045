import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ContentBlock } from '@agentclientprotocol/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { foldTail } from '../../shared/thread-fold'
import type { TranscriptRecord } from '../../shared/transcript'
import { gitIn, openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * "Edit and resend" from an earlier message (issue 39, point 2) with the
 * scripted agent, which cannot fork at a message: the files go back to that
 * turn's checkpoint, a new session of the same agent is given the
 * conversation before the message and sent the edited one, and the original
 * stays whole, each naming the other where they part. One Host for the file.
 */

let root: string
let project: string
let host: Host
let projectId: string
let agentId: string

beforeAll(async () => {
  root = await tempDir('edit-resend')
  project = join(root, 'project')
  await mkdir(project)
  gitIn(project, 'init', '--quiet', '-b', 'main')
  await writeFile(join(project, 'README.md'), '# Repo\n')
  gitIn(project, '-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '--quiet', '--allow-empty', '-m', 'start')
  host = await openHost(join(root, 'data'))
  projectId = (await host.request('projects.add', { cwd: project })).id
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))).id
})

afterAll(async () => {
  await host.close()
  await removeDir(root)
})

const file = (name: string) => join(project, name)
const open = (id: string) => host.request('sessions.open', { id })
const prompts = (records: TranscriptRecord[]) => records.flatMap((r) => (r.t === 'prompt' ? [r] : []))
const said = (content: ContentBlock[]) => content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n')
/** The seq of the n-th prompt (1-based) in a session's transcript. */
async function seqOfMessage(id: string, n: number): Promise<number> {
  const { records } = await open(id)
  let count = 0
  const index = records.findIndex((r) => r.t === 'prompt' && ++count === n)
  return index
}

describe('edit and resend from an earlier message', () => {
  it('rewinds the files, starts a seeded session with the edited message, and keeps the original as a branch', async () => {
    const original = await host.request('sessions.new', { projectId, agentId })
    // (Message 1 is no script: the seed repeats it to the scripted agent, which would run it again.)
    await host.request('sessions.prompt', { id: original.id, text: 'Start the notes.' })
    await host.request('sessions.prompt', {
      id: original.id,
      text: `Second thoughts.\n/write ${file('notes.md')} two\n/write ${file('todo.md')} later`
    })
    await host.request('sessions.prompt', { id: original.id, text: 'A third message' })
    const before = await open(original.id)
    const seq = await seqOfMessage(original.id, 2)

    const result = await host.request('sessions.editResend', { id: original.id, seq, text: `Better thoughts.\n/write ${file('notes.md')} edited` })
    expect(result.forked).toBe(false)
    expect(result.rewound?.files.sort()).toEqual(['notes.md', 'todo.md'])
    const branch = result.session
    expect(branch).toMatchObject({ agentId, forkedFrom: original.id, editedFrom: { session: original.id, message: 2, seq } })

    // The edited message ran in the new session, on the files as they were before message 2.
    await waitUntil(
      'the edited turn to end',
      async () => (await host.request('sessions.states', {})).find((s) => s.id === branch.id)?.status === 'ready'
    )
    expect(await readFile(file('notes.md'), 'utf8')).toBe('edited')
    expect(existsSync(file('todo.md'))).toBe(false)

    // Its first prompt carried the conversation before message 2, not message 2 or what came after.
    const copy = await open(branch.id)
    const [first, resent] = prompts(copy.records)
    expect(prompts(copy.records)).toHaveLength(2)
    expect(said(first?.content ?? [])).toContain('Start the notes.')
    const seed = resent?.content.find((b) => b.type === 'text' && b._meta?.switchboard)
    expect(seed?.type === 'text' && seed.text).toMatch(/### User\s+Start the notes\.\s+### Scripted\s+You said: Start the notes\./)
    expect(seed?.type === 'text' && seed.text).not.toMatch(/Second thoughts|A third message/)
    expect(said(resent?.content ?? [])).toContain('Better thoughts.')
    // Where it leaves the original, just before the edited message.
    const copyThread = foldTail(copy.records, copy.nextSeq)
    const at = copyThread.entries.findIndex((e) => e.kind === 'branch')
    expect(copyThread.entries[at]).toMatchObject({ direction: 'from', sessionId: original.id, message: 2 })
    expect(copyThread.entries[at + 1]).toMatchObject({ kind: 'user', text: expect.stringContaining('Better thoughts.') })
    expect(copyThread.entries.some((e) => e.kind === 'user' && e.checkpoint !== undefined && e.text.includes('Start the notes.'))).toBe(false)

    // The original is whole: its three messages and replies, plus the rewind and the mark on message 2.
    const after = await open(original.id)
    expect(after.records.slice(0, before.records.length)).toEqual(before.records)
    expect(prompts(after.records)).toHaveLength(3)
    const thread = foldTail(after.records, after.nextSeq)
    const edited = thread.entries.find((e) => e.id === `r${seq}`)
    expect(edited).toMatchObject({ kind: 'user', edits: [{ sessionId: branch.id }] })

    // The rewind is the Changes view's, with its undo.
    await host.request('changes.rewind', { id: original.id, checkpoint: result.rewound?.undo ?? 0 })
    expect(await readFile(file('todo.md'), 'utf8')).toBe('later')
  })

  it('a message without a checkpoint is refused with checkpoint_missing, and resent with the files untouched when asked', async () => {
    const original = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: original.id, text: 'First' })
    await host.request('sessions.prompt', { id: original.id, text: 'Second' })
    const { session: branch } = await host.request('sessions.editResend', {
      id: original.id,
      seq: await seqOfMessage(original.id, 2),
      text: 'Second, again'
    })
    await waitUntil(
      'the edited turn to end',
      async () => (await host.request('sessions.states', {})).find((s) => s.id === branch.id)?.status === 'ready'
    )
    // The branch's copy of message 1 has no checkpoint of its own (the original's are the original's).
    await writeFile(file('untouched.md'), 'as it is')
    const seq = await seqOfMessage(branch.id, 1)
    expect(await host.handle('sessions.editResend', { id: branch.id, seq, text: 'First, again' })).toMatchObject({
      ok: false,
      error: {
        code: 'checkpoint_missing',
        message: expect.stringMatching(/No checkpoint of the files was taken before message 1\. Resend it with the files as they are/)
      }
    })
    const sessionsBefore = (await host.request('sessions.list', { projectId })).length
    expect(sessionsBefore).toBe(4)
    const result = await host.request('sessions.editResend', { id: branch.id, seq, text: 'First, again', conversationOnly: true })
    expect(result.rewound).toBeNull()
    expect(await readFile(file('untouched.md'), 'utf8')).toBe('as it is')
    // Message 1 has nothing before it: no seed.
    const resent = prompts((await open(result.session.id)).records)
    expect(resent.map((p) => said(p.content))).toEqual(['First, again'])
  })

  it('refuses while a turn runs, and an agent that cannot start a session leaves the original untouched', async () => {
    const original = await host.request('sessions.new', { projectId, agentId })
    await host.request('sessions.prompt', { id: original.id, text: 'Hello' })
    const seq = await seqOfMessage(original.id, 1)
    const turn = host.request('sessions.prompt', { id: original.id, text: '/sleep 30000' })
    await waitUntil(
      'the turn to run',
      async () => (await host.request('sessions.states', {})).find((s) => s.id === original.id)?.status === 'running'
    )
    await expect(host.request('sessions.editResend', { id: original.id, seq, text: 'Hi' })).rejects.toThrow(
      /A turn is running in this session: stop it first/
    )
    await host.request('sessions.cancel', { id: original.id })
    await turn

    const definition = (await host.request('agents.list', {})).find((a) => a.id === agentId)
    await host.request('agents.update', {
      ...scriptedAgent(join(root, 'agent-state'), { SCRIPTED_AGENT_NEW: 'fail' }),
      agentId,
      name: definition?.name ?? 'Scripted'
    })
    await host.request('agents.restart', { agentId })
    const before = await open(original.id)
    const count = (await host.request('sessions.list', { projectId })).length
    await expect(host.request('sessions.editResend', { id: original.id, seq, text: 'Hi' })).rejects.toThrow(/workspace index|Internal error/)
    expect((await open(original.id)).records).toEqual(before.records)
    expect((await host.request('sessions.list', { projectId })).length).toBe(count)
  })
})
