import { constants, promises as fs } from 'node:fs'
import { basename, dirname, isAbsolute, join, resolve, win32 } from 'node:path'
import type { McpPair, McpProfile } from '../../../shared/mcp'

/**
 * Writes profiles to a `.mcp.json` (Claude Code's project file, which other
 * apps read too), merged into what the file already holds: servers of the same
 * name are replaced, the others kept, and the earlier file is copied beside it
 * first. A secret value is never written: it becomes a `${NAME}` reference,
 * which Claude Code fills from the environment. The file is only ever that
 * tool's own, at the top of one of the user's projects (exportTarget): a
 * server written there is one Claude Code starts.
 */

export interface ExportResult {
  path: string
  written: string[]
  secretPlaceholders: string[]
  /** Where the file's earlier content was copied (none when it was new or empty). */
  backup?: string
}

/** The name of Claude Code's project file, the one place an export writes. */
export const MCP_JSON = '.mcp.json'

/**
 * The file an export may write for `path`: `.mcp.json` directly in the
 * folder of one of `projectFolders` (projects on this computer), as a
 * regular file or not yet there. Anything else is refused, naming the files
 * it could be.
 */
export async function exportTarget(path: string, projectFolders: string[]): Promise<string> {
  const examples = projectFolders.slice(0, 3).map((f) => join(f, MCP_JSON))
  const where = examples.length ? `such as ${examples.join(', ')}` : 'and no project on this computer has been added yet'
  const refuse = (why: string): Error =>
    new Error(
      `Switchboard exports MCP servers only into Claude Code's project file, ${MCP_JSON} at the top of one of your projects (${where}): ${why}. Nothing was written.`
    )
  if (!isAbsolute(path)) throw refuse(`'${path}' is not an absolute path`)
  const file = resolve(path)
  if (basename(file) !== MCP_JSON) throw refuse(`${path} is not a ${MCP_JSON}`)
  const folder = await fs.realpath(dirname(file)).catch(() => null)
  const projects = await Promise.all(projectFolders.map((f) => fs.realpath(f).catch(() => null)))
  if (!folder || !projects.includes(folder)) throw refuse(`${dirname(file)} is not the folder of one of your projects`)
  const found = await fs.lstat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null
    throw new Error(`Could not read ${file}: ${error.message}`)
  })
  if (found && !found.isFile()) throw refuse(`${file} is ${found.isSymbolicLink() ? 'a link' : 'not a regular file'}`)
  return join(folder, MCP_JSON)
}

export async function exportToMcpJson(path: string, profiles: McpProfile[]): Promise<ExportResult> {
  if (!isAbsolute(path) && !win32.isAbsolute(path)) throw new Error(`Export to an absolute path, like /home/you/code/app/.mcp.json (got '${path}')`)
  if (!path.toLowerCase().endsWith('.json')) throw new Error(`Export to a .json file, like /home/you/code/app/.mcp.json (got '${path}')`)
  const existing = await readExisting(path)
  const servers = { ...asObject(existing.mcpServers) }
  const secretPlaceholders: string[] = []
  for (const profile of profiles) servers[profile.name] = entryOf(profile, secretPlaceholders)
  const text = `${JSON.stringify({ ...existing, mcpServers: servers }, null, 2)}\n`
  await fs.mkdir(dirname(path), { recursive: true })
  const backup = Object.keys(existing).length ? await backUp(path) : undefined
  // Temp file + rename: the other app never reads a half-written file.
  const temp = `${path}.switchboard-${process.pid}.tmp`
  await fs.writeFile(temp, text, 'utf8')
  await fs.rename(temp, path)
  return { path, written: profiles.map((p) => p.name), secretPlaceholders, ...(backup ? { backup } : {}) }
}

/** Copies the file beside itself under a new name (never over another file), before it is replaced. */
async function backUp(path: string): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  for (let n = 0; ; n++) {
    const backup = `${path}.${stamp}${n ? `-${n}` : ''}.bak`
    try {
      await fs.copyFile(path, backup, constants.COPYFILE_EXCL)
      return backup
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || n > 100)
        throw new Error(`Could not keep a copy of ${path} before writing it: ${(error as Error).message}`)
    }
  }
}

function entryOf(profile: McpProfile, placeholders: string[]): Record<string, unknown> {
  if (profile.transport === 'stdio') {
    return { type: 'stdio', command: profile.command, args: profile.args, env: valuesOf(profile.env, (name) => name, placeholders) }
  }
  return { type: profile.transport, url: profile.url, headers: valuesOf(profile.headers, headerVariable, placeholders) }
}

function valuesOf(pairs: McpPair[], variable: (name: string) => string, placeholders: string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      if (!pair.secret) return [pair.name, pair.value]
      const name = variable(pair.name)
      placeholders.push(name)
      return [pair.name, `\${${name}}`]
    })
  )
}

/** `X-Api-Key` → `X_API_KEY`: an environment variable name for a header's value. */
function headerVariable(header: string): string {
  return header.toUpperCase().replace(/[^A-Z0-9_]/g, '_')
}

async function readExisting(path: string): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await fs.readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new Error(`Could not read ${path}: ${(error as Error).message}`)
  }
  if (!text.trim()) return {}
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>
  } catch {
    // refused below
  }
  throw new Error(`${path} already exists and is not a JSON object; it was left as it is. Export to another file.`)
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
}
