import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { allowCommands, openHost, removeDir, scriptedAgent, tempDir } from '../helpers'
import { report } from './figures'

/**
 * Path fuzzing: 1,000 generated hostile paths (`..`, links out, absolute
 * paths elsewhere, URIs, encoded and look-alike forms, Windows forms,
 * control characters, prefixes of the project's name), each sent by an agent
 * as fs/read_text_file, fs/write_text_file and terminal/create's cwd,
 * through the real Host. An escape is a read that returns a secret, a write
 * that lands outside the session's folders, or a terminal that starts
 * outside them: there must be none.
 */

const PATHS = Number(process.env.PATH_FUZZ_COUNT ?? 1000)
const SEED = Number(process.env.PATH_FUZZ_SEED ?? 8080)
const SECRET = 'SECRET-e7c1d0'

let root: string
let sandbox: string
let project: string
let extra: string
let sibling: string
let host: Host

beforeAll(async () => {
  root = await realpath(await tempDir('fuzz'))
  sandbox = join(root, 'sandbox')
  project = join(sandbox, 'project')
  extra = join(sandbox, 'extra')
  // A folder next to the sandbox whose name starts like it: a prefix check would let it through.
  sibling = `${sandbox}-evil`
  for (const dir of [join(project, 'src', 'deep'), extra, join(sandbox, 'outside', 'nested'), sibling, `${project}-evil`]) {
    await mkdir(dir, { recursive: true })
  }
  await writeFile(join(project, 'src', 'a.txt'), 'inside')
  await writeFile(join(project, 'src', 'deep', 'b.txt'), 'inside')
  await writeFile(join(extra, 'e.txt'), 'inside')
  for (const file of [
    join(sandbox, 'secret.txt'),
    join(sandbox, 'outside', 'secret.txt'),
    join(sandbox, 'outside', 'nested', 'secret.txt'),
    join(sibling, 'secret.txt'),
    join(`${project}-evil`, 'secret.txt')
  ]) {
    await writeFile(file, SECRET)
  }
  await symlink(join(sandbox, 'secret.txt'), join(project, 'link-out'))
  await symlink(join(sandbox, 'outside'), join(project, 'dir-out'))
  await symlink('../../outside', join(project, 'src', 'rel-out'))
  await symlink(join(project, 'src'), join(project, 'link-in'))
  await symlink(join(project, 'loop'), join(project, 'loop'))
  await symlink(sibling, join(extra, 'sibling-out'))

  host = await openHost(join(root, 'data'))
})

afterAll(async () => {
  await host?.close()
  await removeDir(root)
  await removeDir(sibling)
})

function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Op = 'read' | 'write' | 'terminal'

/**
 * The generated paths, by family. `writable`: a write may be tried (its target
 * lies in the sandbox, so a bug cannot damage the machine; the others are
 * only read and used as cwd).
 */
