import { z } from 'zod'
import { attachmentSchema } from './attachment'
import type { AppCommand } from './app-commands'
import type {
  AgentLog,
  AgentProblem,
  AgentPresetView,
  AgentRuntimeState,
  AppInfo,
  PendingElicitation,
  PermissionRule,
  Project,
  QueuedPrompt,
  SessionRecord,
  SessionState
} from './domain'
import type { AgentDefinition } from './agent-definition'
import { confirmationCodeParam, type CommandChange } from './confirmation'
import type { HostErrorCode } from './errors'
import type { SearchResults } from './search'
import type { SessionGroupCount, SessionGroupPage } from './session-listing'
import type { TranscriptRecord } from './transcript'
import type { ChangesResult, CheckpointView, MergeResult, ProjectGitInfo } from './workspace'
import { agentRequestParams, type AgentRequestResults } from './agent-requests'
import { mcpRequestParams, type McpRequestResults, type McpState } from './mcp'
import { registryRequestParams, type AgentCheckReport, type RegistryProgress, type RegistryRequestResults } from './registry'
import { settingsRequestParams, type SettingsRequestResults, type UserSettings } from './settings'
import { inboxRequestParams, type InboxItem, type InboxRequestResults } from './inbox'
import { spendRequestParams, type SpendRequestResults } from './spend'
import { presetRequestParams, type PresetRequestResults } from './preset-requests'
import { SYSTEM_PROMPT_MAX, type SessionPreset } from './presets'

export { ipcChannels } from './ipc'

/**
 * The one contract between the renderer and the Host, whatever carries it
 * (Electron IPC or the loopback WebSocket). Modelled on GitHub Desktop's
 * ipc-shared.ts: a map of request channels (params -> result) and a map of the
 * events the Host pushes. Params are zod schemas because they are checked at
 * runtime when they arrive; results and events are produced by the Host itself.
 */

const id = z.string().min(1).max(200)
export type { Attachment } from './attachment'

/** A file named in the Changes view: relative to the session's folder (the Host keeps it inside). */
const changePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.startsWith('/') && !/^[A-Za-z]:/.test(p) && !p.split(/[\\/]/).includes('..'), { message: 'A path inside the session folder' })
const hunkRef = z.object({ index: z.number().int().min(0).max(100_000), header: z.string().min(1).max(200) })

