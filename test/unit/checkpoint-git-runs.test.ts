import { execFileSync } from 'node:child_process'
import { appendFile, chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
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
    expect(calls.filter((c) => / config --list( --show-origin)? -z$/.test(c))).toHaveLength(1)
  })

  it('lists the configuration again only when a file it came from, or could come from, changed; a filter added is switched off', async () => {
    const project = join(dir, 'project')
    await mkdir(project)
    gitIn(project, 'init', '--quiet')
    // An include of a file that is not there yet: the agent may write it later.
    gitIn(project, 'config', 'include.path', '../later.cfg')
    await writeFile(join(project, 'a.txt'), 'one\n')
    const ws = await locateWorkspace(project, join(dir, 'shadows'), join(dir, 'scratch'))
    // Past git's racy window: a configuration changed in the last two seconds is listed again each time.
    await backdate(join(project, '.git', 'config'))
    const listings = async () => (await readFile(log, 'utf8')).split('\n').filter((c) => / config --list( --show-origin)? -z$/.test(c)).length
    const marker = join(dir, 'filter-ran')
    const evilFilter = `[filter "evil"]\n\tclean = "sh -c 'touch ${marker} && cat'"\n`

    await snapshotTree(ws)
    await snapshotTree(ws)
    expect(await listings()).toBe(1)

    await writeFile(join(project, '.gitattributes'), '* filter=evil\n')
    await writeFile(join(project, 'later.cfg'), evilFilter)
    await writeFile(join(project, 'a.txt'), 'two\n')
    await snapshotTree(ws)
    expect(await listings()).toBe(2)
    await expect(readFile(marker)).rejects.toThrow()

    await rm(join(project, 'later.cfg'))
    await backdate(join(project, '.git', 'config'))
    await snapshotTree(ws)
    await appendFile(join(project, '.git', 'config'), evilFilter.replace('evil', 'evil2'))
    await writeFile(join(project, '.gitattributes'), '* filter=evil2\n')
    await writeFile(join(project, 'a.txt'), 'three\n')
    await snapshotTree(ws)
    await expect(readFile(marker)).rejects.toThrow()
    // The same configuration with plain git runs the filter: the trap is real.
    gitIn(project, 'add', 'a.txt')
    expect((await stat(marker)).isFile()).toBe(true)
  })
})

/** Waits out the two seconds after a file's last change in which its listing is not remembered. */
async function backdate(file: string): Promise<void> {
  const changed = (await stat(file)).ctimeMs
  await new Promise((r) => setTimeout(r, Math.max(0, changed + 2_100 - Date.now())))
}
