import { randomUUID } from 'node:crypto'
import type { SessionRecord } from '../../../shared/domain'
import type { KeepResult, Race, RaceComparison, Racer, RaceRow } from '../../../shared/race'
import type { SessionPreset } from '../../../shared/presets'
import { describeError, HostError } from '../contract/errors'
import type { EventBus } from '../contract/events'
import type { RoomErrors } from '../contract/room-errors'
import type { HandlerSlice } from '../contract/handlers'
import type { SessionLifecycle } from '../sessions/lifecycle'
import type { SessionRegistry } from '../sessions/registry'
import type { Turns } from '../sessions/turns'
import type { SpendService } from '../spend/service'
import type { Records } from '../storage/records'
import { gitText } from '../workspace/git'
import type { WorkspaceService } from '../workspace/service'
import { repositoryAt, uncommitted } from '../workspace/worktrees'
import type { CheckRuns } from './check-runs'
import { RaceBook } from './race-book'

/**
 * The `races.*` requests: one prompt raced across 2–4 agents or presets, each
 * in a new session in its own worktree and branch (made as any worktree
 * session is, `SessionLifecycle.create`), the prompt sent to all once every
 * one that could start has; one that cannot start is said in its row and the
 * others go on. The comparison reads each worktree against the commit it
 * started from (`WorkspaceService.diffStat`), what each session spent
 * (`SpendService.totalsOf`) and the check command's runs (`CheckRuns`);
 * "Keep this one" commits and merges as the Changes view does, and the others'
 * worktrees go only when the user says so.
 */

/** How the races name themselves in warnings (`app.info`, the windows). */
const ROOM = 'Races'

export interface RaceServiceOptions {
  dataDir: string
  events: EventBus
  records: Records
  lifecycle: SessionLifecycle
  turns: Turns
  registry: SessionRegistry
  workspace: WorkspaceService
  spend: SpendService
  checks: CheckRuns
  /** Where its problems go: races.json unreadable, a racer's end that could not be noted (contract/room-errors.ts). */
  rooms: Pick<RoomErrors, 'report' | 'warn'>
}

export class RaceService {
  private readonly book: RaceBook

  constructor(private readonly options: RaceServiceOptions) {
    this.book = new RaceBook(options.dataDir, options.events, (message) => options.rooms.warn(ROOM, message))
  }

  async start(projectId: string, entries: { agentId: string; presetId?: string }[], prompt: string): Promise<Race> {
    const { records } = this.options
    const project = records.project(projectId)
    if (project.sshHost) throw new Error(`${project.name} is on ${project.sshHost}: a race makes its worktrees with git on this computer`)
    const repo = await repositoryAt(project.cwd).catch((error: unknown) => {
      const said = describeError(error)
      const why = / no commit yet/.test(said)
        ? `its repository has no commit yet: commit something there first`
        : error instanceof HostError && error.code === 'not_a_repository'
          ? `${project.cwd} is not one: run "git init" there and commit, then start the race again`
          : said.replace(/\.$/, '')
      throw new HostError(
        'not_a_repository',
        `A race gives each agent its own worktree and branch, so ${project.name} must be a git repository with a commit; ${why}.`
      )
    })
    const chosen = entries.map(({ agentId, presetId }) => {
      const preset = presetId ? (records.data.presets ?? []).find((p) => p.id === presetId) : undefined
      if (presetId && !preset) throw new Error(`No preset with id '${presetId}' (it may have been removed in another window)`)
      const definition = records.agent(preset?.agentId ?? agentId)
      return { preset: preset as SessionPreset | undefined, racer: racerOf(definition.id, definition.name, preset) }
    })
    const race: Race = {
      id: randomUUID(),
      projectId,
      prompt,
      createdAt: new Date().toISOString(),
      baseBranch: repo.branch,
      racers: chosen.map((c) => c.racer)
    }
    await this.book.add(race)
    // Every session first (in parallel), then the prompt to all of them at once.
    const made = await Promise.all(chosen.map(({ preset, racer }) => this.makeSession(race.id, projectId, racer, preset)))
    const startedAt = new Date().toISOString()
    const started = await this.book.update(race.id, (r) => {
      made.forEach((session, index) => {
        const racer = r.racers[index]
        if (!racer) return
        if ('error' in session) Object.assign(racer, { state: 'failed', error: session.error })
        else Object.assign(racer, { state: 'running', sessionId: session.id, branch: session.branch, base: session.base, startedAt })
      })
    })
    for (const racer of started.racers) {
      if (racer.state === 'running' && racer.sessionId) void this.send(race.id, racer.sessionId, prompt)
    }
    return started
  }

