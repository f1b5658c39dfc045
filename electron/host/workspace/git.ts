import { execFile } from 'node:child_process'
import { usersVariables } from '../environment'
import { HostError } from '../errors'

/**
 * The one way the Host runs git: the user's own `git` from PATH (the same
 * program, config and hooks-free plumbing the user's repositories know), never
 * a prompt (GIT_TERMINAL_PROMPT=0), messages in English so they can be read
 * (LC_ALL=C), and nothing inherited that would point git at another repository
 * or index. Every caller passes its repository explicitly (`cwd`, or `gitDir`
 * and `workTree` for a shadow repository).
 */

export interface GitOptions {
  /** The folder git runs in. */
  cwd: string
  /** A repository kept apart from the work tree (a shadow repository in the data folder). */
  gitDir?: string
  workTree?: string
  /** An index other than the repository's own (checkpoints never touch the user's index). */
  indexFile?: string
  input?: string | Buffer
  /** Exit codes that are answers, not failures (e.g. 1 from `merge-tree` when it conflicts). */
  okCodes?: number[]
  timeoutMs?: number
  env?: Record<string, string>
}

export interface GitResult {
  stdout: Buffer
  code: number
}

/** A git command that failed: the command and git's own first lines of explanation. */
export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly stderr: string
  ) {
    super(`git ${args[0] ?? ''} failed: ${firstLines(stderr) || `exit code ${String(code)}`}`)
  }
}

export const GIT_MISSING_MESSAGE =
  'Git was not found on PATH. Worktrees, checkpoints and the Changes view need it: install git (https://git-scm.com/downloads) and restart Switchboard.'

/** Who checkpoints and review bases are written as (they live on private refs, never on the user's branches). */
const IDENTITY = {
  GIT_AUTHOR_NAME: 'Switchboard',
  GIT_AUTHOR_EMAIL: 'switchboard@localhost',
  GIT_COMMITTER_NAME: 'Switchboard',
  GIT_COMMITTER_EMAIL: 'switchboard@localhost'
}

/** Variables that would redirect git to another repository, index or work tree than the one a caller names. */
const INHERITED = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_PREFIX',
  'GIT_COMMON_DIR'
]

const DEFAULT_TIMEOUT_MS = 120_000

export function git(args: string[], options: GitOptions): Promise<GitResult> {
  // The user's variables (what git runs, a hook or a credential helper, sees them), none of Switchboard's own (environment.ts).
  const env: NodeJS.ProcessEnv = usersVariables(process.env)
  for (const name of INHERITED) delete env[name]
  Object.assign(env, { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0' }, options.env)
  if (options.gitDir) env.GIT_DIR = options.gitDir
  if (options.workTree) env.GIT_WORK_TREE = options.workTree
  if (options.indexFile) env.GIT_INDEX_FILE = options.indexFile
  const okCodes = options.okCodes ?? [0]
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      ['-c', 'core.quotepath=off', ...args],
      { cwd: options.cwd, env, encoding: 'buffer', maxBuffer: 512 * 1024 * 1024, timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
      (error, stdout, stderr) => {
        // The spawn itself failed: no git on PATH (an exit code is a number, a spawn error a string).
        if (error?.code === 'ENOENT') {
          reject(new HostError('git_missing', GIT_MISSING_MESSAGE))
          return
        }
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0
        if (error && error.killed) {
          reject(new Error(`git ${args[0] ?? ''} took longer than ${(options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000} s and was stopped`))
          return
        }
        if (code === null || !okCodes.includes(code)) {
          reject(new GitError(args, code, stderr.toString('utf8')))
          return
        }
        resolve({ stdout, code })
      }
    )
    if (options.input !== undefined) child.stdin?.end(options.input)
  })
}

/** git's output as text, without the final newline. */
export async function gitText(args: string[], options: GitOptions): Promise<string> {
  return (await git(args, options)).stdout.toString('utf8').replace(/\n$/, '')
}

/** Writes a commit on no branch (a checkpoint or a review base) as Switchboard. */
export async function commitTree(tree: string, parents: string[], message: string, options: GitOptions): Promise<string> {
  const args = ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message]
  return gitText(args, { ...options, env: { ...options.env, ...IDENTITY } })
}

/** NUL-separated output (`-z`) as strings. */
export function splitZ(output: Buffer): string[] {
  const text = output.toString('utf8')
  const parts = text.split('\0')
  if (parts[parts.length - 1] === '') parts.pop()
  return parts
}

function firstLines(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(' ')
}
