import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { Low } from 'lowdb'
import type { PermissionRule, Project, SessionRecord, TitleSource } from '../../../shared/domain'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { McpProfile } from '../../../shared/mcp'
import type { SessionPreset } from '../../../shared/presets'
import { AtomicTextFile } from './atomic-file'
import { dbBytes, parseRest, readDbFile, type DbRead, type SessionsLayout } from './db-file'
import { migrateAgentTransports } from './migrate-transport'
import { readTranscriptSummaries } from './transcripts'
import { makeFilePrivate, privateFolder } from './private-files'

/**
 * The metadata store: db.json under the data folder, through lowdb with our
 * own adapter (atomic-file.ts: temp file, fsync, rename, fsync of the folder),
 * so neither a crash nor a power loss leaves a half-written db.json. Saves in
 * one tick are coalesced into one write, and a save resolves only once its
 * data is on the disk.
 *
 * It opens with the records the window's first load reads (db-file.ts: each
 * group's newest page, the unseen, the queued) and each group's count, and
 * reads the rest when asked (`whole`): until then `data.sessions` holds only
 * those, `firstCounts` says how many each group has, and a save waits for the
 * rest (nothing is written without it).
 */

export const DB_VERSION = 6

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
  /** Session presets (shared/presets.ts); absent in a database from before them: none (no migration needed). */
  presets?: SessionPreset[]
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
const MIGRATIONS: Record<number, (data: Record<string, unknown>, notices: string[], backup: string) => void> = {
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
  },
  // 6: an agent's transport is one tagged field (process, SSH, network), not a command with `remote?` or `ssh?` beside it.
  6: migrateAgentTransports
}

/** Before version 4 a title's source was implied by the placeholder it kept until something better came. */
function titleSourceOf(title: string): TitleSource {
  return ['New session', 'Imported session', 'Recovered session'].includes(title) || title.startsWith('Fork of ') ? 'default' : 'prompt'
}

/**
 * Takes a database of `fromVersion` to DB_VERSION in place, one step at a time; returns what the user must be told.
 * `backup`: the copy of the file made before (what a notice may point to).
 */
export function migrate(data: Record<string, unknown>, fromVersion: number, backup = `db.v${fromVersion}.backup.json`): string[] {
  const notices: string[] = []
  for (let next = fromVersion + 1; next <= DB_VERSION; next++) {
    const step = MIGRATIONS[next]
    if (!step) throw new Error(`No migration to database version ${next}`)
    step(data, notices, backup)
    data.version = next
  }
  return notices
}

export interface OpenedStore {
  store: Store
  /** Things the user must be told about (a corrupt db.json moved aside, ...). */
  warnings: string[]
}

/** lowdb's adapter over AtomicTextFile, in db.json's layout (db-file.ts). */
class DbFile {
  private readonly text: AtomicTextFile

  constructor(file: string) {
    this.text = new AtomicTextFile(file)
  }

  /** The whole file (Store.open reads it itself, in part: `readDbFile`). */
  async read(): Promise<DbData | null> {
    const read = await readDbFile(this.text.file)
    if (!read) return null
    if (read.rest) (read.data as DbData).sessions.push(...parseRest(await read.rest()))
    return read.data as DbData
  }

  /**
   * Serialises when the write starts, with the changes made to `data` since: saves asked for while a write is on its
   * way are one text, not one each (four turns ending at once asked for ~16 saves of a 3 MB db.json in a second).
   */
  write(data: DbData): Promise<void> {
    return this.text.write(() => dbBytes(data))
  }

  /** Resolves once the writes asked for so far have ended (a failed one too: its save was told). */
  settled(): Promise<void> {
    return this.text.settled()
  }
}

export class Store {
  private pendingSave: Promise<void> | null = null
  /**
   * Whether `data` may differ from db.json: changed since the last write started (`noteChanged`, or a save asked
   * for), or the file is not yet as this Host writes it (none, or in another layout). The Host's close saves only
   * then: at 100,000 sessions a save reads the records not read yet and writes 30 MB (0.3–1 s of every quit).
   */
  private unsaved: boolean
  /** Reads the records not read yet, as text (null once every record is in `data.sessions`). */
  private rest: DbRead['rest']
  private reading: Promise<void> | null = null
  /** Until the rest is read: each group's count (`SessionsLayout.groups`); null once it is. */
  firstCounts: SessionsLayout['groups'] | null
  /** Resolves once every record is in `data.sessions`, without asking for it (`whole` asks); Records lists every record then. */
  readonly wholeRead: Promise<void>
  private wholeReadDone: () => void = () => undefined

  private constructor(
    private readonly db: Low<DbData>,
    private readonly dataDir: string,
    read: { rest: DbRead['rest']; layout: SessionsLayout | null },
    /** OpenedStore.warnings: what reading the rest has to tell the user is added there too (app.info's). */
    private readonly warnings: string[],
    /** Whether db.json was read as this Host writes it (laid out by db-file.ts, and not written since by a recovery). */
    inLayout: boolean
  ) {
    this.unsaved = !inLayout
    this.rest = read.rest
    this.firstCounts = read.rest === null ? null : (read.layout?.groups ?? null)
    this.wholeRead = read.rest === null ? Promise.resolve() : new Promise((resolve) => (this.wholeReadDone = resolve))
  }

