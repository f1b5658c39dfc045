import { z } from 'zod'
import { confirmationCodeParam } from './confirmation'

/**
 * MCP server profiles: the servers a user defines once and Switchboard hands
 * to every agent's sessions (ACP `mcpServers`), in the shape each agent takes.
 * Shared by the Host and the renderer: types, the request schemas, and the one
 * validation both the form and the Host apply.
 */

export const MCP_TRANSPORTS = ['stdio', 'http', 'sse'] as const
export type McpTransport = (typeof MCP_TRANSPORTS)[number]

/**
 * An environment variable (stdio) or HTTP header (http, sse). A secret's value
 * lives in the secret store: wherever a profile is stored or shown, a secret's
 * `value` is ''.
 */
export interface McpPair {
  name: string
  value: string
  secret: boolean
}

export interface McpProfile {
  id: string
  /** The server's name, as agents see it (and prefix its tools with). Unique among profiles. */
  name: string
  /** Bumped on every edit; a session record names the version it started with. */
  version: number
  /** Off: given to no session anywhere. */
  enabled: boolean
  /** `global`: every project's sessions; `projects`: only those of `projectIds`. */
  scope: 'global' | 'projects'
  projectIds: string[]
  transport: McpTransport
  /** stdio: a command name (found on PATH when a session starts) or a path. */
  command: string
  args: string[]
  env: McpPair[]
  /** stdio: the folder to start the server in, for "Test connection" (ACP has no way to pass it to an agent). */
  cwd?: string
  /** http, sse */
  url: string
  headers: McpPair[]
  createdAt: string
  updatedAt: string
  /**
   * The last "Test connection" of the server as it is defined now (an edit of
   * what it runs, where it is or its secrets forgets it). A server whose last
   * test failed is left out of the sessions that start or continue after it,
   * with the test's error as the reason, until a test passes again.
   */
  lastTest?: McpLastTest
}

/** What the last connection test of a profile found, in short. */
export interface McpLastTest {
  ok: boolean
  at: string
  /** The failure, in the test's own words. */
  error?: string
}

/** A profile as the renderer sees it: plus the secrets whose value is not in the secret store (any more). */
export interface McpProfileView extends McpProfile {
  missingSecrets: string[]
}

/** All profiles, and per project the profiles switched off there. */
export interface McpState {
  profiles: McpProfileView[]
  /** projectId → ids of profiles switched off for that project. */
  disabled: Record<string, string[]>
  /** False when secrets are kept in memory only and are forgotten when Switchboard stops. */
  secretsPersistent: boolean
}

/** A server a session was given, as its record keeps it: the profile and the version it started with. */
export interface SessionMcpServer {
  profileId: string
  version: number
  name: string
  transport: McpTransport
  /** Something the user should know about how it was given (e.g. a cwd ACP cannot carry). */
  note?: string
}

/**
 * Whether a server the session was given is running inside the agent, from
 * the best evidence the agent gives (ACP has no message for it): `started`
 * (one of its tools ran), `failed` (a tool of it failed to reach it; an agent
 * told), `not_started` (the agent is known not to start it: Gemini CLI in a
 * folder it does not trust), `not_reported` (nothing known: never shown as
 * started merely for being given).
 */
export type McpRunState = 'started' | 'failed' | 'not_started' | 'not_reported'

export interface SessionMcpRun {
  name: string
  state: McpRunState
  /** What the evidence was, or why nothing is known, in a sentence. */
  reason: string
}

/** What the Host knows of a live session's servers inside its agent (`SessionState.mcpRun`). */
export interface SessionMcpRunState {
  servers: SessionMcpRun[]
  /**
   * The agent is Gemini CLI and does not trust the session's folder, so it
   * starts none of the servers. `file`: Gemini CLI's trust file, where
   * `sessions.trustFolderForMcp` can trust the folder (absent when an
   * environment variable decides and the file cannot help). `restartNeeded`:
   * the folder was trusted since; the running agent read the file before.
   */
  untrustedFolder?: { agent: string; folder: string; why: string; file?: string; restartNeeded?: boolean }
}

/** A server a session was not given, and why (shown on the session, never silent). */
export interface SessionMcpLeftOut extends SessionMcpServer {
  reason: string
}

export interface McpListedItem {
  name: string
  title?: string
  description?: string
  /** Resources only. */
  uri?: string
}

export type McpTestResult =
  | {
      ok: true
      server: { name: string; version: string }
      tools: McpListedItem[]
      prompts: McpListedItem[]
      resources: McpListedItem[]
      /** Capabilities the server did not announce, so there was nothing to list for them. */
      notOffered: ('tools' | 'prompts' | 'resources')[]
      durationMs: number
    }
  | {
      ok: false
      /** The exact problem, in a sentence the user can act on. */
      error: string
      /** stdio: how the server process ended, when it did. */
      exitCode?: number | null
      signal?: string | null
      stderrTail?: string
      /** http, sse: the HTTP status the server answered with. */
      httpStatus?: number
      timedOut?: boolean
      durationMs: number
    }