export const requestParams = {
  'app.info': z.object({}),
  /**
   * The window's first load and its first screen: `requests` (each a method and its parameters) answered in
   * order, and the window's first screen drawn from those very answers as HTML, before the window's code runs
   * (`height`: the window's, in CSS pixels).
   */
  'app.firstScreen': z.object({
    height: z.number().int().min(0).max(100_000),
    requests: z
      .array(z.tuple([z.string().max(100), z.unknown()]))
      .max(32)
      .default([])
  }),
  'projects.list': z.object({}),
  /** `agentId`: an agent over SSH, whose host the folder is on (checked there); absent: a folder on this computer. */
  'projects.add': z.object({
    cwd: z.string().min(1).max(4096),
    name: z.string().max(200).optional(),
    agentId: id.optional(),
    ...confirmationCodeParam
  }),
  'projects.pickFolder': z.object({}),
  'projects.setAdditionalDirectories': z.object({
    projectId: id,
    directories: z.array(z.string().min(1).max(4096)).max(50),
    ...confirmationCodeParam
  }),
  /** The mode the agent's sessions start in in this project; null: the agent's own starting mode. A mode that skips permissions needs `confirmSkip` once per agent. */
  'projects.setStartingMode': z.object({
    projectId: id,
    agentId: id,
    modeId: z.string().min(1).max(200).nullable(),
    confirmSkip: z.boolean().optional()
  }),
  'projects.rename': z.object({ projectId: id, name: z.string().trim().min(1, 'A project needs a name').max(200) }),
  /** Instructions sent as the system prompt of the project's new sessions (where the agent takes one); empty: none. */
  'projects.setSystemPrompt': z.object({ projectId: id, systemPrompt: z.string().max(SYSTEM_PROMPT_MAX) }),
  /** Whether commit and merge from the Changes view run the repository's git hooks; turning it on is confirmed like a command. */
  'projects.setGitHooks': z.object({ projectId: id, enabled: z.boolean(), ...confirmationCodeParam }),
  /** Takes the project and its sessions out of Switchboard; transcripts are kept (deleted-transcripts/), the folder is not touched. */
  'projects.remove': z.object({ projectId: id }),
  /** The sidebar's order: every project id once. */
  'projects.reorder': z.object({ projectIds: z.array(id).max(10_000) }),
  /** Every session record (of one project), newest first: for tools and tests; the window reads pages (below). */
  'sessions.list': z.object({ projectId: id.optional() }),
  /** What the sidebar shows first: each project's groups of one agent's sessions, with their counts and their newest `limit`. */
  'sessions.summary': z.object({ limit: z.number().int().min(0).max(500), records: z.number().int().min(0).max(100_000).optional() }),
  /** The next page of a project's sessions with one agent, newest first: those after `before` (the last one the window has). */
  'sessions.page': z.object({
    projectId: id,
    agentId: id,
    before: z.object({ updatedAt: z.string().max(100), id }).optional(),
    limit: z.number().int().min(1).max(500)
  }),
  /** Session records by id, for a window that holds only pages: those that exist (a deleted one is left out). */
  'sessions.get': z.object({ ids: z.array(id).max(1000) }),
  'sessions.states': z.object({}),
  /** `isolation`: work in the project's folder, or in a new git worktree on a new branch (`branch`, else one named after the session). */
  'sessions.new': z.object({
    projectId: id,
    agentId: id,
    isolation: z.enum(['folder', 'worktree']).default('folder'),
    branch: z.string().trim().min(1).max(200).optional()
  }),
  /** `tail`: only the last records (at least that many, back to the start of a turn); else the whole transcript. */
  'sessions.open': z.object({ id, tail: z.number().int().min(1).max(100_000).optional() }),
  'sessions.continue': z.object({ id }),
  /** Trusts the session's folder in its agent's own trust file (Gemini CLI's folder trust), confirmed outside the window first. */
  'sessions.trustFolderForMcp': z.object({ id, ...confirmationCodeParam }),
  'sessions.prompt': z
    .object({ id, text: z.string().max(1_000_000), attachments: z.array(attachmentSchema).max(50).default([]) })
    .refine((p) => p.text.trim() !== '' || p.attachments.length > 0, { message: 'A prompt needs text or an attachment' }),
  'sessions.cancel': z.object({ id }),
  /**
   * A prompt written while a turn runs: it waits in the session's queue and is
   * sent when the turns before it end normally (at once when nothing runs).
   */
  'sessions.queue': z
    .object({ id, text: z.string().max(1_000_000), attachments: z.array(attachmentSchema).max(50).default([]) })
    .refine((p) => p.text.trim() !== '' || p.attachments.length > 0, { message: 'A prompt needs text or an attachment' }),
  /** A queued prompt's new text (its attachments stay). */
  'sessions.editQueued': z.object({ id, queuedId: id, text: z.string().max(1_000_000) }),
  'sessions.removeQueued': z.object({ id, queuedId: id }),
  /** Every queued prompt of the session taken out. */
  'sessions.clearQueue': z.object({ id }),
  /**
   * A queued prompt sent at once: into the running turn when the agent takes
   * prompts mid-turn (AgentCapabilities.promptQueueing), else first when nothing runs.
   */
  'sessions.sendQueuedNow': z.object({ id, queuedId: id }),
  /** A held queue goes on: its first prompt is sent when no turn runs. */
  'sessions.resumeQueue': z.object({ id }),
  'sessions.respondPermission': z.object({ id, requestId: id, optionId: z.string().min(1).nullable() }),
  /** A mode that skips permissions needs `confirmSkip` the first time one is chosen for the agent (error `skip_permissions_unconfirmed`). */
  'sessions.setMode': z.object({ id, modeId: z.string().min(1).max(200), confirmSkip: z.boolean().optional() }),
  'sessions.setConfigOption': z.object({
    id,
    configId: z.string().min(1).max(200),
    value: z.union([z.string().max(1000), z.boolean()]),
    confirmSkip: z.boolean().optional()
  }),
  'sessions.setModel': z.object({ id, modelId: z.string().min(1).max(200) }),
  'sessions.import': z.object({ projectId: id, agentId: id }),
  'sessions.close': z.object({ id }),
  /** `removeWorktree`: also remove the session's worktree (refused when it holds uncommitted work, unless `discardChanges`). */
  'sessions.delete': z.object({
    id,
    keepTranscript: z.boolean().default(false),
    removeWorktree: z.boolean().default(false),
    discardChanges: z.boolean().default(false)
  }),
  /** The files changed since the review base, up to now; or from checkpoint `from` to checkpoint `to`, or without `to` that turn's own changes (to where it ended, or now while it runs). */
  'changes.list': z.object({ id, from: z.number().int().min(1).optional(), to: z.number().int().min(1).optional() }),
  /** Keep a file's change (or one hunk of it): it joins the review base. */
  'changes.keep': z.object({ id, path: changePath, hunk: hunkRef.optional() }),
  /** Keep every change of the session: the files as they are now become the review base. */
  'changes.keepAll': z.object({ id }),
  /** Revert a file (or one hunk) on disk to the review base. */
  'changes.revert': z.object({ id, path: changePath, hunk: hunkRef.optional() }),
  /** Restore the session's files to a checkpoint (after checkpointing the present, so it can be undone). */
  'changes.rewind': z.object({ id, checkpoint: z.number().int().min(1) }),
  'changes.commit': z.object({ id, message: z.string().trim().min(1, 'A commit needs a message').max(10_000) }),
  'changes.merge': z.object({ id }),
  /** After a merge: the session's worktree and branch go (refused while it holds uncommitted work or the branch is not merged). */
  'changes.removeWorktree': z.object({ id }),
  'worktrees.list': z.object({ projectId: id }),
  'sessions.fork': z.object({ id }),
  /** A new session of the same agent and folder, given this conversation as context (its agent could not reopen it). */
  'sessions.continueInNew': z.object({ id }),
  /** A title the user chose; it stays (the agent's session_info_update no longer changes it). */
  'sessions.rename': z.object({ id, title: z.string().trim().min(1, 'A title cannot be empty').max(200) }),
  'search.query': z.object({ q: z.string().max(500), limit: z.number().int().min(1).max(200).default(30) }),
  'permissions.list': z.object({ projectId: id.optional() }),
  'permissions.revoke': z.object({ ruleId: id }),
  'elicitations.list': z.object({}),
  'elicitations.answer': z.object({
    requestId: id,
    action: z.enum(['accept', 'decline', 'cancel']),
    content: z
      .record(z.string().max(200), z.union([z.string().max(100_000), z.number(), z.boolean(), z.array(z.string().max(10_000)).max(1000)]))
      .default({})
  }),
  ...agentRequestParams,
  ...mcpRequestParams,
  ...registryRequestParams,
  ...settingsRequestParams,
  ...inboxRequestParams,
  ...spendRequestParams,
  ...presetRequestParams,
  /** Files of a project matching a query (for @-mentions in the composer). */
  'files.list': z.object({ projectId: id, query: z.string().max(500).default(''), limit: z.number().int().min(1).max(200).default(50) }),
  /** Shows a file or folder of a session's project in the system's file manager, where the shell can. */
  'files.reveal': z.object({ sessionId: id, path: z.string().min(1).max(4096) }),
  /** Records of a session's transcript before a cursor (`before`/`offset`: a snapshot's or page's firstSeq/firstOffset). */
  'transcripts.read': z.object({
    id,
    before: z.number().int().min(0),
    offset: z.number().int().min(0),
    limit: z.number().int().min(1).max(100_000)
  })
} as const

