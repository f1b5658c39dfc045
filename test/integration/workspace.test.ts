import { existsSync } from 'node:fs'
import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { buildDiff } from '../../renderer/src/diff-model'
import { reviewCommentsPrompt } from '../../shared/workspace'
import { entriesOf, fold, gitIn, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * Isolation, checkpoints, review and rewind, with the scripted agent writing
 * files both through fs/write_text_file and straight on disk (as real Claude
 * Code does): what a turn changed is read from the files and git.
 */

let root: string
let host: Host
let projectDir: string
let dataDir: string
let agentId: string

async function repository(dir: string, files: Record<string, string | Buffer>): Promise<void> {
  await mkdir(dir, { recursive: true })
  gitIn(dir, 'init', '--quiet', '-b', 'main')
  gitIn(dir, 'config', 'user.name', 'Test User')
  gitIn(dir, 'config', 'user.email', 'test@example.com')
  for (const [path, data] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true })
    await writeFile(join(dir, path), data)
  }
  gitIn(dir, 'add', '-A')
  gitIn(dir, 'commit', '--quiet', '-m', 'start')
}

/** What the user's repository shows of itself: index, HEAD, branches, stash; none of it may change. */
function userState(dir: string) {
  return {
    status: gitIn(dir, 'status', '--porcelain'),
    head: gitIn(dir, 'rev-parse', 'HEAD'),
    branches: gitIn(dir, 'branch', '--list'),
    stash: gitIn(dir, 'stash', 'list'),
    staged: gitIn(dir, 'diff', '--cached', '--name-only')
  }
}