function generate(count: number, seed: number): { family: string; path: string; writable: boolean }[] {
  const next = random(seed)
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]
  const ups = (): string => Array.from({ length: 1 + Math.floor(next() * 6) }, () => pick(['..', '.', '..', '/..', '..'])).join('/')
  const targets = [
    'secret.txt',
    'outside/secret.txt',
    'outside/nested/secret.txt',
    'outside/new.txt',
    'outside',
    'sandbox-evil/secret.txt',
    'project-evil/secret.txt'
  ]
  const insideNames = ['src/a.txt', 'src/deep/b.txt', 'src', 'new-file.txt', 'src/deep', 'link-in/a.txt']
  const outsideAbsolute = [
    join(sandbox, 'secret.txt'),
    join(sandbox, 'outside'),
    join(sandbox, 'outside', 'new-abs.txt'),
    `${project}-evil/secret.txt`,
    `${project}-evil`,
    join(sibling, 'secret.txt'),
    join(sibling, 'new.txt'),
    sandbox,
    root
  ]
  const readOnlyElsewhere = ['/etc/passwd', '/etc', '/', '/proc/self/environ', '/root/.ssh/id_rsa', '/tmp', '/dev/null', '/dev/zero']
  /** A fresh name, so that paths differ beyond the few shapes of each family. */
  const fresh = (): string => `n${Math.floor(next() * 1e9).toString(36)}`
  const families: [string, boolean, () => string][] = [
    ['dot-dot', true, () => `${project}/${pick(insideNames)}/${ups()}/${pick(targets)}`],
    [
      'dot-dot-new-file',
      true,
      () => `${project}/${pick(insideNames)}/${ups()}/${pick(['outside', '.', 'outside/nested', 'sandbox-evil'])}/${fresh()}.txt`
    ],
    ['dot-dot-from-root', true, () => `${project}/${ups()}/${pick(targets)}`],
    ['dot-dot-mixed-slashes', true, () => `${project}//./${ups()}//${pick(targets)}${pick(['', '/', '/.'])}`],
    ['dot-dot-back-in', true, () => `${project}/../${relative(sandbox, project)}/${pick(insideNames)}`],
    [
      'dot-dot-deep-new',
      true,
      () => `${project}/${fresh()}/${fresh()}/${'../'.repeat(2 + Math.floor(next() * 4))}${pick(['secret.txt', 'outside/x.txt', fresh()])}`
    ],
    [
      'link-out',
      true,
      () =>
        `${project}/${pick(['link-out', 'dir-out/secret.txt', 'dir-out/nested/secret.txt', 'dir-out', 'src/rel-out/secret.txt', 'link-in/../link-out', 'loop/x', 'loop'])}`
    ],
    [
      'link-out-new',
      true,
      () => `${project}/${pick(['dir-out', 'src/rel-out', 'dir-out/nested', 'link-in/../dir-out'])}/${fresh()}${pick(['.txt', '/deeper.txt', ''])}`
    ],
    [
      'extra-link-out',
      true,
      () =>
        `${extra}/${pick(['sibling-out/secret.txt', `sibling-out/${fresh()}.txt`, '../outside/secret.txt', 'sibling-out', `../outside/${fresh()}`])}`
    ],
    [
      'absolute-elsewhere',
      true,
      () => pick([...outsideAbsolute, join(sandbox, 'outside', `${fresh()}.txt`), join(sibling, fresh()), join(sandbox, fresh())])
    ],
    [
      'system-files',
      false,
      () => pick([...readOnlyElsewhere, `/etc/${fresh()}`, `/proc/${Math.floor(next() * 5000)}/environ`, `/home/${fresh()}/.ssh/id_rsa`])
    ],
    ['prefix-of-project', true, () => `${project}-evil/${pick(['secret.txt', `${fresh()}.txt`, ''])}`],
    [
      'relative',
      false,
      () => pick(['src/a.txt', '../outside/secret.txt', './secret.txt', '~/.ssh/id_rsa', '~', '..', '.', `${fresh()}.txt`, `../${fresh()}`])
    ],
    [
      'file-uri',
      false,
      () =>
        pick([
          `file://${join(sandbox, 'secret.txt')}`,
          `file://${project}/src/a.txt`,
          `FILE:${join(sandbox, 'outside')}`,
          'file:///etc/passwd',
          `file://localhost${project}/${fresh()}`
        ])
    ],
    [
      'percent-encoded',
      true,
      () =>
        `${project}/${pick(['%2e%2e', '%2E%2E', '..%2f..', '%2e%2e%2f%2e%2e', '..%252f', '%c0%ae%c0%ae'])}/${pick(['outside/secret.txt', 'secret.txt', `${fresh()}.txt`])}`
    ],
    [
      'look-alike-dots',
      true,
      () =>
        `${project}/${pick(['\u2025', '\uff0e\uff0e', '.\u200b.', '\u2024\u2024', '..\u0338', '\u00b7\u00b7'])}/${pick(['secret.txt', 'outside/secret.txt', fresh()])}`
    ],
    ['backslashes', true, () => `${project}/${pick(['..\\..\\secret.txt', '..\\outside\\secret.txt', 'src\\..\\..\\secret.txt', `..\\${fresh()}`])}`],
    [
      'windows-forms',
      false,
      () =>
        pick([
          'C:\\Windows\\win.ini',
          'C:secret.txt',
          '\\\\server\\share\\secret.txt',
          '\\\\?\\C:\\secret.txt',
          '\\\\.\\PhysicalDrive0',
          '\\secret.txt',
          'NUL',
          `C:\\${fresh()}`
        ])
    ],
    [
      'control-characters',
      true,
      () => `${project}/src/a.txt${pick(['\0', '\n', '\r', '\u0007', '\u001b[2J'])}${pick(['', '/../../secret.txt', `/${fresh()}`])}`
    ],
    ['case-variants', true, () => `${project.toUpperCase()}/${pick(['src/a.txt', '../secret.txt', fresh()])}`],
    ['long', true, () => `${project}/${'a/'.repeat(1 + Math.floor(next() * 3000))}${pick(['x.txt', '../'.repeat(3100) + 'secret.txt', fresh()])}`],
    ['long-name', true, () => `${project}/${'n'.repeat(200 + Math.floor(next() * 200))}/../../secret.txt`],
    ['inside', true, () => `${project}/${pick([...insideNames, `${fresh()}.txt`, `src/${fresh()}/new.txt`])}`],
    [
      'inside-folder',
      false,
      () =>
        `${project}/${pick(['src', 'src/deep', '.', 'link-in', 'src/./deep', 'link-in/deep'])}${'/'.repeat(Math.floor(next() * 4))}${pick(['', '/.', '/./.'])}`
    ],
    ['inside-extra', true, () => `${extra}/${pick(['e.txt', `${fresh()}.txt`, ''])}`]
  ]
  const seen = new Map<string, { family: string; path: string; writable: boolean }>()
  while (seen.size < count) {
    const [family, writable, make] = pick(families)
    const made = make()
    if (!seen.has(made)) seen.set(made, { family, path: made, writable })
  }
  return [...seen.values()]
}

