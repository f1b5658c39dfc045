import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Checkpoints } from '../electron/host/workspace/checkpoints'
import { now } from './lib'

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
}

export async function checkpointRepo(root: string, files: number): Promise<CheckpointRepo> {
  const repo = join(root, 'repo')
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
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@x', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@x' }
  await run('git', ['init', '--quiet', '-b', 'main'], { cwd: repo })
  // No background gc while measuring (or while the folder is removed after).
  await run('git', ['config', 'gc.auto', '0'], { cwd: repo })
  await run('git', ['add', '-A'], { cwd: repo, env, maxBuffer: 1 << 28 })
  await run('git', ['commit', '--quiet', '-m', 'start'], { cwd: repo, env })
  const checkpoints = new Checkpoints({ shadowRoot: join(root, 'data', 'checkpoints'), scratch: join(root, 'data', 'tmp') })
  const touch = async (round: number): Promise<void> => {
    for (let i = 0; i < 5; i++) await writeFile(join(repo, 'src', `m${i}`, 'f1.ts'), `export const changed = ${round}\n`)
    await writeFile(join(repo, `new-${round}.ts`), `export const added = ${round}\n`)
  }
  return { repo, checkpoints, touch }
}

export async function gitStatusMs(repo: string): Promise<number> {
  const started = now()
  await run('git', ['status', '--porcelain'], { cwd: repo, maxBuffer: 1 << 28 })
  return now() - started
}

export async function checkpointMs(setup: CheckpointRepo, round: number): Promise<number> {
  const started = now()
  await setup.checkpoints.take('bench-session', setup.repo, 'turn')
  return now() - started
}
