import { z } from 'zod'
import type { SpendTotals } from './spend'
import type { MergeResult } from './workspace'

/**
 * A race: one prompt sent at once to 2–4 agents (or presets), each in a new
 * session in its own worktree and branch of the project, then compared
 * (changed files, +/− lines, tokens and cost, time, the project's check
 * command) and one kept: its branch merged, the others' worktrees removed if
 * the user says so. The sessions stay ordinary sessions (`raceId` on each
 * record); the race itself is kept by the Host in `races.json`
 * (electron/host/races/).
 */

export const MIN_RACERS = 2
export const MAX_RACERS = 4
/** Longest check command kept (a line the user typed, run through the shell). */
export const CHECK_COMMAND_MAX = 2000

const id = z.string().min(1).max(200)

export const raceRequestParams = {
  /** Starts a session per entry, each in a new worktree, and sends them the prompt at once; an entry that cannot start is said in the race. */
  'races.start': z.object({
    projectId: id,
    entries: z
      .array(z.object({ agentId: id, presetId: id.optional() }))
      .min(MIN_RACERS, `A race needs at least ${MIN_RACERS} agents`)
      .max(MAX_RACERS, `A race takes at most ${MAX_RACERS} agents`),
    prompt: z.string().trim().min(1, 'A race needs a prompt').max(1_000_000)
  }),
  /** Every race of a project (or all), newest first. */
  'races.list': z.object({ projectId: id.optional() }),
  /** The comparison: each entry with its changed files and line counts against the race's base, its spend, its check. */
  'races.compare': z.object({ raceId: id }),
  /** Runs the project's check command in the session's worktree (again, if it ran before). */
  'races.runCheck': z.object({ raceId: id, sessionId: id }),
  'races.cancelCheck': z.object({ raceId: id, sessionId: id }),
  /** What the last check run printed (stdout and stderr as they came), its end kept when it was long. */
  'races.checkOutput': z.object({ raceId: id, sessionId: id }),
  /** Commits what the session left uncommitted in its worktree and merges its branch into the race's base branch (as the Changes view does). */
  'races.keep': z.object({ raceId: id, sessionId: id }),
  /** After a keep: the other sessions' worktrees and branches go, their uncommitted work with them (the user confirmed it in the window). */
  'races.removeOthers': z.object({ raceId: id })
} as const

/** A run of the check command in one worktree. */
export interface CheckRun {
  command: string
  status: 'running' | 'passed' | 'failed' | 'cancelled' | 'error'
  startedAt: string
  endedAt?: string
  exitCode?: number | null
  signal?: string | null
  /** Why it could not run, or how it ended when not by its exit code (cancelled, killed by a signal). */
  message?: string
}

export type RacerState = 'starting' | 'running' | 'done' | 'failed'

/** One agent (or preset) in a race. */
export interface Racer {
  agentId: string
  presetId?: string
  /** The agent's or preset's name when the race started. */
  name: string
  /** Its session, once made (none when it could not start). */
  sessionId?: string
  branch?: string
  /** The commit its worktree started from: what its changes are counted against. */
  base?: string
  state: RacerState
  /** Why it failed: the agent did not start, or its turn ended in an error. */
  error?: string
  stopReason?: string
  /** When the prompt went out and when its turn ended. */
  startedAt?: string
  endedAt?: string
  check?: CheckRun
}

export interface Race {
  id: string
  projectId: string
  prompt: string
  createdAt: string
  /** The branch the worktrees came from (the kept one is merged into it). */
  baseBranch: string | null
  racers: Racer[]
  /** The session kept: its branch merged into `baseBranch`. */
  kept?: { sessionId: string; at: string; into: string }
}

export interface RaceFileStat {
  path: string
  added: number
  removed: number
  /** Not text: no line counts. */
  binary: boolean
}

/** A racer as the comparison shows it. */
export interface RaceRow extends Racer {
  /** Its worktree against `base`, uncommitted files included; null with `filesNote` when that cannot be read (removed, git failed). */
  files: RaceFileStat[] | null
  filesNote?: string
  added: number
  removed: number
  /** Tokens and cost its session reported (null: nothing reported). */
  spend: SpendTotals | null
  /** The session's title now (it may have been renamed). */
  title?: string
}

export interface RaceComparison {
  race: Race
  rows: RaceRow[]
  /** The project's check command, when it has one. */
  checkCommand?: string
}

export interface KeepResult {
  merge: MergeResult
  /** Files committed in the kept worktree before the merge (it left them uncommitted). */
  committed: number
  /** The other racers whose worktrees could be removed now, with the uncommitted files each would lose. */
  others: { sessionId: string; name: string; branch: string; uncommitted: string[] }[]
}

export interface RaceRequestResults {
  'races.start': Race
  'races.list': Race[]
  'races.compare': RaceComparison
  'races.runCheck': Race
  'races.cancelCheck': Race
  'races.checkOutput': { output: string; truncated: boolean }
  'races.keep': KeepResult
  'races.removeOthers': { removed: string[]; refused: { sessionId: string; reason: string }[] }
}
