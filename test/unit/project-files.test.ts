import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existingPathInside, rankFiles, walkProject } from '../../electron/host/local-files/project-files'
import type { Host } from '../../electron/host/host'
import { openHost, removeDir, tempDir } from '../helpers'

let root: string
let project: string
let outside: string

beforeAll(async () => {
  root = await tempDir('files')
  project = join(root, 'app')
  outside = join(root, 'secret')
  for (const dir of ['src/components', '.git/objects', 'node_modules/lib', 'docs']) await mkdir(join(project, dir), { recursive: true })
  await mkdir(outside, { recursive: true })
  const files = [
    'README.md',
    'src/app.ts',
    'src/components/AppHeader.vue',
    'src/map.ts',
    'docs/guide.md',
    '.git/objects/abc',
    'node_modules/lib/index.js'
  ]
  for (const file of files) await writeFile(join(project, file), 'x')
  await writeFile(join(outside, 'key.txt'), 'secret')
  await symlink(outside, join(project, 'link-out'))
})
afterAll(() => removeDir(root))

describe('project files', () => {
  it('lists files breadth-first, skipping version control, dependencies and linked folders', async () => {
    const listing = await walkProject(project)
    expect(listing.files.map((f) => f.relative)).toEqual(['README.md', 'docs/guide.md', 'src/app.ts', 'src/map.ts', 'src/components/AppHeader.vue'])
    expect(listing.truncated).toBe(false)
    expect((await walkProject(project, 2)).truncated).toBe(true)
  })

  it('ranks names starting with the query, then containing it, then paths, then letters in order', async () => {
    const { files } = await walkProject(project)
    expect(rankFiles(files, 'app', 10).map((f) => f.relative)).toEqual(['src/app.ts', 'src/components/AppHeader.vue'])
    expect(rankFiles(files, 'ap', 10).map((f) => f.relative)).toEqual(['src/app.ts', 'src/components/AppHeader.vue', 'src/map.ts'])
    expect(rankFiles(files, 'comp', 10).map((f) => f.relative)).toEqual(['src/components/AppHeader.vue'])
    expect(rankFiles(files, 'sahv', 10).map((f) => f.relative)).toEqual(['src/components/AppHeader.vue'])
    // No query: the shallowest, shortest paths.
    expect(rankFiles(files, '', 3).map((f) => f.relative)).toEqual(['README.md', 'src/app.ts', 'src/map.ts'])
  })

  it('admits only existing paths inside the folders', async () => {
    expect(await existingPathInside(join(project, 'src/app.ts'), [project])).toBe(join(project, 'src/app.ts'))
    await expect(existingPathInside(join(project, 'nope.ts'), [project])).rejects.toThrow(/does not exist/)
    await expect(existingPathInside('/etc/passwd', [project])).rejects.toThrow(/Cannot show this path: .* outside/)
    await expect(existingPathInside(join(project, 'link-out/key.txt'), [project])).rejects.toThrow(/outside/)
    await expect(existingPathInside(join(project, 'src/../../secret/key.txt'), [project])).rejects.toThrow(/outside/)
  })

  it('are served by the Host: files.list for a project, files.reveal for a session’s paths', async () => {
    let host: Host | null = null
    try {
      host = await openHost(join(root, 'data'))
      const added = await host.request('projects.add', { cwd: project })
      const listed = await host.request('files.list', { projectId: added.id, query: 'guide' })
      expect(listed).toEqual({ files: [{ path: join(project, 'docs/guide.md'), relative: 'docs/guide.md' }], truncated: false })
      await expect(host.request('files.list', { projectId: 'nope', query: '' })).rejects.toThrow("No project with id 'nope'")
      await expect(host.request('files.reveal', { sessionId: 'nope', path: '/x' })).rejects.toThrow("No session with id 'nope'")
    } finally {
      await host?.close()
    }
  })
})
