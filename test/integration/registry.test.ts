import { existsSync, readdirSync, statSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Host, type HostOptions } from '../../electron/host/host'
import type { RegistrySnapshot } from '../../shared/registry'
import { runOf, confirmEverything, entriesOf, fold, removeDir, tempDir, waitUntil } from '../helpers'
import { stagedCommand } from '../../electron/host/acp-registry/install'
import { ICON, launcherScript, RegistryFixture, tarball, zipArchive } from '../registry/fixture'
import { PRESET_PACKAGES } from '../../electron/host/agents/presets'

/**
 * Agents from the ACP Registry, against a registry served on 127.0.0.1:
 * listing (network, the day's cache, the bundled snapshot, a corrupt feed),
 * installing a binary and an npx distribution, update, pin, uninstall, and
 * archives that must be refused without leaving anything behind.
 */

const PLATFORM = 'linux-x86_64' as const
const fixture = new RegistryFixture()
let root: string
let dataDir: string
let host: Host

beforeAll(async () => {
  await fixture.start()
})
afterAll(async () => {
  await fixture.stop()
})

beforeEach(async () => {
  root = await tempDir('registry')
  dataDir = join(root, 'data')
  fixture.agents = [fixture.binaryAgent('1.0.0', PLATFORM)]
  fixture.feedOverride = null
  fixture.cut.clear()
  fixture.streams.clear()
  fixture.requests = []
})

afterEach(async () => {
  await host?.close()
  await removeDir(root)
})

function open(options: Partial<HostOptions> = {}): Promise<Host> {
  return Host.open({
    dataDir,
    version: 'test',
    confirmCommand: confirmEverything,
    presets: [],
    initializeTimeoutMs: 20_000,
    registry: { url: fixture.feedUrl, platform: PLATFORM, snapshot: bundledForTests() },
    ...options
  })
}

function bundledForTests(): RegistrySnapshot {
  return {
    url: 'https://registry.example/registry.json',
    fetchedAt: '2026-01-02T00:00:00.000Z',
    agents: [{ ...fixture.binaryAgent('0.9.0', PLATFORM), id: 'bundled-agent', name: 'Bundled Agent' }],
    icons: {}
  }
}

/** Starts a session with the agent in a new project and runs one prompt; the agent's answer. */
async function converse(agentId: string, text = 'hello registry'): Promise<string> {
  const cwd = join(root, `project-${Math.random().toString(36).slice(2)}`)
  await mkdir(cwd)
  const project = await host.request('projects.add', { cwd })
  const session = await host.request('sessions.new', { projectId: project.id, agentId })
  await host.request('sessions.prompt', { id: session.id, text })
  const { records } = await host.request('sessions.open', { id: session.id })
  return entriesOf(fold(records), 'assistant')
    .map((e) => (e.kind === 'assistant' ? e.text : ''))
    .join('')
}

function renamed(zip: Buffer, from: string, to: string): Buffer {
  return Buffer.from(zip.toString('latin1').split(from).join(to), 'latin1')
}

