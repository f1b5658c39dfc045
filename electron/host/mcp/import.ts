import { promises as fs } from 'node:fs'
import { basename, posix, win32 } from 'node:path'
import {
  looksSecret,
  maskSecret,
  MCP_IMPORT_FORMAT_NAMES,
  validateMcpProfile,
  type McpImportCandidate,
  type McpImportFormat,
  type McpImportPreview,
  type McpImportSource,
  type McpProfile,
  type McpTransport,
  type ParsedMcpProfileInput
} from '../../../shared/mcp'
import { parseJsonc } from './jsonc'

/**
 * Reads the MCP server definitions people already have in other apps:
 *
 * | format | file | servers under |
 * | --- | --- | --- |
 * | Claude Desktop | `claude_desktop_config.json` | `mcpServers` |
 * | Claude Code | a project's `.mcp.json` (also `~/.claude.json`) | `mcpServers` (`type` stdio/http/sse) |
 * | Cursor | `~/.cursor/mcp.json`, a project's `.cursor/mcp.json` | `mcpServers` (`url` for remote ones) |
 * | VS Code | user `mcp.json`, a project's `.vscode/mcp.json` | `servers` (`type`), `inputs` (JSONC) |
 * | Zed | `settings.json` (user or a project's `.zed/`) | `context_servers` (JSONC) |
 *
 * Every reader takes a file path, so tests pass fixtures; `knownImportSources`
 * names where each app keeps its file on Linux, macOS and Windows.
 */

export interface ImportedServer {
  key: string
  transport: McpTransport
  command: string
  args: string[]
  env: { name: string; value: string }[]
  cwd?: string
  url: string
  headers: { name: string; value: string }[]
  notes: string[]
}

export interface ReadConfig {
  format: McpImportFormat
  servers: ImportedServer[]
  skipped: { key: string; reason: string }[]
}

type Json = Record<string, unknown>

/** Reads one config file; the format is guessed from its name and content when not given. */
export async function readMcpConfig(path: string, format?: McpImportFormat): Promise<ReadConfig> {
  let text: string
  try {
    text = await fs.readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new Error(`There is no file at ${path}`)
    if (code === 'EISDIR') throw new Error(`${path} is a folder; pick the config file inside it`)
    throw new Error(`Could not read ${path}: ${(error as Error).message}`)
  }
  let json: unknown
  try {
    json = parseJsonc(text)
  } catch (error) {
    throw new Error(`${path} is not valid JSON: ${(error as Error).message}`)
  }
  if (!isObject(json)) throw new Error(`${path} does not hold a JSON object`)
  const detected = format ?? detectFormat(path, json)
  return { format: detected, ...parseConfig(detected, json) }
}

export function detectFormat(path: string, json: Json): McpImportFormat {
  const name = basename(path).toLowerCase()
  const normalised = path.replace(/\\/g, '/').toLowerCase()
  if (name === 'claude_desktop_config.json') return 'claude-desktop'
  if (name === '.mcp.json' || name === '.claude.json') return 'claude-code'
  if (normalised.includes('/.cursor/')) return 'cursor'
  if (normalised.includes('/.vscode/') || normalised.includes('/code/user/') || isObject(json.servers) || isObject(asObject(json.mcp).servers))
    return 'vscode'
  if (isObject(json.context_servers) || normalised.includes('/zed/')) return 'zed'
  return 'claude-code'
}

export function parseConfig(format: McpImportFormat, json: Json): Omit<ReadConfig, 'format'> {
  const servers: ImportedServer[] = []
  const skipped: ReadConfig['skipped'] = []
  const app = MCP_IMPORT_FORMAT_NAMES[format]
  const entries =
    format === 'zed'
      ? asObject(json.context_servers)
      : format === 'vscode'
        ? asObject(json.servers ?? asObject(json.mcp).servers)
        : asObject(json.mcpServers)
  const inputs = format === 'vscode' ? vscodeInputs(json) : new Map<string, string>()
  for (const [key, value] of Object.entries(entries)) {
    const entry = asObject(value)
    const result = format === 'zed' ? fromZed(entry) : fromMcpServersEntry(entry, format)
    if (typeof result === 'string') {
      skipped.push({ key, reason: result })
      continue
    }
    result.notes.push(...variableNotes(result, app, inputs))
    if (entry.disabled === true || entry.enabled === false) result.notes.push(`It is switched off in ${app}.`)
    servers.push({ key, ...result })
  }
  if (Object.keys(entries).length === 0) {
    const where = format === 'zed' ? 'context_servers' : format === 'vscode' ? 'servers' : 'mcpServers'
    skipped.push({ key: '(file)', reason: `No MCP servers found: the file has no “${where}” entries.` })
  }
  return { servers, skipped }
}

