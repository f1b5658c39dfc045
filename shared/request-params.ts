import { z } from 'zod'
import { agentRequestParams } from './agent-requests'
import { attachmentSchema } from './attachment'
import { confirmationCodeParam } from './confirmation'
import { inboxRequestParams } from './inbox'
import { mcpRequestParams } from './mcp'
import { presetRequestParams } from './preset-requests'
import { CHECK_COMMAND_MAX, raceRequestParams } from './race'
import { SYSTEM_PROMPT_MAX } from './presets'
import { registryRequestParams } from './registry'
import { settingsRequestParams } from './settings'
import { spendRequestParams } from './spend'
import { updatesRequestParams } from './updates'

/**
 * What each request of the contract (contract.ts) takes: a zod schema per
 * method, checked at runtime when a request arrives (the renderer and the
 * pages of `npm run serve` are not trusted to send what the types say).
 */

const id = z.string().min(1).max(200)
/** A file named in the Changes view: relative to the session's folder (the Host keeps it inside). */
const changePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.startsWith('/') && !/^[A-Za-z]:/.test(p) && !p.split(/[\\/]/).includes('..'), { message: 'A path inside the session folder' })
const hunkRef = z.object({ index: z.number().int().min(0).max(100_000), header: z.string().min(1).max(200) })

/** Where `app.navigate` sends the windows (shared/navigation.ts). */
const navigationTargetSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('session'), id: z.string().min(1).max(200) }),
  z.object({ kind: z.literal('project'), path: z.string().min(1).max(4096) })
])

export const requestParams = {
  'app.info': z.object({}),
  /** The windows are told to show a session or a project (shared/navigation.ts); only navigation, nothing changes. */
  'app.navigate': z.object({ target: navigationTargetSchema }),
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
  /** The command a race's worktrees are checked with (`npm test`); empty: none. Setting one is confirmed like a command that runs. */
  'projects.setCheckCommand': z.object({ projectId: id, command: z.string().trim().max(CHECK_COMMAND_MAX), ...confirmationCodeParam }),
  /** Takes the project and its sessions out of Switchboard; transcripts are kept (deleted-transcripts/), the folder is not touched. */
  'projects.remove': z.object({ projectId: id }),
  /** The sidebar's order: every project id once. */
  'projects.reorder': z.object({ projectIds: z.array(id).max(10_000) }),
  ...agentRequestParams,
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
  /** `rulesApply: false`: no saved or session rule answers this turn's permission requests; each is asked (`switchboard run --allow never`). */
  'sessions.prompt': z
    .object({
      id,
      text: z.string().max(1_000_000),
      attachments: z.array(attachmentSchema).max(50).default([]),
      rulesApply: z.boolean().default(true)
    })
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
  /**
   * "Continue with…": a new session of another agent (or a preset) in the same project, folder and worktree, whose
   * first prompt carries this conversation (`reviewNotes`: those written in the Changes view and not sent yet).
   */
  'sessions.handOff': z
    .object({
      id,
      agentId: id.optional(),
      presetId: id.optional(),
      reviewNotes: z
        .array(
          z.object({
            path: changePath,
            line: z.number().int().min(0),
            side: z.enum(['old', 'new']),
            quote: z.string().max(10_000),
            text: z.string().max(20_000)
          })
        )
        .max(200)
        .default([])
    })
    .refine((p) => Boolean(p.agentId) !== Boolean(p.presetId), { message: 'Name the agent or the preset to continue with, one of them' }),
  /** The conversation handed over is not sent: the chip's remove. */
  'sessions.dropHandOffSeed': z.object({ id }),
  /**
   * "Edit and resend" the user message at transcript line `seq`: the files go back to its turn's checkpoint (unless
   * `conversationOnly`), and a new session of the same agent continues the conversation from before it with `text`.
   */
  'sessions.editResend': z.object({
    id,
    seq: z.number().int().min(1),
    text: z.string().trim().min(1, 'The edited message is empty').max(1_000_000),
    conversationOnly: z.boolean().default(false)
  }),
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
  ...mcpRequestParams,
  ...registryRequestParams,
  ...settingsRequestParams,
  ...inboxRequestParams,
  ...spendRequestParams,
  ...presetRequestParams,
  ...raceRequestParams,
  ...updatesRequestParams,
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
  }),
  /** Records of a session's transcript from a cursor on (`from`/`offset`: a page's endSeq/endOffset, or one a window let go of). */
  'transcripts.readLater': z.object({
    id,
    from: z.number().int().min(0),
    offset: z.number().int().min(0),
    limit: z.number().int().min(1).max(100_000)
  })
} as const
