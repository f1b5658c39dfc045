import { existsSync, promises as fs, realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve, sep } from 'node:path'
import { AtomicTextFile } from '../storage/atomic-file'
import { parseJsonc } from './jsonc'

/**
 * Gemini CLI's folder trust ("workspace trust"), read and written as Gemini
 * CLI 0.61 does it (packages/core/src/utils/trust.ts, config/storage.ts and
 * cli/src/config/trustedFolders.ts in its bundle): in a folder it does not
 * trust it starts none of the MCP servers it is given — not in `session/new`,
 * not from its settings — and says nothing about it over ACP or on stderr.
 *
 * - Folder trust is on unless `security.folderTrust.enabled` is false in its
 *   settings (system defaults, the user's `~/.gemini/settings.json`, the
 *   system settings; a later one wins; a project's own settings are not read
 *   in an untrusted folder).
 * - `GEMINI_CLI_TRUST_WORKSPACE=true` trusts every folder;
 *   `GEMINI_CLI_TRUST_WORKSPACE=false` or `GEMINI_RESTRICTED_MODE=true`
 *   distrusts every folder, whatever the file says.
 * - The file is `GEMINI_CLI_TRUSTED_FOLDERS_PATH`, else
 *   `trustedFolders.json` in `~/.gemini` (`~/.cache/.gemini` when
 *   `SANDBOX=sandbox-exec`), home being `GEMINI_CLI_HOME` or the user's home.
 *   It maps a folder to `TRUST_FOLDER`, `TRUST_PARENT` (the folder's parent)
 *   or `DO_NOT_TRUST`; the longest rule that contains the folder (real paths
 *   compared) decides; no rule means not trusted. JSON with comments.
 *
 * Gemini CLI reads the file once per process: a change reaches a running
 * agent only after it restarts.
 */

export const GEMINI_TRUST_LEVELS = ['TRUST_FOLDER', 'TRUST_PARENT', 'DO_NOT_TRUST'] as const
type TrustLevel = (typeof GEMINI_TRUST_LEVELS)[number]

export type GeminiFolderTrust =
  | { trusted: true; why: string; file?: string }
  /** `file`: where trusting the folder would be written; absent when the file cannot trust it (an environment variable decides). */
  | { trusted: false; why: string; file?: string }
  /** Gemini CLI would refuse to start (its trust file is not valid): `why` says what is wrong. */
  | { trusted: undefined; why: string; file: string }

/** Whether Gemini CLI, run with `env`, trusts `folder` (and so starts the MCP servers it is given there). */
export async function geminiFolderTrust(env: Record<string, string | undefined>, folder: string): Promise<GeminiFolderTrust> {
  if (env.GEMINI_RESTRICTED_MODE === 'true') return { trusted: false, why: 'GEMINI_RESTRICTED_MODE=true in its environment distrusts every folder' }
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'false')
    return { trusted: false, why: 'GEMINI_CLI_TRUST_WORKSPACE=false in its environment distrusts every folder' }
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'true') return { trusted: true, why: 'GEMINI_CLI_TRUST_WORKSPACE=true in its environment' }
  if (!(await folderTrustEnabled(env))) return { trusted: true, why: 'folder trust is off in its settings (security.folderTrust.enabled)' }
  const file = geminiTrustFile(env)
  let rules: Record<string, TrustLevel>
  try {
    rules = await readRules(file)
  } catch (error) {
    return { trusted: undefined, why: (error as Error).message, file }
  }
  const level = ruleFor(rules, folder)
  if (level === 'DO_NOT_TRUST') return { trusted: false, why: `${file} says not to trust it (DO_NOT_TRUST)`, file }
  if (level) return { trusted: true, why: `${file} trusts it (${level})`, file }
  return { trusted: false, why: `no rule in ${file} trusts it`, file }
}

/**
 * Trusts `folder` for Gemini CLI run with `env`: its rule set to TRUST_FOLDER
 * in Gemini CLI's trust file, every other rule kept, written as a whole new
 * file renamed over the old one (owner-only, as Gemini CLI writes it), under
 * Gemini CLI's own lock (`<file>.lock`, proper-lockfile's folder). A file that
 * is not valid is left as it is and the error says what is wrong.
 */
export async function trustFolderForGemini(env: Record<string, string | undefined>, folder: string): Promise<{ file: string }> {
  const file = geminiTrustFile(env)
  await fs.mkdir(dirname(file), { recursive: true, mode: 0o700 })
  await withGeminiLock(file, async () => {
    const rules = await readRules(file)
    rules[normalized(folder)] = 'TRUST_FOLDER'
    await new AtomicTextFile(file, 0o600).write(JSON.stringify(rules, null, 2))
  })
  return { file }
}

