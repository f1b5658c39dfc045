import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { AtomicTextFile } from '../../electron/host/storage/atomic-file'
import { DB_VERSION, Store } from '../../electron/host/storage/store'
import type { AgentDefinition } from '../../shared/agent-definition'
import type { TranscriptRecord } from '../../shared/transcript'
import { readDbJson, removeDir, tempDir } from '../helpers'

/** db.json: migrations from every earlier version, atomic coalesced saves, and recovery when it is damaged. */

let dataDir: string
beforeEach(async () => (dataDir = await tempDir('store')))
afterEach(async () => {
  vi.restoreAllMocks()
  await removeDir(dataDir)
})

const presets: AgentDefinition[] = [{ id: 'preset', name: 'Preset', transport: { kind: 'process', command: 'preset-agent', args: [], env: {} } }]
const at = '2026-01-01T00:00:00.000Z'

/**
 * A db.json as each earlier version of Switchboard wrote it: one row per
 * version below DB_VERSION. When DB_VERSION goes up, add the row for the
 * version it replaces (the test below insists).
 */
const EARLIER_VERSIONS: { version: number; db: Record<string, unknown> }[] = [
  {
    version: 1,
    db: {
      version: 1,
      projects: [{ id: 'p1', name: 'app', cwd: '/home/me/app', createdAt: at }],
      agents: [
        { id: 'claude', name: 'Claude Code', command: 'claude-code-acp', args: [], env: {} },
        { id: 'mine', name: 'My agent', command: '/opt/my-agent', args: ['--acp'], env: { MODE: 'fast' } }
      ],
      sessions: [
        {
          id: 's1',
          sessionId: 'sess-1',
          agentId: 'mine',
          projectId: 'p1',
          cwd: '/home/me/app',
          title: 'Fix the build',
          createdAt: at,
          updatedAt: at,
          lastStopReason: 'end_turn'
        }
      ]
    }
  },
  {
    // 2 added remembered permission answers.
    version: 2,
    db: {
      version: 2,
      projects: [{ id: 'p1', name: 'app', cwd: '/home/me/app', createdAt: at, additionalDirectories: ['/home/me/lib'] }],
      agents: [{ id: 'mine', name: 'My agent', command: '/opt/my-agent', args: ['--acp'], env: { MODE: 'fast' }, secretEnv: ['API_KEY'] }],
      sessions: [
        {
          id: 's1',
          sessionId: 'sess-1',
          agentId: 'mine',
          projectId: 'p1',
          cwd: '/home/me/app',
          additionalDirectories: ['/home/me/lib'],
          title: 'Fix the build',
          createdAt: at,
          updatedAt: at
        }
      ],
      permissionRules: [{ id: 'r1', agentId: 'mine', projectId: 'p1', toolKind: 'read', decision: 'allow', createdAt: at }]
    }
  },
  {
    // 3 added MCP server profiles.
    version: 3,
    db: {
      version: 3,
      projects: [{ id: 'p1', name: 'app', cwd: '/home/me/app', createdAt: at }],
      agents: [{ id: 'mine', name: 'My agent', command: '/opt/my-agent', args: [], env: {} }],
      sessions: [
        {
          id: 's1',
          sessionId: 'sess-1',
          agentId: 'mine',
          projectId: 'p1',
          cwd: '/home/me/app',
          title: 'Renamed',
          titleSetByUser: true,
          createdAt: at,
          updatedAt: at
        },
        { id: 's2', sessionId: 'sess-2', agentId: 'mine', projectId: 'p1', cwd: '/home/me/app', title: 'New session', createdAt: at, updatedAt: at },
        { id: 's3', sessionId: null, agentId: 'mine', projectId: 'p1', cwd: '/home/me/app', title: 'Fork of Renamed', createdAt: at, updatedAt: at }
      ],
      permissionRules: [],
      mcpProfiles: [{ id: 'm1', name: 'files', version: 1 }],
      mcpDisabled: { p1: ['m1'] }
    }
  },
  {
    // 4 renamed the agent's session id (acpSessionId) and said where each title came from.
    version: 4,
    db: {
      version: 4,
      projects: [{ id: 'p1', name: 'app', cwd: '/home/me/app', createdAt: at }],
      agents: [{ id: 'mine', name: 'My agent', command: '/opt/my-agent', args: [], env: {} }],
      sessions: [
        {
          id: 's1',
          acpSessionId: 'sess-1',
          agentId: 'mine',
          projectId: 'p1',
          cwd: '/home/me/app',
          title: 'Renamed',
          titleSource: 'user',
          createdAt: at,
          updatedAt: at
        }
      ],
      permissionRules: [
        { id: 'r1', agentId: 'mine', projectId: 'p1', toolKind: 'execute', decision: 'allow', createdAt: at },
        { id: 'r2', agentId: 'gone', projectId: 'p1', toolKind: 'edit', decision: 'reject', createdAt: at }
      ],
      mcpProfiles: [],
      mcpDisabled: {},
      settings: { registryUrl: 'https://example.com/feed.json' }
    }
  },
  {
    // 6 made an agent's transport one tagged field: a process, a command over SSH, or a server over the network.
    version: 5,
    db: {
      version: 5,
      projects: [
        { id: 'p1', name: 'app', cwd: '/home/me/app', createdAt: at },
        { id: 'p2', name: 'box', cwd: '/srv/app', sshHost: 'me@box:2222', createdAt: at }
      ],
      agents: [
        {
          id: 'mine',
          name: 'My agent',
          command: '/opt/my-agent',
          args: ['--acp'],
          env: { MODE: 'fast' },
          secretEnv: ['API_KEY'],
          cwd: '/home/me',
          protocol: 2,
          startingMode: 'plan'
        },
        {
          id: 'far',
          name: 'Far agent',
          command: 'agent',
          args: [],
          env: {},
          cwd: '/srv',
          ssh: { destination: 'me@box', port: 2222, identityFile: '/home/me/.ssh/id_box' }
        },
        {
          id: 'net',
          name: 'Net agent',
          command: '',
          args: [],
          env: {},
          secretEnv: [],
          remote: { url: 'wss://agents.example.com/acp', secretHeaders: ['Authorization'], caFile: '/home/me/ca.pem' }
        }
      ],
      sessions: [
        {
          id: 's1',
          acpSessionId: 'sess-1',
          agentId: 'far',
          projectId: 'p2',
          cwd: '/srv/app',
          title: 'On the box',
          titleSource: 'user',
          createdAt: at,
          updatedAt: at
        }
      ],
      permissionRules: [],
      mcpProfiles: [],
      mcpDisabled: {}
    }
  }
]