export interface SessionSnapshot {
  record: SessionRecord
  state: SessionState
  records: TranscriptRecord[]
  /** seq of the next record: live `session.records` events with a lower seq are already in `records`. */
  nextSeq: number
  /** Lines of the transcript that could not be read (e.g. torn by a crash). */
  skippedLines: number
  /** seq of the first line `records` start from: 0 for the whole transcript, more when only its tail was read. */
  firstSeq: number
  /** Byte offset of that line; with firstSeq, the cursor for `transcripts.read`. */
  firstOffset: number
}

/** Earlier records of a transcript, in order; `firstSeq` 0 means the start was reached. */
export interface TranscriptPageResult {
  records: TranscriptRecord[]
  firstSeq: number
  firstOffset: number
  skippedLines: number
}

export interface RequestResults
  extends
    AgentRequestResults,
    McpRequestResults,
    RegistryRequestResults,
    SettingsRequestResults,
    InboxRequestResults,
    SpendRequestResults,
    PresetRequestResults {
  'app.info': AppInfo
  /**
   * `answers`: one per request, in order, as each would have been answered alone. `html` is null when this Host
   * has no first screen to draw (a build without it, or it could not be drawn): the window draws it.
   */
  'app.firstScreen': { html: string | null; answers: WireResponse[] }
  'projects.list': Project[]
  'projects.add': Project
  'projects.pickFolder': { path: string | null }
  'projects.setAdditionalDirectories': Project
  'projects.setStartingMode': Project
  'projects.rename': Project
  'projects.setSystemPrompt': Project
  'projects.setGitHooks': Project
  'projects.remove': { removedSessions: number }
  'projects.reorder': Project[]
  'sessions.list': SessionRecord[]
  'sessions.summary': SessionGroupPage[]
  'sessions.page': { sessions: SessionRecord[]; count: number }
  'sessions.get': SessionRecord[]
  /** The live state of every session that has one (the others are idle). */
  'sessions.states': SessionState[]
  'sessions.new': SessionRecord
  'sessions.open': SessionSnapshot
  'sessions.continue': SessionState
  /** `file`: the trust file written. */
  'sessions.trustFolderForMcp': { file: string }
  'sessions.prompt': { stopReason: string }
  'sessions.cancel': Record<string, never>
  /** The queue after the change, oldest first (the session's state says the same to every window). */
  'sessions.queue': { queued: QueuedPrompt; queue: QueuedPrompt[] }
  'sessions.editQueued': { queue: QueuedPrompt[] }
  'sessions.removeQueued': { queue: QueuedPrompt[] }
  'sessions.clearQueue': { queue: QueuedPrompt[] }
  'sessions.sendQueuedNow': { queue: QueuedPrompt[] }
  'sessions.resumeQueue': { queue: QueuedPrompt[] }
  'sessions.respondPermission': Record<string, never>
  'sessions.setMode': Record<string, never>
  'sessions.setConfigOption': Record<string, never>
  'sessions.setModel': Record<string, never>
  'sessions.import': { imported: SessionRecord[] }
  'sessions.close': Record<string, never>
  /** `note` says why the agent's own copy was not deleted, when it was not. */
  'sessions.delete': { agentDeleted: boolean; note?: string }
  'changes.list': ChangesResult
  'changes.keep': Record<string, never>
  'changes.keepAll': Record<string, never>
  'changes.revert': Record<string, never>
  'changes.rewind': { undo: CheckpointView; files: string[] }
  'changes.commit': { commit: string; files: number }
  'changes.merge': MergeResult
  'changes.removeWorktree': { message: string }
  'worktrees.list': ProjectGitInfo
  'sessions.fork': SessionRecord
  'sessions.continueInNew': SessionRecord
  'sessions.rename': SessionRecord
  'search.query': SearchResults
  'permissions.list': PermissionRule[]
  'permissions.revoke': Record<string, never>
  'elicitations.list': PendingElicitation[]
  'elicitations.answer': Record<string, never>
  /** Absolute and project-relative paths, best match first; `truncated`: the project has more files than were looked at. */
  'files.list': { files: { path: string; relative: string }[]; truncated: boolean }
  /** `revealed` false: this host cannot show files (the browser transport); `path` is the checked absolute path. */
  'files.reveal': { revealed: boolean; path: string }
  'transcripts.read': TranscriptPageResult
}

