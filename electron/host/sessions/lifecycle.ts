import { randomUUID } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { SessionInfo } from '@agentclientprotocol/sdk'
import type { ForkSessionRequest } from '@agentclientprotocol/sdk/unstable'
import type { SessionSnapshot, TranscriptLaterResult, TranscriptPageResult } from '../../../shared/contract'
import type { SessionRecord } from '../../../shared/domain'
import { applyRecord } from '../../../shared/thread-fold'
import { conversationAsContext, createThread } from '../../../shared/thread'
import type { TranscriptRecord } from '../../../shared/transcript'
import { serversForAgent } from '../mcp/acp-servers'
import { readTranscript } from '../storage/transcripts'
import { currentViewLinesOf, followedBy, transcriptRecords } from '../storage/transcript-stream'
import { readTranscriptLater, readTranscriptPage, readTranscriptTail } from '../storage/transcript-pages'
import type { SessionDeps } from './connector'
import type { SessionPreset } from '../../../shared/presets'
import { EditResend } from './edit-resend'
import { assertFolder, joinedPrompt, newSessionIn, registerSession, systemPromptOf } from './new-session'
import { presetProfilesOf } from './preset-settings'
import { directoriesFor, sessionMcp, systemPromptFor } from './session-parts'
import type { Turns } from './turns'
import type { WorkspaceService } from '../workspace/service'
import { privateFolder } from '../storage/private-files'
import type { HandOffSeeds } from './hand-off-seeds'

/**
 * A session's life outside its turns: created (new, fork, imported from the
 * agent's own list), opened for reading, closed, deleted, renamed.
 */

export interface LifecycleDeps extends SessionDeps {
  turns: Turns
  dataDir: string
  workspace: WorkspaceService
  /** Hand-offs' conversations not sent yet: a session's goes with it. */
  seeds: Pick<HandOffSeeds, 'remove'>
}

export interface CreateOptions {
  /** `worktree`: the session works in a new git worktree on a new branch. */
  isolation?: 'folder' | 'worktree'
  branch?: string
  /** Started from this preset: its MCP servers besides the project's, its system prompt after the project's, its settings after session/new. */
  preset?: SessionPreset
  /** A hand-off: the session works where this one does (its folder, its worktree and branch), whatever `isolation` says. */
  within?: Pick<SessionRecord, 'cwd' | 'worktree'>
}

/** session/list pages read at most (a guard against an agent whose cursor never ends). */
const MAX_LIST_PAGES = 100

export class SessionLifecycle {
  /** "Edit and resend" from an earlier message: a branch of the conversation in a new session (edit-resend.ts). */
  readonly edits: EditResend
  constructor(private readonly deps: LifecycleDeps) {
    this.edits = new EditResend(deps)
  }

  async create(projectId: string, agentId: string, options: CreateOptions = {}): Promise<SessionRecord> {
    const { records, supervisor, mcp, workspace } = this.deps
    const project = records.project(projectId)
    const definition = records.agent(agentId)
    const { within } = options
    await assertFolder(this.deps, project, definition, within?.cwd ?? project.cwd)
    if (project.sshHost && options.isolation === 'worktree' && !within) {
      throw new Error(`A worktree is made with git on this computer; ${project.name} is on ${project.sshHost}: start the session in its folder`)
    }
    const { preset } = options
    // MCP servers are prepared first: a command that cannot be found stops here, before the agent is asked.
    const prepared = await mcp.prepareForProject(projectId, preset?.mcpProfileIds)
    const additionalDirectories = project.additionalDirectories ?? []
    const id = randomUUID()
    const isolated =
      options.isolation === 'worktree' && !within ? await workspace.worktreeFor(project.cwd, definition.name, id, options.branch) : null
    const cwd = within?.cwd ?? isolated?.cwd ?? project.cwd
    const worktree = within ? within.worktree : isolated?.worktree
    const systemPrompt = joinedPrompt(project.systemPrompt, preset?.systemPrompt)
    const created = newSessionIn(this.deps, definition, cwd, prepared, additionalDirectories, systemPrompt)
    const { connection, servers, response, mark } = await created.catch(async (error: unknown) => {
      // The agent refused the session (or did not start): the worktree made for it goes too (it holds nothing yet).
      if (isolated) await workspace.discardWorktree(isolated.worktree)
      throw error
    })
    const now = new Date().toISOString()
    const record: SessionRecord = {
      id,
      acpSessionId: response.sessionId,
      agentId,
      projectId,
      cwd,
      additionalDirectories,
      title: 'New session',
      titleSource: 'default',
      createdAt: now,
      updatedAt: now,
      ...sessionMcp(servers),
      ...(worktree ? { worktree } : {}),
      ...(preset ? { preset: { id: preset.id, name: preset.name } } : {}),
      ...systemPromptOf(connection, definition, systemPrompt)
    }
    return registerSession(this.deps, record, connection, response, [], mark, preset)
  }

