import { z } from 'zod'
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
import type { CommandChange } from './confirmation'
import type { HostErrorCode } from './errors'
import type { SearchResults } from './search'
import type { SessionGroupCount, SessionGroupPage } from './session-listing'
import type { TranscriptRecord } from './transcript'
import type { ChangesResult, CheckpointView, MergeResult, ProjectGitInfo } from './workspace'
import type { AgentRequestResults } from './agent-requests'
import type { McpRequestResults, McpState } from './mcp'
import type { AgentCheckReport, RegistryProgress, RegistryRequestResults } from './registry'
import type { SettingsRequestResults, UserSettings } from './settings'
import type { UpdateState, UpdatesRequestResults } from './updates'
import type { InboxItem, InboxRequestResults } from './inbox'
import type { SpendRequestResults } from './spend'
import type { PresetRequestResults } from './preset-requests'
import type { Race, RaceRequestResults } from './race'
import type { SessionPreset } from './presets'
import { requestParams } from './request-params'
import type { Navigation } from './navigation'

export { ipcChannels } from './ipc'
export type { Attachment } from './attachment'

/**
 * The one contract between the renderer and the Host, whatever carries it
 * (Electron IPC or the loopback WebSocket). Modelled on GitHub Desktop's
 * ipc-shared.ts: a map of request channels (params -> result) and a map of the
 * events the Host pushes. Params are zod schemas because they are checked at
 * runtime when they arrive (request-params.ts); results and events are produced
 * by the Host itself.
 */

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

/** Later records of a transcript, in order, and the cursor past them; `atEnd`: all that is written was read. */
export interface TranscriptLaterResult {
  records: TranscriptRecord[]
  endSeq: number
  endOffset: number
  skippedLines: number
  atEnd: boolean
}

export interface RequestResults
  extends
    AgentRequestResults,
    McpRequestResults,
    RegistryRequestResults,
    SettingsRequestResults,
    InboxRequestResults,
    SpendRequestResults,
    PresetRequestResults,
    RaceRequestResults,
    UpdatesRequestResults {
  'app.info': AppInfo
  'app.navigate': Navigation
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
  'projects.setCheckCommand': Project
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
  'sessions.handOff': SessionRecord
  'sessions.dropHandOffSeed': SessionRecord
  /** The new session (already sent the edited message); `rewound`: the files put back (undo: that checkpoint); `forked`: by the agent's own fork at a message. */
  'sessions.editResend': { session: SessionRecord; rewound: { undo: number; files: string[] } | null; forked: boolean }
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
  'transcripts.readLater': TranscriptLaterResult
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
  /** A window is to show this session or project (`switchboard open`, a switchboard:// link): shown by the focused window. */
  'app.navigate': Navigation
  'mcp.changed': McpState
  /** An install or update from the ACP Registry under way. */
  'registry.progress': RegistryProgress
  /** A capability check finished (also the one run by itself after an update). */
  'agents.checked': AgentCheckReport
  /** The user's settings after a window changed them (every window follows). */
  'settings.changed': UserSettings
  /** What waits on the user, after it changed (shared/inbox.ts). */
  'inbox.changed': InboxItem[]
  /** A race after it changed (a racer started or ended, a check ran, one was kept). */
  'race.changed': Race
  /** What was spent changed (those sessions'), or past conversations are being read for it (`backfill`: how far). */
  'spend.changed': { sessionIds: string[]; backfill?: { done: number; total: number } }
  /** What the desktop shell's updater is doing (shared/updates.ts). */
  'updates.changed': UpdateState
  /**
   * An error in one of the Host's rooms that nothing else caught (electron/host/contract/room-errors.ts): it is in the Host's
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
