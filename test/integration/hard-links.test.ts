import { execFileSync } from 'node:child_process'
import { link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { entriesOf, fold, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * A hard link inside the project to a file outside it: the path is inside,
 * the file is not. An agent that can make one (a command it runs, or a
 * repository it unpacked) must not read or write the outside file through
 * Switchboard: not with fs/read_text_file or fs/write_text_file, not by
 * having the user mention it, and not by a rewind or a revert putting a
 * checkpoint's text back through it.
 */

const SECRET = 'SECRET-hard-link-1f0c'

let root: string
let host: Host
let projectDir: string
let outside: string
let agentId: string

beforeEach(async () => {
  root = await tempDir('hard-links')
  projectDir = join(root, 'project')
  outside = join(root, 'outside', 'secret.txt')
  await mkdir(projectDir, { recursive: true })
  await mkdir(join(root, 'outside'))
  await writeFile(outside, SECRET)
  host = await openHost(join(root, 'data'))
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function newSession(): Promise<{ id: string }> {
  const projectId = (await host.request('projects.add', { cwd: projectDir })).id
  return host.request('sessions.new', { projectId, agentId })
}

async function messages(id: string): Promise<string[]> {
  const thread = fold((await host.request('sessions.open', { id })).records)
  return entriesOf(thread, 'assistant').map((e) => (e as { text: string }).text)
}

function gitIn(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@x' }
  })
}

describe('a hard link inside the project to a file outside', () => {
  it('is neither read nor written through by fs/read_text_file and fs/write_text_file; the refusal names the file', async () => {
    const linked = join(projectDir, 'notes.txt')
    await link(outside, linked)
    const session = await newSession()
    await host.request('sessions.prompt', { id: session.id, text: `/read ${linked}\n/write ${linked} overwritten-by-the-agent` })
    const said = await messages(session.id)
    expect(said.join('\n')).not.toContain(SECRET)
    const refusal = /Refused: '.*notes\.txt' has 2 hard links, so it may be a file outside the project under another name/
    expect(said.find((m) => m.startsWith('read failed:'))).toMatch(refusal)
    expect(said.find((m) => m.startsWith('write failed:'))).toMatch(refusal)
    // The file outside is as it was, and still has its second name.
    expect(await readFile(outside, 'utf8')).toBe(SECRET)
    expect((await stat(outside)).nlink).toBe(2)
  })

  it('a write to a file with one name replaces it (a new file renamed over it), keeping its mode', async () => {
    const file = join(projectDir, 'run.sh')
    await writeFile(file, 'old', { mode: 0o751 })
    const before = await stat(file)
    const session = await newSession()
    await host.request('sessions.prompt', { id: session.id, text: `/write ${file} new-text` })
    expect(await readFile(file, 'utf8')).toBe('new-text')
    const after = await stat(file)
    expect(after.ino).not.toBe(before.ino)
    expect(after.mode & 0o777).toBe(0o751)
  })

  it('is not sent as an @-mention: the prompt is refused, naming the file, and the agent never sees it', async () => {
    const linked = join(projectDir, 'mentioned.txt')
    await link(outside, linked)
    const session = await newSession()
    await expect(
      host.request('sessions.prompt', {
        id: session.id,
        text: 'look at @mentioned.txt',
        attachments: [{ type: 'resource_link', uri: pathToFileURL(linked).href, name: 'mentioned.txt' }]
      })
    ).rejects.toThrow(/Not sent: '.*mentioned\.txt' has 2 hard links, .*; mention another file or remove the link/)
    expect(await messages(session.id)).toEqual([])
    // A file with one name is sent as before.
    await writeFile(join(projectDir, 'plain.txt'), 'plain')
    await host.request('sessions.prompt', {
      id: session.id,
      text: 'look at @plain.txt',
      attachments: [{ type: 'resource_link', uri: pathToFileURL(join(projectDir, 'plain.txt')).href, name: 'plain.txt' }]
    })
    expect(await messages(session.id)).toHaveLength(1)
  })

  it('is not rewound or reverted through: nothing is restored, the refusal names the file, the file outside keeps its text', async () => {
    await writeFile(join(projectDir, 'a.txt'), 'checkpoint text\n')
    await writeFile(join(projectDir, 'b.txt'), 'b at the checkpoint\n')
    gitIn(projectDir, 'init', '--quiet', '-b', 'main')
    gitIn(projectDir, 'add', '-A')
    gitIn(projectDir, 'commit', '--quiet', '-m', 'start')
    const session = await newSession()
    // Turn 1 starts with checkpoint 1; the agent then replaces a.txt with a second name of the file outside.
    await host.request('sessions.prompt', { id: session.id, text: '/rm a.txt\n/disk b.txt b changed\\n' })
    await link(outside, join(projectDir, 'a.txt'))

    await expect(host.request('changes.rewind', { id: session.id, checkpoint: 1 })).rejects.toThrow(
      /Nothing was changed: 'a\.txt' has 2 hard links, so it may be a file outside the project under another name/
    )
    expect(await readFile(outside, 'utf8')).toBe(SECRET)
    // Nothing was restored, not even the file that could have been.
    expect(await readFile(join(projectDir, 'b.txt'), 'utf8')).toBe('b changed\n')

    // Review shows the change without the text it would have read through the link.
    const listed = await host.request('changes.list', { id: session.id })
    expect(listed.files.find((f) => f.path === 'a.txt')).toMatchObject({
      oldText: null,
      newText: null,
      refused: expect.stringMatching(/'a\.txt' has 2 hard links/)
    })
    expect(JSON.stringify(listed)).not.toContain(SECRET)
    await expect(host.request('changes.revert', { id: session.id, path: 'a.txt' })).rejects.toThrow(/'a\.txt' has 2 hard links/)
    expect(await readFile(outside, 'utf8')).toBe(SECRET)
    // Once the link is gone the rewind goes through.
    await rm(join(projectDir, 'a.txt'))
    await host.request('changes.rewind', { id: session.id, checkpoint: 1 })
    expect(await readFile(join(projectDir, 'a.txt'), 'utf8')).toBe('checkpoint text\n')
    expect(await readFile(join(projectDir, 'b.txt'), 'utf8')).toBe('b at the checkpoint\n')
    expect(await readFile(outside, 'utf8')).toBe(SECRET)
  })
})
