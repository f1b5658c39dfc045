import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { ContentBlock } from '@agentclientprotocol/sdk'
import type { SessionRecord } from '../../../shared/domain'
import type { ReviewComment } from '../../../shared/workspace'
import type { AgentConnection } from '../connection/connection'
import { privateFolder, writePrivateFile } from '../storage/private-files'
import type { Records } from '../storage/records'
import { seedBlocks, type ConversationSeed } from './conversation-seed'

/**
 * The conversations handed to new sessions and not sent yet, one file each in
 * `hand-offs/<session id>.json` (its text and images are too large for
 * db.json; the record keeps what the window shows, `handOffSeed`). The next
 * prompt of such a session carries it (`blocksFor`), then it goes; the one
 * just sent is remembered until its turn ends, for an agent that refuses it
 * as too long (hand-off.ts makes it smaller).
 */

export interface StoredSeed {
  seed: Pick<ConversationSeed, 'text' | 'images' | 'budget' | 'chars'>
  /** The review notes it was built with (kept to build it again smaller). */
  reviewNotes: ReviewComment[]
}

export class HandOffSeeds {
  /** Sessions whose last prompt carried their seed, by id: the budget it was built within. */
  private readonly sent = new Map<string, number>()

  constructor(
    private readonly dataDir: string,
    private readonly records: Records
  ) {}

  fileOf(sessionId: string): string {
    return join(this.dataDir, 'hand-offs', `${sessionId}.json`)
  }

  async save(sessionId: string, stored: StoredSeed): Promise<void> {
    await privateFolder(join(this.dataDir, 'hand-offs'))
    await writePrivateFile(this.fileOf(sessionId), JSON.stringify(stored))
  }

  async read(sessionId: string): Promise<StoredSeed> {
    try {
      return JSON.parse(await fs.readFile(this.fileOf(sessionId), 'utf8')) as StoredSeed
    } catch (error) {
      throw new Error(
        `The conversation handed to this session could not be read (${(error as Error).message}); nothing was sent. Remove it from the message to send without it.`,
        { cause: error }
      )
    }
  }

  /** The blocks a session's next prompt starts with: its hand-off's seed, in the form the agent takes; none when it has none. */
  async blocksFor(record: SessionRecord, connection: AgentConnection): Promise<{ blocks: ContentBlock[]; budget?: number }> {
    if (!record.handOffSeed) return { blocks: [] }
    const { seed } = await this.read(record.id)
    const accepts = connection.capabilities.prompt
    const uri = `switchboard://hand-off/${record.handedOffFrom ?? record.id}`
    return { blocks: seedBlocks(seed, { embeddedContext: accepts.embeddedContext, image: accepts.image }, uri), budget: seed.budget }
  }

  /** The seed went with a prompt: the record no longer holds it; which budget it had is kept until the turn ends. */
  async wentWith(sessionId: string, budget: number): Promise<void> {
    this.sent.set(sessionId, budget)
    this.records.updateSessionSoon(sessionId, { handOffSeed: undefined })
  }

  /** The budget of the seed the session's turn carried, once (forgotten as it is read): undefined when it carried none. */
  takeSent(sessionId: string): number | undefined {
    const budget = this.sent.get(sessionId)
    this.sent.delete(sessionId)
    return budget
  }

  async remove(sessionId: string): Promise<void> {
    this.sent.delete(sessionId)
    await fs.rm(this.fileOf(sessionId), { force: true })
  }
}