beforeEach(async () => {
  root = await tempDir('workspace')
  dataDir = join(root, 'data')
  projectDir = join(root, 'project')
  host = await openHost(dataDir)
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function newSession(projectId: string, options: { isolation?: 'folder' | 'worktree'; branch?: string } = {}) {
  return host.request('sessions.new', { projectId, agentId, ...options })
}

async function say(id: string, text: string): Promise<void> {
  await host.request('sessions.prompt', { id, text })
}

describe('checkpoints: a snapshot of the files as each turn starts', () => {
  it('in a repository: tracked, untracked, binary and ignored files; the user’s index, HEAD, branches and stash untouched', async () => {
    await repository(projectDir, { 'a.txt': 'one\ntwo\nthree\n', '.gitignore': 'ignored/\n', 'bin.dat': Buffer.from([0, 1, 2, 3]) })
    await mkdir(join(projectDir, 'ignored'))
    await writeFile(join(projectDir, 'ignored', 'cache.txt'), 'cache')
    await writeFile(join(projectDir, 'untracked.txt'), 'not added yet\n')
    gitIn(projectDir, 'stash', 'list')
    await writeFile(join(projectDir, 'staged.txt'), 'staged\n')
    gitIn(projectDir, 'add', 'staged.txt')
    const before = userState(projectDir)
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId)

    await say(
      session.id,
      `/disk a.txt one\\nTWO\\nthree\\n\n/write ${join(projectDir, 'b.txt')} written through the client\n/rm untracked.txt\n/disk bin.dat \u0000\u0009binary`
    )
    await writeFile(join(projectDir, 'ignored', 'cache.txt'), 'cache changed')

    const changes = await host.request('changes.list', { id: session.id })
    expect(changes.kind).toBe('git')
    expect(changes.checkpoints).toEqual([expect.objectContaining({ index: 1, label: 'turn', turn: 1 })])
    const byPath = Object.fromEntries(changes.files.map((f) => [f.path, f]))
    expect(Object.keys(byPath).sort()).toEqual(['a.txt', 'b.txt', 'bin.dat', 'untracked.txt'])
    expect(byPath['a.txt']).toMatchObject({ status: 'modified', oldText: 'one\ntwo\nthree\n', newText: 'one\nTWO\nthree\n' })
    expect(byPath['b.txt']).toMatchObject({ status: 'added', oldText: null, newText: 'written through the client' })
    expect(byPath['untracked.txt']).toMatchObject({ status: 'deleted', oldText: 'not added yet\n' })
    expect(byPath['bin.dat']).toMatchObject({ status: 'modified', binary: true, oldText: null, newText: null })
    // Ignored files are not in checkpoints; the user's repository is as it was.
    expect(userState(projectDir)).toEqual({ ...before, status: expect.any(String) })
    expect(gitIn(projectDir, 'diff', '--cached', '--name-only')).toBe('staged.txt')
    expect(gitIn(projectDir, 'rev-parse', 'HEAD')).toBe(before.head)
    expect(gitIn(projectDir, 'for-each-ref', '--format=%(refname)', 'refs/switchboard/')).toBe(
      `refs/switchboard/${session.id}/checkpoints/1\nrefs/switchboard/${session.id}/review\nrefs/switchboard/${session.id}/turn-ends/1`
    )

    // The checkpoint is in the transcript, and the prompt's entry knows it.
    const { records } = await host.request('sessions.open', { id: session.id })
    expect(records.find((r) => r.t === 'checkpoint')).toMatchObject({ index: 1, turn: 1 })
    expect(entriesOf(fold(records), 'user')[0]).toMatchObject({ checkpoint: 1 })
  })

  it('in a folder that is not a repository: a shadow repository in the data folder, no .git in the folder', async () => {
    await mkdir(join(projectDir, 'src'), { recursive: true })
    await writeFile(join(projectDir, 'src', 'main.txt'), 'main\n')
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId)
    await say(session.id, '/disk src/main.txt main changed\\n\n/disk src/new.txt new\\n')
    await say(session.id, '/rm src/new.txt')

    const changes = await host.request('changes.list', { id: session.id })
    expect(changes.kind).toBe('shadow')
    expect(changes.checkpoints.map((c) => c.turn)).toEqual([1, 2])
    expect(changes.files).toEqual([expect.objectContaining({ path: 'src/main.txt', status: 'modified', newText: 'main changed\n' })])
    // Per turn: turn 1 added new.txt and changed main.txt; turn 2 removed new.txt.
    const turn1 = await host.request('changes.list', { id: session.id, from: 1, to: 2 })
    expect(turn1.files.map((f) => `${f.status} ${f.path}`).sort()).toEqual(['added src/new.txt', 'modified src/main.txt'])
    const turn2 = await host.request('changes.list', { id: session.id, from: 2 })
    expect(turn2.files.map((f) => `${f.status} ${f.path}`)).toEqual(['deleted src/new.txt'])
    // What the user changes after a turn is not the turn's: each turn's own changes stop where it ended.
    await writeFile(join(projectDir, 'src', 'user.txt'), 'mine\n')
    const turn2Later = await host.request('changes.list', { id: session.id, from: 2 })
    expect(turn2Later.to).toBe('turn-end')
    expect(turn2Later.files.map((f) => `${f.status} ${f.path}`)).toEqual(['deleted src/new.txt'])
    const turn1Alone = await host.request('changes.list', { id: session.id, from: 1 })
    expect(turn1Alone.files.map((f) => `${f.status} ${f.path}`).sort()).toEqual(['added src/new.txt', 'modified src/main.txt'])
    expect((await host.request('changes.list', { id: session.id })).files.map((f) => f.path).sort()).toEqual(['src/main.txt', 'src/user.txt'])
    expect(existsSync(join(projectDir, '.git'))).toBe(false)
    expect((await readdir(join(dataDir, 'checkpoints'))).some((d) => d.endsWith('.git'))).toBe(true)
    // Keep all: nothing left to review, the files as they are.
    await host.request('changes.keepAll', { id: session.id })
    expect((await host.request('changes.list', { id: session.id })).files).toEqual([])
    expect(await readFile(join(projectDir, 'src', 'main.txt'), 'utf8')).toBe('main changed\n')
  })

  it('a turn whose end was not kept (the Host stopped before it could save it) still ends where the next turn began, not now', async () => {
    await repository(projectDir, { 'a.txt': 'a\n' })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId)
    await say(session.id, '/disk one.txt turn one\n')
    await say(session.id, '/disk two.txt turn two\n')
    // Turn 1's end is lost, as when the Host was killed before saving it.
    gitIn(projectDir, 'update-ref', '-d', `refs/switchboard/${session.id}/turn-ends/1`)
    await writeFile(join(projectDir, 'mine.txt'), 'the user, later\n')
    const turn1 = await host.request('changes.list', { id: session.id, from: 1 })
    expect(turn1.to).toBe('turn-end')
    expect(turn1.files.map((f) => `${f.status} ${f.path}`)).toEqual(['added one.txt'])
    // The last turn with no end and nothing after it runs to now (it may still be running).
    gitIn(projectDir, 'update-ref', '-d', `refs/switchboard/${session.id}/turn-ends/2`)
    const turn2 = await host.request('changes.list', { id: session.id, from: 2 })
    expect(turn2.to).toBe('present')
    expect(turn2.files.map((f) => `${f.status} ${f.path}`).sort()).toEqual(['added mine.txt', 'added two.txt'])
  })
})

