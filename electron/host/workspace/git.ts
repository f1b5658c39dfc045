import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { usersVariables } from '../child-processes/environment'
import { HostError } from '../contract/errors'

/**
 * The one way the Host runs git: the user's own `git` from PATH, never a
 * prompt (GIT_TERMINAL_PROMPT=0), messages in English so they can be read
 * (LC_ALL=C). Every caller passes its repository explicitly (`cwd`, or
 * `gitDir` and `workTree` for a shadow repository).
 *
 * The repositories it runs on are ones an agent can write to (`.git/config`,
 * `.gitattributes`, `.git/hooks`), so nothing git would run on a repository's
 * say ever runs: see "Switchboard's own git runs no code from a repository" in
 * this folder's README.md. Every call gets `SAFE_CONFIG` on its command line
 * (which wins over every config file); a call that may convert or merge file
 * contents also gets every filter, diff and merge driver the repository's
 * configuration names switched off (`driverOverrides`); and the environment is
 * built here: the user's variables without any `GIT_*` one, then only the
 * `GIT_*` variables set below.
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
  /** The repository's own hooks run (a commit or merge the user asked for, in a project where they turned hooks on). */
  userHooks?: boolean
  /** Where the configuration whose drivers are switched off is read, when git will also read another's (a worktree's own, for `worktree remove`). */
  configFrom?: string
  /** `driverOverrides` already read for these options: calls made together (a checkpoint's add and write-tree) list the configuration once. */
  drivers?: string[]
  /** Settings for this call only (`-c`, after `SAFE_CONFIG`), e.g. how Switchboard's own index is written. */
  settings?: string[]
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

const DEFAULT_TIMEOUT_MS = 120_000

/**
 * Where hooks are looked for: a place that can hold none. On POSIX `/dev/null`
 * (`/dev/null/pre-commit` can never exist); on Windows an empty folder of this
 * process's own, made private by mkdtemp in the user's own temporary folder.
 */
let noHooks: string | undefined
function hooksPath(): string {
  if (process.platform !== 'win32') return '/dev/null'
  if (!noHooks || !existsSync(noHooks)) noHooks = mkdtempSync(join(tmpdir(), 'switchboard-no-hooks-'))
  return noHooks
}

/**
 * What every call sets on its command line, over any config file (the
 * repository's, the user's, the system's): nothing that would run a program
 * named by configuration runs. See this folder's README.md for each.
 */
function safeConfig(userHooks = false): string[] {
  return [
    'core.quotepath=off',
    // An fsmonitor "hook" is any command; false makes git stat the files itself.
    'core.fsmonitor=false',
    // No hook at all (post-checkout, post-commit, prepare-commit-msg, reference-transaction, post-index-change, pre-auto-gc…).
    ...(userHooks ? [] : [`core.hooksPath=${hooksPath()}`]),
    // Nothing is fetched: every transport (ext::, ssh, file, http) is refused, so no ssh command, proxy, remote helper or credential helper runs.
    'protocol.allow=never',
    'credential.helper=',
    'core.askPass=',
    'submodule.recurse=false',
    // No signing and no verifying: gpg.program (any command) never runs.
    'commit.gpgSign=false',
    'tag.gpgSign=false',
    'merge.verifySignatures=false',
    // No pager, no editor (GIT_PAGER and GIT_EDITOR below win over these anyway).
    'core.pager=cat',
    'core.editor=:',
    'sequence.editor=:'
  ]
}

/**
 * Commands that never convert, diff or merge file contents, so no filter,
 * textconv or merge driver can run in them: they skip the driver listing. Any
 * other command gets every driver switched off, including every command that
 * writes an index (`write-tree`, `read-tree`): writing one re-reads racily
 * clean files through their clean filter.
 */
const CONTENT_FREE = new Set([
  'rev-parse',
  'for-each-ref',
  'update-ref',
  'commit-tree',
  'symbolic-ref',
  'show-ref',
  'check-ref-format',
  'cat-file',
  'ls-tree',
  'init',
  'config',
  'branch'
])

/** A merge driver's stand-in: git's own three-way text merge (a conflict exits non-zero, as a driver must). */
const TEXT_MERGE = 'git merge-file --marker-size=%L %A %O %B'

