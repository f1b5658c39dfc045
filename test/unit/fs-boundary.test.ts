import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { confinePath, readTextFile } from '../../electron/host/fs-boundary'
import { removeDir, tempDir } from '../helpers'

let root: string
let project: string
beforeEach(async () => {
  root = await tempDir('fs')
  project = join(root, 'project')
  await mkdir(join(project, 'src'), { recursive: true })
  await writeFile(join(project, 'src', 'a.txt'), 'one\ntwo\nthree\nfour')
  await writeFile(join(root, 'secret.txt'), 'secret')
  await symlink(join(root, 'secret.txt'), join(project, 'link-out'))
  await symlink(root, join(project, 'dir-out'))
})
afterEach(() => removeDir(root))

describe('the file boundary', () => {
  it('allows files inside the project, existing or new', async () => {
    expect(await confinePath(join(project, 'src', 'a.txt'), [project])).toBe(join(project, 'src', 'a.txt'))
    expect(await confinePath(join(project, 'new', 'deep', 'b.txt'), [project])).toBe(join(project, 'new', 'deep', 'b.txt'))
  })

  it.each([
    ['a relative path', 'src/a.txt', /not an absolute path/],
    ['.. out of the project', '/../secret.txt', /outside the session's folder/],
    ['a sibling with the same prefix', '-evil/x.txt', /outside/],
    ['a symlink to a file outside', '/link-out', /outside/],
    ['a path through a symlinked folder outside', '/dir-out/secret.txt', /outside/],
    ['a new file under a symlinked folder outside', '/dir-out/new.txt', /outside/],
    ['a NUL byte', '/src/a.txt\0.png', /NUL/]
  ])('refuses %s', async (_name, suffix, message) => {
    const path = suffix.startsWith('/') || suffix.startsWith('-') ? project + suffix : suffix
    await expect(confinePath(path, [project])).rejects.toThrow(message)
  })

  it('reads a window of lines (1-based line, limit)', async () => {
    const file = join(project, 'src', 'a.txt')
    expect(await readTextFile(file, 2, 2)).toBe('two\nthree')
    expect(await readTextFile(file, 3, null)).toBe('three\nfour')
    expect(await readTextFile(file)).toBe('one\ntwo\nthree\nfour')
  })
})