export type RequestMethod = keyof typeof requestParams
export type RequestParams<M extends RequestMethod> = z.input<(typeof requestParams)[M]>
export type ParsedParams<M extends RequestMethod> = z.output<(typeof requestParams)[M]>
export type RequestResult<M extends RequestMethod> = RequestResults[M]

export interface HostEvents {
  /** Records appended to a session's transcript; `seq` is the first one's. */
  'session.records': { id: string; seq: number; records: TranscriptRecord[] }
  'session.state': SessionState
  'session.record': SessionRecord
  'session.removed': { id: string }
  /** A group's count after a session was added to it or taken out of it (with the `session.record` or `session.removed` that did it). */
  'sessions.count': SessionGroupCount
  'agent.state': AgentRuntimeState
  'projects.changed': Project[]
  'permissions.changed': PermissionRule[]
  /** Output of a terminal sign-in, as the pseudo-terminal wrote it. */
  'agent.login.output': { loginId: string; data: string }
  /** A terminal sign-in ended; `ok` (exit code 0) means signed in, and the agent restarts to pick it up. */
  'agent.login.exit': { loginId: string; agentId: string; methodId: string; exitCode: number | null; signal: number | null; ok: boolean }
  /** Every question agents are waiting for the user to answer. */
  'elicitations.changed': PendingElicitation[]
  /** Every agent definition, after one was added, changed or removed. */
  'agents.changed': AgentDefinition[]
  /** Every session preset, after one was added, changed or removed. */
  'presets.changed': SessionPreset[]
  /** Sent by the Electron shell (the native menu), never by the Host: the renderer runs the command. */
  'app.command': { command: AppCommand }
  'mcp.changed': McpState
  /** An install or update from the ACP Registry under way. */
  'registry.progress': RegistryProgress
  /** A capability check finished (also the one run by itself after an update). */
  'agents.checked': AgentCheckReport
  /** The user's settings after a window changed them (every window follows). */
  'settings.changed': UserSettings
  /** What waits on the user, after it changed (shared/inbox.ts). */
  'inbox.changed': InboxItem[]
  /** What was spent changed (those sessions'), or past conversations are being read for it (`backfill`: how far). */
  'spend.changed': { sessionIds: string[]; backfill?: { done: number; total: number } }
  /**
   * An error in one of the Host's rooms that nothing else caught (electron/host/room-errors.ts): it is in the Host's
   * log and `app.info`'s warnings, and the room was reset, as `message` says ("Search had an internal error; it is
   * rebuilding: …"). The Host goes on.
   */
  'app.warning': { room: string; message: string }
}

