import { randomUUID } from 'node:crypto'
import type { RequestResult } from '../../../shared/contract'
import type { SessionRecord } from '../../../shared/domain'
import type { TranscriptRecord } from '../../../shared/transcript'
import { describeError, HostError } from '../contract/errors'
import { serversForAgent } from '../mcp/acp-servers'
import { followedBy, isReset, transcriptLines, viewLinesAfter, type ReadRecord } from '../storage/transcript-stream'
import { parseLine } from '../storage/transcripts'
import type { WorkspaceService } from '../workspace/service'
import type { SessionDeps } from './connector'
import { foldConversation } from './conversation-fold'
import { conversationSeed, seedBudget, seedOf, type SeedAbout } from './conversation-seed'
import { forkPointMeta, forksAtMessage } from './fork-at-message'
import { assertFolder, newSessionIn, registerSession, systemPromptOf } from './new-session'
import { presetProfilesOf } from './preset-settings'
import { directoriesFor, sessionMcp, systemPromptFor } from './session-parts'
import type { Turns } from './turns'

/**
 * "Edit and resend" on an earlier user message: the files go back to that
 * turn's checkpoint (the rewind the Changes view does, with its undo), and a
 * new session of the same agent continues the conversation from before the
 * message with the edited text as its first prompt. The original stays as it
 * was, a branch: each names the other where they part (`branch` records).
 *
 * The new session is the agent's own fork at the reply before the message
 * where the agent is known to take such a fork (fork-at-message.ts), else a
 * new session given the conversation before the message as context with its
 * first prompt (`seedUpTo`). Nothing is touched before the agent has made the
 * new session: an agent that fails to start leaves the original as it was.
 */

export type EditResendResult = RequestResult<'sessions.editResend'>

/**
 * The conversation before the edited message as the text a new session's first
 * prompt carries: the hand-off's seed (conversation-seed.ts: prompts, replies,
 * tool calls in short, the plan, within its budget), without the diff (the
 * files go back to before the message) and without images (the note is text).
 */
export function seedUpTo(before: Iterable<TranscriptRecord>, about: SeedAboutBefore): string {
  return conversationSeed(before, about, { images: false }).text
}

/**
 * `seedUpTo` of a conversation read a record at a time and folded as it is read (conversation-fold.ts): a long one
 * is never held whole. Undefined when it folds to nothing.
 */
export async function seedUpToOf(before: AsyncIterable<TranscriptRecord>, about: SeedAboutBefore): Promise<string | undefined> {
  const folded = await foldConversation(before, about.agentName, seedBudget({}))
  return folded.entries === 0 ? undefined : seedOf(folded, about, { images: false }).text
}

type SeedAboutBefore = Pick<SeedAbout, 'title' | 'agentName' | 'cwd' | 'preface'>

export interface EditResendDeps extends SessionDeps {
  turns: Turns
  workspace: WorkspaceService
}

export class EditResend {
  constructor(private readonly deps: EditResendDeps) {}

  async resend(id: string, seq: number, text: string, conversationOnly: boolean): Promise<EditResendResult> {
    const { records, registry, workspace } = this.deps
    const parent = records.session(id)
    if (registry.stateOf(id).status === 'running') {
      throw new Error('A turn is running in this session: stop it first, then edit and resend. Nothing was changed.')
    }
    const edited = await this.editedMessage(id, seq)
    const checkpoint = conversationOnly ? null : this.checkpointOf(parent, edited)
    const made = await this.newSession(parent, edited)
    let rewound: EditResendResult['rewound'] = null
    if (checkpoint !== null) {
      try {
        const { undo, files } = await workspace.rewind(id, checkpoint)
        rewound = { undo: undo.index, files }
      } catch (error) {
        // The agent's new session is let go: nothing was changed here.
        await made.abandon()
        throw new HostError(
          'checkpoint_missing',
          `The files could not go back to how they were before message ${edited.message}: ${describeError(error)}. Nothing was changed.`
        )
      }
    }
    const session = await made.register()
    await registry.appendAlways(parent, {
      t: 'branch',
      at: new Date().toISOString(),
      to: session.id,
      title: session.title,
      message: edited.message,
      seq
    })
    await this.send(session.id, text)
    return { session: records.session(session.id), rewound, forked: made.forked }
  }