  /** `session/fork`: a new session that starts with this one's history, in the agent and on screen. */
  async fork(id: string): Promise<SessionRecord> {
    const { records, registry, supervisor, mcp } = this.deps
    const parent = records.session(id)
    const definition = records.agent(parent.agentId)
    const prepared = await mcp.prepareForProject(parent.projectId, presetProfilesOf(parent, records))
    const connection = await supervisor.ensure(definition)
    if (!connection.capabilities.session.fork) {
      throw new Error(`${definition.name} cannot fork sessions (it does not announce session/fork)`)
    }
    if (!parent.acpSessionId) throw new Error('This session was never created by its agent and cannot be forked')
    const servers = serversForAgent(prepared, connection.capabilities, definition.name)
    const params: ForkSessionRequest = {
      sessionId: parent.acpSessionId,
      cwd: parent.cwd,
      mcpServers: servers.mcpServers,
      ...directoriesFor(connection, parent.additionalDirectories ?? []),
      ...systemPromptFor(connection, parent.systemPrompt)
    }
    // The view is copied as the agent forked: a running turn's updates that came before its answer are in the agent's
    // fork and so in this one, those after are the parent's alone (read up to the line the transcript had reached when
    // the answer came in). A conversation a reset superseded (an earlier version's replay) is not copied.
    let upTo: number | undefined
    const response = await connection.acp.forkSession(params, () => {
      upTo = registry.get(id)?.writer.nextSeq
    })
    const history = currentViewLinesOf(await registry.flushedTranscript(id), upTo)
    const record = childOf(
      parent,
      { sessionId: response.sessionId, title: `Fork of ${parent.title}`, titleSource: 'default' },
      {
        ...sessionMcp(servers),
        ...systemPromptOf(connection, definition, parent.systemPrompt)
      }
    )
    return registerSession(this.deps, record, connection, response, history)
  }

