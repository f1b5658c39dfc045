import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Checkpoints } from '../electron/host/workspace/checkpoints'
import { now, withTempDir, type Figure } from './lib'

/**
 * The checkpoint a turn starts with, on a repository of `files` files, beside
 * `git status` on the same repository: both read every file's stat data, and
 * the checkpoint also writes the changed files' objects, a tree and a commit.
 */

const run = promisify(execFile)
const FILES_PER_FOLDER = 100

export interface CheckpointRepo {
  repo: string
  checkpoints: Checkpoints
  /** Changes a few files and adds one, as a turn would. */
  touch: (round: number) => Promise<void>
  /** When its configuration (`.git/config`) was last written (Date.now()). */
  configured: number
}

export async function checkpointRepo(root: string, files: number): Promise<CheckpointRepo> {
  const repo = join(root, 'repo')
  await mkdir(repo, { recursive: true })
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@x' }
  // The configuration first, the files after: see `CONFIG_SETTLED_MS`.
  await run('git', ['init', '--quiet', '-b', 'main'], { cwd: repo })
  // No background gc while measuring (or while the folder is removed after).
  await run('git', ['config', 'gc.auto', '0'], { cwd: repo })
  const configured = Date.now()
  for (let folder = 0; folder * FILES_PER_FOLDER < files; folder++) {
    const dir = join(repo, 'src', `m${folder}`)
    await mkdir(dir, { recursive: true })
    const count = Math.min(FILES_PER_FOLDER, files - folder * FILES_PER_FOLDER)
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        writeFile(join(dir, `f${i}.ts`), `export const value${i} = ${folder * FILES_PER_FOLDER + i}\n// module ${folder}, file ${i}\n`)
      )
    )
  }
  await run('git', ['add', '-A'], { cwd: repo, env, maxBuffer: 1 << 28 })
  await run('git', ['commit', '--quiet', '-m', 'start'], { cwd: repo, env })
  const checkpoints = new Checkpoints({ shadowRoot: join(root, 'data', 'checkpoints'), scratch: join(root, 'data', 'tmp') })
  const touch = async (round: number): Promise<void> => {
    for (let i = 0; i < 5; i++) await writeFile(join(repo, 'src', `m${i}`, 'f1.ts'), `export const changed = ${round}\n`)
    await writeFile(join(repo, `new-${round}.ts`), `export const added = ${round}\n`)
  }
  return { repo, checkpoints, touch, configured }
}

/**
 * A checkpoint lists the repository's configuration again (one git more
 * before the prompt) while a configuration file is under two seconds old
 * (`driver-cache.ts`, git's racy care): a user's repository is older than
 * that at a turn's start, a repository just made is not. So each is measured
 * once its configuration is older: all are made first, the smallest first
 * (the larger ones take longer than that to make), and a repository made
 * faster than that is waited for.
 */
const CONFIG_SETTLED_MS = 2_100

export async function gitStatusMs(repo: string): Promise<number> {
  const started = now()
  await run('git', ['status', '--porcelain'], { cwd: repo, maxBuffer: 1 << 28 })
  return now() - started
}

/** What a turn waits for (the files read), and the time until the checkpoint's commit and ref are written. */
export async function checkpointMs(setup: CheckpointRepo): Promise<{ wait: number; written: number }> {
  const started = now()
  const begun = await setup.checkpoints.begin('bench-session', setup.repo)
  const wait = now() - started
  await begun.written
  return { wait, written: now() - started }
}

/**
 * The checkpoint a turn starts with, as a ratio to `git status` on the same
 * repository in the same run: what the turn waits for (the goal's figure), and
 * the time until the checkpoint is written (its tree, commit and ref, which go
 * on beside the agent's start).
 */
export async function checkpointFigures(
  add: (figure: Omit<Figure, 'median' | 'min' | 'max' | 'runs'>, samples: number[]) => Figure,
  quick: boolean
): Promise<void> {
  const sizes = quick ? [1_000] : [1_000, 10_000, 100_000]
  const goals: Record<number, number> = { 10_000: 2, 100_000: 1.5 }
  await withTempDir('checkpoint', async (root) => {
    const setups: CheckpointRepo[] = []
    for (const size of sizes) setups.push(await checkpointRepo(join(root, String(size)), size))
    for (const [n, size] of sizes.entries()) {
      const setup = setups[n] as CheckpointRepo
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, setup.configured + CONFIG_SETTLED_MS - Date.now())))
      const runs = size >= 100_000 ? 5 : 9
      // Each round changes a few files first, as a turn would, then both read the same tree.
      let round = 0
      const status: number[] = []
      const wait: number[] = []
      const written: number[] = []
      await setup.touch(round++)
      await gitStatusMs(setup.repo)
      await checkpointMs(setup) // warm-up: the first checkpoint copies the index and lists the session's checkpoints
      for (let i = 0; i < runs; i++) {
        await setup.touch(round++)
        status.push(await gitStatusMs(setup.repo))
        const taken = await checkpointMs(setup)
        wait.push(taken.wait)
        written.push(taken.written)
      }
      const base = add({ group: '6', name: 'git status --porcelain (baseline)', unit: 'ms', size }, status)
      base.ratio = 1
      base.baseline = 'git status'
      const f = add({ group: '6', name: 'checkpoint at a turn’s start: what the turn waits for (the files read)', unit: 'ms', size }, wait)
      f.ratio = f.median / base.median
      f.baseline = 'git status'
      const goal = goals[size]
      if (goal !== undefined) {
        f.goal = `≤ ${goal} × git status`
        f.met = f.ratio <= goal
      }
      const w = add(
        { group: '6', name: 'checkpoint at a turn’s start: until written (tree, commit and ref, beside the agent’s start)', unit: 'ms', size },
        written
      )
      w.ratio = w.median / base.median
      w.baseline = 'git status'
    }
  })
}