/** An agent as version 6 keeps it: its command, arguments, variables, folder and host or address in `transport`. */
function asVersion6(agent: Record<string, unknown>): Record<string, unknown> {
  const { command, args, env, secretEnv, cwd, remote, ssh, ...rest } = agent
  const commandPart = { command, args, env, ...((secretEnv as string[] | undefined)?.length ? { secretEnv } : {}), ...(cwd ? { cwd } : {}) }
  const transport = remote
    ? { kind: 'network', ...(remote as object) }
    : ssh
      ? { kind: 'ssh', ...(ssh as object), ...commandPart }
      : { kind: 'process', ...commandPart }
  return { ...rest, transport }
}

/** What each version's permission rules leave the user told when they are dropped (5: they covered a whole kind of tool). */
const DROPPED_RULES: Record<number, string> = {
  2: 'Your remembered permission was removed (always allow every “read” tool for My agent in app): ',
  4: 'Your 2 remembered permissions were removed (always allow every “execute” tool for My agent in app; always reject every “edit” tool for gone in app): '
}

/** A session as version 4 names it: the agent's id is acpSessionId, and the title says where it came from. */
function asVersion4(session: Record<string, unknown>): Record<string, unknown> {
  if ('acpSessionId' in session) return session
  const { sessionId, titleSetByUser, ...rest } = session
  const placeholder = ['New session', 'Imported session'].includes(String(rest.title)) || String(rest.title).startsWith('Fork of ')
  return { ...rest, acpSessionId: sessionId, titleSource: titleSetByUser ? 'user' : placeholder ? 'default' : 'prompt' }
}

async function writeDb(value: unknown): Promise<void> {
  await writeFile(join(dataDir, 'db.json'), typeof value === 'string' ? value : JSON.stringify(value))
}

function readDb(): Promise<Record<string, unknown>> {
  return readDbJson(dataDir)
}