  /** Each racer with its files against its base, its spend, its session's title and whether a turn runs there now. */
  async compare(raceId: string): Promise<RaceComparison> {
    const { records, registry, spend, workspace } = this.options
    const race = structuredClone(await this.book.get(raceId))
    const spent = await spend.totalsOf(race.racers.flatMap((r) => (r.sessionId ? [r.sessionId] : [])))
    const rows: RaceRow[] = []
    for (const racer of race.racers) {
      const record = racer.sessionId ? records.findSession(racer.sessionId) : undefined
      const row: RaceRow = { ...racer, files: null, added: 0, removed: 0, spend: (racer.sessionId && spent.get(racer.sessionId)) || null }
      if (record) {
        row.title = record.title
        if (registry.stateOf(record.id).status === 'running') row.state = 'running'
      }
      if (!racer.sessionId) row.filesNote = 'No session: it did not start'
      else if (!record) row.filesNote = 'Its session was deleted'
      else if (record.worktree?.removedAt) row.filesNote = 'Its worktree and branch were removed'
      else if (!racer.base) row.filesNote = 'Its starting commit is not known'
      else {
        try {
          row.files = await workspace.diffStat(record as SessionRecord, racer.base)
          row.added = row.files.reduce((n, f) => n + f.added, 0)
          row.removed = row.files.reduce((n, f) => n + f.removed, 0)
        } catch (error) {
          row.filesNote = `Its changes could not be read: ${describeError(error)}`
        }
      }
      rows.push(row)
    }
    const checkCommand = records.findProject(race.projectId)?.checkCommand
    return { race, rows, ...(checkCommand ? { checkCommand } : {}) }
  }

  async runCheck(raceId: string, sessionId: string): Promise<Race> {
    const { records, checks } = this.options
    const race = await this.book.get(raceId)
    const racer = racerIn(race, sessionId)
    const project = records.project(race.projectId)
    if (!project.checkCommand) throw new Error(`${project.name} has no check command yet: set one (e.g. npm test) in the race's comparison first`)
    const record = records.session(sessionId)
    if (!record.worktree || record.worktree.removedAt) throw new Error(`The worktree of ${racer.name} was removed: there is nothing to check`)
    const run = checks.start(checkKey(raceId, sessionId), project.checkCommand, record.cwd, (ended) =>
      this.book.update(raceId, (r) => (racerIn(r, sessionId).check = ended)).then(() => undefined)
    )
    return this.book.update(raceId, (r) => (racerIn(r, sessionId).check = run))
  }

  async cancelCheck(raceId: string, sessionId: string): Promise<Race> {
    await this.options.checks.cancel(checkKey(raceId, sessionId))
    return this.book.get(raceId)
  }

  async keep(raceId: string, sessionId: string): Promise<KeepResult> {
    const { records, workspace } = this.options
    const race = await this.book.get(raceId)
    const racer = racerIn(race, sessionId)
    if (race.kept) throw new Error(`This race already kept ${racerIn(race, race.kept.sessionId).name}`)
    const firstLine = race.prompt.trim().split('\n')[0]?.slice(0, 72) ?? 'Race'
    const { merge, committed } = await workspace.commitAndMerge(sessionId, `${firstLine} (${racer.name}, kept from a race)`)
    if (!merge.merged) return { merge, committed, others: [] }
    await this.book.update(raceId, (r) => (r.kept = { sessionId, at: new Date().toISOString(), into: merge.into ?? '' }))
    const others: KeepResult['others'] = []
    for (const other of race.racers) {
      const record = other.sessionId && other.sessionId !== sessionId ? records.findSession(other.sessionId) : undefined
      if (!record?.worktree || record.worktree.removedAt) continue
      const files = await uncommitted(record.worktree.path).catch(() => [])
      others.push({ sessionId: record.id, name: other.name, branch: record.worktree.branch, uncommitted: files })
    }
    return { merge, committed, others }
  }