  /**
   * The user message at `seq`, its number among the conversation's messages, and what is read of the conversation
   * before it (the current view), read a chunk at a time: a long conversation is never in memory whole. One read
   * finds the message, the last reset before it and what the rest needs of the turns after that reset (a reset
   * starts the count again: no prompt, checkpoint or reply outlives one); only a line that may be one of those is
   * parsed. The view's later reads (the seed, the copy) start from that reset, so a long conversation is read three
   * times in all.
   */
  private async editedMessage(id: string, seq: number): Promise<EditedMessage> {
    const file = await this.deps.registry.flushedTranscript(id)
    // A missing file is an empty conversation (as readTranscript reads it): there is no message to edit.
    let line: string | undefined
    let lastReset = -1
    // What the rest needs of the conversation before it: the messages, the last turn's checkpoint, the last reply's id.
    let messages = 0
    let checkpoint: Extract<TranscriptRecord, { t: 'checkpoint' }> | undefined
    let anchor: string | undefined
    try {
      for await (const read of transcriptLines(file, seq + 1)) {
        if (read.seq === seq) {
          line = read.line
          continue
        }
        if (isReset(read.line)) {
          lastReset = read.seq
          messages = 0
          checkpoint = undefined
          anchor = undefined
          continue
        }
        if (!MAY_COUNT.test(read.line)) continue
        const record = parseLine(read.line)
        if (record?.t === 'prompt') {
          if (!record.steered) messages++
          checkpoint = undefined
          anchor = undefined
        } else if (record?.t === 'checkpoint') checkpoint = record
        else if (record?.t === 'update' && !record.child && record.update.sessionUpdate === 'agent_message_chunk')
          anchor = record.update.messageId ?? undefined
      }
    } catch (error) {
      throw new Error(`This conversation's transcript could not be read, so nothing was changed: ${(error as Error).message}`)
    }
    const prompt = line === undefined ? null : parseLine(line)
    if (prompt?.t !== 'prompt')
      throw new Error(`There is no message of yours at line ${seq} of this conversation; it may have been replaced by the agent's replay`)
    if (prompt.steered) throw new Error('This message was sent into a running turn: edit the message that started that turn instead')
    const history = () => withoutCheckpoints(viewLinesAfter(file, lastReset, seq))
    return { seq, message: messages + 1, checkpoint, anchor, history }
  }

  /** The checkpoint taken as the message's turn started, or why the files cannot go back (`checkpoint_missing`). */
  private checkpointOf(parent: SessionRecord, edited: EditedMessage): number {
    const offer = 'Resend it with the files as they are (conversation only)?'
    const project = this.deps.records.findProject(parent.projectId)
    if (project?.sshHost)
      throw new HostError('checkpoint_missing', `${project.name} is on ${project.sshHost}: its files have no checkpoints to go back to. ${offer}`)
    const taken = edited.checkpoint
    if (taken?.index !== undefined) return taken.index
    const why = taken?.error ? taken.error : `No checkpoint of the files was taken before message ${edited.message}.`
    throw new HostError('checkpoint_missing', `${why.replace(/\.?$/, '.')} ${offer}`)
  }