/**
 * `-c` settings that switch off every filter (clean, smudge, process), diff
 * (textconv, command) and merge driver the configuration git would read for
 * this call defines: a `.gitattributes` line only names a driver, the program
 * is in the configuration, and a driver without a program runs nothing. The
 * configuration is read with the same repository, environment and
 * `SAFE_CONFIG` as the call (includes followed, as git does).
 */
export async function driverOverrides(options: GitOptions): Promise<string[]> {
  return overridesFor(splitZ(await configListing(options, false)), options)
}

/** `git config --list -z` as the call with these options would read its configuration (with each entry's origin first when `origins`). */
export async function configListing(options: GitOptions, origins: boolean): Promise<Buffer> {
  const args = ['config', '--list', ...(origins ? ['--show-origin'] : []), '-z']
  return (await run(args, { ...options, cwd: options.configFrom ?? options.cwd, input: undefined, okCodes: [0] }, [])).stdout
}

/** The `-c` settings that switch off the drivers the configuration entries (`key\nvalue`) define. */
export function overridesFor(entries: string[], options: GitOptions): string[] {
  const filters = new Set<string>()
  const diffs = new Set<string>()
  const merges = new Set<string>()
  for (const entry of entries) {
    const key = entry.split('\n', 1)[0] ?? ''
    const driver = /^(filter|diff|merge)\.(.+)\.([^.]+)$/s.exec(key)
    if (!driver) continue
    const [, section = '', name = '', variable = ''] = driver
    if (section === 'filter' && ['clean', 'smudge', 'process', 'required'].includes(variable)) filters.add(name)
    else if (section === 'diff' && ['textconv', 'command'].includes(variable)) diffs.add(name)
    else if (section === 'merge' && ['driver', 'recursive'].includes(variable)) merges.add(name)
  }
  const overrides: string[] = []
  const add = (section: string, name: string, settings: [string, string][]) => {
    // `-c` splits at the first '=': a name with one (or a line break) cannot be switched off there, so nothing runs at all.
    if (/[=\n]/.test(name)) {
      throw new Error(
        `The git configuration of ${options.workTree ?? options.cwd} defines a ${section} driver named '${name.replace(/\n/g, '\\n')}', which Switchboard cannot switch off, so it runs no git command there. Remove that section from the repository's .git/config.`
      )
    }
    for (const [variable, value] of settings) overrides.push('-c', `${section}.${name}.${variable}=${value}`)
  }
  for (const name of filters)
    add('filter', name, [
      ['clean', ''],
      ['smudge', ''],
      ['process', ''],
      ['required', 'false']
    ])
  for (const name of diffs)
    add('diff', name, [
      ['textconv', ''],
      ['command', '']
    ])
  for (const name of merges)
    add('merge', name, [
      ['driver', TEXT_MERGE],
      ['recursive', 'text']
    ])
  return overrides
}

export async function git(args: string[], options: GitOptions): Promise<GitResult> {
  const drivers = CONTENT_FREE.has(args[0] ?? '') ? [] : (options.drivers ?? (await driverOverrides(options)))
  return run(args, options, drivers)
}

/** The environment of every git Switchboard runs: the user's variables without any of git's, then only what is set here. */
function gitEnvironment(options: GitOptions): NodeJS.ProcessEnv {
  // The user's variables (PATH, HOME for the user's own config), none of Switchboard's own (environment.ts), and no GIT_* at all:
  // GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, GIT_EXEC_PATH, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF… would redirect it or run a program.
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(usersVariables(process.env))) if (!/^GIT_/i.test(name)) env[name] = value
  Object.assign(env, { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0', GIT_PAGER: 'cat', GIT_EDITOR: ':' })
  for (const [name, value] of Object.entries(options.env ?? {})) env[name] = value
  if (options.gitDir) env.GIT_DIR = options.gitDir
  if (options.workTree) env.GIT_WORK_TREE = options.workTree
  if (options.indexFile) env.GIT_INDEX_FILE = options.indexFile
  return env
}

function run(args: string[], options: GitOptions, drivers: string[]): Promise<GitResult> {
  const env = gitEnvironment(options)
  const okCodes = options.okCodes ?? [0]
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...[...safeConfig(options.userHooks), ...(options.settings ?? [])].flatMap((setting) => ['-c', setting]), ...drivers, ...args],
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
