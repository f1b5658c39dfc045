import { chmod, lstat, mkdir, readdir, symlink, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { isWorktreeCheckout } from '../../electron/host/storage/private-files'
import { gitIn, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * The data folder is the user's alone (issue 34, point 8): with a umask that
 * lets everyone read and write everything, a session with turns in a
 * repository, in a plain folder and in a worktree, a search, an agent check,
 * a cost and the settings leave only 0700 folders and files nobody but the
 * owner can open; and a folder an older version left open is closed at start,
 * without following a link out of it.
 */

const posix = process.platform !== 'win32'
let umask: number
let root: string
let dataDir: string
let host: Host | undefined

beforeAll(() => {
  if (posix) umask = process.umask(0o000)
})

afterAll(() => {
  if (posix) process.umask(umask)
})

beforeEach(async () => {
  root = await tempDir('private-data')
  dataDir = join(root, 'data')
})

afterEach(async () => {
  await host?.close()
  host = undefined
  await removeDir(root)
})

interface Entry {
  path: string
  kind: 'folder' | 'file' | 'link'
  mode: number
}

/** Everything in the data folder (itself included), links not followed; inside a worktree's checkout only the folder itself. */
async function listing(): Promise<Entry[]> {
  const entries: Entry[] = []
  const walk = async (folder: string): Promise<void> => {
    for (const name of await readdir(folder)) {
      const path = join(folder, name)
      const stat = await lstat(path)
      const rel = relative(dataDir, path)
      const kind = stat.isSymbolicLink() ? 'link' : stat.isDirectory() ? 'folder' : 'file'
      entries.push({ path: rel, kind, mode: stat.mode & 0o777 })
      if (kind === 'folder' && !isWorktreeCheckout(rel)) await walk(path)
    }
  }
  entries.push({ path: '.', kind: 'folder', mode: (await lstat(dataDir)).mode & 0o777 })
  await walk(dataDir)
  return entries
}

/** What is open to the group or others: each entry as `path mode`. */
function open(entries: Entry[]): string[] {
  return entries
    .filter((e) => (e.kind === 'folder' && e.mode !== 0o700) || (e.kind === 'file' && (e.mode & 0o077) !== 0))
    .map((e) => `${e.path} ${e.mode.toString(8)}`)
}

describe.skipIf(!posix)('the data folder is private', () => {
  it('after a real session under umask 000: folders 0700, files 0600 (git objects 0400, programs 0700)', async () => {
    host = await openHost(dataDir)
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))
    const repo = join(root, 'repo')
    await mkdir(repo)
    gitIn(repo, 'init', '--quiet', '-b', 'main')
    await writeFile(join(repo, 'a.txt'), 'a\n')
    gitIn(repo, 'add', '-A')
    gitIn(repo, 'commit', '--quiet', '-m', 'start')
    const plain = join(root, 'plain')
    await mkdir(plain)
    await writeFile(join(plain, 'p.txt'), 'p\n')

    const inRepo = await host.request('projects.add', { cwd: repo })
    const inPlain = await host.request('projects.add', { cwd: plain })
    const sessions = [
      await host.request('sessions.new', { projectId: inRepo.id, agentId: agent.id }),
      await host.request('sessions.new', { projectId: inPlain.id, agentId: agent.id }),
      await host.request('sessions.new', { projectId: inRepo.id, agentId: agent.id, isolation: 'worktree', branch: 'private' })
    ]
    for (const session of sessions) {
      await host.request('sessions.prompt', { id: session.id, text: '/disk a.txt marmalade\\n\n/cost 0.25 USD' })
      expect((await host.request('changes.list', { id: session.id })).available).toBe(true)
    }
    await host.request('changes.commit', { id: sessions[2]!.id, message: 'in the worktree' })
    await expect.poll(async () => (await host!.request('search.query', { q: 'marmalade' })).indexing, { timeout: 60_000 }).toBeNull()
    expect((await host.request('search.query', { q: 'marmalade' })).entries.length).toBeGreaterThan(0)
    await host.request('agents.check', { agentId: agent.id })
    await host.request('settings.set', { theme: 'dark' })
    // The spend book is written once past transcripts are read (when the Host is quiet, or at the Spend page's first
    // report): asked for here, so its file is there however soon the Host closes.
    await expect.poll(async () => (await host!.request('spend.report', {})).currencies).toEqual(['USD'])
    const deleted = await host.request('sessions.new', { projectId: inPlain.id, agentId: agent.id })
    await host.request('sessions.prompt', { id: deleted.id, text: 'hello' })
    await host.request('sessions.delete', { id: deleted.id, keepTranscript: true })
    await host.close()
    host = undefined

    const entries = await listing()
    const names = entries.map((e) => e.path)
    // What a session writes is all there (so the listing below covers it).
    for (const expected of [
      'db.json',
      `transcripts/${sessions[0]!.id}.jsonl`,
      `logs/${agent.id}.log`,
      `logs/${agent.id}.check.log`,
      `agent-checks/${agent.id}.json`,
      'search-index.json',
      'spend.jsonl',
      'settings.json',
      `deleted-transcripts/${deleted.id}.jsonl`
    ])
      expect(names).toContain(expected)
    expect(names.some((n) => /^checkpoints\/plain-[0-9a-f]+\.git\/objects\/[0-9a-f]{2}\//.test(n))).toBe(true)
    expect(names.some((n) => /^tmp\/index-[0-9a-f]+$/.test(n))).toBe(true)
    expect(names.some((n) => isWorktreeCheckout(n))).toBe(true)
    expect(open(entries)).toEqual([])
    // Switchboard's own files are exactly 0600.
    for (const entry of entries.filter((e) =>
      /^(db\.json|search-index\.json|spend\.jsonl|settings\.json|transcripts\/|logs\/|agent-checks\/)/.test(e.path)
    )) {
      if (entry.kind === 'file') expect(`${entry.path} ${entry.mode.toString(8)}`).toBe(`${entry.path} 600`)
    }
  })

  it('closes at start what an older version left open, without following a link out of the folder', async () => {
    await chmod(root, 0o755)
    const outside = join(root, 'outside.txt')
    await writeFile(outside, 'not the data folder’s')
    await chmod(outside, 0o666)
    await mkdir(join(dataDir, 'transcripts'), { recursive: true })
    await mkdir(join(dataDir, 'checkpoints', 'old-1234.git', 'objects', 'ab'), { recursive: true })
    await writeFile(join(dataDir, 'checkpoints', 'old-1234.git', 'objects', 'ab', 'cdef'), 'object', { mode: 0o444 })
    await writeFile(join(dataDir, 'transcripts', 'old.jsonl'), '', { mode: 0o666 })
    await mkdir(join(dataDir, 'logs'), { mode: 0o777 })
    await writeFile(join(dataDir, 'logs', 'old.log'), 'log', { mode: 0o644 })
    await mkdir(join(dataDir, 'agents', 'x', '1.0'), { recursive: true, mode: 0o755 })
    await writeFile(join(dataDir, 'agents', 'x', '1.0', 'run'), '#!/bin/sh\n', { mode: 0o755 })
    await symlink(outside, join(dataDir, 'logs', 'link.log'))
    await symlink(root, join(dataDir, 'up'))
    for (const folder of ['.', 'transcripts', 'checkpoints', 'agents']) await chmod(join(dataDir, folder), 0o777)
    expect(open(await listing()).length).toBeGreaterThan(5)

    host = await openHost(dataDir)
    await host.close()
    host = undefined

    const entries = await listing()
    expect(open(entries)).toEqual([])
    const modes = Object.fromEntries(entries.map((e) => [e.path, e.mode.toString(8)]))
    expect(modes).toMatchObject({
      'transcripts/old.jsonl': '600',
      'logs/old.log': '600',
      'checkpoints/old-1234.git/objects/ab/cdef': '400',
      'agents/x/1.0/run': '700'
    })
    // The links are left as they are, and what they point to is not touched.
    expect((await lstat(outside)).mode & 0o777).toBe(0o666)
    expect((await lstat(root)).mode & 0o777).not.toBe(0o700)
  })
  it('walks the whole folder once; a later start closes its top again and leaves the rest to the folder being 0700', async () => {
    await mkdir(join(dataDir, 'transcripts'), { recursive: true })
    host = await openHost(dataDir)
    await host.close()
    host = undefined
    // Opened by hand since: the folder, a folder at its top, a file deep inside.
    await writeFile(join(dataDir, 'transcripts', 'later.jsonl'), '', { mode: 0o644 })
    await chmod(join(dataDir, 'transcripts', 'later.jsonl'), 0o644)
    await chmod(join(dataDir, 'transcripts'), 0o755)
    await chmod(dataDir, 0o755)
    host = await openHost(dataDir)
    await host.close()
    host = undefined
    expect((await lstat(dataDir)).mode & 0o777).toBe(0o700)
    expect((await lstat(join(dataDir, 'transcripts'))).mode & 0o777).toBe(0o700)
    // Not walked again (a walk at each start cost one lstat per file); nobody else can reach it through the folders.
    expect((await lstat(join(dataDir, 'transcripts', 'later.jsonl'))).mode & 0o777).toBe(0o644)
  })
})