export type HostEventName = keyof HostEvents
export type HostEvent = { [K in HostEventName]: { type: K; payload: HostEvents[K] } }[HostEventName]

export const requestMethods = Object.keys(requestParams) as RequestMethod[]

export function isRequestMethod(method: unknown): method is RequestMethod {
  return typeof method === 'string' && Object.prototype.hasOwnProperty.call(requestParams, method)
}

/** What every transport returns for a request; a failure that concerns an agent carries its problem (auth_required, agent_failed). */
export type WireResponse = { ok: true; result: unknown } | { ok: false; error: WireError }
export interface WireError {
  message: string
  code?: HostErrorCode
  problem?: AgentProblem
  /** `confirmation_required`: what the user is asked to confirm (shared/confirmation.ts). */
  confirmation?: CommandChange
}

/** Messages over the WebSocket transport (Electron IPC carries the same shapes). */
export const wireRequestSchema = z.object({
  kind: z.literal('request'),
  id: z.number().int().nonnegative(),
  method: z.string().max(100),
  params: z.unknown()
})
export type WireRequest = z.infer<typeof wireRequestSchema>

export type WireServerMessage = ({ kind: 'response'; id: number } & WireResponse) | { kind: 'events'; events: HostEvent[] }

export { wireServerMessageSchema } from './wire-envelope'

/**
 * Draws the window's first screen as HTML in the Host's process (renderer/src/first-screen.ts, built for Node;
 * HostOptions.firstScreen): the window's own components, their stores filled from the answers `request` gives
 * to the window's first load (the answers the window gets with the drawing, `app.firstScreen`), the list
 * `height` CSS pixels high.
 */
export type FirstScreenRenderer = (input: { request: (method: string, params: unknown) => Promise<WireResponse>; height: number }) => Promise<string>

/**
 * What a renderer needs from a transport: send a request, receive event
 * batches, and hear when the link to the Host went down and came back. The
 * preload exposes exactly this; the WebSocket client implements it.
 */
export interface HostTransport {
  request(method: string, params: unknown): Promise<WireResponse>
  onEvents(listener: (events: HostEvent[]) => void): () => void
}

/** The state of the window's link to the Host, as the preload reports it. */
export type BridgeState = 'connected' | 'reconnecting'

/** What the preload exposes as `window.switchboard`: the contract's transport, and when its link goes down or comes back. */
export interface BridgeTransport extends HostTransport {
  onConnection(listener: (state: BridgeState, detail?: string) => void): () => void
}