  /**
   * A conversation its agent could not reopen, continued in a new session of
   * the same agent and folder: the conversation is copied in (shown as it was)
   * and given to the agent as context with the next prompt, marked as such.
   */
  async continueInNew(id: string): Promise<SessionRecord> {
    const { records, registry, supervisor, mcp } = this.deps
    const parent = records.session(id)
    const definition = records.agent(parent.agentId)
    await assertFolder(this.deps, records.project(parent.projectId), definition, parent.cwd)
    const prepared = await mcp.prepareForProject(parent.projectId, presetProfilesOf(parent, records))
    const { connection, servers, response } = await newSessionIn(
      this.deps,
      definition,
      parent.cwd,
      prepared,
      parent.additionalDirectories ?? [],
      parent.systemPrompt
    )
    const file = await registry.flushedTranscript(id)
    const earlier = createThread()
    for await (const past of transcriptRecords(file)) applyRecord(earlier, past)
    const reason = registry.stateOf(id).reopenFailed ?? 'it was not reopened'
    const record = childOf(
      parent,
      { sessionId: response.sessionId, title: `${parent.title} (continued)`, titleSource: 'prompt' },
      {
        ...sessionMcp(servers),
        ...systemPromptOf(connection, definition, parent.systemPrompt),
        rewindNote: [
          `[Switchboard] This session continues an earlier conversation between the user and you (${definition.name}) that could not be reopened. Here it is, for context:`,
          conversationAsContext(earlier.entries),
          '[End of the earlier conversation]'
        ].join('\n\n')
      }
    )
    const context: TranscriptRecord = { t: 'context', at: record.createdAt, from: parent.id, title: parent.title, agent: definition.name, reason }
    return registerSession(this.deps, record, connection, response, followedBy(transcriptRecords(file), context))
  }
  /** Brings in the agent's sessions for the project's folder (made in other clients), through session/list. */
  async importFromAgent(projectId: string, agentId: string): Promise<{ imported: SessionRecord[] }> {
    const { records, supervisor } = this.deps
    const project = records.project(projectId)
    const definition = records.agent(agentId)
    const connection = await supervisor.ensure(definition)
    if (!connection.capabilities.session.list) {
      throw new Error(`${definition.name} cannot list its sessions (it does not announce session/list)`)
    }
    const listed: SessionInfo[] = []
    let cursor: string | null | undefined
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const response = await connection.acp.listSessions({ cwd: project.cwd, cursor })
      listed.push(...response.sessions)
      cursor = response.nextCursor
      if (!cursor) break
    }
    const imported: SessionRecord[] = []
    for (const info of listed) {
      // The cwd filter is the agent's to apply; a session of another folder belongs to another project.
      if (info.cwd !== project.cwd) continue
      const known = (s: Pick<SessionRecord, 'agentId' | 'acpSessionId'>): boolean => s.agentId === agentId && s.acpSessionId === info.sessionId
      if (records.data.sessions.some(known) || imported.some(known)) continue
      const at = info.updatedAt ?? new Date().toISOString()
      const title = info.title?.trim()
      const record: SessionRecord = {
        id: randomUUID(),
        acpSessionId: info.sessionId,
        agentId,
        projectId,
        cwd: project.cwd,
        title: title || 'Imported session',
        titleSource: title ? 'agent' : 'default',
        createdAt: at,
        updatedAt: at
      }
      await this.deps.registry.writeHeader(record)
      imported.push(record)
    }
    await records.addSessions(...imported)
    return { imported }
  }

  /** The transcript (or its tail: a long one is read from the end, never whole, for the first screen). */
  async open(id: string, tail?: number): Promise<SessionSnapshot> {
    const { records, registry } = this.deps
    const record = records.session(id)
    const file = await registry.flushedTranscript(id)
    if (tail !== undefined) {
      const { records: lines, nextSeq, skippedLines, firstSeq, firstOffset } = await readTranscriptTail(file, { limit: tail })
      return { record, state: registry.stateOf(id), records: lines, nextSeq, skippedLines, firstSeq, firstOffset }
    }
    const contents = await readTranscript(file)
    return {
      record,
      state: registry.stateOf(id),
      records: contents.records,
      nextSeq: contents.nextSeq,
      skippedLines: contents.skippedLines,
      firstSeq: 0,
      firstOffset: 0
    }
  }

  async readEarlier(id: string, before: number, offset: number, limit: number): Promise<TranscriptPageResult> {
    this.deps.records.session(id)
    return readTranscriptPage(this.deps.registry.transcriptFile(id), before, offset, { limit })
  }

  /** Records from a cursor on (a window that let its end go reads it again); what is appended is written out first. */
  async readLater(id: string, from: number, offset: number, limit: number): Promise<TranscriptLaterResult> {
    this.deps.records.session(id)
    return readTranscriptLater(await this.deps.registry.flushedTranscript(id), from, offset, { limit })
  }

  /** Ends the live session: `session/close` when the agent announces it; the conversation stays, ready to continue. */
  async close(id: string): Promise<void> {
    const { records, registry, turns } = this.deps
    records.session(id)
    const live = registry.get(id)
    const connection = live?.connection
    if (live && connection?.isAlive) {
      if (registry.stateOf(id).status === 'running') await turns.cancel(id)
      if (connection.capabilities.session.close && live.record.acpSessionId) {
        await connection.acp.closeSession({ sessionId: live.record.acpSessionId })
      }
      registry.detach(live)
    }
    registry.setState(id, { status: 'idle', error: undefined })
  }

  /**
   * Out of Switchboard, and out of the agent where it announces session/delete.
   * With `removeWorktree`, its worktree goes first, or nothing is deleted when
   * that would drop uncommitted work (unless `discardChanges`).
   */
  async delete(
    id: string,
    keepTranscript: boolean,
    removeWorktree = false,
    discardChanges = false
  ): Promise<{ agentDeleted: boolean; note?: string }> {
    const { records, supervisor, workspace } = this.deps
    const record = records.session(id)
    const definition = records.findAgent(record.agentId)
    let agentDeleted = false
    let note: string | undefined
    if (removeWorktree && record.worktree) {
      if (this.deps.registry.stateOf(id).status === 'running') await this.deps.turns.cancel(id)
      note = await workspace.removeWorktreeOf(record, discardChanges)
    } else if (record.worktree) {
      note = `Its worktree is kept at ${record.worktree.path} (branch '${record.worktree.branch}').`
    }
    if (definition && record.acpSessionId) {
      try {
        const connection = await supervisor.ensure(definition)
        if (connection.capabilities.session.delete) {
          await connection.acp.deleteSession({ sessionId: record.acpSessionId })
          agentDeleted = true
        } else {
          note = joined(note, `${definition.name} does not announce session/delete; its own copy of the session is untouched.`)
        }
      } catch (error) {
        note = joined(note, `The agent's copy was not deleted: ${(error as Error).message}`)
      }
    }
    await this.drop(id, keepTranscript)
    return note ? { agentDeleted, note } : { agentDeleted }
  }

  /** Takes a session out of Switchboard (not out of its agent): the live link ends, the record goes, the transcript is removed or kept aside. */
  async drop(id: string, keepTranscript: boolean): Promise<void> {
    const { records, registry, turns } = this.deps
    if (registry.stateOf(id).status === 'running') await turns.cancel(id)
    await registry.remove(id)
    const record = await records.removeSession(id)
    const file = registry.transcriptFile(id)
    if (keepTranscript) {
      // Kept out of transcripts/ so a rebuilt db.json does not bring the session back.
      await privateFolder(join(this.deps.dataDir, 'deleted-transcripts'))
      await fs.rename(file, join(this.deps.dataDir, 'deleted-transcripts', `${id}.jsonl`)).catch(() => undefined)
    } else {
      await fs.rm(file, { force: true })
    }
    await this.deps.seeds.remove(id)
    if (record && !keepTranscript) await this.deps.workspace.forget(record)
  }

  async rename(id: string, title: string): Promise<SessionRecord> {
    await this.deps.records.updateSession(id, { title, titleSource: 'user' })
    return this.deps.records.session(id)
  }
}

function joined(first: string | undefined, second: string): string {
  return first ? `${first} ${second}` : second
}

/**
 * A new session that goes on from `parent` (a fork, or a conversation continued in a new session): the same agent,
 * project, folders, worktree and preset, marked as coming from it; `rest` is what its agent's answer decided.
 */
function childOf(
  parent: SessionRecord,
  made: { sessionId: string; title: string; titleSource: SessionRecord['titleSource'] },
  rest: Partial<SessionRecord>
): SessionRecord {
  const now = new Date().toISOString()
  return {
    id: randomUUID(),
    acpSessionId: made.sessionId,
    agentId: parent.agentId,
    projectId: parent.projectId,
    cwd: parent.cwd,
    additionalDirectories: parent.additionalDirectories,
    ...(parent.worktree ? { worktree: parent.worktree } : {}),
    title: made.title,
    titleSource: made.titleSource,
    forkedFrom: parent.id,
    createdAt: now,
    updatedAt: now,
    ...(parent.preset ? { preset: parent.preset } : {}),
    ...rest
  }
}