  /** Whether every record is in `data.sessions`. */
  get isWhole(): boolean {
    return this.rest === null
  }

  /**
   * Reads the records still to read into `data.sessions` (after the first
   * part's, as in the file); at once when there are none. When the rest cannot
   * be read, the file is copied aside, the sessions it held recovered from
   * their transcripts and the file written again, as a db.json that cannot be
   * read is when the Host opens.
   */
  whole(): Promise<void> {
    if (this.rest === null) return Promise.resolve()
    this.reading ??= this.readRest(this.rest)
    return this.reading
  }

  private async readRest(rest: () => Promise<string>): Promise<void> {
    let records: SessionRecord[] | null = null
    let problem: string | null = null
    try {
      records = parseRest(await rest())
    } catch (error) {
      problem = (error as Error).message
    }
    if (records) {
      this.data.sessions.push(...records)
    } else {
      const file = join(this.dataDir, 'db.json')
      const aside = join(this.dataDir, `db.corrupt-${timestampForFileName()}.json`)
      // Never written again before it is kept: without the copy, nothing is saved (each save fails with this).
      await copyPrivately(file, aside).catch((error: Error) => {
        throw new Error(`db.json's older sessions could not be read (${problem}), nor the file copied aside to keep it: ${error.message}`)
      })
      const recovered: DbData = { ...this.data, projects: [...this.data.projects], sessions: [] }
      await recoverFromTranscripts(join(this.dataDir, 'transcripts'), recovered)
      const known = new Set(this.data.sessions.map((s) => s.id))
      const missing = recovered.sessions.filter((s) => !known.has(s.id))
      this.data.projects = recovered.projects
      this.data.sessions.push(...missing)
      const warning = `db.json's older sessions could not be read (${problem}); the file was copied to ${aside}. ${missing.length} session(s) were recovered from their transcripts.`
      console.error(warning)
      this.warnings.push(warning)
    }
    this.rest = null
    this.firstCounts = null
    this.wholeReadDone()
    if (!records) await this.db.write()
  }

  static async open(dataDir: string, presets: AgentDefinition[]): Promise<OpenedStore> {
    await privateFolder(dataDir)
    const file = join(dataDir, 'db.json')
    const warnings: string[] = []
    const db = new Low<DbData>(new DbFile(file), emptyData(presets))
    let unreadable: string | null = null
    let read: { rest: DbRead['rest']; layout: SessionsLayout | null } = { rest: null, layout: null }
    // Written below (a recovery, a migration): as this Host writes it.
    let written = false
    try {
      const parsed = await readDbFile(file)
      if (parsed) {
        db.data = parsed.data as DbData
        read = parsed
      }
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
    if (unreadable !== null) read = { rest: null, layout: null }
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
      written = true
    }
    const store = new Store(db, dataDir, read, warnings, written || read.layout !== null)
    const version = typeof db.data.version === 'number' ? db.data.version : 1
    if (version < DB_VERSION) {
      // A migration changes every record: all of them first.
      await store.whole()
      // Keep the file as it was before changing it.
      const backup = join(dataDir, `db.v${version}.backup.json`)
      await copyPrivately(file, backup)
      warnings.push(...migrate(db.data as unknown as Record<string, unknown>, version, backup))
      await db.write()
      store.unsaved = false
    }
    return { store, warnings }
  }

  get data(): DbData {
    return this.db.data
  }

  /** Persists the current data; calls made in the same tick share one write. */
  save(): Promise<void> {
    this.unsaved = true
    if (!this.pendingSave) {
      this.pendingSave = Promise.resolve().then(async () => {
        // Never a file with only the first part's records.
        await this.whole()
        this.pendingSave = null
        // What changes from here on is either in this write's text (made when it starts) or asks for a save again.
        this.unsaved = false
        try {
          await this.db.write()
        } catch (error) {
          this.unsaved = true
          throw error
        }
      })
    }
    return this.pendingSave
  }

  /** `data` changed with no save asked for (`Records.noteSession`): kept by the next save, the close's at the latest. */
  noteChanged(): void {
    this.unsaved = true
  }

  /**
   * The Host's close: saves when `data` may differ from db.json (`unsaved`), else only waits for the writes under way,
   * so a quit with nothing changed neither reads the records not read yet nor writes the file again.
   */
  async saveIfChanged(): Promise<void> {
    if (this.unsaved || this.pendingSave) return this.save()
    await (this.db.adapter as DbFile).settled()
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

/** A copy of a file of the data folder, as private as everything there. */
async function copyPrivately(from: string, to: string): Promise<void> {
  await fs.copyFile(from, to)
  await makeFilePrivate(to)
}