  /** The agent's new session (its fork at the reply before the message, or a new one to be seeded), not yet in Switchboard. */
  private async newSession(parent: SessionRecord, edited: EditedMessage) {
    const { records, supervisor, mcp } = this.deps
    const definition = records.agent(parent.agentId)
    await assertFolder(this.deps, records.project(parent.projectId), definition, parent.cwd)
    const prepared = await mcp.prepareForProject(parent.projectId, presetProfilesOf(parent, records))
    const connection = await supervisor.ensure(definition)
    const anchor = edited.anchor
    const forked = Boolean(anchor && parent.acpSessionId && forksAtMessage(connection))
    const servers = serversForAgent(prepared, connection.capabilities, definition.name)
    const made = forked
      ? {
          connection,
          servers,
          mark: undefined,
          response: await connection.acp.forkSession({
            sessionId: parent.acpSessionId ?? '',
            cwd: parent.cwd,
            mcpServers: servers.mcpServers,
            ...directoriesFor(connection, parent.additionalDirectories ?? []),
            ...systemPromptFor(connection, parent.systemPrompt),
            _meta: forkPointMeta(anchor ?? '')
          })
        }
      : await newSessionIn(this.deps, definition, parent.cwd, prepared, parent.additionalDirectories ?? [], parent.systemPrompt)
    const now = new Date().toISOString()
    const preface = `[Switchboard] This session continues a conversation between the user and you (${definition.name}) from just before the user's message ${edited.message}, which the user has edited and sends again below. What came after that message did not happen, and the files are back as they were before it (unless the user chose to keep them). The conversation before it, for context:`
    const seed = forked
      ? undefined
      : await seedUpToOf(recordsOf(edited.history()), { title: parent.title, agentName: definition.name, cwd: parent.cwd, preface })
    const record: SessionRecord = {
      id: randomUUID(),
      acpSessionId: made.response.sessionId,
      agentId: parent.agentId,
      projectId: parent.projectId,
      cwd: parent.cwd,
      additionalDirectories: parent.additionalDirectories,
      ...(parent.worktree ? { worktree: parent.worktree } : {}),
      title: `${parent.title} (edited at message ${edited.message})`,
      titleSource: 'prompt',
      forkedFrom: parent.id,
      editedFrom: { session: parent.id, message: edited.message, seq: edited.seq },
      createdAt: now,
      updatedAt: now,
      ...sessionMcp(made.servers),
      ...(parent.preset ? { preset: parent.preset } : {}),
      ...systemPromptOf(made.connection, definition, parent.systemPrompt),
      ...(seed
        ? {
            rewindNote: [seed, '[End of the earlier conversation]'].join('\n\n')
          }
        : {})
    }
    const branch: TranscriptRecord = { t: 'branch', at: now, from: parent.id, title: parent.title, message: edited.message, seq: edited.seq }
    return {
      forked,
      register: () => registerSession(this.deps, record, made.connection, made.response, followedBy(edited.history(), branch), made.mark),
      /** Best effort: the agent forgets the session where it can; else it stays in the agent's own list only. */
      abandon: async () => {
        if (made.connection.capabilities.session.close)
          await made.connection.acp.closeSession({ sessionId: made.response.sessionId }).catch(() => undefined)
      }
    }
  }

  /** Sends the edited message as the new session's first prompt; returns once it is in the thread (the turn runs on). */
  private send(id: string, text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.deps.turns.prompt(id, text, [], { onStart: resolve }).then(
        () => resolve(),
        (error: unknown) => reject(new Error(`The new session was made, but the edited message was not sent: ${describeError(error)}`))
      )
    })
  }
}

interface EditedMessage {
  /** Its line in the original's transcript. */
  seq: number
  /** Its number among the user's messages (1 is the first). */
  message: number
  /** The checkpoint record of the turn before it (after the last prompt before it), if one was taken. */
  checkpoint?: Extract<TranscriptRecord, { t: 'checkpoint' }>
  /** The id of the agent's last message before it, where a fork at a message would end. */
  anchor?: string
  /**
   * The conversation before it (the records after the last replay's reset, no header), read again each time it is
   * asked for, each record with its line; the original's checkpoints left out (they are its own refs: the copy's
   * messages offer none of them).
   */
  history: () => AsyncIterable<ReadRecord>
}

/** A line that may be a prompt, a checkpoint or a reply's chunk (what the count before the edited message reads): the rest are not parsed. */
const MAY_COUNT = /"(prompt|checkpoint|agent_message_chunk)"/

async function* withoutCheckpoints(records: AsyncIterable<ReadRecord>): AsyncGenerator<ReadRecord> {
  for await (const read of records) if (read.record.t !== 'checkpoint') yield read
}

async function* recordsOf(reads: AsyncIterable<ReadRecord>): AsyncGenerator<TranscriptRecord> {
  for await (const { record } of reads) yield record
}