describe('database migrations', () => {
  it('has a db.json of every earlier version to migrate from', () => {
    expect(EARLIER_VERSIONS.map((row) => row.version)).toEqual(Array.from({ length: DB_VERSION - 1 }, (_, i) => i + 1))
  })

  it.each(EARLIER_VERSIONS)(
    'migrates a version $version db.json to the current version, keeping every record and a backup',
    async ({ version, db }) => {
      await writeDb(db)
      const { store, warnings } = await Store.open(dataDir, presets)
      // 5: rules that covered a whole kind of tool are dropped, and the user is told which.
      expect(warnings).toEqual(DROPPED_RULES[version] ? [expect.stringContaining(DROPPED_RULES[version])] : [])
      expect(store.data.version).toBe(DB_VERSION)
      // Nothing the user had is lost: each list keeps its records, with every field they had.
      expect(store.data.projects).toEqual((db.projects as unknown[]).map((item): unknown => expect.objectContaining(item as object)))
      // 6: each agent's transport in one field, every value it had kept.
      expect(store.data.agents).toEqual((db.agents as Record<string, unknown>[]).map(asVersion6))
      // 4: the agent's id renamed, each title's source set.
      expect(store.data.sessions).toEqual((db.sessions as Record<string, unknown>[]).map(asVersion4))
      expect(store.data.permissionRules).toEqual([])
      if (db.settings) expect(store.data.settings).toEqual(db.settings)
      // 3: MCP server profiles (none before it), and which are switched off per project.
      expect(store.data.mcpProfiles).toEqual(db.mcpProfiles ?? [])
      expect(store.data.mcpDisabled).toEqual(db.mcpDisabled ?? {})
      expect(await readDb()).toEqual(JSON.parse(JSON.stringify(store.data)))
      expect(JSON.parse(await readFile(join(dataDir, `db.v${version}.backup.json`), 'utf8'))).toEqual(db)

      // Opening the migrated database again changes nothing and makes no new backup.
      const before = await readFile(join(dataDir, 'db.json'), 'utf8')
      const again = await Store.open(dataDir, presets)
      expect(again.store.data).toEqual(store.data)
      expect(again.warnings).toEqual([])
      expect(await readFile(join(dataDir, 'db.json'), 'utf8')).toBe(before)
      expect((await readdir(dataDir)).filter((n) => n.includes('backup'))).toEqual([`db.v${version}.backup.json`])
    }
  )

  it('leaves out a version 5 agent whose fields mean no one transport, says which and why, and keeps everything else', async () => {
    const v5 = EARLIER_VERSIONS.find((row) => row.version === 5)!.db
    const both = {
      id: 'both',
      name: 'Both ways',
      command: 'agent',
      args: [],
      env: {},
      ssh: { destination: 'box' },
      remote: { url: 'wss://x.example/acp' }
    }
    const netWithCommand = { id: 'odd', name: 'Odd', command: 'run-me', args: ['--x'], env: {}, remote: { url: 'ws://127.0.0.1:9/acp' } }
    const nothing = { id: 'empty', name: 'Empty', command: '', args: [], env: {} }
    const db = { ...v5, agents: [...(v5.agents as object[]), both, netWithCommand, nothing] }
    await writeDb(db)
    const { store, warnings } = await Store.open(dataDir, presets)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('3 agents could not be carried over')
    expect(warnings[0]).toContain('“Both ways” (both): it has both a network address and an SSH host')
    expect(warnings[0]).toContain('“Odd” (odd): it is a network agent (ws://127.0.0.1:9/acp) that also names a command to run (run-me)')
    expect(warnings[0]).toContain('“Empty” (empty): it has no command to run and no address to reach')
    expect(warnings[0]).toContain(join(dataDir, 'db.v5.backup.json'))
    // The others migrated as ever, every other record as it was; the ones left out are in the backup, whole.
    expect(store.data.agents).toEqual((v5.agents as Record<string, unknown>[]).map(asVersion6))
    expect(store.data.projects).toEqual(v5.projects)
    expect(store.data.sessions).toEqual(v5.sessions)
    expect(await readDb()).toEqual(JSON.parse(JSON.stringify(store.data)))
    expect(JSON.parse(await readFile(join(dataDir, 'db.v5.backup.json'), 'utf8'))).toEqual(db)
  })

  it('refuses a database from a newer Switchboard, whatever its shape, without touching it', async () => {
    const future = JSON.stringify({ version: DB_VERSION + 1, workspaces: [] })
    await writeDb(future)
    await expect(Store.open(dataDir, presets)).rejects.toThrow(`database version ${DB_VERSION + 1}, this one reads ${DB_VERSION}`)
    expect(await readFile(join(dataDir, 'db.json'), 'utf8')).toBe(future)
    expect(await readdir(dataDir)).toEqual(['db.json'])
  })
})

