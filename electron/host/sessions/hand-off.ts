import type { SessionRecord, UnseenTurn } from '../../../shared/domain'
import type { HandOffSeedInfo } from '../../../shared/hand-off'
import type { ReviewComment } from '../../../shared/workspace'
import type { Records } from '../storage/records'
import { currentViewOf } from '../storage/transcript-stream'
import type { WorkspaceService } from '../workspace/service'
import { foldConversation } from './conversation-fold'
import { MIN_SEED_BUDGET, SEED_BUDGET, seedOf, SMALLER_SEED_BUDGET, tooLong, type ConversationSeed } from './conversation-seed'
import type { HandOffSeeds } from './hand-off-seeds'
import type { SessionLifecycle } from './lifecycle'
import type { SessionRegistry } from './registry'

/**
 * "Continue with…": a conversation handed to another agent or preset. A new
 * session of it in the same project, folder and worktree (branch kept), whose
 * next prompt carries the conversation so far (conversation-seed.ts): the user
 * writes that prompt, seeing what goes with it. Nothing of the original
 * session changes but its link to the new one, and only once the new session
 * exists: an agent that does not start leaves everything as it was.
 */

export interface HandOffDeps {
  records: Records
  registry: SessionRegistry
  lifecycle: SessionLifecycle
  seeds: HandOffSeeds
  workspace: Pick<WorkspaceService, 'sinceStart'>
}

export interface HandOffRequest {
  id: string
  agentId?: string
  presetId?: string
  reviewNotes?: ReviewComment[]
}

export class HandOff {
  constructor(private readonly deps: HandOffDeps) {}

  async handOff({ id, agentId, presetId, reviewNotes = [] }: HandOffRequest): Promise<SessionRecord> {
    const { records, registry, lifecycle, seeds } = this.deps
    const parent = records.session(id)
    const preset = presetId ? records.data.presets?.find((p) => p.id === presetId) : undefined
    if (presetId && !preset) throw new Error(`No preset with id '${presetId}' (it may have been removed in another window)`)
    const targetId = preset?.agentId ?? agentId
    if (!targetId) throw new Error('Name the agent or the preset to continue with')
    const target = records.agent(targetId)
    if (parent.worktree?.removedAt) {
      throw new Error(
        `The worktree and branch '${parent.worktree.branch}' of '${parent.title}' were removed after the merge: there is no folder to continue in`
      )
    }
    // What the seed is made of is read before any agent starts: a transcript that cannot be read stops here.
    const source = await this.source(parent, SEED_BUDGET)
    const session = await lifecycle.create(parent.projectId, target.id, { preset, within: parent })
    const live = registry.get(session.id)
    const accepts = live?.connection?.capabilities.prompt ?? { embeddedContext: false, image: false }
    const seed = seedOf(source.folded, { ...source.about, reviewNotes }, { images: accepts.image })
    await seeds.save(session.id, { seed, reviewNotes })
    const to = preset ? `${preset.name} (${target.name})` : target.name
    const from = records.agent(parent.agentId).name
    if (live)
      registry.append(live, {
        t: 'context',
        at: new Date().toISOString(),
        from: parent.id,
        title: parent.title,
        agent: from,
        reason: 'hand-off',
        handedTo: to
      })
    await records.updateSession(session.id, {
      handedOffFrom: parent.id,
      handOffSeed: infoOf(seed, accepts.embeddedContext),
      title: parent.title,
      titleSource: 'prompt'
    })
    await records.updateSession(parent.id, { handedOffTo: [...(records.session(parent.id).handedOffTo ?? []), session.id] })
    return records.session(session.id)
  }

  /** The conversation handed over is not to be sent (the chip's remove). */
  async dropSeed(id: string): Promise<SessionRecord> {
    await this.deps.seeds.remove(id)
    await this.deps.records.updateSession(id, { handOffSeed: undefined })
    return this.deps.records.session(id)
  }

  /**
   * A turn of a handed-off session ended. One that carried the seed and was refused as too long gets it back,
   * built again within a smaller budget and said so (the user sends again, or removes it); else the seed's file goes.
   */
  async turnEnded(id: string, end: UnseenTurn): Promise<void> {
    const { seeds, records } = this.deps
    const budget = seeds.takeSent(id)
    if (budget === undefined) return
    const record = records.findSession(id)
    const parent = record?.handedOffFrom ? records.findSession(record.handedOffFrom) : undefined
    if (!record || !end.error || !tooLong(end.error) || !parent || budget <= MIN_SEED_BUDGET) {
      if (record && end.error && tooLong(end.error) && budget <= MIN_SEED_BUDGET) {
        await records.updateSession(id, { handOffSeed: undefined })
      }
      return seeds.remove(id)
    }
    const smaller = budget > SMALLER_SEED_BUDGET ? SMALLER_SEED_BUDGET : Math.max(MIN_SEED_BUDGET, Math.floor(budget / 2))
    const { reviewNotes } = await seeds.read(id)
    const source = await this.source(parent, smaller)
    const accepts = this.deps.registry.get(id)?.connection?.capabilities.prompt ?? { embeddedContext: false, image: false }
    const seed = seedOf(source.folded, { ...source.about, reviewNotes }, { images: accepts.image, budget: smaller })
    await seeds.save(id, { seed, reviewNotes })
    const agent = records.agent(record.agentId).name
    const said = `${agent} refused the conversation as too long (${budget.toLocaleString('en-US')} characters at most): it is attached again within ${smaller.toLocaleString('en-US')}. Send again, or remove it.`
    const info = infoOf(seed, accepts.embeddedContext)
    await records.updateSession(id, { handOffSeed: { ...info, notes: [said, ...info.notes] } })
  }

  /** The first session of a chain of hand-offs in one folder: the diff runs from its first checkpoint (all the chain did). */
  private firstOf(session: SessionRecord): SessionRecord {
    let first = session
    for (let hops = 0; hops < 50 && first.handedOffFrom; hops++) {
      const earlier = this.deps.records.findSession(first.handedOffFrom)
      if (!earlier || earlier.cwd !== session.cwd) break
      first = earlier
    }
    return first
  }

  /**
   * The parent's conversation as it stands (a superseded replay left out), folded for a seed of `budget` characters
   * as its transcript is read (a long one is never held whole), and what the seed says of where it happened.
   */
  private async source(parent: SessionRecord, budget: number) {
    const { registry, records, workspace } = this.deps
    const agentName = records.findAgent(parent.agentId)?.name ?? 'the agent'
    const folded = await foldConversation(currentViewOf(await registry.flushedTranscript(parent.id)), agentName, budget)
    const changes = await workspace.sinceStart(this.firstOf(parent)).catch((error: unknown) => ({ unavailable: (error as Error).message }))
    return {
      folded,
      about: {
        title: parent.title,
        agentName,
        cwd: parent.cwd,
        ...(parent.worktree ? { branch: parent.worktree.branch } : {}),
        changes
      }
    }
  }
}

function infoOf(seed: ConversationSeed, asResource: boolean): HandOffSeedInfo {
  return { chars: seed.chars, budget: seed.budget, asResource, images: seed.images.length, notes: seed.notes }
}
