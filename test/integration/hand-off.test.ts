import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { SessionRecord } from '../../shared/domain'
import { fold, gitIn, openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * "Continue with…" (issue 39, point 1) against the scripted agent: a hand-off
 * to another agent works in the same worktree, its first prompt carries the
 * conversation (an embedded resource, or plain text to an agent without
 * embedded context), both sessions name each other; images left out for an
 * agent without images; a refusal as too long brings the seed back smaller; an
 * agent that cannot start leaves everything as it was. One Host for the file.
 */

let root: string
let stateDir: string
let host: Host
let projectId: string
let source: SessionRecord
let scriptsFile: string

/** What the scripted agent kept of a session's prompts (the text of their text blocks). */
async function promptsReceived(acpSessionId: string): Promise<string[]> {
  const history = JSON.parse(await readFile(join(stateDir, `${acpSessionId}.json`), 'utf8')) as SessionUpdate[]
  return history.flatMap((u) => (u.sessionUpdate === 'user_message_chunk' && u.content.type === 'text' ? [u.content.text] : []))
}

const said = async (id: string): Promise<string[]> =>
  fold((await host.request('sessions.open', { id })).records).entries.flatMap((e) => (e.kind === 'assistant' ? [e.text] : []))

beforeAll(async () => {
  root = await tempDir('hand-off')
  stateDir = join(root, 'agent-state')
  const project = join(root, 'project')
  await mkdir(project)
  gitIn(project, 'init', '--quiet', '-b', 'main')
  await writeFile(join(project, 'README.md'), 'start\n')
  gitIn(project, 'add', '-A')
  gitIn(project, 'commit', '--quiet', '-m', 'start')
  // Prompts that read like a person's, answered by a script (a plain-text seed quoting them runs nothing).
  scriptsFile = join(root, 'scripts.json')
  await writeFile(
    scriptsFile,
    JSON.stringify({ 'Write the notes': '/disk notes.txt hello\n/diff notes.txt\n/plan Write the notes;Check them\n/say Notes written.' })
  )
  host = await openHost(join(root, 'data'))
  projectId = (await host.request('projects.add', { cwd: project })).id
  const first = await host.request(
    'agents.add',
    scriptedAgent(stateDir, { SCRIPTED_AGENT_SCRIPTS: scriptsFile, SCRIPTED_AGENT_PROMPT: 'image,embeddedContext' }, 'First')
  )
  source = await host.request('sessions.new', { projectId, agentId: first.id, isolation: 'worktree', branch: 'feature/notes' })
  await host.request('sessions.prompt', { id: source.id, text: 'Write the notes' })
  await host.request('sessions.prompt', {
    id: source.id,
    text: 'And this picture',
    attachments: [{ type: 'image', data: Buffer.from('png').toString('base64'), mimeType: 'image/png' }]
  })
}, 60_000)

afterAll(async () => {
  await host?.close()
  await removeDir(root)
})

describe('hand-off to another agent', () => {
  it('as plain text to an agent without embedded context: same worktree and branch, the conversation in its first prompt, images left out and said, both linked', async () => {
    const plain = await host.request(
      'agents.add',
      scriptedAgent(stateDir, { SCRIPTED_AGENT_SCRIPTS: scriptsFile, SCRIPTED_AGENT_PROMPT: '' }, 'Plain')
    )
    const reviewNotes = [{ path: 'notes.txt', line: 1, side: 'new' as const, quote: 'hello', text: 'Say hello to the world' }]
    const next = await host.request('sessions.handOff', { id: source.id, agentId: plain.id, reviewNotes })
    expect(next.agentId).toBe(plain.id)
    expect(next.cwd).toBe(source.cwd)
    expect(next.worktree?.branch).toBe('feature/notes')
    expect(next.handedOffFrom).toBe(source.id)
    expect(next.handOffSeed).toMatchObject({ asResource: false, images: 0 })
    expect(next.handOffSeed?.notes).toContain('1 image of the conversation left out: the agent does not take images.')
    expect((await host.request('sessions.get', { ids: [source.id] }))[0]?.handedOffTo).toEqual([next.id])
    // The thread says where it comes from, before anything is sent.
    const notice = fold((await host.request('sessions.open', { id: next.id })).records).entries[0]
    expect(notice).toMatchObject({ kind: 'notice', title: `Handed over from "${source.title}" with First` })

    const typed = `/write ${join(source.cwd, 'more.txt')} from-plain\n/cwd`
    await host.request('sessions.prompt', { id: next.id, text: typed })
    const [received] = await promptsReceived(next.acpSessionId!)
    expect(received).toContain('# A conversation handed over to you')
    expect(received).toContain('### User\n\nWrite the notes')
    expect(received).toContain('Notes written.')
    expect(received).toMatch(/- Edited `[^`]*notes\.txt`/)
    expect(received).toContain('- [~] Write the notes\n- [ ] Check them')
    expect(received).toContain('`notes.txt`, line 1: Say hello to the world')
    expect(received).toContain('+hello')
    expect(received).toContain('branch `feature/notes`')
    expect(received.endsWith(typed)).toBe(true)
    // The next Write lands in the same worktree; the seed went once and the record no longer holds it.
    expect(await readFile(join(source.cwd, 'more.txt'), 'utf8')).toBe('from-plain')
    expect((await said(next.id)).join('\n')).toContain(`cwd=${source.cwd}`)
    const after = (await host.request('sessions.get', { ids: [next.id] }))[0]
    expect(after?.handOffSeed).toBeUndefined()
    // The user's bubble shows what they typed, not the conversation sent with it.
    const bubble = fold((await host.request('sessions.open', { id: next.id })).records).entries.find((e) => e.kind === 'user')
    expect(bubble).toMatchObject({ text: typed })
    await host.request('sessions.prompt', { id: next.id, text: 'second' })
    expect((await promptsReceived(next.acpSessionId!))[1]).toBe('second')
  })

  it('as an embedded resource, with the images, to an agent that takes them', async () => {
    const rich = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_PROMPT: 'image,embeddedContext' }, 'Rich'))
    const next = await host.request('sessions.handOff', { id: source.id, agentId: rich.id })
    expect(next.handOffSeed).toMatchObject({ asResource: true, images: 1, notes: [] })
    await host.request('sessions.prompt', { id: next.id, text: '/blocks' })
    const blocks = (await said(next.id)).find((t) => t.startsWith('blocks:'))
    expect(blocks).toMatch(new RegExp(`^blocks: resource\\(switchboard://hand-off/${source.id}: \\d+ chars\\), image\\(image/png,3 bytes\\), text$`))
    const parent = (await host.request('sessions.get', { ids: [source.id] }))[0]
    expect(parent?.handedOffTo?.at(-1)).toBe(next.id)
  })

  it('to a preset: its agent and system prompt, in the same worktree whatever isolation the preset names', async () => {
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SYSTEM_PROMPT: '1' }, 'Reviewer agent'))
    const preset = await host.request('presets.add', {
      name: 'Careful reviewer',
      agentId: agent.id,
      systemPrompt: 'Review; never push.',
      isolation: 'worktree'
    })
    const next = await host.request('sessions.handOff', { id: source.id, presetId: preset.id })
    expect(next).toMatchObject({ agentId: agent.id, preset: { id: preset.id }, systemPrompt: 'Review; never push.', cwd: source.cwd })
    expect(next.worktree?.path).toBe(source.worktree?.path)
    const notice = fold((await host.request('sessions.open', { id: next.id })).records).entries.find((e) => e.kind === 'notice')
    expect(notice).toMatchObject({ title: `Handed over from "${source.title}" with First` })
    expect(notice?.kind === 'notice' && notice.description).toContain('goes to Careful reviewer (Reviewer agent)')
  })

  it('refused as too long: the seed comes back within a smaller budget, said; removed, nothing goes', async () => {
    const small = await host.request('agents.add', scriptedAgent(stateDir, {}, 'Small'))
    const next = await host.request('sessions.handOff', { id: source.id, agentId: small.id })
    expect(next.handOffSeed?.budget).toBe(60_000)
    await expect(host.request('sessions.prompt', { id: next.id, text: '/fail prompt is too long: 90000 tokens > 8000 maximum' })).rejects.toThrow(
      /too long/
    )
    const seed = await waitUntil('the seed attached again', async () => (await host.request('sessions.get', { ids: [next.id] }))[0]?.handOffSeed)
    expect(seed.budget).toBe(20_000)
    expect(seed.notes[0]).toBe(
      'Small refused the conversation as too long (60,000 characters at most): it is attached again within 20,000. Send again, or remove it.'
    )
    const dropped = await host.request('sessions.dropHandOffSeed', { id: next.id })
    expect(dropped.handOffSeed).toBeUndefined()
    await host.request('sessions.prompt', { id: next.id, text: 'plain now' })
    expect((await promptsReceived(next.acpSessionId!)).at(-1)).toBe('plain now')
  })

  it('to an agent whose program is missing: a clear error, no new session, the original untouched', async () => {
    const missing = await host.request('agents.add', {
      name: 'Gone',
      transport: { kind: 'process', command: join(root, 'no-such-agent'), args: [], env: {} }
    })
    const before = (await host.request('sessions.get', { ids: [source.id] }))[0]
    const count = (await host.request('sessions.list', { projectId })).length
    await expect(host.request('sessions.handOff', { id: source.id, agentId: missing.id })).rejects.toThrow(/Gone/)
    expect((await host.request('sessions.list', { projectId })).length).toBe(count)
    expect((await host.request('sessions.get', { ids: [source.id] }))[0]).toEqual(before)
    expect(existsSync(source.cwd)).toBe(true)
  })

  it('refuses a request naming both an agent and a preset, or neither', async () => {
    await expect(host.request('sessions.handOff', { id: source.id })).rejects.toThrow(/Name the agent or the preset/)
  })
})
