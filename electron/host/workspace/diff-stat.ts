import type { RaceFileStat } from '../../../shared/race'
import { relativeToFolder, type Checkpoints } from './checkpoints'
import { git } from './git'
import { scope } from './repo'

/**
 * A folder's files as they are now (tracked and untracked, not ignored: the
 * same snapshot a checkpoint takes) against a commit, file by file with the
 * lines added and removed: what a race's comparison shows of each worktree.
 * Plumbing only (`diff-tree --numstat` of two trees), without textconv or
 * external diff: nothing of the repository runs.
 */
export async function diffStat(checkpoints: Checkpoints, cwd: string, base: string): Promise<RaceFileStat[]> {
  const ws = await checkpoints.workspace(cwd)
  const present = await checkpoints.present(ws)
  const args = ['diff-tree', '-r', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', '--numstat', base, present, '--', scope(ws)]
  const out = (await git(args, ws.run)).stdout.toString('utf8')
  const files: RaceFileStat[] = []
  // Each file is `<added>\t<removed>\t<path>\0`; a binary file counts `-` for both.
  for (const line of out.split('\0')) {
    const match = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(line)
    if (!match) continue
    const binary = match[1] === '-'
    files.push({ path: relativeToFolder(ws, match[3] ?? ''), added: binary ? 0 : Number(match[1]), removed: binary ? 0 : Number(match[2]), binary })
  }
  return files
}