describe('the registry listing', () => {
  it('fetches the feed with icons, keeps it for a day, and serves the copy kept when the registry is down', async () => {
    host = await open()
    const listing = await host.request('registry.list', {})
    expect(listing).toMatchObject({ source: 'network', url: fixture.feedUrl, platform: PLATFORM, skipped: [] })
    expect(listing.problem).toBeUndefined()
    const entry = listing.agents.find((a) => a.id === 'fixture-agent')!
    expect(entry).toMatchObject({ name: 'Fixture Agent', version: '1.0.0', license: 'MIT', kinds: ['binary'], icon: ICON })
    expect(entry.installed).toBeUndefined()
    expect(existsSync(join(dataDir, 'registry', 'feed.json'))).toBe(true)

    // Within the day the kept copy serves, without asking the registry again.
    fixture.requests = []
    expect((await host.request('registry.list', {})).source).toBe('cache')
    expect(fixture.requests).toEqual([])

    // Refreshing while the registry is unreachable keeps the list, and says why.
    await fixture.stop()
    try {
      const offline = await host.request('registry.list', { refresh: true })
      expect(offline.source).toBe('cache')
      expect(offline.problem).toMatch(
        /Could not reach the registry at http:\/\/127\.0\.0\.1:\d+\/registry\.json \(ECONNREFUSED\)\. Showing the list kept from/
      )
      expect(offline.agents.map((a) => a.id)).toEqual(['fixture-agent'])
      expect(offline.agents[0].icon).toBe(ICON)
    } finally {
      await fixture.start(Number(new URL(fixture.feedUrl).port))
    }
  })

  it('offline on a first start, the snapshot bundled with the app serves', async () => {
    host = await open({ registry: { url: 'http://127.0.0.1:9/registry.json', platform: PLATFORM, snapshot: bundledForTests(), timeoutMs: 3000 } })
    const listing = await host.request('registry.list', {})
    expect(listing.source).toBe('snapshot')
    expect(listing.problem).toContain('Showing the list bundled with Switchboard (2026-01-02)')
    expect(listing.agents.map((a) => a.name)).toEqual(['Bundled Agent'])
  })

  it('the snapshot shipped in the app lists the real registry, Claude Code, Codex and Gemini CLI among them', async () => {
    host = await open({ registry: { url: 'http://127.0.0.1:9/registry.json', timeoutMs: 3000 } })
    const listing = await host.request('registry.list', {})
    expect(listing.source).toBe('snapshot')
    expect(listing.agents.length).toBeGreaterThanOrEqual(10)
    const ids = listing.agents.map((a) => a.id)
    expect(ids).toEqual(expect.arrayContaining(['claude-code-acp', 'codex-acp', 'gemini']))
    // Every bundled icon is SVG markup, shown as a mask.
    expect(listing.agents.filter((a) => a.icon).every((a) => a.icon!.includes('<svg'))).toBe(true)
  })

  it('a corrupt feed is reported and the list kept before stays; a bad entry is left out with why', async () => {
    host = await open()
    await host.request('registry.list', {})
    fixture.feedOverride = '{"version": "1.0.0", "agents": [ {"id": "broken'
    const corrupt = await host.request('registry.list', { refresh: true })
    expect(corrupt.source).toBe('cache')
    expect(corrupt.problem).toContain('sent something that is not JSON')
    expect(corrupt.agents.map((a) => a.id)).toEqual(['fixture-agent'])

    fixture.feedOverride = JSON.stringify({ version: '1.0.0', agents: [...fixture.agents, { id: 'no-distribution', name: 'X', version: '1' }] })
    const partial = await host.request('registry.list', { refresh: true })
    expect(partial.source).toBe('network')
    expect(partial.agents.map((a) => a.id)).toEqual(['fixture-agent'])
    expect(partial.skipped).toHaveLength(1)
    expect(partial.skipped[0]).toMatch(/^no-distribution: /)

    fixture.feedOverride = JSON.stringify({ agents: 'none' })
    const wrongShape = await host.request('registry.list', { refresh: true })
    expect(wrongShape.problem).toContain('sent JSON that is not a registry')
    expect(wrongShape.agents.map((a) => a.id)).toEqual(['fixture-agent'])
  })

  it('the feed URL is a setting kept in the data folder', async () => {
    host = await open({ registry: { url: 'http://127.0.0.1:9/unused.json', platform: PLATFORM, snapshot: bundledForTests(), timeoutMs: 3000 } })
    expect(await host.handle('registry.setUrl', { url: 'ftp://example.com/r.json' })).toMatchObject({ ok: false })
    await host.request('registry.setUrl', { url: fixture.feedUrl })
    await host.close()
    host = await open({ registry: { url: 'http://127.0.0.1:9/unused.json', platform: PLATFORM, snapshot: bundledForTests(), timeoutMs: 3000 } })
    const listing = await host.request('registry.list', {})
    expect(listing).toMatchObject({ source: 'network', url: fixture.feedUrl })
  })
})