  async removeOthers(raceId: string): Promise<{ removed: string[]; refused: { sessionId: string; reason: string }[] }> {
    const { records, workspace, checks } = this.options
    const race = await this.book.get(raceId)
    if (!race.kept) throw new Error('Keep one of the racers first: the others are removed only after one was merged')
    const removed: string[] = []
    const refused: { sessionId: string; reason: string }[] = []
    for (const racer of race.racers) {
      if (!racer.sessionId || racer.sessionId === race.kept.sessionId || !records.findSession(racer.sessionId)) continue
      try {
        await checks.cancel(checkKey(raceId, racer.sessionId))
        await workspace.discardUnmerged(racer.sessionId)
        removed.push(racer.sessionId)
      } catch (error) {
        refused.push({ sessionId: racer.sessionId, reason: describeError(error) })
      }
    }
    return { removed, refused }
  }

  /** Ends the checks still running and waits for the last save. */
  async close(): Promise<void> {
    await this.options.checks.close()
    await this.book.settled()
  }

  handlers(): HandlerSlice<'races'> {
    return {
      'races.start': ({ projectId, entries, prompt }) => this.start(projectId, entries, prompt),
      'races.list': async ({ projectId }) =>
        (await this.book.list())
          .filter((r) => !projectId || r.projectId === projectId)
          .map((r) => structuredClone(r))
          .sort((a, b) => b.createdAt.localeCompare(a.createdAt)),
      'races.compare': ({ raceId }) => this.compare(raceId),
      'races.runCheck': ({ raceId, sessionId }) => this.runCheck(raceId, sessionId),
      'races.cancelCheck': ({ raceId, sessionId }) => this.cancelCheck(raceId, sessionId),
      'races.checkOutput': async ({ raceId, sessionId }) => {
        racerIn(await this.book.get(raceId), sessionId)
        const { text, truncated } = await this.options.checks.output(checkKey(raceId, sessionId))
        return { output: text, truncated }
      },
      'races.keep': ({ raceId, sessionId }) => this.keep(raceId, sessionId),
      'races.removeOthers': ({ raceId }) => this.removeOthers(raceId)
    }
  }

  /** A racer's session in a new worktree, marked as the race's; or why it could not be made. */
  private async makeSession(
    raceId: string,
    projectId: string,
    racer: Racer,
    preset: SessionPreset | undefined
  ): Promise<{ id: string; branch: string; base: string } | { error: string }> {
    const { lifecycle, records } = this.options
    try {
      const record = await lifecycle.create(projectId, racer.agentId, { isolation: 'worktree', preset })
      await records.updateSession(record.id, { raceId })
      const worktree = record.worktree as NonNullable<SessionRecord['worktree']>
      const base = await gitText(['rev-parse', 'HEAD'], { cwd: worktree.path })
      return { id: record.id, branch: worktree.branch, base }
    } catch (error) {
      const said = describeError(error)
      return { error: said.startsWith(racer.name) ? said : `${racer.name} could not start: ${said}` }
    }
  }

  /** The race's prompt to one racer; its end (or failure) is the racer's. */
  private async send(raceId: string, sessionId: string, prompt: string): Promise<void> {
    const end = await this.options.turns.prompt(sessionId, prompt).then(
      ({ stopReason }) => ({ state: 'done' as const, stopReason }),
      (error: unknown) => ({ state: 'failed' as const, error: describeError(error) })
    )
    await this.book
      .update(raceId, (r) => Object.assign(racerIn(r, sessionId), { ...end, endedAt: new Date().toISOString() }))
      .catch((error: unknown) => this.options.rooms.report(ROOM, error))
  }
}

function racerOf(agentId: string, agentName: string, preset: SessionPreset | undefined): Racer {
  return { agentId, ...(preset ? { presetId: preset.id } : {}), name: preset?.name ?? agentName, state: 'starting' }
}

function racerIn(race: Race, sessionId: string): Racer {
  const racer = race.racers.find((r) => r.sessionId === sessionId)
  if (!racer) throw new Error('That session is not one of this race’s')
  return racer
}

function checkKey(raceId: string, sessionId: string): string {
  return `${raceId}:${sessionId}`
}
