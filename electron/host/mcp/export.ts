import { promises as fs } from 'node:fs'
import { dirname, isAbsolute, win32 } from 'node:path'
import type { McpPair, McpProfile } from '../../../shared/mcp'

/**
 * Writes profiles to a `.mcp.json` (Claude Code's project file, which other
 * apps read too), merged into what the file already holds: servers of the same
 * name are replaced, the others kept. A secret value is never written: it
 * becomes a `${NAME}` reference, which Claude Code fills from the environment.
 */

export interface ExportResult {
  path: string
  written: string[]
  secretPlaceholders: string[]
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
  // Temp file + rename: the other app never reads a half-written file.
  const temp = `${path}.switchboard-${process.pid}.tmp`
  await fs.writeFile(temp, text, 'utf8')
  await fs.rename(temp, path)
  return { path, written: profiles.map((p) => p.name), secretPlaceholders }
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