describe('installing from the registry', () => {
  it('a binary is downloaded with progress, unpacked into the data folder and runs; update, pin and uninstall', async () => {
    host = await open()
    const progress: string[] = []
    host.events.subscribe((batch) => {
      for (const event of batch) if (event.type === 'registry.progress') progress.push(event.payload.phase)
    })
    await host.request('registry.list', {})
    const agent = await host.request('registry.install', { registryId: 'fixture-agent' })
    expect(agent).toMatchObject({
      id: 'fixture-agent',
      name: 'Fixture Agent',
      origin: { registryId: 'fixture-agent', version: '1.0.0', kind: 'binary' }
    })
    const v1 = join(dataDir, 'agents', 'fixture-agent', '1.0.0')
    expect(runOf(agent).command).toBe(join(v1, 'fixture', 'fixture-agent'))
    expect(statSync(runOf(agent).command).mode & 0o111).not.toBe(0)
    await waitUntil('the last progress event', () => progress.includes('done'))
    expect(progress).toEqual(expect.arrayContaining(['downloading', 'extracting', 'done']))
    expect(await converse(agent.id)).toContain('You said: hello registry')
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agent.id)?.agentInfo?.name).toBe('fixture-agent-1.0.0')
    expect((await host.request('registry.list', {})).agents[0].installed).toEqual({
      agentId: 'fixture-agent',
      version: '1.0.0',
      kind: 'binary',
      pinned: false
    })
    expect(await host.handle('registry.install', { registryId: 'fixture-agent' })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('already installed') }
    })

    // The registry lists 2.0.0: the update is offered, old and new.
    fixture.agents = [fixture.binaryAgent('2.0.0', PLATFORM)]
    const listed = await host.request('registry.list', { refresh: true })
    expect(listed.agents[0].update).toEqual({ from: '1.0.0', to: '2.0.0' })

    // Pinned: no update offered, and none made.
    await host.request('registry.pin', { agentId: agent.id, pinned: true })
    expect((await host.request('registry.list', {})).agents[0]).toMatchObject({ installed: { pinned: true } })
    expect((await host.request('registry.list', {})).agents[0].update).toBeUndefined()
    expect(await host.handle('registry.update', { agentId: agent.id })).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('pinned at 1.0.0') }
    })
    await host.request('registry.pin', { agentId: agent.id, pinned: false })

    const updated = await host.request('registry.update', { agentId: agent.id })
    expect(updated.origin).toMatchObject({ version: '2.0.0', kind: 'binary' })
    expect(runOf(updated).command).toBe(join(dataDir, 'agents', 'fixture-agent', '2.0.0', 'fixture', 'fixture-agent'))
    expect(existsSync(v1)).toBe(false)
    expect(await converse(agent.id, 'after the update')).toContain('You said: after the update')
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agent.id)?.agentInfo?.name).toBe('fixture-agent-2.0.0')
    // The update re-ran the capability check.
    await waitUntil('the check after the update', async () => (await host.request('agents.checks', {})).find((r) => r.agentId === agent.id))

    // Uninstall: the sessions go first (as for any agent), then what was downloaded goes with the agent.
    for (const session of await host.request('sessions.list', {})) await host.request('sessions.delete', { id: session.id })
    await host.request('agents.remove', { agentId: agent.id })
    expect(existsSync(join(dataDir, 'agents', 'fixture-agent'))).toBe(false)
    expect((await host.request('agents.checks', {})).find((r) => r.agentId === agent.id)).toBeUndefined()
    expect((await host.request('registry.list', {})).agents[0].installed).toBeUndefined()
  })

  it('a download cut half-way installs nothing, and the version installed before still works', async () => {
    host = await open()
    await host.request('registry.list', {})
    const agent = await host.request('registry.install', { registryId: 'fixture-agent' })
    fixture.agents = [fixture.binaryAgent('2.0.0', PLATFORM)]
    fixture.cut.add('/dl/fixture-agent-2.0.0.tar.gz')
    await host.request('registry.list', { refresh: true })
    const failed = await host.handle('registry.update', { agentId: agent.id })
    expect(failed).toMatchObject({ ok: false, error: { code: 'download_failed' } })
    expect(!failed.ok && failed.error.message).toMatch(
      /^The download of fixture-agent-2\.0\.0\.tar\.gz stopped .*Nothing was installed; try again\.$/
    )
    expect(readdirSync(join(dataDir, 'agents', 'fixture-agent'))).toEqual(['1.0.0'])
    const kept = (await host.request('agents.list', {})).find((a) => a.id === agent.id)!
    expect(kept.origin?.version).toBe('1.0.0')
    expect(await converse(agent.id)).toContain('You said: hello registry')
  })

  it('archives whose entries escape their folder are refused, links included, and leave nothing', async () => {
    const outside = join(root, 'outside')
    const evil: [string, Buffer][] = [
      ['dotdot.tar.gz', tarball([{ path: 'fixture/../../outside-file', type: 'File', body: 'x' }])],
      ['absolute.tar.gz', tarball([{ path: join(outside, 'abs-file'), type: 'File', body: 'x' }])],
      ['link-out.tar.gz', tarball([{ path: 'fixture/fixture-agent', type: 'SymbolicLink', linkpath: '/bin/sh' }])],
      [
        'through-link.tar.gz',
        tarball([
          { path: 'up', type: 'SymbolicLink', linkpath: '.' },
          { path: 'up/fixture/fixture-agent', type: 'File', body: 'x' }
        ])
      ],
      ['hardlink.tar.gz', tarball([{ path: 'fixture/fixture-agent', type: 'Link', linkpath: '../../../etc/passwd' }])],
      ['zip-link.zip', await zipArchive([{ path: 'fixture/fixture-agent', body: '../../../../outside', mode: 0o120777 }])],
      // yazl will not write '../': the name is swapped in afterwards (same length; names carry no checksum).
      ['zip-dotdot.zip', renamed(await zipArchive([{ path: 'aa/outside-zip', body: 'x' }]), 'aa/outside-zip', '../outside-zip')]
    ]
    for (const [name, body] of evil) fixture.files.set(`/dl/${name}`, body)
    fixture.agents = evil.map(([name]) => ({
      ...fixture.binaryAgent('1.0.0', PLATFORM),
      id: name.replace(/\W/g, '-'),
      distribution: { binary: { [PLATFORM]: { archive: `${fixture.base}/dl/${name}`, cmd: './fixture/fixture-agent', args: [], env: {} } } }
    }))
    host = await open()
    await host.request('registry.list', {})
    for (const [name] of evil) {
      const result = await host.handle('registry.install', { registryId: name.replace(/\W/g, '-') })
      expect(result, name).toMatchObject({ ok: false, error: { code: 'archive_refused' } })
      expect(!result.ok && result.error.message, name).toMatch(/^The archive was refused: .*Nothing was installed\.$/)
    }
    expect(await host.request('agents.list', {})).toEqual([])
    expect(existsSync(outside)).toBe(false)
    expect(existsSync(join(root, 'outside-file'))).toBe(false)
    // Nothing half-unpacked stays in the data folder.
    for (const folder of readdirSync(join(dataDir, 'agents'))) expect(readdirSync(join(dataDir, 'agents', folder))).toEqual([])
  })

  it('an archive without the command the registry names is refused', async () => {
    fixture.files.set('/dl/empty.zip', await zipArchive([{ path: 'README', body: 'no agent here' }]))
    fixture.agents = [
      {
        ...fixture.binaryAgent('1.0.0', PLATFORM),
        distribution: { binary: { [PLATFORM]: { archive: `${fixture.base}/dl/empty.zip`, cmd: './fixture/fixture-agent', args: [], env: {} } } }
      }
    ]
    host = await open()
    await host.request('registry.list', {})
    expect(await host.handle('registry.install', { registryId: 'fixture-agent' })).toMatchObject({
      ok: false,
      error: {
        code: 'archive_refused',
        message: "Fixture Agent's archive has no './fixture/fixture-agent' in it (the command the registry names). Nothing was installed."
      }
    })
  })

  it('an npx distribution runs the pinned package through npx (a local package tarball here)', async () => {
    const tarballFile = await fixture.npmTarball(join(root, 'npm'))
    fixture.agents = [
      {
        id: 'npx-agent',
        name: 'Npx Agent',
        version: '3.0.0',
        description: 'From a package',
        authors: [],
        distribution: { npx: { package: tarballFile, cmd: 'fixture-npx-agent', args: [], env: { npm_config_cache: join(root, 'npm-cache') } } }
      }
    ]
    host = await open()
    const listing = await host.request('registry.list', {})
    expect(listing.agents[0].kinds).toEqual(['npx'])
    const agent = await host.request('registry.install', { registryId: 'npx-agent' })
    expect(agent).toMatchObject({
      transport: { kind: 'process', command: 'npx', args: ['-y', '--package', tarballFile, 'fixture-npx-agent'] },
      origin: { kind: 'npx', version: '3.0.0' }
    })
    expect(await converse(agent.id)).toContain('You said: hello registry')
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agent.id)?.agentInfo?.name).toBe('fixture-agent-npx-3.0.0')
  })

  it('an agent set up from a preset says which version it runs, is offered a newer one the registry lists (or the tested one), and is checked after an update', async () => {
    fixture.agents = [
      {
        id: 'gemini',
        name: 'Gemini CLI',
        version: '99.0.0',
        description: 'A newer Gemini CLI',
        authors: [],
        distribution: { npx: { package: '@google/gemini-cli@99.0.0', args: ['--acp'], env: {} } }
      }
    ]
    host = await open()
    // npx stays offline here: an update's check fails to start it, and says so.
    const env = { npm_config_offline: 'true', npm_config_cache: join(root, 'npm-cache') }
    const add = (name: string, args: string[]) => host.request('agents.add', { name, transport: { kind: 'process', command: 'npx', args, env } })
    const gemini = await add('Gemini CLI', ['-y', '@google/gemini-cli@0.27.0', '--acp'])
    const claude = await add('Claude Code', ['-y', '@agentclientprotocol/claude-agent-acp'])
    const codex = await add('Codex', ['-y', `@agentclientprotocol/codex-acp@${PRESET_PACKAGES[2]!.version}`])
    // Set up from the preset before Codex's adapter moved to @agentclientprotocol (2.x).
    const oldCodex = await add('Codex (before 2.x)', ['-y', '@zed-industries/codex-acp@0.16.0'])
    await add('Other', ['-y', 'some-agent@1.0.0'])
    const versions = await host.request('registry.presetVersions', {})
    expect(versions).toEqual([
      {
        agentId: gemini.id,
        npxPackage: '@google/gemini-cli',
        runs: '0.27.0',
        tested: PRESET_PACKAGES[1]!.version,
        newer: '99.0.0',
        newerFrom: 'registry'
      },
      {
        agentId: claude.id,
        npxPackage: '@agentclientprotocol/claude-agent-acp',
        runs: null,
        tested: PRESET_PACKAGES[0]!.version,
        newer: PRESET_PACKAGES[0]!.version,
        newerFrom: 'tested'
      },
      {
        agentId: codex.id,
        npxPackage: '@agentclientprotocol/codex-acp',
        runs: PRESET_PACKAGES[2]!.version,
        tested: PRESET_PACKAGES[2]!.version,
        newer: null
      },
      {
        agentId: oldCodex.id,
        npxPackage: '@zed-industries/codex-acp',
        runs: '0.16.0',
        tested: PRESET_PACKAGES[2]!.version,
        newer: PRESET_PACKAGES[2]!.version,
        newerFrom: 'tested'
      }
    ])
    // Only the tested version or the one offered.
    await expect(host.request('registry.updatePreset', { agentId: gemini.id, version: '98.0.0' })).rejects.toThrow(/neither the tested version/)
    const updated = await host.request('registry.updatePreset', { agentId: gemini.id, version: '99.0.0' })
    expect(runOf(updated).args).toEqual(['-y', '@google/gemini-cli@99.0.0', '--acp'])
    expect(runOf((await host.request('agents.list', {})).find((a) => a.id === gemini.id)!).args).toEqual(runOf(updated).args)
    expect((await host.request('registry.presetVersions', {})).find((v) => v.agentId === gemini.id)).toMatchObject({ runs: '99.0.0', newer: null })
    await waitUntil('the check after the update', async () => (await host.request('agents.checks', {})).find((r) => r.agentId === gemini.id))
    // The agent on the former package moves to the preset's package at the tested version.
    await host.request('registry.updatePreset', { agentId: oldCodex.id, version: PRESET_PACKAGES[2]!.version })
    expect(runOf((await host.request('agents.list', {})).find((a) => a.id === oldCodex.id)!).args).toEqual([
      '-y',
      `@agentclientprotocol/codex-acp@${PRESET_PACKAGES[2]!.version}`
    ])
    expect((await host.request('registry.presetVersions', {})).find((v) => v.agentId === oldCodex.id)).toMatchObject({
      npxPackage: '@agentclientprotocol/codex-acp',
      newer: null
    })
    await waitUntil('the check after its update', async () => (await host.request('agents.checks', {})).find((r) => r.agentId === oldCodex.id))
    await host.request('registry.updatePreset', { agentId: claude.id, version: PRESET_PACKAGES[0]!.version })
    expect(runOf((await host.request('agents.list', {})).find((a) => a.id === claude.id)!).args).toEqual([
      '-y',
      `@agentclientprotocol/claude-agent-acp@${PRESET_PACKAGES[0]!.version}`
    ])
  })

  it('a uvx distribution without uv installed says how to get uv', async () => {
    fixture.agents = [
      {
        id: 'py-agent',
        name: 'Py Agent',
        version: '0.2.0',
        description: '',
        authors: [],
        distribution: { uvx: { package: 'py-agent', args: [], env: {} } }
      }
    ]
    const path = process.env.PATH
    process.env.PATH = join(root, 'empty-bin')
    try {
      host = await open()
      const listing = await host.request('registry.list', {})
      expect(listing).toMatchObject({ uvx: false, agents: [{ kinds: ['uvx'] }] })
      expect(await host.handle('registry.install', { registryId: 'py-agent' })).toMatchObject({
        ok: false,
        error: { code: 'uv_missing', message: expect.stringContaining('curl -LsSf https://astral.sh/uv/install.sh | sh') }
      })
    } finally {
      process.env.PATH = path
    }
  })

  it('an agent with no download for this platform says so and cannot be installed', async () => {
    fixture.agents = [fixture.binaryAgent('1.0.0', 'windows-aarch64')]
    host = await open()
    const listing = await host.request('registry.list', {})
    expect(listing.agents[0]).toMatchObject({ kinds: [], unavailable: 'No download for this platform (linux-x86_64)' })
    expect(await host.handle('registry.install', { registryId: 'fixture-agent' })).toMatchObject({ ok: false })
  })
})

