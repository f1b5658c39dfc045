import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { McpProfile } from '../../shared/mcp'
import { exportToMcpJson } from '../../electron/host/mcp/export'
import { importInputs, knownImportSources, previewImport, readMcpConfig } from '../../electron/host/mcp/import'
import { parseJsonc } from '../../electron/host/mcp/jsonc'
import { removeDir, tempDir } from '../helpers'

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'mcp')

function profile(overrides: Partial<McpProfile>): McpProfile {
  return {
    id: 'p1',
    name: 'filesystem',
    version: 1,
    enabled: true,
    scope: 'global',
    projectIds: [],
    transport: 'stdio',
    command: 'npx',
    args: [],
    env: [],
    url: '',
    headers: [],
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...overrides
  }
}

describe('reading other apps’ MCP configs', () => {
  it('Claude Desktop: stdio servers with env, and an entry with nothing to run skipped with why', async () => {
    const config = await readMcpConfig(join(fixtures, 'claude_desktop_config.json'))
    expect(config.format).toBe('claude-desktop')
    expect(config.servers).toEqual([
      {
        key: 'filesystem',
        transport: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop'],
        env: [],
        url: '',
        headers: [],
        notes: []
      },
      expect.objectContaining({
        key: 'github',
        command: 'docker',
        env: [{ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', value: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789' }]
      })
    ])
    expect(config.skipped).toEqual([{ key: 'broken', reason: 'It has neither a command nor a url.' }])
  })

  it('Claude Code .mcp.json: http with headers, sse, and stdio with ${VAR} references noted', async () => {
    const config = await readMcpConfig(join(fixtures, '.mcp.json'))
    expect(config.format).toBe('claude-code')
    expect(config.servers.map((s) => [s.key, s.transport, s.url || s.command])).toEqual([
      ['sentry', 'http', 'https://mcp.sentry.dev/mcp'],
      ['linear', 'sse', 'https://mcp.linear.app/sse'],
      ['db', 'stdio', '/usr/local/bin/db-mcp']
    ])
    expect(config.servers[0].headers).toEqual([{ name: 'Authorization', value: 'Bearer sntrys_0123456789abcdefghij' }])
    expect(config.servers[2].env).toEqual([
      { name: 'DB_URL', value: '${DATABASE_URL:-postgres://localhost/dev}' },
      { name: 'LOG_LEVEL', value: 'info' }
    ])
    expect(config.servers[2].notes).toEqual([
      'DB_URL uses ${DATABASE_URL:-postgres://localhost/dev} (Claude Code fills it in); Switchboard sends it as written, so replace it with the value.'
    ])
  })

  it('Cursor .cursor/mcp.json: a url without a type becomes Streamable HTTP, envFile and ${env:} are noted', async () => {
    const config = await readMcpConfig(join(fixtures, 'cursor-project', '.cursor', 'mcp.json'))
    expect(config.format).toBe('cursor')
    const [context7, filesystem] = config.servers
    expect(context7).toMatchObject({ key: 'context7', transport: 'http', url: 'https://mcp.context7.com/mcp' })
    expect(context7.notes[0]).toMatch(/Cursor picks Streamable HTTP or SSE/)
    expect(filesystem.notes).toEqual([
      'Variables from its envFile (.env.mcp) are not read: add them by hand.',
      'API_TOKEN uses ${env:MY_TOKEN} (Cursor fills it in); Switchboard sends it as written, so replace it with the value.'
    ])
  })

  it('VS Code .vscode/mcp.json (with comments and trailing commas): servers by type, ${input:} named by its description', async () => {
    const config = await readMcpConfig(join(fixtures, 'vscode-project', '.vscode', 'mcp.json'))
    expect(config.format).toBe('vscode')
    expect(config.servers.map((s) => [s.key, s.transport])).toEqual([
      ['perplexity', 'stdio'],
      ['github', 'http'],
      ['legacy', 'sse']
    ])
    expect(config.servers[0].notes).toEqual([
      'PERPLEXITY_API_KEY uses ${input:perplexity-key} (VS Code asks for “Perplexity API Key” there); Switchboard sends it as written, so replace it with the value.'
    ])
    expect(config.servers[1].headers).toEqual([{ name: 'X-Trace', value: 'on' }])
  })

  it('Zed settings.json: custom commands (new and old shape) and remote servers; extensions skipped with why', async () => {
    const config = await readMcpConfig(join(fixtures, 'zed', 'settings.json'))
    expect(config.format).toBe('zed')
    expect(config.servers.map((s) => [s.key, s.transport, s.command || s.url, s.args])).toEqual([
      ['hexdocs-mcp', 'stdio', 'npx', ['-y', 'hexdocs-mcp@0.5.0']],
      ['old-style', 'stdio', '/opt/old/server', ['run']],
      ['remote', 'http', 'https://example.com/mcp', []]
    ])
    expect(config.servers[1].env).toEqual([{ name: 'SECRET_KEY', value: 's3cr3t-value-1234567890abc' }])
    expect(config.servers[2].notes).toEqual(['It is switched off in Zed.'])
    expect(config.skipped).toEqual([{ key: 'mcp-server-github', reason: expect.stringMatching(/^A Zed extension/) }])
  })

  it('says clearly when a file is missing, a folder, or not JSON', async () => {
    await expect(readMcpConfig(join(fixtures, 'nope.json'))).rejects.toThrow(`There is no file at ${join(fixtures, 'nope.json')}`)
    await expect(readMcpConfig(join(fixtures, 'zed'))).rejects.toThrow(/is a folder/)
    const dir = await tempDir('mcp-bad')
    try {
      await writeFile(join(dir, 'mcp.json'), '{ "mcpServers": ')
      await expect(readMcpConfig(join(dir, 'mcp.json'))).rejects.toThrow(/is not valid JSON/)
    } finally {
      await removeDir(dir)
    }
  })
})

