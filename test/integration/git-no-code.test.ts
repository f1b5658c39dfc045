import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ConfirmCommand } from '../../electron/host/contract/confirmations'
import { Host } from '../../electron/host/host'
import type { CommandChange } from '../../shared/confirmation'
import { filePatch, hunkHeader } from '../../shared/workspace'
import { gitIn, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'

/**
 * Switchboard's own git runs no code a repository names (issue 34, point 1).
 * An agent that may write files in its project may write `.git/config`,
 * `.gitattributes` and `.git/hooks`: here every one of them names a program
 * that leaves a marker, and the Host takes checkpoints, shows and keeps
 * changes, rewinds, makes a worktree, commits and merges in that repository.
 * No marker may appear. The same repository's traps do fire for a plain
 * `git`, so the test is armed.
 */

let root: string
let host: Host
let projectDir: string
let markers: string
let agentId: string

const HOOKS = [
  'pre-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'post-checkout',
  'post-merge',
  'pre-merge-commit',
  'reference-transaction',
  'post-index-change',
  'pre-auto-gc',
  'post-rewrite'
]

/** A program that notes it ran (its name) in the markers file, and with `passThrough` copies its input to its output (as a filter must). */
async function trap(name: string, body = ''): Promise<string> {
  const file = join(root, 'traps', name)
  await mkdir(join(root, 'traps'), { recursive: true })
  await writeFile(file, `#!/bin/sh\necho ${name} >> '${markers}'\n${body}\nexit 0\n`)
  await chmod(file, 0o755)
  return file
}

async function ran(): Promise<string[]> {
  const text = await readFile(markers, 'utf8').catch(() => '')
  return [...new Set(text.split('\n').filter(Boolean))].sort()
}

/** What an agent could write: programs in .git/config, drivers named in .gitattributes, hooks. */
async function arm(dir: string): Promise<void> {
  const config = join(dir, '.git', 'config')
  await writeFile(`${config}.unarmed`, await readFile(config))
  const set = (key: string, value: string) => gitIn(dir, 'config', key, value)
  set('core.fsmonitor', await trap('fsmonitor'))
  set('filter.evil.clean', `${await trap('clean', 'cat')}`)
  set('filter.evil.smudge', `${await trap('smudge', 'cat')}`)
  set('filter.evil.required', 'true')
  set('filter.proc.process', await trap('process'))
  set('diff.evil.textconv', await trap('textconv', 'cat "$1"'))
  set('diff.evil.command', await trap('diff-command'))
  set('diff.external', await trap('diff-external'))
  set('merge.evil.driver', `${await trap('merge-driver')} %A %O %B`)
  set('core.pager', await trap('pager'))
  set('core.editor', await trap('editor'))
  set('gpg.program', await trap('gpg'))
  set('commit.gpgSign', 'true')
  set('credential.helper', `!${await trap('credential')}`)
  set('core.sshCommand', await trap('ssh'))
  await mkdir(join(dir, '.git', 'hooks'), { recursive: true })
  for (const hook of HOOKS) {
    const file = join(dir, '.git', 'hooks', hook)
    await writeFile(file, `#!/bin/sh\necho hook-${hook} >> '${markers}'\nexit 0\n`)
    await chmod(file, 0o755)
  }
}

/** The user's own git, on the user's own repository, for the test's setup: with the traps taken away meanwhile. */
async function asUser(dir: string, work: () => void): Promise<void> {
  const config = join(dir, '.git', 'config')
  const armed = await readFile(config)
  await writeFile(config, await readFile(`${config}.unarmed`))
  await rename(join(dir, '.git', 'hooks'), join(dir, '.git', 'hooks-off'))
  try {
    work()
  } finally {
    await writeFile(config, armed)
    await rename(join(dir, '.git', 'hooks-off'), join(dir, '.git', 'hooks'))
  }
}

beforeEach(async () => {
  root = await tempDir('git-no-code')
  projectDir = join(root, 'project')
  markers = join(root, 'markers.log')
  host = await openHost(join(root, 'data'))
  agentId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))).id
  await mkdir(projectDir, { recursive: true })
  gitIn(projectDir, 'init', '--quiet', '-b', 'main')
  gitIn(projectDir, 'config', 'user.name', 'Test User')
  gitIn(projectDir, 'config', 'user.email', 'test@example.com')
  const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`)
  await writeFile(join(projectDir, 'a.txt'), 'one\ntwo\n')
  await writeFile(join(projectDir, 'b.txt'), lines.join('\n') + '\n')
  await writeFile(join(projectDir, 'p.txt'), 'processed\n')
  await writeFile(join(projectDir, '.gitattributes'), '* filter=evil diff=evil merge=evil\np.txt filter=proc\n')
  gitIn(projectDir, 'add', '-A')
  gitIn(projectDir, 'commit', '--quiet', '-m', 'start')
  await arm(projectDir)
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function say(id: string, text: string): Promise<void> {
  await host.request('sessions.prompt', { id, text })
}

describe("Switchboard's own git runs no code from the repository", () => {
  it('through checkpoints, review, rewind, a worktree, commit and merge; the same traps fire for a plain git', async () => {
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id

    // A worktree session: made (checkout), a turn with its checkpoint, review, commit, and a merge that needs a three-way merge of b.txt.
    const inTree = await host.request('sessions.new', { projectId, agentId, isolation: 'worktree', branch: 'feature/x' })
    expect(await readFile(join(inTree.cwd, 'a.txt'), 'utf8')).toBe('one\ntwo\n')
    await say(
      inTree.id,
      '/disk b.txt line 1\\nline 2 (session)\\nline 3\\nline 4\\nline 5\\nline 6\\nline 7\\nline 8\\nline 9\\nline 10\\nline 11\\nline 12\\n'
    )
    const treeChanges = await host.request('changes.list', { id: inTree.id })
    expect(treeChanges.files.map((f) => [f.path, f.status])).toEqual([['b.txt', 'modified']])
    expect(treeChanges.worktree?.uncommitted).toEqual(['b.txt'])
    const committed = await host.request('changes.commit', { id: inTree.id, message: 'session change' })
    expect(committed.files).toBe(1)
    // Meanwhile the user changed b.txt on main, elsewhere in the file.
    await asUser(projectDir, () => {
      execFileSync('sed', ['-i', 's/^line 11$/line 11 (user)/', join(projectDir, 'b.txt')])
      gitIn(projectDir, 'commit', '--quiet', '-am', 'user change')
    })
    const merged = await host.request('changes.merge', { id: inTree.id })
    expect(merged).toMatchObject({ merged: true, into: 'main' })
    const mergedText = await readFile(join(projectDir, 'b.txt'), 'utf8')
    expect(mergedText).toContain('line 2 (session)\n')
    expect(mergedText).toContain('line 11 (user)\n')

    // A session in the project folder: a turn's checkpoint, the Changes view, keep, revert, rewind.
    const inFolder = await host.request('sessions.new', { projectId, agentId })
    await say(inFolder.id, '/disk a.txt one\\nTWO\\n\n/disk c.txt new\\n\n/disk p.txt changed\\n')
    const { records } = await host.request('sessions.open', { id: inFolder.id })
    expect(records.find((r) => r.t === 'checkpoint')).toMatchObject({ index: 1 })
    const changes = await host.request('changes.list', { id: inFolder.id })
    expect(changes.files.map((f) => f.path).sort()).toEqual(['a.txt', 'c.txt', 'p.txt'])
    expect(changes.files.find((f) => f.path === 'a.txt')).toMatchObject({ oldText: 'one\ntwo\n', newText: 'one\nTWO\n' })
    const hunk = filePatch('one\ntwo\n', 'one\nTWO\n')!.hunks[0]!
    await host.request('changes.keep', { id: inFolder.id, path: 'a.txt', hunk: { index: 0, header: hunkHeader(hunk) } })
    await host.request('changes.revert', { id: inFolder.id, path: 'p.txt' })
    await host.request('changes.keepAll', { id: inFolder.id })
    await host.request('changes.rewind', { id: inFolder.id, checkpoint: 1 })
    expect(await readFile(join(projectDir, 'a.txt'), 'utf8')).toBe('one\ntwo\n')
    expect(existsSync(join(projectDir, 'c.txt'))).toBe(false)

    // The worktree goes with its session (git checks it is clean first).
    await host.request('sessions.delete', { id: inTree.id, removeWorktree: true })
    expect(existsSync(inTree.cwd)).toBe(false)

    expect(await ran()).toEqual([])

    // Armed: the user's own git runs them (with the process filter's program taken out first: it makes any git that starts it fail).
    expect(gitIn(projectDir, 'config', '--unset', 'filter.proc.process')).toBe('')
    await writeFile(join(projectDir, 'a.txt'), 'armed\n')
    gitIn(projectDir, 'status')
    gitIn(projectDir, 'add', '-A')
    gitIn(projectDir, '-c', 'commit.gpgSign=false', 'commit', '--quiet', '-m', 'armed')
    expect(await ran()).toEqual(expect.arrayContaining(['fsmonitor', 'clean', 'hook-pre-commit', 'hook-post-commit', 'hook-reference-transaction']))
  })

  it("runs the repository's hooks on commit only once the user turned them on for the project, confirmed; never its filters", async () => {
    await host.close()
    const asked: CommandChange[] = []
    const confirm: ConfirmCommand = async (change) => {
      asked.push(change)
      return { confirmed: true }
    }
    host = await Host.open({ dataDir: join(root, 'data-2'), version: 'test', presets: [], initializeTimeoutMs: 20_000, confirmCommand: confirm })
    agentId = (await host.request('agents.add', scriptedAgent(join(root, 'agent-state')))).id
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    // Adding the folder was confirmed too (issue 34.7); what follows counts the hooks' confirmation alone.
    asked.length = 0
    const session = await host.request('sessions.new', { projectId, agentId, isolation: 'worktree', branch: 'hooks' })
    const commit = async (text: string) => {
      await say(session.id, `/disk a.txt ${text}\\n`)
      return host.request('changes.commit', { id: session.id, message: text })
    }
    expect((await host.request('changes.list', { id: session.id })).worktree?.gitHooks).toBe(false)
    await commit('off by default')
    expect(await ran()).toEqual([])

    const project = await host.request('projects.setGitHooks', { projectId, enabled: true })
    expect(project.gitHooks).toBe(true)
    expect(asked).toEqual([expect.objectContaining({ action: expect.stringContaining('git hooks'), confirm: 'Run its hooks' })])
    expect((await host.request('changes.list', { id: session.id })).worktree?.gitHooks).toBe(true)
    await commit('hooks on')
    const hooksOn = await ran()
    expect(hooksOn).toEqual(expect.arrayContaining(['hook-pre-commit', 'hook-prepare-commit-msg', 'hook-commit-msg', 'hook-post-commit']))
    // Hooks only: no fsmonitor, filter or other program of the repository's.
    expect(hooksOn.filter((name) => !name.startsWith('hook-'))).toEqual([])

    await rm(markers)
    expect((await host.request('projects.setGitHooks', { projectId, enabled: false })).gitHooks).toBeUndefined()
    expect(asked).toHaveLength(1) // turning them off asks nothing
    await commit('off again')
    expect(await ran()).toEqual([])
  })

  it("ignores git's variables in the Host's environment: GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT", async () => {
    // Only the variables are armed here: the repository's own traps are taken away.
    await writeFile(join(projectDir, '.git', 'config'), await readFile(join(projectDir, '.git', 'config.unarmed')))
    await rm(join(projectDir, '.git', 'hooks'), { recursive: true })
    const elsewhere = join(root, 'elsewhere')
    await mkdir(elsewhere)
    gitIn(elsewhere, 'init', '--quiet', '-b', 'main')
    await mkdir(join(root, 'env-hooks'))
    const hook = join(root, 'env-hooks', 'reference-transaction')
    await writeFile(hook, `#!/bin/sh\necho env-hook >> '${markers}'\nexit 0\n`)
    await chmod(hook, 0o755)
    await rm(join(projectDir, '.gitattributes'))
    await writeFile(join(projectDir, '.gitattributes'), '* filter=fromenv\n')
    const projectId = (await host.request('projects.add', { cwd: projectDir })).id
    const session = await host.request('sessions.new', { projectId, agentId })
    const saved = { ...process.env }
    Object.assign(process.env, {
      GIT_DIR: join(elsewhere, '.git'),
      GIT_WORK_TREE: elsewhere,
      GIT_CONFIG_PARAMETERS: `'core.hookspath'='${join(root, 'env-hooks')}' 'filter.fromenv.clean'='${await trap('env-clean', 'cat')}'`,
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'core.fsmonitor',
      GIT_CONFIG_VALUE_0: await trap('env-fsmonitor')
    })
    try {
      await say(session.id, '/disk a.txt changed\\n')
      const changes = await host.request('changes.list', { id: session.id })
      expect(changes.files.map((f) => f.path)).toEqual(['a.txt'])
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name]
      Object.assign(process.env, saved)
    }
    // The checkpoints went to the project's repository, none to the other; nothing from the variables ran.
    expect(gitIn(projectDir, 'for-each-ref', '--format=%(refname)', `refs/switchboard/${session.id}/checkpoints/`)).toBe(
      `refs/switchboard/${session.id}/checkpoints/1`
    )
    expect(gitIn(elsewhere, 'for-each-ref', 'refs/switchboard/')).toBe('')
    expect(await ran()).toEqual([])
  })
})