// ---- import and export ---------------------------------------------------------

export const MCP_IMPORT_FORMATS = ['claude-desktop', 'claude-code', 'cursor', 'vscode', 'zed'] as const
export type McpImportFormat = (typeof MCP_IMPORT_FORMATS)[number]

export const MCP_IMPORT_FORMAT_NAMES: Record<McpImportFormat, string> = {
  'claude-desktop': 'Claude Desktop',
  'claude-code': 'Claude Code',
  cursor: 'Cursor',
  vscode: 'VS Code',
  zed: 'Zed'
}

/** A place where another app keeps MCP server definitions. */
export interface McpImportSource {
  format: McpImportFormat
  label: string
  path: string
  scope: 'user' | 'project'
  exists: boolean
}

export interface McpImportPair {
  name: string
  /** Shown value: a secret-looking value is masked (the Host reads the file again on import). */
  value: string
  /** The name or value looks like a key or token: offered for the secret store. */
  secretSuggested: boolean
}

export interface McpImportCandidate {
  /** The server's name in the file (what the import names by). */
  key: string
  /** The name it gets here: `key`, or a free variant when another server already has that name. */
  name: string
  transport: McpTransport
  command: string
  args: string[]
  env: McpImportPair[]
  cwd?: string
  url: string
  headers: McpImportPair[]
  /** `duplicate`: an existing profile has the same definition (not imported unless asked). */
  status: 'new' | 'duplicate' | 'renamed'
  /** The existing profile it duplicates, or whose name it would have taken. */
  existing?: string
  /** Things to know before importing (variables the other app expands, fields dropped, ...). */
  notes: string[]
}

export interface McpImportPreview {
  path: string
  format: McpImportFormat
  candidates: McpImportCandidate[]
  /** Entries that cannot become profiles, and why. */
  skipped: { key: string; reason: string }[]
}

// ---- request schemas (used by shared/contract.ts) -------------------------------

const id = z.string().min(1).max(200)

const pairInput = z.object({
  name: z.string().max(300),
  /** For a secret: the new value, or absent to keep the stored one. */
  value: z.string().max(100_000).optional(),
  secret: z.boolean().default(false)
})
export type McpPairInput = z.input<typeof pairInput>

export const mcpProfileInputSchema = z.object({
  /** Absent: a new profile. */
  id: id.optional(),
  name: z.string().max(300),
  enabled: z.boolean().default(true),
  scope: z.enum(['global', 'projects']).default('global'),
  projectIds: z.array(id).max(500).default([]),
  transport: z.enum(MCP_TRANSPORTS),
  command: z.string().max(4096).default(''),
  args: z.array(z.string().max(10_000)).max(500).default([]),
  env: z.array(pairInput).max(200).default([]),
  cwd: z.string().max(4096).optional(),
  url: z.string().max(4096).default(''),
  headers: z.array(pairInput).max(200).default([])
})
export type McpProfileInput = z.input<typeof mcpProfileInputSchema>
export type ParsedMcpProfileInput = z.output<typeof mcpProfileInputSchema>

export const mcpRequestParams = {
  'mcp.list': z.object({}),
  /** A stdio server that is new, or whose command, arguments, folder or variables change, needs a confirmation. */
  'mcp.save': mcpProfileInputSchema.extend(confirmationCodeParam),
  'mcp.delete': z.object({ id }),
  'mcp.setProjectEnabled': z.object({ projectId: id, profileId: id, enabled: z.boolean() }),
  'mcp.test': z.object({ id, timeoutMs: z.number().int().min(1000).max(120_000).default(15_000) }),
  'mcp.importSources': z.object({ projectId: id.optional() }),
  'mcp.importPreview': z.object({ path: z.string().min(1).max(4096), format: z.enum(MCP_IMPORT_FORMATS).optional() }),
  'mcp.importApply': z.object({
    path: z.string().min(1).max(4096),
    format: z.enum(MCP_IMPORT_FORMATS),
    items: z
      .array(
        z.object({
          key: z.string().min(1).max(300),
          name: z.string().max(300),
          secretEnv: z.array(z.string().max(300)).max(200).default([]),
          secretHeaders: z.array(z.string().max(300)).max(200).default([])
        })
      )
      .min(1)
      .max(500),
    scope: z.enum(['global', 'projects']).default('global'),
    projectIds: z.array(id).max(500).default([]),
    /** Needed when a stdio server is among those imported. */
    ...confirmationCodeParam
  }),
  'mcp.export': z.object({ path: z.string().min(1).max(4096), profileIds: z.array(id).min(1).max(500), ...confirmationCodeParam })
} as const