/** `mcpServers` entries (Claude Desktop, Claude Code, Cursor) and VS Code `servers` entries share one shape. */
function fromMcpServersEntry(entry: Json, format: McpImportFormat): Omit<ImportedServer, 'key'> | string {
  const notes: string[] = []
  const declared = typeof entry.type === 'string' ? entry.type.toLowerCase() : undefined
  if (typeof entry.envFile === 'string') notes.push(`Variables from its envFile (${entry.envFile}) are not read: add them by hand.`)
  if (typeof entry.url === 'string' && declared !== 'stdio') {
    let transport: McpTransport = 'http'
    if (declared === 'sse') transport = 'sse'
    else if (declared && !['http', 'streamable-http', 'streamablehttp'].includes(declared)) return `Unknown transport type “${String(entry.type)}”.`
    if (!declared && format === 'cursor')
      notes.push(
        'Cursor picks Streamable HTTP or SSE by itself; this is imported as Streamable HTTP (edit it to SSE if the server only speaks that).'
      )
    return { transport, command: '', args: [], env: [], url: entry.url, headers: pairsOf(entry.headers), notes }
  }
  if (typeof entry.command === 'string' && entry.command.trim()) {
    if (declared && declared !== 'stdio') return `Type “${String(entry.type)}” needs a url, and it has none.`
    return {
      transport: 'stdio',
      command: entry.command,
      args: stringsOf(entry.args),
      env: pairsOf(entry.env),
      ...(typeof entry.cwd === 'string' && entry.cwd ? { cwd: entry.cwd } : {}),
      url: '',
      headers: [],
      notes
    }
  }
  return 'It has neither a command nor a url.'
}

/** Zed's `context_servers`: a command (string, or the older `{path, args, env}`), a url, or an extension's settings. */
function fromZed(entry: Json): Omit<ImportedServer, 'key'> | string {
  if (typeof entry.url === 'string') {
    return { transport: 'http', command: '', args: [], env: [], url: entry.url, headers: pairsOf(entry.headers), notes: [] }
  }
  if (isObject(entry.command)) {
    const command = entry.command
    const path = typeof command.path === 'string' ? command.path : typeof command.command === 'string' ? command.command : ''
    if (path) return { transport: 'stdio', command: path, args: stringsOf(command.args), env: pairsOf(command.env), url: '', headers: [], notes: [] }
  }
  if (typeof entry.command === 'string' && entry.command.trim()) {
    return { transport: 'stdio', command: entry.command, args: stringsOf(entry.args), env: pairsOf(entry.env), url: '', headers: [], notes: [] }
  }
  if (entry.source === 'extension' || 'settings' in entry) {
    return 'A Zed extension: Zed starts it from the extension, so there is no command to import. Add it by hand with the command the extension runs.'
  }
  return 'It has neither a command nor a url.'
}

/** VS Code `inputs`: id → description, for values written as `${input:id}`. */
function vscodeInputs(json: Json): Map<string, string> {
  const inputs = Array.isArray(json.inputs) ? json.inputs : Array.isArray(asObject(json.mcp).inputs) ? (asObject(json.mcp).inputs as unknown[]) : []
  const map = new Map<string, string>()
  for (const input of inputs) {
    const i = asObject(input)
    if (typeof i.id === 'string') map.set(i.id, typeof i.description === 'string' ? i.description : i.id)
  }
  return map
}

