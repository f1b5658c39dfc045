import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Low } from 'lowdb'
import type { AgentDefinition, PermissionRule, Project, SessionRecord, TitleSource } from '../../shared/domain'
import type { McpProfile } from '../../shared/mcp'
import { AtomicJsonFile } from './atomic-file'
import { readTranscriptSummaries } from './transcripts'

/**
 * The metadata store: db.json under the data folder, through lowdb with our
 * own adapter (atomic-file.ts: temp file, fsync, rename, fsync of the folder),
 * so neither a crash nor a power loss leaves a half-written db.json. Saves in
 * one tick are coalesced into one write, and a save resolves only once its
 * data is on the disk.
 */

export const DB_VERSION = 5

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
  /** The user's settings kept by the Host; absent ones have their defaults (no migration needed). */
  settings?: HostSettings
}

export interface HostSettings {
  /** The ACP Registry feed to read instead of the default (a team may host its own). */
  registryUrl?: string
}

/**
 * Migrations, in order: entry N takes a database of version N-1 to version N.
 * Never edit one that has shipped; add the next. A step may leave the user a
 * notice (shown once, when the migration runs).
 */
const MIGRATIONS: Record<number, (data: Record<string, unknown>, notices: string[]) => void> = {
  // 2: remembered permission answers.
  2: (data) => {
    data.permissionRules = []
  },
  // 3: MCP server profiles, and which are switched off per project.
  3: (data) => {
    data.mcpProfiles = []
    data.mcpDisabled = {}
  },
  // 4: one name for the agent's session id (acpSessionId), and titles that say where they came from.
  4: (data) => {
    for (const session of (data.sessions ?? []) as Record<string, unknown>[]) {
      session.acpSessionId = session.sessionId ?? null
      delete session.sessionId
      session.titleSource = session.titleSetByUser ? 'user' : titleSourceOf(String(session.title ?? ''))
      delete session.titleSetByUser
    }
  },
  // 5: a remembered permission covers one tool and one command, or files inside the project, no longer a whole kind of tool.
  5: (data, notices) => {
    const rules = (Array.isArray(data.permissionRules) ? data.permissionRules : []) as Record<string, unknown>[]
    data.permissionRules = []
    if (rules.length === 0) return
    const named = (list: unknown, id: unknown): string =>
      ((Array.isArray(list) ? list : []) as { id?: unknown; name?: unknown }[]).find((x) => x.id === id)?.name?.toString() ?? String(id)
    const each = rules.map(
      (r) =>
        `always ${r.decision === 'reject' ? 'reject' : 'allow'} every “${String(r.toolKind)}” tool for ${named(data.agents, r.agentId)} in ${named(data.projects, r.projectId)}`
    )
    notices.push(
      `Your ${rules.length === 1 ? 'remembered permission was' : `${rules.length} remembered permissions were`} removed (${each.join('; ')}): ` +
        'each covered a whole kind of tool (every command, or every file even outside the project), more than the one you chose. ' +
        'The agent will ask again; "always" now covers only that tool with that exact command, or that tool on files inside the project.'
    )
  }
}

/** Before version 4 a title's source was implied by the placeholder it kept until something better came. */
function titleSourceOf(title: string): TitleSource {
  return ['New session', 'Imported session', 'Recovered session'].includes(title) || title.startsWith('Fork of ') ? 'default' : 'prompt'
}

/** Takes a database of `fromVersion` to DB_VERSION in place, one step at a time; returns what the user must be told. */
export function migrate(data: Record<string, unknown>, fromVersion: number): string[] {
  const notices: string[] = []
  for (let next = fromVersion + 1; next <= DB_VERSION; next++) {
    const step = MIGRATIONS[next]
    if (!step) throw new Error(`No migration to database version ${next}`)
    step(data, notices)
    data.version = next
  }
  return notices
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
    const db = new Low<DbData>(new AtomicJsonFile<DbData>(file), emptyData(presets))
    let unreadable: string | null = null
    try {
      await db.read()
    } catch (error) {
      unreadable = (error as Error).message
    }
    if (unreadable === null) {
      const version = (db.data as { version?: unknown } | null)?.version
      // A newer Switchboard may have changed the shape: refuse it before judging the shape.
      if (typeof version === 'number' && version > DB_VERSION) {
        throw new Error(
          `${file} was written by a newer Switchboard (database version ${version}, this one reads ${DB_VERSION}). Update Switchboard to open it.`
        )
      }
      if (!isDbShape(db.data)) unreadable = 'it is not a Switchboard database (no projects, agents and sessions lists)'
    }
    if (unreadable !== null) {
      const aside = join(dataDir, `db.corrupt-${timestampForFileName()}.json`)
      await fs.rename(file, aside)
      db.data = emptyData(presets)
      const recovered = await recoverFromTranscripts(join(dataDir, 'transcripts'), db.data)
      const missingAgents = [...new Set(db.data.sessions.map((s) => s.agentId))].filter((id) => !db.data.agents.some((a) => a.id === id))
      warnings.push(
        `db.json could not be read (${unreadable}); it was moved to ${aside}. ` +
          `${recovered} session(s) were recovered from their transcripts.` +
          (missingAgents.length
            ? ` Agents you had added yourself (${missingAgents.join(', ')}) were lost with it: add them again under the same name to continue their sessions.`
            : '')
      )
      await db.write()
    }
    const version = typeof db.data.version === 'number' ? db.data.version : 1
    if (version < DB_VERSION) {
      // Keep the file as it was before changing it.
      await fs.copyFile(file, join(dataDir, `db.v${version}.backup.json`))
      warnings.push(...migrate(db.data as unknown as Record<string, unknown>, version))
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
  return typeof d === 'object' && d !== null && Array.isArray(d.projects) && Array.isArray(d.agents) && Array.isArray(d.sessions)
}

/** Rebuilds projects and session records from transcript headers after db.json was lost. */
async function recoverFromTranscripts(dir: string, data: DbData): Promise<number> {
  const summaries = await readTranscriptSummaries(dir)
  for (const { header, title, updatedAt } of summaries) {
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
      acpSessionId: header.acpSessionId || null,
      agentId: header.agentId,
      projectId: header.projectId,
      cwd: header.cwd,
      title: title ?? 'Recovered session',
      titleSource: title ? 'prompt' : 'default',
      createdAt: header.createdAt,
      updatedAt: updatedAt ?? header.createdAt
    })
  }
  return summaries.length
}

function timestampForFileName(): string {
  return new Date().toISOString().replace(/[:.]/g, '-')
}