describe('review: keep or revert per file and per hunk', () => {
  it('keeps one hunk and reverts another; reverts and keeps whole files, binary included', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`)
    await repository(projectDir, { 'code.txt': lines.join('\n') + '\n', 'logo.png': Buffer.from([137, 80, 78, 71, 0, 1]) })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId)
    const edited = [...lines]
    edited[1] = 'line 2 EDITED'
    edited[25] = 'line 26 EDITED'
    await say(session.id, `/disk code.txt ${edited.join('\\n')}\\n\n/disk logo.png \u0000changed\n/disk extra.txt extra\\n`)

    const first = await host.request('changes.list', { id: session.id })
    const code = first.files.find((f) => f.path === 'code.txt')!
    // The window names hunks as its diff view shows them.
    const hunks = buildDiff(code.oldText, code.newText!).hunks
    expect(hunks).toHaveLength(2)
    await host.request('changes.keep', { id: session.id, path: 'code.txt', hunk: { index: 0, header: hunks[0]!.header } })
    const afterKeep = await host.request('changes.list', { id: session.id })
    const codeNow = afterKeep.files.find((f) => f.path === 'code.txt')!
    expect(buildDiff(codeNow.oldText, codeNow.newText!).hunks).toHaveLength(1)
    expect(codeNow.oldText).toContain('line 2 EDITED') // kept: part of the review base now
    expect(await readFile(join(projectDir, 'code.txt'), 'utf8')).toContain('line 26 EDITED') // keeping changes no file

    // A stale hunk is refused rather than applied to other lines.
    const stale = await host.handle('changes.revert', { id: session.id, path: 'code.txt', hunk: { index: 0, header: hunks[0]!.header } })
    expect(stale).toMatchObject({ ok: false, error: { code: 'review_stale' } })
    const remaining = buildDiff(codeNow.oldText, codeNow.newText!).hunks[0]!
    await host.request('changes.revert', { id: session.id, path: 'code.txt', hunk: { index: 0, header: remaining.header } })
    const text = await readFile(join(projectDir, 'code.txt'), 'utf8')
    expect(text).toContain('line 2 EDITED')
    expect(text).toContain('line 26\n')
    expect(text).not.toContain('line 26 EDITED')

    // Whole files: the binary reverted on disk, the new file kept.
    await host.request('changes.revert', { id: session.id, path: 'logo.png' })
    expect([...(await readFile(join(projectDir, 'logo.png')))]).toEqual([137, 80, 78, 71, 0, 1])
    await host.request('changes.keep', { id: session.id, path: 'extra.txt' })
    expect((await host.request('changes.list', { id: session.id })).files).toEqual([])
    expect(await readFile(join(projectDir, 'extra.txt'), 'utf8')).toBe('extra\n')
    // Reverting an added file removes it.
    await say(session.id, '/disk notes/new.md hello\\n')
    await host.request('changes.revert', { id: session.id, path: 'notes/new.md' })
    expect(existsSync(join(projectDir, 'notes'))).toBe(false)
    // A path outside the folder is refused by the contract.
    expect(await host.handle('changes.revert', { id: session.id, path: '../outside.txt' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_params' }
    })
  })

  it('review comments go to the agent as the next prompt, quoted with file and line', async () => {
    await repository(projectDir, { 'a.txt': 'alpha\n' })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId)
    const text = reviewCommentsPrompt([{ path: 'a.txt', line: 1, side: 'new', quote: 'alpha', text: 'Call it beta.' }])
    await say(session.id, text)
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect(
      entriesOf(thread, 'assistant')
        .map((e) => (e as { text: string }).text)
        .join('')
    ).toContain('a.txt, line 1:\n> alpha\nCall it beta.')
  })
})

describe('rewind', () => {
  it('restores the files to a checkpoint, can itself be undone, and tells the agent in the next prompt', async () => {
    await repository(projectDir, { 'a.txt': 'v0\n' })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId)
    await say(session.id, '/disk a.txt v1\\n\n/disk b.txt added in turn 1\\n')
    await say(session.id, '/disk a.txt v2\\n')
    await chmod(join(projectDir, 'a.txt'), 0o755)

    const { undo, files } = await host.request('changes.rewind', { id: session.id, checkpoint: 1 })
    expect(files.sort()).toEqual(['a.txt', 'b.txt'])
    expect(await readFile(join(projectDir, 'a.txt'), 'utf8')).toBe('v0\n')
    expect((await stat(join(projectDir, 'a.txt'))).mode & 0o111).toBe(0)
    expect(existsSync(join(projectDir, 'b.txt'))).toBe(false)
    expect(undo).toMatchObject({ index: 3, label: 'rewind', rewindTo: 1 })

    // Undo: rewind to the checkpoint taken just before.
    await host.request('changes.rewind', { id: session.id, checkpoint: undo.index })
    expect(await readFile(join(projectDir, 'a.txt'), 'utf8')).toBe('v2\n')
    expect((await stat(join(projectDir, 'a.txt'))).mode & 0o111).not.toBe(0)
    expect(await readFile(join(projectDir, 'b.txt'), 'utf8')).toBe('added in turn 1\n')

    // The thread says what happened; the next prompt tells the agent, once.
    await say(session.id, 'what now?')
    await say(session.id, 'and now?')
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    const notices = entriesOf(thread, 'notice').map((n) => (n as { title: string }).title)
    expect(notices).toEqual(['Files restored to checkpoint 1', 'Files restored to checkpoint 3'])
    const said = entriesOf(thread, 'assistant').map((e) => (e as { text: string }).text)
    expect(said.at(-2)).toContain('[Switchboard] The user restored the files')
    expect(said.at(-2)).toContain('what now?')
    expect(said.at(-1)).not.toContain('[Switchboard]')
  })
})

describe('a worktree per session', () => {
  it('creates the worktree on a new branch, runs the agent there, commits and merges back, removes it with the session', async () => {
    await repository(projectDir, { 'a.txt': 'base\n' })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId, { isolation: 'worktree', branch: 'feature/one' })
    expect(session.worktree).toMatchObject({ branch: 'feature/one', baseBranch: 'main', repo: projectDir })
    expect(session.cwd).toBe(session.worktree!.path)
    expect(session.cwd.startsWith(join(dataDir, 'worktrees'))).toBe(true)

    await say(session.id, '/cwd\n/disk a.txt changed in the worktree\\n')
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect(
      entriesOf(thread, 'assistant')
        .map((e) => (e as { text: string }).text)
        .join('')
    ).toContain(`cwd=${session.cwd}`)
    expect(await readFile(join(projectDir, 'a.txt'), 'utf8')).toBe('base\n') // the project folder is untouched

    const info = await host.request('worktrees.list', { projectId })
    expect(info).toMatchObject({ repository: true, branch: 'main' })
    expect(info.worktrees.map((w) => [w.branch, w.sessionId ?? null])).toEqual([
      ['main', null],
      ['feature/one', session.id]
    ])

    // Deleting with the worktree is refused while it holds uncommitted work, and says what.
    const refused = await host.handle('sessions.delete', { id: session.id, removeWorktree: true })
    expect(refused).toMatchObject({ ok: false, error: { code: 'worktree_dirty' } })
    expect(!refused.ok && refused.error.message).toContain('a.txt')
    expect((await host.request('sessions.list', {})).map((s) => s.id)).toContain(session.id)

    const merged0 = await host.request('changes.merge', { id: session.id })
    expect(merged0).toMatchObject({ merged: false, message: expect.stringContaining('Commit') })
    await host.request('changes.commit', { id: session.id, message: 'Change a.txt' })
    const merged = await host.request('changes.merge', { id: session.id })
    expect(merged).toMatchObject({ merged: true, into: 'main', conflicts: [] })
    expect(await readFile(join(projectDir, 'a.txt'), 'utf8')).toBe('changed in the worktree\n')
    expect(gitIn(projectDir, 'log', '-1', '--format=%an %s')).toBe("Test User Merge branch 'feature/one'")

    const deleted = await host.request('sessions.delete', { id: session.id, removeWorktree: true })
    expect(deleted.note).toContain("branch 'feature/one' is kept")
    expect(existsSync(session.cwd)).toBe(false)
    expect(gitIn(projectDir, 'worktree', 'list').split('\n')).toHaveLength(1)
    expect(gitIn(projectDir, 'for-each-ref', 'refs/switchboard/')).toBe('')
  })

  it('names each checkpoint by its prompt, keeps what is committed, and after a merge removes the worktree and branch, not while dirty (issue 37)', async () => {
    await repository(projectDir, { 'a.txt': 'base\n' })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId, { isolation: 'worktree', branch: 'feature/done' })
    const tree = session.worktree!.path
    await say(session.id, 'Change a.txt please\nand nothing else\n/disk a.txt changed\\n')
    await say(session.id, '/disk b.txt new\\n')
    const listed = await host.request('changes.list', { id: session.id })
    expect(listed.checkpoints.map((c) => [c.label, c.turn, c.prompt])).toEqual([
      ['turn', 1, 'Change a.txt please'],
      ['turn', 2, '/disk b.txt new\\n']
    ])
    expect(listed.files.map((f) => f.path).sort()).toEqual(['a.txt', 'b.txt'])

    // Removing before the merge: the branch has commits main has not.
    await host.request('changes.commit', { id: session.id, message: 'Both files' })
    expect((await host.request('changes.list', { id: session.id })).files).toEqual([])
    await expect(host.request('changes.removeWorktree', { id: session.id })).rejects.toThrow(/has commits that 'main' does not have/)
    expect((await host.request('changes.merge', { id: session.id })).merged).toBe(true)

    // Dirty: refused, the file named, nothing removed.
    await writeFile(join(tree, 'stray.txt'), 'left\n')
    const refused = await host.handle('changes.removeWorktree', { id: session.id })
    expect(refused).toMatchObject({ ok: false, error: { code: 'worktree_dirty', message: expect.stringContaining('stray.txt') } })
    expect(existsSync(tree)).toBe(true)
    await rm(join(tree, 'stray.txt'))

    const removed = await host.request('changes.removeWorktree', { id: session.id })
    expect(removed.message).toContain("branch 'feature/done' were removed")
    expect(existsSync(tree)).toBe(false)
    expect(gitIn(projectDir, 'branch', '--list', 'feature/done')).toBe('')
    expect((await host.request('sessions.get', { ids: [session.id] }))[0]?.worktree?.removedAt).toEqual(expect.any(String))
    expect(await host.request('changes.list', { id: session.id })).toMatchObject({ available: false, reason: expect.stringContaining('removed') })
    // Its folder is gone: a prompt is refused with what to do, the conversation stays.
    await expect(say(session.id, 'one more')).rejects.toThrow(/were removed after the merge.*Start a new session/)
  })

  it('reports a merge conflict file by file and changes nothing', async () => {
    await repository(projectDir, { 'a.txt': 'base\n', 'b.txt': 'b\n' })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId, { isolation: 'worktree' })
    expect(session.worktree!.branch).toMatch(/^switchboard\/scripted-[0-9a-f]{6}$/)
    await say(session.id, '/disk a.txt from the session\\n')
    await host.request('changes.commit', { id: session.id, message: 'session edit' })
    await writeFile(join(projectDir, 'a.txt'), 'from the user\n')
    gitIn(projectDir, 'commit', '--quiet', '-am', 'user edit')
    const head = gitIn(projectDir, 'rev-parse', 'HEAD')

    const result = await host.request('changes.merge', { id: session.id })
    expect(result.merged).toBe(false)
    expect(result.conflicts).toEqual([{ path: 'a.txt', reason: expect.stringContaining('CONFLICT (content)') }])
    expect(gitIn(projectDir, 'rev-parse', 'HEAD')).toBe(head)
    expect(gitIn(projectDir, 'status', '--porcelain')).toBe('')
  })

  it('says clearly: not a repository, a branch that exists, a folder in the way', async () => {
    await mkdir(projectDir)
    const plain = (await host.request('projects.add', { cwd: projectDir })).id
    expect(await host.handle('sessions.new', { projectId: plain, agentId, isolation: 'worktree' })).toMatchObject({
      ok: false,
      error: { code: 'not_a_repository', message: expect.stringContaining('not a git repository') }
    })
    expect((await host.request('worktrees.list', { projectId: plain })).repository).toBe(false)

    const repo = join(root, 'repo')
    await repository(repo, { 'a.txt': 'a\n' })
    gitIn(repo, 'branch', 'taken')
    const projectId = (await host.request('projects.add', { cwd: repo })).id
    expect(await host.handle('sessions.new', { projectId, agentId, isolation: 'worktree', branch: 'taken' })).toMatchObject({
      ok: false,
      error: { code: 'branch_exists', message: expect.stringContaining("'taken' already exists") }
    })
    const made = await newSession(projectId, { isolation: 'worktree', branch: 'first' })
    await host.request('sessions.delete', { id: made.id, removeWorktree: true })
    gitIn(repo, 'branch', '-D', 'first')
    await mkdir(made.worktree!.path, { recursive: true })
    await writeFile(join(made.worktree!.path, 'leftover.txt'), 'x')
    expect(await host.handle('sessions.new', { projectId, agentId, isolation: 'worktree', branch: 'first' })).toMatchObject({
      ok: false,
      error: { code: 'worktree_in_the_way' }
    })
    // Names git takes but that mislead: one that reads as another (bidi, invisible, odd spaces), or a full ref.
    const misleading = [
      'main\u202E', // right-to-left override
      'fix\u2066-x\u2069', // isolates
      'ma\u200Bin', // zero-width space
      'feature\u200D', // zero-width joiner
      'ma\uFEFFin', // byte order mark (at either end, the request's trim takes it away)
      'tab\u00A0name', // no-break space
      'blank\u3164', // Hangul filler
      'refs/heads/evil',
      'refs/tags/v1',
      'heads/main'
    ]
    for (const branch of misleading) {
      const refused = await host.handle('sessions.new', { projectId, agentId, isolation: 'worktree', branch })
      expect(refused, JSON.stringify(branch)).toMatchObject({ ok: false })
      expect(!refused.ok && refused.error.message, JSON.stringify(branch)).toMatch(/^The branch name '.*' (has a character|starts like a full ref)/s)
    }
    // Nothing was left behind by the refusals: no new branch, no new worktree.
    expect(gitIn(repo, 'branch', '--list', '--format=%(refname:short)').split('\n').sort()).toEqual(['main', 'taken'])
    expect(gitIn(repo, 'for-each-ref', '--format=%(refname)')).not.toMatch(/refs\/heads\/(refs|heads)\//)
  })
})

describe('without git', () => {
  it('says git is missing and how to get it; the turn goes on without its checkpoint, and says why', async () => {
    await repository(projectDir, { 'a.txt': 'a\n' })
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await newSession(projectId)
    const path = process.env.PATH
    process.env.PATH = join(root, 'no-git-here')
    try {
      expect(await host.handle('sessions.new', { projectId, agentId, isolation: 'worktree' })).toMatchObject({
        ok: false,
        error: { code: 'git_missing', message: expect.stringContaining('install git') }
      })
      await say(session.id, 'hello')
    } finally {
      process.env.PATH = path
    }
    const thread = fold((await host.request('sessions.open', { id: session.id })).records)
    expect(entriesOf(thread, 'notice')).toEqual([
      expect.objectContaining({ title: 'No checkpoint for this turn', description: expect.stringContaining('Git was not found') })
    ])
    expect(
      entriesOf(thread, 'assistant')
        .map((e) => (e as { text: string }).text)
        .join('')
    ).toContain('You said: hello')
  })
})