describe('JSONC', () => {
  it('drops comments and trailing commas outside strings only', () => {
    expect(parseJsonc('{ "a": "// not a comment", /* x */ "b": [1, 2,], // end\n "c": "/* kept */", }')).toEqual({
      a: '// not a comment',
      b: [1, 2],
      c: '/* kept */'
    })
    expect(parseJsonc('{"s": "quote \\" , ]"}')).toEqual({ s: 'quote " , ]' })
  })
})

describe('import preview and apply', () => {
  it('finds duplicates of existing profiles, keeps names free, and masks secret-looking values', async () => {
    const config = await readMcpConfig(join(fixtures, 'claude_desktop_config.json'))
    const existing = [
      profile({ name: 'filesystem', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/Users/me/Desktop'] }),
      profile({ id: 'p2', name: 'GitHub', command: 'gh-mcp' })
    ]
    const preview = previewImport('/x/claude_desktop_config.json', config, existing)
    expect(preview.candidates.map((c) => [c.key, c.name, c.status, c.existing])).toEqual([
      ['filesystem', 'filesystem', 'duplicate', 'filesystem'],
      ['github', 'github-2', 'renamed', 'GitHub']
    ])
    const token = preview.candidates[1].env[0]
    expect(token).toEqual({ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', value: 'ghp••••••789', secretSuggested: true })
    expect(JSON.stringify(preview)).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789')
  })

  it('suggests the secret store for keys and tokens but not for plain settings or ${...} references', async () => {
    const config = await readMcpConfig(join(fixtures, '.mcp.json'))
    const preview = previewImport('/x/.mcp.json', config, [])
    expect(preview.candidates[0].headers).toEqual([{ name: 'Authorization', value: 'Bea••••••hij', secretSuggested: true }])
    expect(preview.candidates[2].env.map((p) => [p.name, p.secretSuggested])).toEqual([
      ['DB_URL', false],
      ['LOG_LEVEL', false]
    ])
  })

  it('builds profiles from the file’s own values, marking the chosen pairs secret, and refuses a clash before saving any', async () => {
    const config = await readMcpConfig(join(fixtures, 'claude_desktop_config.json'))
    const inputs = importInputs(
      config,
      [{ key: 'github', name: 'gh', secretEnv: ['GITHUB_PERSONAL_ACCESS_TOKEN'], secretHeaders: [] }],
      'global',
      [],
      []
    )
    expect(inputs).toEqual([
      expect.objectContaining({
        name: 'gh',
        transport: 'stdio',
        command: 'docker',
        env: [{ name: 'GITHUB_PERSONAL_ACCESS_TOKEN', value: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', secret: true }]
      })
    ])
    expect(() =>
      importInputs(
        config,
        [
          { key: 'filesystem', name: 'fs', secretEnv: [], secretHeaders: [] },
          { key: 'github', name: 'FS', secretEnv: [], secretHeaders: [] }
        ],
        'global',
        [],
        []
      )
    ).toThrow('“FS”: Another server is already called “FS”.')
    expect(() => importInputs(config, [{ key: 'gone', name: 'x', secretEnv: [], secretHeaders: [] }], 'global', [], [])).toThrow(/no server “gone”/)
  })
})

describe('known config locations', () => {
  it('names each app’s file on Linux, macOS and Windows, plus a project’s own files', () => {
    const linux = knownImportSources({ platform: 'linux', home: '/home/me' }, '/home/me/app')
    expect(linux.map((s) => s.path)).toEqual([
      '/home/me/.config/Claude/claude_desktop_config.json',
      '/home/me/.claude.json',
      '/home/me/.cursor/mcp.json',
      '/home/me/.config/Code/User/mcp.json',
      '/home/me/.config/zed/settings.json',
      '/home/me/app/.mcp.json',
      '/home/me/app/.cursor/mcp.json',
      '/home/me/app/.vscode/mcp.json',
      '/home/me/app/.zed/settings.json'
    ])
    const mac = knownImportSources({ platform: 'darwin', home: '/Users/me' })
    expect(mac.map((s) => s.path)).toEqual([
      '/Users/me/Library/Application Support/Claude/claude_desktop_config.json',
      '/Users/me/.claude.json',
      '/Users/me/.cursor/mcp.json',
      '/Users/me/Library/Application Support/Code/User/mcp.json',
      '/Users/me/.config/zed/settings.json'
    ])
    const windows = knownImportSources({ platform: 'win32', home: 'C:\\Users\\me', appData: 'C:\\Users\\me\\AppData\\Roaming' })
    expect(windows.map((s) => s.path)).toEqual([
      'C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
      'C:\\Users\\me\\.claude.json',
      'C:\\Users\\me\\.cursor\\mcp.json',
      'C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json',
      'C:\\Users\\me\\AppData\\Roaming\\Zed\\settings.json'
    ])
  })
})

describe('export to .mcp.json', () => {
  let dir: string
  beforeAll(async () => {
    dir = await tempDir('mcp-export')
  })
  afterAll(async () => {
    await removeDir(dir)
  })

  it('merges into the file, writes secrets as ${NAME} references, and reads back as the same servers', async () => {
    const path = join(dir, 'project', '.mcp.json')
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, JSON.stringify({ mcpServers: { other: { command: 'keep-me' }, api: { command: 'old' } }, extra: 1 }))
    const result = await exportToMcpJson(path, [
      profile({
        name: 'api',
        command: 'api-mcp',
        args: ['--x'],
        env: [
          { name: 'API_KEY', value: '', secret: true },
          { name: 'MODE', value: 'ro', secret: false }
        ]
      }),
      profile({
        id: 'p2',
        name: 'remote',
        transport: 'http',
        command: '',
        url: 'https://example.com/mcp',
        headers: [{ name: 'X-Api-Key', value: '', secret: true }]
      })
    ])
    expect(result).toEqual({
      path,
      written: ['api', 'remote'],
      secretPlaceholders: ['API_KEY', 'X_API_KEY'],
      backup: expect.stringMatching(/\.mcp\.json\..*\.bak$/)
    })
    // The file as it was, kept beside it.
    expect(JSON.parse(await readFile(result.backup!, 'utf8'))).toMatchObject({ mcpServers: { other: { command: 'keep-me' } }, extra: 1 })
    const written = JSON.parse(await readFile(path, 'utf8'))
    expect(written).toEqual({
      mcpServers: {
        other: { command: 'keep-me' },
        api: { type: 'stdio', command: 'api-mcp', args: ['--x'], env: { API_KEY: '${API_KEY}', MODE: 'ro' } },
        remote: { type: 'http', url: 'https://example.com/mcp', headers: { 'X-Api-Key': '${X_API_KEY}' } }
      },
      extra: 1
    })
    const back = await readMcpConfig(path)
    expect(back.servers.map((s) => [s.key, s.transport])).toEqual([
      ['other', 'stdio'],
      ['api', 'stdio'],
      ['remote', 'http']
    ])
  })

  it('leaves a file that is not JSON alone', async () => {
    const path = join(dir, 'broken.json')
    await writeFile(path, 'not json')
    await expect(exportToMcpJson(path, [profile({})])).rejects.toThrow(/is not a JSON object; it was left as it is/)
    expect(await readFile(path, 'utf8')).toBe('not json')
    await expect(exportToMcpJson('relative/.mcp.json', [profile({})])).rejects.toThrow(/absolute path/)
    await expect(exportToMcpJson(join(dir, 'notes.txt'), [profile({})])).rejects.toThrow(/Export to a .json file/)
  })
})