describe('saving', () => {
  it('coalesces the saves of one tick into one write, and resolves once it is on disk', async () => {
    const { store } = await Store.open(dataDir, presets)
    const writes = vi.spyOn(AtomicTextFile.prototype as unknown as { writeNow: (text: string) => Promise<void> }, 'writeNow')
    const saves: Promise<void>[] = []
    for (let i = 0; i < 50; i++) {
      store.data.projects.push({ id: `p${i}`, name: `p${i}`, cwd: `/p${i}`, createdAt: at })
      saves.push(store.save())
    }
    await Promise.all(saves)
    expect(writes).toHaveBeenCalledTimes(1)
    expect(((await readDb()).projects as unknown[]).length).toBe(50)
  })

  it('while a write is on its way, later saves share one next write carrying the newest data', async () => {
    const file = new AtomicTextFile(join(dataDir, 'x.json'))
    const writes = vi.spyOn(file as unknown as { writeNow: (text: string) => Promise<void> }, 'writeNow')
    const first = file.write('1')
    await Promise.resolve()
    await Promise.resolve()
    const later = ['2', '3', '4'].map((text) => file.write(text))
    await Promise.all([first, ...later])
    expect(writes.mock.calls.map((c) => c[0])).toEqual(['1', '4'])
    expect(await readFile(join(dataDir, 'x.json'), 'utf8')).toBe('4')
    expect(existsSync(join(dataDir, '.x.json.tmp'))).toBe(false)
  })
  it("makes db.json's text once a write, not once a save: the saves asked for while a write is on its way share one text, with every change", async () => {
    const { store } = await Store.open(dataDir, presets)
    type WriteNow = { writeNow: (text: string) => Promise<void> }
    const writeNow = (AtomicTextFile.prototype as unknown as WriteNow).writeNow
    let letFirstEnd: () => void = () => undefined
    const firstHeld = new Promise<void>((resolve) => (letFirstEnd = resolve))
    let started: () => void = () => undefined
    const firstStarted = new Promise<void>((resolve) => (started = resolve))
    const writes = vi.spyOn(AtomicTextFile.prototype as unknown as WriteNow, 'writeNow').mockImplementation(async function (this: WriteNow, text) {
      if (writes.mock.calls.length === 1) {
        started()
        await firstHeld
      }
      return writeNow.call(this, text)
    })
    const first = store.save()
    await firstStarted
    const texts = vi.spyOn(JSON, 'stringify')
    const later: Promise<void>[] = []
    for (let i = 0; i < 3; i++) {
      store.data.projects.push({ id: `p${i}`, name: `p${i}`, cwd: `/p${i}`, createdAt: at })
      later.push(store.save())
      // Each save in a tick of its own (one tick's saves are one save already).
      await new Promise((resolve) => setImmediate(resolve))
    }
    letFirstEnd()
    await Promise.all([first, ...later])
    expect(writes).toHaveBeenCalledTimes(2)
    expect(texts.mock.calls.filter(([value]) => (value as { projects?: unknown } | null)?.projects !== undefined)).toHaveLength(1)
    expect(((await readDb()).projects as unknown[]).length).toBe(3)
  })
})

describe('a damaged db.json', () => {
  async function writeTranscript(id: string, agentId: string, records: TranscriptRecord[], headerVersion = 2): Promise<void> {
    await mkdir(join(dataDir, 'transcripts'), { recursive: true })
    const common = { t: 'header', id, agentId, projectId: 'proj', cwd: '/home/me/app', createdAt: at } as const
    // Version 1 headers called the agent's id sessionId.
    const header = headerVersion === 1 ? { ...common, v: 1, sessionId: `sess-${id}` } : { ...common, v: 2, acpSessionId: `sess-${id}` }
    await writeFile(join(dataDir, 'transcripts', `${id}.jsonl`), [header, ...records].map((r) => JSON.stringify(r) + '\n').join(''))
  }

  it.each([
    ['half-written JSON', '{"version": 2, "projects": [{"id": "p'],
    ['an empty file', ''],
    ['JSON that is not a database', '[1, 2, 3]'],
    ['a database missing its lists', '{"version": 2, "projects": {}}']
  ])('with %s is moved aside, the user is told, and sessions are rebuilt from the transcripts', async (_name, text) => {
    await writeDb(text)
    await writeTranscript('s1', 'preset', [{ t: 'prompt', at, content: [{ type: 'text', text: 'Fix the flaky test\nand more' }] }])
    await writeTranscript('s2', 'gone-agent', [], 1)
    const { store, warnings } = await Store.open(dataDir, presets)

    const aside = (await readdir(dataDir)).filter((n) => n.startsWith('db.corrupt-'))
    expect(aside).toHaveLength(1)
    expect(await readFile(join(dataDir, aside[0]), 'utf8')).toBe(text)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`moved to ${join(dataDir, aside[0])}`)
    expect(warnings[0]).toContain('2 session(s) were recovered from their transcripts')
    expect(warnings[0]).toContain('Agents you had added yourself (gone-agent) were lost')

    expect(store.data.projects).toEqual([{ id: 'proj', name: 'app', cwd: '/home/me/app', createdAt: at }])
    const byId = Object.fromEntries(store.data.sessions.map((s) => [s.id, s]))
    expect(byId.s1).toMatchObject({
      acpSessionId: 'sess-s1',
      agentId: 'preset',
      projectId: 'proj',
      title: 'Fix the flaky test',
      titleSource: 'prompt'
    })
    expect(byId.s2).toMatchObject({ acpSessionId: 'sess-s2', agentId: 'gone-agent', title: 'Recovered session', titleSource: 'default' })
    // The rebuilt database is written at once, in the current version.
    expect(await readDb()).toMatchObject({ version: DB_VERSION, sessions: expect.any(Array) })
    expect(store.data.agents.map((a) => a.id)).toEqual(['preset'])
  })
})
