import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Checkpoints } from '../../electron/host/workspace/checkpoints'
import { gitIn, removeDir, tempDir } from '../helpers'

/**
 * A turn's checkpoint in two steps (`Checkpoints.begin`): the turn goes on once the files are read, and the
 * checkpoint's commit and ref are written after. What the agent changes from then on is not in it; nothing
 * reads the checkpoints before they are there; the numbers stay right with the last one remembered.
 */

// Every git the Host starts is seen (and run): starting one holds the Host's thread while it forks.
vi.mock('node:child_process', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:child_process')>()
  return { ...original, execFile: vi.fn(original.execFile) }
})

/** The git subcommands started so far (after the `-c` settings), but the configuration's listing (made again while its files are new). */
function started(): string[] {
  return vi
    .mocked(execFile)
    .mock.calls.map((call) => {
      const args = (call[1] ?? []) as string[]
      return args.find((arg, i) => !arg.startsWith('-') && args[i - 1] !== '-c') ?? ''
    })
    .filter((command) => command !== 'config')
}

let dir: string
let project: string
let checkpoints: Checkpoints

beforeEach(async () => {
  dir = await tempDir('checkpoint-begin')
  project = join(dir, 'project')
  await mkdir(project)
  gitIn(project, 'init', '--quiet', '-b', 'main')
  await writeFile(join(project, 'a.txt'), 'one\n')
  gitIn(project, 'add', '-A')
  gitIn(project, 'commit', '--quiet', '-m', 'start')
  checkpoints = new Checkpoints({ shadowRoot: join(dir, 'shadows'), scratch: join(dir, 'scratch') })
})

afterEach(async () => {
  await removeDir(dir)
})

/** A file as a checkpoint holds it. */
function fileAt(commit: string, path: string): string {
  return gitIn(project, 'show', `${commit}:${path}`)
}

describe.skipIf(process.platform === 'win32')('a turn’s checkpoint', () => {
  it('holds the files as they were when the turn went on, not as the agent changed them while it was written', async () => {
    await writeFile(join(project, 'a.txt'), 'before the turn\n')
    await writeFile(join(project, 'new.txt'), 'untracked\n')

    const begun = await checkpoints.begin('s1', project)
    // The agent writes at once, same size and same second as what was read (git's racy case), and adds a file.
    await writeFile(join(project, 'a.txt'), 'AFTER THE TURN\n')
    await writeFile(join(project, 'later.txt'), 'made by the agent\n')
    const written = await begun.written

    expect(begun.index).toBe(1)
    expect(written.index).toBe(1)
    expect(fileAt(written.commit, 'a.txt')).toBe('before the turn')
    expect(fileAt(written.commit, 'new.txt')).toBe('untracked')
    expect(() => fileAt(written.commit, 'later.txt')).toThrow()
    expect(await readFile(join(project, 'a.txt'), 'utf8')).toBe('AFTER THE TURN\n')
  })

  it('lets the turn go on before the checkpoint’s tree is written: no other git is started before it answers', async () => {
    await (
      await checkpoints.begin('s1', project)
    ).written
    await writeFile(join(project, 'a.txt'), 'changed\n')
    vi.mocked(execFile).mockClear()

    const begun = await checkpoints.begin('s1', project)
    expect(started()).toEqual(['add'])
    await begun.written
    expect(started()).toEqual(['add', 'write-tree', 'commit-tree', 'update-ref'])
  })

  it('is listed as soon as the turn goes on: a listing waits for it to be written', async () => {
    const begun = await checkpoints.begin('s1', project)
    const listed = await checkpoints.list('s1', project)
    expect(listed.map((c) => [c.index, c.label, c.turn])).toEqual([[1, 'turn', 1]])
    expect(listed[0]?.commit).toBe((await begun.written).commit)
  })

  it('numbers checkpoints in order through turns, a rewind and a forgotten session, each on the one before', async () => {
    const first = await (await checkpoints.begin('s1', project)).written
    await writeFile(join(project, 'a.txt'), 'two\n')
    const second = await (await checkpoints.begin('s1', project)).written
    const { undo } = await checkpoints.rewind('s1', project, 1)
    expect(await readFile(join(project, 'a.txt'), 'utf8')).toBe('one\n')
    const third = await checkpoints.begin('s1', project)
    const thirdView = await third.written

    expect([first.index, second.index, undo.index, third.index]).toEqual([1, 2, 3, 4])
    expect([first.turn, second.turn, thirdView.turn]).toEqual([1, 2, 3])
    expect(gitIn(project, 'rev-parse', `${thirdView.commit}^`)).toBe(undo.commit)
    expect(gitIn(project, 'rev-parse', `${undo.commit}^`)).toBe(second.commit)
    // A new Checkpoints (the Host started again) lists what is there and goes on from it.
    const again = await new Checkpoints({ shadowRoot: join(dir, 'shadows'), scratch: join(dir, 'scratch') }).begin('s1', project)
    expect(again.index).toBe(5)
    await again.written

    await checkpoints.forget('s1', project)
    const fresh = await checkpoints.begin('s1', project)
    expect(fresh.index).toBe(1)
    expect(gitIn(project, 'rev-parse', `${(await fresh.written).commit}^@`)).toBe('')
  })

  it('refuses to write over a checkpoint someone else wrote meanwhile, then goes on after it', async () => {
    await (
      await checkpoints.begin('s1', project)
    ).written
    // Another Switchboard on the same data wrote checkpoint 2 of this session.
    const other = new Checkpoints({ shadowRoot: join(dir, 'shadows'), scratch: join(dir, 'scratch') })
    const theirs = await (await other.begin('s1', project)).written
    expect(theirs.index).toBe(2)

    const mine = await checkpoints.begin('s1', project)
    await expect(mine.written).rejects.toThrow(/update-ref/)
    expect(gitIn(project, 'rev-parse', 'refs/switchboard/s1/checkpoints/2')).toBe(theirs.commit)
    const next = await checkpoints.begin('s1', project)
    expect(next.index).toBe(3)
    expect(gitIn(project, 'rev-parse', `${(await next.written).commit}^`)).toBe(theirs.commit)
  })
})