/** Gemini CLI's trust file for a process run with `env`. */
export function geminiTrustFile(env: Record<string, string | undefined>): string {
  if (env.GEMINI_CLI_TRUSTED_FOLDERS_PATH) return env.GEMINI_CLI_TRUSTED_FOLDERS_PATH
  const home = geminiHome(env)
  const runtime = env.SANDBOX === 'sandbox-exec' ? join(home, '.cache', '.gemini') : join(home, '.gemini')
  return join(runtime, 'trustedFolders.json')
}

function geminiHome(env: Record<string, string | undefined>): string {
  return env.GEMINI_CLI_HOME || (process.platform === 'win32' ? env.USERPROFILE : env.HOME) || homedir()
}

/** `security.folderTrust.enabled` as Gemini CLI merges it (on when no file says). */
async function folderTrustEnabled(env: Record<string, string | undefined>): Promise<boolean> {
  const system = env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || SYSTEM_SETTINGS[process.platform as 'darwin' | 'win32'] || '/etc/gemini-cli/settings.json'
  const systemDefaults = env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH || join(dirname(system), 'system-defaults.json')
  const user = join(geminiHome(env), '.gemini', 'settings.json')
  let enabled = true
  for (const file of [systemDefaults, user, system]) {
    const value = await settingIn(file)
    if (typeof value === 'boolean') enabled = value
  }
  return enabled
}

const SYSTEM_SETTINGS = { darwin: '/Library/Application Support/GeminiCli/settings.json', win32: 'C:\\ProgramData\\gemini-cli\\settings.json' }

async function settingIn(file: string): Promise<unknown> {
  try {
    const settings = parseJsonc(await fs.readFile(file, 'utf8')) as { security?: { folderTrust?: { enabled?: unknown } } } | null
    return settings?.security?.folderTrust?.enabled
  } catch {
    // A settings file that is missing or unreadable says nothing (Gemini CLI reports a broken one itself).
    return undefined
  }
}

/** The trust file's rules; none when it does not exist; throws, saying what is wrong, when Gemini CLI would not read it. */
async function readRules(file: string): Promise<Record<string, TrustLevel>> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new Error(`Gemini CLI's trust file ${file} cannot be read: ${(error as Error).message}`)
  }
  let parsed: unknown
  try {
    parsed = parseJsonc(text)
  } catch (error) {
    throw new Error(`Gemini CLI's trust file ${file} is not valid JSON (${(error as Error).message}); fix or remove it first`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`Gemini CLI's trust file ${file} is not a JSON object; fix or remove it first`)
  }
  const rules: Record<string, TrustLevel> = {}
  for (const [path, level] of Object.entries(parsed)) {
    if (!GEMINI_TRUST_LEVELS.includes(level as TrustLevel)) {
      throw new Error(
        `Gemini CLI's trust file ${file} has "${String(level)}" for ${path}, not one of ${GEMINI_TRUST_LEVELS.join(', ')}; fix it first`
      )
    }
    rules[path] = level as TrustLevel
  }
  return rules
}

/** The level of the longest rule whose folder contains `folder` (TRUST_PARENT: the rule's parent folder), as Gemini CLI picks it. */
function ruleFor(rules: Record<string, TrustLevel>, folder: string): TrustLevel | undefined {
  const location = normalized(realPath(folder))
  let longest = -1
  let found: TrustLevel | undefined
  for (const [path, level] of Object.entries(rules)) {
    const effective = normalized(realPath(level === 'TRUST_PARENT' ? dirname(path) : path))
    if ((location === effective || location.startsWith(effective.endsWith(sep) ? effective : effective + sep)) && path.length > longest) {
      longest = path.length
      found = level
    }
  }
  return found
}

/** A path as Gemini CLI keys it: absolute; lower case where the file system ignores case (macOS, Windows). */
function normalized(path: string): string {
  const absolute = resolve(path)
  return process.platform === 'win32' || process.platform === 'darwin' ? absolute.toLowerCase() : absolute
}

function realPath(path: string): string {
  try {
    return existsSync(path) ? realpathSync(path) : path
  } catch {
    return path
  }
}

/** proper-lockfile's lock, which Gemini CLI takes around its own writes: a folder beside the file, stale after 10 s. */
const LOCK_STALE_MS = 10_000
const LOCK_TRIES = 20

async function withGeminiLock<T>(file: string, run: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.mkdir(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const since = await fs.stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0
      )
      if (since > LOCK_STALE_MS) {
        await fs.rm(lock, { recursive: true, force: true })
        continue
      }
      if (attempt >= LOCK_TRIES) throw new Error(`Gemini CLI's trust file ${file} is locked by another program (${lock}); try again`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  try {
    return await run()
  } finally {
    await fs.rm(lock, { recursive: true, force: true })
  }
}
