import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Low } from 'lowdb'
import { JSONFile } from 'lowdb/node'
import type { AgentDefinition, PermissionRule, Project, SessionRecord } from '../../shared/domain'
import type { McpProfile } from '../../shared/mcp'
import { readTranscriptHeaders } from './transcripts'

/**
 * The metadata store: db.json under the data folder, through lowdb. lowdb's
 * JSONFile writes through steno (temp file + rename), so a crash never leaves
 * a half-written db.json; writes are coalesced by `save()`.
 */

export const DB_VERSION = 3

export interface DbData {
  version: number
  projects: Project[]
  agents: AgentDefinition[]
  sessions: SessionRecord[]
  permissionRules: PermissionRule[]
  /** MCP server profiles (secret values are in the secret store, never here). */
  mcpProfiles: McpProfile[]
  /** projectId → ids of the profiles switched off for that project. */
  mcpDisabled: Record<string, string[]>
}

/**
 * Migrations, in order: entry N takes a database of version N-1 to version N.
 * Never edit one that has shipped; add the next.
 */
const MIGRATIONS: Record<number, (data: Record<string, unknown>) => void> = {
  // 2: remembered permission answers.
  2: (data) => {
    data.permissionRules = []
  },
  // 3: MCP server profiles, and which are switched off per project.
  3: (data) => {
    data.mcpProfiles = []
    data.mcpDisabled = {}
  }
}

export interface OpenedStore {
  store: Store
  /** Things the user must be told about (a corrupt db.json moved aside, ...). */
  warnings: string[]
}

export class Store {
  private pendingSave: Promise<void> | null = null

  private constructor(private readonly db: Low<DbData>) {}

  static async open(dataDir: string, presets: AgentDefinition[]): Promise<OpenedStore> {
    await fs.mkdir(dataDir, { recursive: true })
    const file = join(dataDir, 'db.json')
    const warnings: string[] = []
    const db = new Low<DbData>(new JSONFile<DbData>(file), emptyData(presets))
    try {
      await db.read()
    } catch (error) {
      const aside = join(dataDir, `db.corrupt-${timestampForFileName()}.json`)
      await fs.rename(file, aside)
      db.data = emptyData(presets)
      const recovered = await recoverFromTranscripts(join(dataDir, 'transcripts'), db.data)
      warnings.push(
        `db.json could not be read (${(error as Error).message}); it was moved to ${aside}. ` +
          `${recovered} session(s) were recovered from their transcripts.`
      )
      await db.write()
    }
    if (!isDbShape(db.data)) {
      throw new Error(`${file} is not a Switchboard database (missing projects/agents/sessions)`)
    }
    const version = typeof db.data.version === 'number' ? db.data.version : 1
    if (version > DB_VERSION) {
      throw new Error(
        `${file} was written by a newer Switchboard (database version ${version}, this one reads ${DB_VERSION}). Update Switchboard to open it.`
      )
    }
    if (version < DB_VERSION) {
      // Keep the file as it was before changing it.
      await fs.copyFile(file, join(dataDir, `db.v${version}.backup.json`))
      for (let next = version + 1; next <= DB_VERSION; next++) MIGRATIONS[next](db.data as unknown as Record<string, unknown>)
      db.data.version = DB_VERSION
      await db.write()
    }
    return { store: new Store(db), warnings }
  }

  get data(): DbData {
    return this.db.data
  }

  /** Persists the current data; calls made in the same tick share one write. */
  save(): Promise<void> {
    if (!this.pendingSave) {
      this.pendingSave = Promise.resolve().then(async () => {
        this.pendingSave = null
        await this.db.write()
      })
    }
    return this.pendingSave
  }

  project(id: string): Project | undefined {
    return this.data.projects.find((p) => p.id === id)
  }

  agent(id: string): AgentDefinition | undefined {
    return this.data.agents.find((a) => a.id === id)
  }

  session(id: string): SessionRecord | undefined {
    return this.data.sessions.find((s) => s.id === id)
  }
}

function emptyData(presets: AgentDefinition[]): DbData {
  return {
    version: DB_VERSION,
    projects: [],
    agents: presets.map((a) => ({ ...a })),
    sessions: [],
    permissionRules: [],
    mcpProfiles: [],
    mcpDisabled: {}
  }
}

function isDbShape(data: unknown): data is DbData {
  const d = data as DbData
  return (
    typeof d === 'object' &&
    d !== null &&
    Array.isArray(d.projects) &&
    Array.isArray(d.agents) &&
    Array.isArray(d.sessions)
  )
}

/** Rebuilds projects and session records from transcript headers after db.json was lost. */
async function recoverFromTranscripts(dir: string, data: DbData): Promise<number> {
  const headers = await readTranscriptHeaders(dir)
  for (const header of headers) {
    if (!data.projects.some((p) => p.id === header.projectId)) {
      data.projects.push({
        id: header.projectId,
        name: header.cwd.split(/[\\/]/).filter(Boolean).pop() ?? header.cwd,
        cwd: header.cwd,
        createdAt: header.createdAt
      })
    }
    data.sessions.push({
      id: header.id,
      sessionId: header.sessionId ?? null,
      agentId: header.agentId,
      projectId: header.projectId,
      cwd: header.cwd,
      title: 'Recovered session',
      createdAt: header.createdAt,
      updatedAt: header.createdAt
    })
  }
  return headers.length
}

function timestampForFileName(): string {
  return new Date().toISOString().replace(/[:.]/g, '-')
}
