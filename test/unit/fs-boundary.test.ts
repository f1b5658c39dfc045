import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { link, mkdir, readFile, readdir, stat, symlink, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { confinePath, isInside, MAX_READ_BYTES, normaliseRequest, readTextFile, writeTextFile } from '../../electron/host/local-files/fs-boundary'
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
    ['a relative path', 'src/a.txt', /is a relative path; it must be absolute/],
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

describe('path forms', () => {
  it.each([
    ['a file: URI', 'file:///etc/passwd', /is a URI/],
    ['a control character', '/project/a\nb.txt', /control characters/],
    ['an empty path', '', /empty/]
  ])('refuses %s anywhere', (_name, requested, message) => {
    expect(() => normaliseRequest(requested, 'posix')).toThrow(message)
    expect(() => normaliseRequest(requested, 'win32')).toThrow(message)
  })

  it('resolves `..` and `.` before anything is compared', () => {
    expect(normaliseRequest('/p/a/../b/./c', 'posix')).toBe('/p/b/c')
    expect(normaliseRequest('C:\\p\\a\\..\\..\\..\\x', 'win32')).toBe('C:\\x')
    expect(normaliseRequest('C:/p/a/../b', 'win32')).toBe('C:\\p\\b')
  })

  describe('Windows', () => {
    it.each([
      ['an extended-length path', '\\\\?\\C:\\project\\a.txt', /device or extended-length/],
      ['a device namespace path', '\\\\.\\PhysicalDrive0', /device or extended-length/],
      ['the same with forward slashes', '//?/C:/project/a.txt', /device or extended-length/],
      ['a drive-relative path', 'C:project\\a.txt', /is a relative path; it must be absolute/],
      ['a path without a drive', '\\project\\a.txt', /no drive letter/],
      ['a relative path', 'project\\a.txt', /is a relative path; it must be absolute/],
      ['an alternate data stream', 'C:\\project\\a.txt:secret', /alternate data stream/],
      ['a name ending in a dot', 'C:\\project\\..\\secret.', /ending in a dot or space/],
      ['dots Windows would fold into ..', 'C:\\project\\...\\secret.txt', /ending in a dot or space/],
      ['a name ending in a space', 'C:\\project\\.. \\secret.txt', /ending in a dot or space/],
      ['a device name', 'C:\\project\\NUL', /Windows device/],
      ['a device name with an extension', 'C:\\project\\com1.txt', /Windows device/]
    ])('refuses %s', (_name, requested, message) => {
      expect(() => normaliseRequest(requested, 'win32')).toThrow(message)
    })

    it('takes drive letters and UNC shares, and compares without case', () => {
      const root = normaliseRequest('C:\\Users\\me\\Project', 'win32')
      expect(isInside(root, normaliseRequest('c:\\users\\ME\\project\\src\\a.ts', 'win32'), 'win32')).toBe(true)
      expect(isInside(root, normaliseRequest('C:\\Users\\me\\Project\\..\\Other\\a.ts', 'win32'), 'win32')).toBe(false)
      expect(isInside(root, normaliseRequest('C:\\Users\\me\\Project-evil\\a.ts', 'win32'), 'win32')).toBe(false)
      expect(isInside(root, normaliseRequest('D:\\Users\\me\\Project\\a.ts', 'win32'), 'win32')).toBe(false)
      expect(isInside(root, normaliseRequest('\\\\server\\share\\Users\\me\\Project\\a.ts', 'win32'), 'win32')).toBe(false)
      const share = normaliseRequest('\\\\server\\share\\repo', 'win32')
      expect(isInside(share, normaliseRequest('//SERVER/share/repo/x.txt', 'win32'), 'win32')).toBe(true)
      expect(isInside(share, normaliseRequest('\\\\server\\other\\repo\\x.txt', 'win32'), 'win32')).toBe(false)
      expect(isInside(share, normaliseRequest('\\\\server\\share\\repo\\..\\x.txt', 'win32'), 'win32')).toBe(false)
    })
  })

  it('on POSIX, compares with case unless told the file system ignores it', () => {
    expect(isInside('/home/me/Project', '/home/me/project/a', 'posix')).toBe(false)
    expect(isInside('/home/me/Project', '/home/me/project/a', 'posix', true)).toBe(true)
    expect(isInside('/home/me/Project', '/home/me/Project2/a', 'posix', true)).toBe(false)
  })
})

describe('the file boundary on disk', () => {
  it('refuses a loop of links with a message, and writes nothing through a link swapped in last', async () => {
    await symlink(join(project, 'loop'), join(project, 'loop'))
    await expect(confinePath(join(project, 'loop', 'x'), [project])).rejects.toThrow(/loop of symbolic links/)
    await expect(writeTextFile(join(project, 'link-out'), 'overwritten')).rejects.toThrow(/'.*link-out' is a symbolic link/)
    expect(await readFile(join(root, 'secret.txt'), 'utf8')).toBe('secret')
    await expect(readTextFile(join(project, 'link-out'))).rejects.toThrow(/ELOOP/)
  })

  it('takes a path in another case when this file system ignores case, and refuses it when not', async () => {
    const upper = join(root, 'PROJECT', 'src', 'a.txt')
    const ignoresCase = existsSync(join(root, 'PROJECT'))
    if (ignoresCase) expect(await confinePath(upper, [project])).toBe(join(project, 'src', 'a.txt'))
    else await expect(confinePath(upper, [project])).rejects.toThrow(/outside/)
  })
})

describe('what is read and written', () => {
  it('refuses a file with a second name (a hard link, perhaps to a file outside), to read or to write, naming it', async () => {
    const linked = join(project, 'src', 'linked.txt')
    await link(join(root, 'secret.txt'), linked)
    const refusal = /^Refused: '.*linked\.txt' has 2 hard links, so it may be a file outside the project under another name/
    await expect(readTextFile(linked)).rejects.toThrow(refusal)
    await expect(writeTextFile(linked, 'overwritten')).rejects.toThrow(refusal)
    expect(await readFile(join(root, 'secret.txt'), 'utf8')).toBe('secret')
  })

  it('writes by replacing the file: a new file renamed over it, its mode kept, nothing left beside it', async () => {
    const file = join(project, 'src', 'a.txt')
    const { ino } = await stat(file)
    await writeTextFile(file, 'replaced')
    expect(await readFile(file, 'utf8')).toBe('replaced')
    expect((await stat(file)).ino).not.toBe(ino)
    expect(await readdir(join(project, 'src'))).toEqual(['a.txt'])
  })

  it.skipIf(process.platform === 'win32')(
    'refuses a pipe at once (opening it must not wait for a writer), a folder, and a file too large',
    async () => {
      const fifo = join(project, 'pipe')
      execFileSync('mkfifo', [fifo])
      await expect(readTextFile(fifo)).rejects.toThrow(/not a regular file \(a device, pipe or socket\)/)
      await expect(writeTextFile(fifo, 'x')).rejects.toThrow(/ENXIO|not a regular file/)
      await expect(readTextFile(join(project, 'src'))).rejects.toThrow(/not a regular file \(a folder\)|EISDIR/)
      const big = join(project, 'big.bin')
      await truncate(big, MAX_READ_BYTES + 1).catch(async () => {
        await writeFile(big, '')
        await truncate(big, MAX_READ_BYTES + 1)
      })
      await expect(readTextFile(big)).rejects.toThrow(/files of at most 64 MB are read/)
    }
  )

  it('replaces a file whole, and creates missing folders', async () => {
    await writeTextFile(join(project, 'src', 'a.txt'), 'short')
    expect(await readFile(join(project, 'src', 'a.txt'), 'utf8')).toBe('short')
    await writeTextFile(join(project, 'new', 'deep', 'c.txt'), 'new')
    expect(await readTextFile(join(project, 'new', 'deep', 'c.txt'))).toBe('new')
  })
})