/** Values the other app fills in (`${VAR}`, `${env:VAR}`, `${input:id}`, ...) are sent as written here: say so. */
function variableNotes(server: Omit<ImportedServer, 'key'>, app: string, inputs: Map<string, string>): string[] {
  const notes: string[] = []
  const fields = [
    ...server.env.map((p) => [p.name, p.value] as const),
    ...server.headers.map((p) => [p.name, p.value] as const),
    ['command', server.command] as const,
    ...server.args.map((a, i) => [`argument ${i + 1}`, a] as const),
    ['url', server.url] as const,
    ...(server.cwd ? [['cwd', server.cwd] as const] : [])
  ]
  for (const [field, value] of fields) {
    for (const match of value.matchAll(/\$\{([^}]+)\}/g)) {
      const variable = match[1]
      const input = /^input:(.+)$/.exec(variable)?.[1]
      const what = input ? `VS Code asks for “${inputs.get(input) ?? input}” there` : `${app} fills it in`
      notes.push(`${field} uses \${${variable}} (${what}); Switchboard sends it as written, so replace it with the value.`)
    }
  }
  return notes
}

// ---- preview and apply -------------------------------------------------------------

/** What an import would bring in: duplicates of existing profiles found, names kept free, secret-looking values masked. */
export function previewImport(path: string, config: ReadConfig, existing: readonly McpProfile[]): McpImportPreview {
  const taken = existing.map((p) => p.name)
  const candidates: McpImportCandidate[] = []
  for (const server of config.servers) {
    const duplicate = existing.find((p) => sameServer(p, server))
    const base = server.key.trim().slice(0, 100) || 'server'
    const name = duplicate ? base : freeName(base, taken)
    const status: McpImportCandidate['status'] = duplicate ? 'duplicate' : name === base ? 'new' : 'renamed'
    if (!duplicate) taken.push(name)
    const clash = status === 'renamed' ? (existing.find((p) => p.name.toLowerCase() === base.toLowerCase())?.name ?? base) : undefined
    candidates.push({
      key: server.key,
      name,
      transport: server.transport,
      command: server.command,
      args: server.args,
      env: server.env.map(shownPair),
      ...(server.cwd ? { cwd: server.cwd } : {}),
      url: server.url,
      headers: server.headers.map(shownPair),
      status,
      ...(duplicate ? { existing: duplicate.name } : clash ? { existing: clash } : {}),
      notes: server.notes
    })
  }
  return { path, format: config.format, candidates, skipped: config.skipped }
}

export interface ImportChoice {
  key: string
  name: string
  secretEnv: string[]
  secretHeaders: string[]
}

/**
 * The profiles to save for the chosen servers, with the values read from the
 * file (not from the preview, which masks secrets). Every one is checked
 * before any is saved, so a refusal imports nothing.
 */
export function importInputs(
  config: ReadConfig,
  choices: ImportChoice[],
  scope: 'global' | 'projects',
  projectIds: string[],
  existingNames: string[]
): ParsedMcpProfileInput[] {
  const names = [...existingNames]
  return choices.map((choice) => {
    const server = config.servers.find((s) => s.key === choice.key)
    if (!server) throw new Error(`There is no server “${choice.key}” in that file (any more); preview it again.`)
    const input: ParsedMcpProfileInput = {
      name: choice.name.trim(),
      enabled: true,
      scope,
      projectIds: scope === 'projects' ? projectIds : [],
      transport: server.transport,
      command: server.command,
      args: server.args,
      env: server.env.map((p) => ({ ...p, secret: choice.secretEnv.includes(p.name) })),
      ...(server.cwd && !server.cwd.includes('${') ? { cwd: server.cwd } : {}),
      url: server.url,
      headers: server.headers.map((p) => ({ ...p, secret: choice.secretHeaders.includes(p.name) }))
    }
    const problems = Object.values(validateMcpProfile(input, names))
    if (problems.length) throw new Error(`“${choice.name}”: ${problems.join(' ')}`)
    names.push(input.name)
    return input
  })
}

