import { execFileSync } from 'node:child_process'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { locateWorkspace, snapshotTree } from '../../electron/host/workspace/repo'
import { gitIn, removeDir, tempDir } from '../helpers'

/**
 * The git commands a checkpoint's snapshot runs (workspace/repo.ts `snapshotTree`: `add`, then `write-tree`),
 * counted by a `git` on PATH that writes down each call and hands it to the real one. Both commands may run a
 * repository's filters, so both get every driver switched off, from one listing of the configuration.
 */

let dir: string
let log: string
let path: string | undefined

beforeEach(async () => {
  dir = await tempDir('git-runs')
  const shim = join(dir, 'bin')
  log = join(dir, 'calls.log')
  await mkdir(shim)
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim()
  await writeFile(join(shim, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realGit}' "$@"\n`)
  await chmod(join(shim, 'git'), 0o755)
  path = process.env.PATH
  process.env.PATH = `${shim}:${path ?? ''}`
})

afterEach(async () => {
  process.env.PATH = path
  await removeDir(dir)
})

describe.skipIf(process.platform === 'win32')('a checkpoint snapshot', () => {
  it('lists the repository configuration once for its add and write-tree', async () => {
    const project = join(dir, 'project')
    await mkdir(project)
    gitIn(project, 'init', '--quiet')
    await writeFile(join(project, 'a.txt'), 'one\n')
    const ws = await locateWorkspace(project, join(dir, 'shadows'), join(dir, 'scratch'))
    await writeFile(log, '')

    const tree = await snapshotTree(ws)

    expect(tree).toMatch(/^[0-9a-f]{40,64}$/)
    const calls = (await readFile(log, 'utf8')).split('\n').filter(Boolean)
    expect(calls.filter((c) => / add -A /.test(c))).toHaveLength(1)
    expect(calls.filter((c) => /(^| )write-tree$/.test(c))).toHaveLength(1)
    expect(calls.filter((c) => / config --list -z$/.test(c))).toHaveLength(1)
  })
})