it('a damaged cache file is fetched again rather than trusted', async () => {
  host = await open()
  await mkdir(join(dataDir, 'registry'), { recursive: true })
  await writeFile(join(dataDir, 'registry', 'feed.json'), '{"url": 5')
  const listing = await host.request('registry.list', {})
  expect(listing.source).toBe('network')
})

/** An entry for the fixture agent whose archive is `/dl/<name>` and whose command is `cmd`. */
function agentFor(name: string, cmd = './fixture/fixture-agent') {
  return {
    ...fixture.binaryAgent('1.0.0', PLATFORM),
    id: name.replace(/\W/g, '-'),
    distribution: { binary: { [PLATFORM]: { archive: `${fixture.base}/dl/${name}`, cmd, args: [], env: {} } } }
  }
}

/** The fixture agent's own files, so that an archive the old code took would install and run. */
const AGENT_FILES = [
  { path: 'fixture/', type: 'Directory' as const },
  { path: 'fixture/fixture-agent', type: 'File' as const, body: launcherScript('1.0.0'), mode: 0o755 }
]

describe('the installer writes only inside its folder, and only so much', () => {
  it('refuses a chain of links that each look inside but lead out, and a command through them; the file outside stays as it was', async () => {
    // Staging is <root>/data/agents/<id>/.staging-…: five levels of `..` from d/ reach <root>.
    const outsideTool = join(root, 'outside-tool')
    await writeFile(outsideTool, '#!/bin/sh\necho pwned\n', { mode: 0o644 })
    await chmod(outsideTool, 0o644)
    const chain = [
      { path: 'd/', type: 'Directory' as const },
      { path: 'd/l1', type: 'SymbolicLink' as const, linkpath: '..' },
      { path: 'd/l2', type: 'SymbolicLink' as const, linkpath: 'l1/..' },
      { path: 'd/l3', type: 'SymbolicLink' as const, linkpath: 'l2/..' },
      { path: 'd/l4', type: 'SymbolicLink' as const, linkpath: 'l3/..' },
      { path: 'd/l5', type: 'SymbolicLink' as const, linkpath: 'l4/..' }
    ]
    const archives: [string, Buffer, string][] = [
      ['chain.tar.gz', tarball([...AGENT_FILES, ...chain]), './d/l5/outside-tool'],
      // Made the other way round: the link that leads out is made first, the one it goes through after.
      [
        'chain-late.tar.gz',
        tarball([
          ...AGENT_FILES,
          { path: 'd/', type: 'Directory' },
          { path: 'd/e/', type: 'Directory' },
          { path: 'd/out', type: 'SymbolicLink', linkpath: 'up/../../..' },
          { path: 'd/up', type: 'SymbolicLink', linkpath: 'e/..' },
          { path: 'd/e', type: 'SymbolicLink', linkpath: '..' }
        ]),
        './fixture/fixture-agent'
      ],
      [
        'chain-hardlink.tar.gz',
        tarball([...AGENT_FILES, ...chain.slice(0, 3), { path: 'x', type: 'Link', linkpath: 'd/l2/../etc' }]),
        './fixture/fixture-agent'
      ],
      // A hard link whose target reads inside (d/outside-tool) but passes through d/l1 → .. first.
      [
        'hardlink-through.tar.gz',
        tarball([...AGENT_FILES, ...chain.slice(0, 2), { path: 'x', type: 'Link', linkpath: 'd/l1/../outside-tool' }]),
        './fixture/fixture-agent'
      ],
      [
        'chain.zip',
        await zipArchive([
          { path: 'fixture/fixture-agent', body: launcherScript('1.0.0'), mode: 0o100755 },
          ...chain.slice(1).map((link) => ({ path: link.path, body: link.linkpath ?? '', mode: 0o120777 }))
        ]),
        './d/l5/outside-tool'
      ]
    ]
    for (const [name, body] of archives) fixture.files.set(`/dl/${name}`, body)
    fixture.agents = archives.map(([name, , cmd]) => agentFor(name, cmd))
    host = await open()
    await host.request('registry.list', {})
    for (const [name] of archives) {
      const result = await host.handle('registry.install', { registryId: name.replace(/\W/g, '-') })
      expect(result, name).toMatchObject({ ok: false, error: { code: 'archive_refused' } })
      expect(!result.ok && result.error.message, name).toMatch(
        /^The archive was refused: its entry '.*' is a link that points outside the folder.*Nothing was installed\.$/
      )
    }
    expect(await host.request('agents.list', {})).toEqual([])
    expect(statSync(outsideTool).mode & 0o777).toBe(0o644)
    for (const folder of readdirSync(join(dataDir, 'agents'))) expect(readdirSync(join(dataDir, 'agents', folder))).toEqual([])
  })

  it('marks executable only a regular file inside the folder, after every link', async () => {
    const staging = join(root, 'staging')
    const outsideTool = join(root, 'outside-tool')
    await mkdir(join(staging, 'bin'), { recursive: true })
    await writeFile(outsideTool, 'x', { mode: 0o644 })
    await writeFile(join(staging, 'bin', 'real'), 'x')
    await symlink('../../outside-tool', join(staging, 'bin', 'tool'))
    await symlink('..', join(staging, 'bin', 'up'))
    await symlink('real', join(staging, 'bin', 'inner'))
    await expect(stagedCommand(staging, 'bin/tool', 'Evil')).rejects.toThrow(
      "Evil's command 'bin/tool' points outside its folder. Nothing was installed."
    )
    await expect(stagedCommand(staging, 'bin/up/../outside-tool', 'Evil')).rejects.toThrow('points outside its folder')
    await expect(stagedCommand(staging, 'bin', 'Evil')).rejects.toThrow("Evil's archive has no 'bin' in it")
    expect(await stagedCommand(staging, 'bin/inner', 'Fine')).toMatchObject({ path: join(staging, 'bin', 'real') })
  })

  it('stops a download at its limit while it streams, and installs nothing', async () => {
    fixture.streams.set('/dl/endless.tar.gz', { bytes: 256 * 1024 * 1024, sent: 0 })
    fixture.agents = [agentFor('endless.tar.gz')]
    host = await open({ registry: { url: fixture.feedUrl, platform: PLATFORM, snapshot: bundledForTests(), limits: { downloadBytes: 1024 * 1024 } } })
    await host.request('registry.list', {})
    const result = await host.handle('registry.install', { registryId: 'endless-tar-gz' })
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: 'download_failed',
        message: 'The download of endless.tar.gz was stopped: it is larger than 1 MB, more than an agent should be. Nothing was installed.'
      }
    })
    // The server could write no more than the limit and what the sockets between hold, not the 256 MB it had.
    expect(fixture.streams.get('/dl/endless.tar.gz')!.sent).toBeLessThan(32 * 1024 * 1024)
    expect(readdirSync(join(dataDir, 'agents', 'endless-tar-gz'))).toEqual([])
  })

  it('stops reading a feed and an icon at their limits while they stream', async () => {
    fixture.streams.set('/endless-feed.json', { bytes: 256 * 1024 * 1024, sent: 0 })
    fixture.streams.set('/endless-icon.svg', { bytes: 256 * 1024 * 1024, sent: 0 })
    fixture.agents = [{ ...fixture.binaryAgent('1.0.0', PLATFORM), icon: `${fixture.base}/endless-icon.svg` }]
    const limits = { feedBytes: 1024 * 1024, iconBytes: 64 * 1024 }
    host = await open({ registry: { url: `${fixture.base}/endless-feed.json`, platform: PLATFORM, snapshot: bundledForTests(), limits } })
    const listing = await host.request('registry.list', {})
    expect(listing.source).toBe('snapshot')
    expect(listing.problem).toMatch(
      /^The registry at http:\/\/127\.0\.0\.1:\d+\/endless-feed\.json sent more than 1 MB, more than a registry should; nothing more was read\./
    )
    expect(fixture.streams.get('/endless-feed.json')!.sent).toBeLessThan(32 * 1024 * 1024)

    await host.request('registry.setUrl', { url: fixture.feedUrl })
    const listed = await host.request('registry.list', { refresh: true })
    expect(listed.source).toBe('network')
    expect(listed.agents[0].icon).toBeUndefined()
    expect(fixture.streams.get('/endless-icon.svg')!.sent).toBeLessThan(32 * 1024 * 1024)
  })

  it('refuses a zip bomb and a tar bomb by their ratio, and an archive by its unpacked size, before filling the disk', async () => {
    const zeros = Buffer.alloc(64 * 1024 * 1024)
    const bombs: [string, Buffer][] = [
      [
        'bomb.zip',
        await zipArchive([
          { path: 'fixture/fixture-agent', body: launcherScript('1.0.0'), mode: 0o100755 },
          { path: 'fixture/zeros', body: zeros.toString('latin1') }
        ])
      ],
      ['bomb.tar.gz', tarball([...AGENT_FILES, { path: 'fixture/zeros', type: 'File', body: zeros.toString('latin1') }])]
    ]
    for (const [name, body] of bombs) fixture.files.set(`/dl/${name}`, body)
    fixture.agents = bombs.map(([name]) => agentFor(name))
    host = await open()
    await host.request('registry.list', {})
    for (const [name, body] of bombs) {
      expect(body.length, name).toBeLessThan(1024 * 1024)
      const result = await host.handle('registry.install', { registryId: name.replace(/\W/g, '-') })
      expect(result, name).toMatchObject({ ok: false, error: { code: 'archive_refused' } })
      expect(!result.ok && result.error.message, name).toMatch(
        /^The archive was refused: its entry 'fixture\/zeros' is 64 MB packed into .*, more than 100 times: a zip bomb\. Nothing was installed\.$/
      )
    }
    await host.close()

    // Random bytes do not compress: refused by the size they unpack to.
    const noise = randomBytes(6 * 1024 * 1024).toString('latin1')
    fixture.files.set(
      '/dl/big.zip',
      await zipArchive([
        { path: 'fixture/fixture-agent', body: launcherScript('1.0.0'), mode: 0o100755 },
        { path: 'fixture/noise', body: noise }
      ])
    )
    fixture.files.set('/dl/big.tar.gz', tarball([...AGENT_FILES, { path: 'fixture/noise', type: 'File', body: noise }]))
    fixture.agents = [agentFor('big.zip'), agentFor('big.tar.gz')]
    host = await open({
      registry: { url: fixture.feedUrl, platform: PLATFORM, snapshot: bundledForTests(), limits: { unpackedBytes: 4 * 1024 * 1024 } }
    })
    await host.request('registry.list', { refresh: true })
    for (const name of ['big.zip', 'big.tar.gz']) {
      const result = await host.handle('registry.install', { registryId: name.replace(/\W/g, '-') })
      expect(result, name).toMatchObject({
        ok: false,
        error: {
          code: 'archive_refused',
          message:
            "The archive was refused: its entry 'fixture/noise' is more than the 4 MB an archive may unpack to (a zip bomb?). Nothing was installed."
        }
      })
    }
    expect(await host.request('agents.list', {})).toEqual([])
  })
})