function shownPair(pair: { name: string; value: string }): McpImportCandidate['env'][number] {
  const secretSuggested = looksSecret(pair.name, pair.value)
  const reference = /^\$\{[^}]+\}$/.test(pair.value.trim())
  return { name: pair.name, value: secretSuggested && !reference ? maskSecret(pair.value) : pair.value, secretSuggested }
}

/** The same server: same transport and command line, or the same URL. */
function sameServer(profile: McpProfile, server: ImportedServer): boolean {
  if (profile.transport !== server.transport) return false
  if (server.transport === 'stdio') return profile.command === server.command && JSON.stringify(profile.args) === JSON.stringify(server.args)
  return normaliseUrl(profile.url) === normaliseUrl(server.url)
}

function normaliseUrl(url: string): string {
  try {
    return new URL(url).href.replace(/\/$/, '')
  } catch {
    return url.trim()
  }
}

function freeName(base: string, taken: string[]): string {
  const lower = taken.map((n) => n.toLowerCase())
  if (!lower.includes(base.toLowerCase())) return base
  for (let n = 2; ; n++) if (!lower.includes(`${base}-${n}`.toLowerCase())) return `${base}-${n}`
}

// ---- where the files are ----------------------------------------------------------

export interface Places {
  platform: NodeJS.Platform
  home: string
  /** Windows: %APPDATA%. */
  appData?: string
  /** Linux: $XDG_CONFIG_HOME. */
  xdgConfigHome?: string
}

/** The files each app keeps its MCP servers in, for this OS (and for a project's folder). */
export function knownImportSources(places: Places, projectDir?: string): Omit<McpImportSource, 'exists'>[] {
  const windows = places.platform === 'win32'
  const path = windows ? win32 : posix
  const home = places.home
  const appData = places.appData ?? path.join(home, 'AppData', 'Roaming')
  const config = places.xdgConfigHome || path.join(home, '.config')
  const appSupport = path.join(home, 'Library', 'Application Support')
  const userDir = (mac: string, win: string, linux: string): string =>
    places.platform === 'darwin' ? path.join(appSupport, mac) : windows ? path.join(appData, win) : path.join(config, linux)
  const sources: Omit<McpImportSource, 'exists'>[] = [
    {
      format: 'claude-desktop',
      label: 'Claude Desktop',
      scope: 'user',
      path: path.join(userDir('Claude', 'Claude', 'Claude'), 'claude_desktop_config.json')
    },
    { format: 'claude-code', label: 'Claude Code (user)', scope: 'user', path: path.join(home, '.claude.json') },
    { format: 'cursor', label: 'Cursor', scope: 'user', path: path.join(home, '.cursor', 'mcp.json') },
    { format: 'vscode', label: 'VS Code', scope: 'user', path: path.join(userDir('Code', 'Code', 'Code'), 'User', 'mcp.json') },
    {
      format: 'zed',
      label: 'Zed',
      scope: 'user',
      path: windows
        ? path.join(appData, 'Zed', 'settings.json')
        : path.join(places.platform === 'darwin' ? path.join(home, '.config') : config, 'zed', 'settings.json')
    }
  ]
  if (projectDir) {
    sources.push(
      { format: 'claude-code', label: 'Claude Code (.mcp.json)', scope: 'project', path: path.join(projectDir, '.mcp.json') },
      { format: 'cursor', label: 'Cursor (.cursor/mcp.json)', scope: 'project', path: path.join(projectDir, '.cursor', 'mcp.json') },
      { format: 'vscode', label: 'VS Code (.vscode/mcp.json)', scope: 'project', path: path.join(projectDir, '.vscode', 'mcp.json') },
      { format: 'zed', label: 'Zed (.zed/settings.json)', scope: 'project', path: path.join(projectDir, '.zed', 'settings.json') }
    )
  }
  return sources
}

// ---- helpers --------------------------------------------------------------------------

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function asObject(value: unknown): Json {
  return isObject(value) ? value : {}
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v) => v !== null && v !== undefined).map((v) => String(v)) : []
}

function pairsOf(value: unknown): { name: string; value: string }[] {
  return Object.entries(asObject(value))
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([name, v]) => ({ name, value: typeof v === 'string' ? v : JSON.stringify(v) }))
}