/** Every file under a folder (links not followed). */
async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return []
  const found: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) found.push(join(entry.parentPath, entry.name))
  }
  return found
}

describe('path fuzzing', () => {
  it(`${PATHS} hostile paths against fs/read, fs/write and terminal cwd: no escape`, async () => {
    const stateDir = join(root, 'agent-state')
    const agent = await host.request('agents.add', scriptedAgent(stateDir, { SCRIPTED_AGENT_SESSIONS: 'additionalDirectories' }))
    const projectRecord = await host.request('projects.add', { cwd: project })
    await host.request('projects.setAdditionalDirectories', { projectId: projectRecord.id, directories: [extra] })
    const session = await host.request('sessions.new', { projectId: projectRecord.id, agentId: agent.id })

    const paths = generate(PATHS, SEED)
    const requests = paths.flatMap(({ path, writable }) => [
      { op: 'read' as Op, path },
      ...(writable ? [{ op: 'write' as Op, path }] : []),
      { op: 'terminal' as Op, path }
    ])
    await mkdir(stateDir, { recursive: true })
    const batch = join(stateDir, 'batch.json')
    await writeFile(batch, JSON.stringify(requests))
    // The user allows every command (the question is not what this checks: the folder it runs in is).
    allowCommands(host)
    await host.request('sessions.prompt', { id: session.id, text: `/fs-batch ${batch}` })
    const results = JSON.parse(await readFile(`${batch}.out.json`, 'utf8')) as {
      op: Op
      path: string
      ok: boolean
      value?: string
      exitCode?: number | null
      error?: string
    }[]
    expect(results).toHaveLength(requests.length)

    const roots = [project, extra]
    const inside = (real: string): boolean => roots.some((r) => real === r || real.startsWith(r + '/'))
    const escapes: string[] = []
    for (const result of results) {
      if (!result.ok) continue
      if (result.op === 'read' && result.value?.includes(SECRET)) escapes.push(`read ${JSON.stringify(result.path)}`)
      // `pwd -P` printed where the command really ran (a cwd that is not a folder fails to start: exit 127).
      if (result.op === 'terminal' && result.exitCode === 0 && !inside((result.value ?? '').trim())) {
        escapes.push(`terminal in ${JSON.stringify(result.path)}: ${result.value}`)
      }
    }
    // A write that landed anywhere but the session's folders.
    for (const file of [...(await filesUnder(sandbox)), ...(await filesUnder(sibling))]) {
      if (inside(file)) continue
      // Outside the session's folders there are only the secrets, untouched.
      if ((await readFile(file, 'utf8')) !== SECRET) escapes.push(`write landed at ${file}`)
    }
    expect(escapes).toEqual([])

    // Not vacuous: what lies inside was allowed, in every way.
    const allowed = (op: Op): number => results.filter((r) => r.ok && r.op === op).length
    expect(allowed('read')).toBeGreaterThan(20)
    expect(allowed('write')).toBeGreaterThan(20)
    expect(results.filter((r) => r.ok && r.op === 'terminal' && r.exitCode === 0).length).toBeGreaterThan(10)
    expect((await filesUnder(project)).some((f) => f.endsWith('new-file.txt'))).toBe(true)
    expect(
      results.filter((r) => r.ok && r.op === 'read' && (r.value === 'inside' || r.value === 'written by a hostile agent\n')).length
    ).toBeGreaterThan(10)
    // Every refusal says why, to the agent; and the user sees it in the thread.
    const refused = results.filter((r) => !r.ok)
    expect(refused.every((r) => typeof r.error === 'string' && r.error.length > 0)).toBe(true)
    const snapshot = await host.request('sessions.open', { id: session.id })
    const shown = snapshot.records.filter((r) => r.t === 'error' && r.message.startsWith('The agent asked to'))
    expect(shown.length).toBeGreaterThan(refused.length / 2)

    const familyOf = new Map(paths.map((p) => [p.path, p.family]))
    const byFamily: Record<string, { paths: number; allowed: number; refused: number }> = {}
    for (const { family } of paths) (byFamily[family] ??= { paths: 0, allowed: 0, refused: 0 }).paths++
    for (const result of results) {
      const counts = byFamily[familyOf.get(result.path)!]
      if (result.ok) counts.allowed++
      else counts.refused++
    }
    report('path-fuzz', {
      paths: PATHS,
      distinctPaths: new Set(paths.map((p) => p.path)).size,
      seed: SEED,
      requests: results.length,
      allowed: { read: allowed('read'), write: allowed('write'), terminal: allowed('terminal') },
      refused: refused.length,
      escapes: escapes.length,
      byFamily
    })
  }, 120_000)
})