export interface McpRequestResults {
  'mcp.list': McpState
  'mcp.save': McpProfileView
  'mcp.delete': Record<string, never>
  'mcp.setProjectEnabled': Record<string, never>
  'mcp.test': McpTestResult
  'mcp.importSources': McpImportSource[]
  'mcp.importPreview': McpImportPreview
  'mcp.importApply': { imported: McpProfileView[] }
  /** `secretPlaceholders`: secret values written as `${NAME}` for the other app to fill from its environment. */
  /** `backup`: where the file's earlier content was copied, when it had any. */
  'mcp.export': { path: string; written: string[]; secretPlaceholders: string[]; backup?: string }
}

// ---- validation ------------------------------------------------------------------

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

export type McpProfileErrors = Partial<Record<'name' | 'command' | 'url' | 'cwd' | 'env' | 'headers' | 'projectIds', string>>

/**
 * What is wrong with a profile, by field: the same checks in the form (as the
 * user types) and in the Host (which refuses with the first). `otherNames`
 * are the names of the other profiles.
 */
export function validateMcpProfile(
  input: Pick<McpProfileInput, 'name' | 'transport' | 'command' | 'url' | 'cwd' | 'env' | 'headers' | 'scope' | 'projectIds'>,
  otherNames: string[]
): McpProfileErrors {
  const errors: McpProfileErrors = {}
  const name = input.name.trim()
  if (!name) errors.name = 'Give the server a name (agents show it beside its tools).'
  else if (name.length > 100) errors.name = 'Keep the name under 100 characters.'
  else if (/[\u0000-\u001f]/.test(name)) errors.name = 'The name cannot contain control characters.'
  else if (otherNames.some((n) => n.trim().toLowerCase() === name.toLowerCase())) errors.name = `Another server is already called “${name}”.`

  if (input.transport === 'stdio') {
    const command = (input.command ?? '').trim()
    if (!command) errors.command = 'Which command starts the server? (e.g. npx, uvx, or a path)'
    const env = input.env ?? []
    const badEnv = env.find((p) => !ENV_NAME.test(p.name.trim()))
    const envNames = env.map((p) => p.name.trim())
    const dupEnv = envNames.find((n, i) => envNames.indexOf(n) !== i)
    if (badEnv) errors.env = `“${badEnv.name}” is not a valid environment variable name (letters, digits and _; not starting with a digit).`
    else if (dupEnv) errors.env = `${dupEnv} is set twice.`
    const cwd = input.cwd?.trim()
    if (cwd && !isAbsolutePath(cwd)) errors.cwd = 'The working folder must be an absolute path.'
  } else {
    const url = (input.url ?? '').trim()
    if (!url) errors.url = 'The server’s URL, like https://example.com/mcp'
    else if (!/^https?:\/\/[^\s/]+/i.test(url) || !isUrl(url)) errors.url = 'The URL must start with http:// or https:// and have a host.'
    const headers = input.headers ?? []
    const badHeader = headers.find((p) => !HEADER_NAME.test(p.name.trim()))
    const headerNames = headers.map((p) => p.name.trim().toLowerCase())
    const dupHeader = headers.find((_, i) => headerNames.indexOf(headerNames[i]) !== i)
    if (badHeader) errors.headers = `“${badHeader.name}” is not a valid header name.`
    else if (dupHeader) errors.headers = `The header ${dupHeader.name.trim()} is set twice.`
  }
  if (input.scope === 'projects' && (input.projectIds ?? []).length === 0) {
    errors.projectIds = 'Pick at least one project, or make the server available to all projects.'
  }
  return errors
}

function isAbsolutePath(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\')
}

function isUrl(text: string): boolean {
  try {
    return Boolean(new URL(text).host)
  } catch {
    return false
  }
}

/** Names and values that look like keys or tokens: offered for the secret store. */
export function looksSecret(name: string, value: string): boolean {
  if (/(^|[_-])(key|token|secret|password|passwd|pwd|pat|credentials?|auth|authorization|bearer|cookie|session|private)([_-]|$)/i.test(name))
    return true
  if (/api[_-]?key|apikey|access[_-]?token|authorization/i.test(name)) return true
  const v = value.trim()
  if (!v || v.startsWith('${')) return false
  if (/^(bearer|basic|token)\s+\S{8,}/i.test(v)) return true
  if (/^(sk|pk|rk|ghp|gho|ghs|ghu|github_pat|glpat|xox[abpr]|AKIA|AIza|ya29|hf|npm|pypi|lin_api|sk-ant|sk-proj)[-_]?[A-Za-z0-9_-]{8,}/.test(v))
    return true
  // A long run of letters and digits with no spaces or path separators (a random token).
  return v.length >= 24 && /^[A-Za-z0-9+_=.-]+$/.test(v) && /[A-Za-z]/.test(v) && /\d/.test(v) && !v.includes('..')
}

/** A value as shown in place of a secret: enough to recognise it, not to use it. */
export function maskSecret(value: string): string {
  const v = value.trim()
  if (v.length <= 8) return '••••••'
  return `${v.slice(0, 3)}••••••${v.slice(-3)}`
}
