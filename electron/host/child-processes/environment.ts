import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { isatty } from 'node:tty'
import { homedir, userInfo } from 'node:os'
import { basename, isAbsolute, resolve } from 'node:path'
import { findExecutable } from './executables'
import { killProcessTree, newProcessMark, PROCESS_MARK_ENV } from './process-tree'

/**
 * The environment of every process the Host starts (agents, their sign-in
 * programs, terminals, MCP servers under Test connection) and of the
 * "installed" checks, in one place: the user's environment without
 * Switchboard's own variables (`usersVariables`), then the child's own
 * variables and secrets (`forChild`), and nothing else: never another
 * program's secrets, never serve's token (neither is ever in an environment).
 *
 * An app started from the macOS Dock or a Linux desktop menu does not get the
 * environment the user's shell builds (PATH with Homebrew, nvm, ~/.local/bin…):
 * launchd or the desktop session gives it a minimal one, so `npx`, `node` and
 * the agents' own commands are not found. As VS Code does, the Host can read
 * the user's login shell's environment at start: `$SHELL -i -l -c` runs this
 * program as Node (ELECTRON_RUN_AS_NODE) to print its environment as JSON
 * between two random marks (so whatever the shell's startup files print does
 * not matter), within a timeout. The result is laid over the process's own
 * environment (variables the shell does not set are kept). When the shell
 * cannot be read (missing, hangs, prints nothing usable), the process's own
 * environment is used and the reason is reported (`problem`).
 *
 * When: the desktop app reads it only when not started from a terminal
 * (`wantsLoginShell`): from a terminal, it already has the user's environment,
 * and reading it again would only cost time. Never on Windows (the
 * environment a program gets there is the user's). `SWITCHBOARD_LOGIN_SHELL_ENV=1`
 * or `0` forces it on or off. `serve`, started from a terminal or by a script
 * that set its environment on purpose, reads it only when forced on.
 */

export const LOGIN_SHELL_ENV = 'SWITCHBOARD_LOGIN_SHELL_ENV'
export const DEFAULT_LOGIN_SHELL_TIMEOUT_MS = 10_000

type Layer = Record<string, string | undefined> | undefined

export interface LoginShellOptions {
  /** The shell to run (default: $SHELL, else the user's login shell from the system). */
  shell?: string
  timeoutMs?: number
}

/** The environment processes the Host starts get, and where it came from. */
export class UserEnvironment {
  private constructor(
    private readonly vars: Readonly<Record<string, string>> | null,
    /** `login-shell`: read from the user's shell; `process`: the Host's own. */
    readonly source: 'login-shell' | 'process',
    /** Why the login shell's environment could not be used, when it was asked for. */
    readonly problem?: string
  ) {}

  /** The Host's own environment, as it is at each use. */
  static ofProcess(problem?: string): UserEnvironment {
    return new UserEnvironment(null, 'process', problem)
  }

  /** A fixed set of variables (read from the login shell). */
  static of(vars: Record<string, string>): UserEnvironment {
    return new UserEnvironment({ ...vars }, 'login-shell')
  }

  /** Reads the login shell's environment, or falls back to the process's own with the reason. */
  static async read(options: LoginShellOptions = {}): Promise<UserEnvironment> {
    const result = await readLoginShell(options)
    return 'vars' in result ? UserEnvironment.of(result.vars) : UserEnvironment.ofProcess(result.problem)
  }

  /**
   * A child's environment: the user's (`usersVariables`: without Switchboard's
   * and Electron's own), then each of the child's own layers in turn (its
   * variables, its secrets, what it asked for: a later one wins; undefined
   * values are left out). The only place a child's environment is made; see
   * "The environment" in this room's README.md (child-processes/ after issue 38's move).
   */
  forChild(...layers: Layer[]): Record<string, string> {
    const env = usersVariables(this.vars ?? process.env)
    for (const layer of layers) {
      for (const [name, value] of Object.entries(layer ?? {})) if (value !== undefined) env[name] = value
    }
    return env
  }

  /**
   * Where a child given these layers would find `command`: a bare name on its
   * PATH, a relative path (`./bin/agent`) from `cwd` (where the child starts),
   * an absolute path as it is. Null when there is nothing to run.
   */
  find(command: string, options: { layers?: Layer[]; cwd?: string } = {}): Promise<string | null> {
    const relativePath = !isAbsolute(command) && /[\\/]/.test(command)
    const candidate = relativePath ? resolve(options.cwd ?? homedir(), command) : command
    return findExecutable(candidate, this.forChild(...(options.layers ?? [])))
  }
}

/**
 * What of the environment Switchboard runs in is Switchboard's own (or
 * Electron's, for Switchboard), not the user's, and so never given to a
 * program it starts:
 *
 * - `SWITCHBOARD_*`: its settings (SWITCHBOARD_DATA_DIR: a Switchboard run in
 *   a terminal would take the same data folder, SWITCHBOARD_LOGIN_SHELL_ENV, …),
 *   except the process mark (process-tree.ts; each child gets its own over it)
 *   and the test suite's run mark (test/leak-check.ts), which must reach
 *   every descendant;
 * - Electron's switches for the process they were set for: with
 *   ELECTRON_RUN_AS_NODE an Electron program an agent starts (an editor,
 *   another Switchboard) would run as plain Node; ELECTRON_NO_ATTACH_CONSOLE;
 * - electron-vite's for Switchboard in development (ELECTRON_RENDERER_URL: an
 *   electron-vite app previewed in a terminal would load Switchboard's page);
 * - CHROME_DESKTOP: Electron names Switchboard's .desktop file there (another
 *   Chromium program would group its windows under Switchboard's);
 * - ORIGINAL_XDG_CURRENT_DESKTOP: where Electron keeps the user's
 *   XDG_CURRENT_DESKTOP when it replaces it (with `Unity`, on Ubuntu): the
 *   user's value is put back.
 *
 * Other ELECTRON_* variables are the user's settings for their own Electron
 * programs and tools (ELECTRON_MIRROR for installing Electron,
 * ELECTRON_OZONE_PLATFORM_HINT…) and are kept.
 */
const OWN_PREFIX = 'SWITCHBOARD_'
const OWN_NAMES = new Set([
  'ELECTRON_RUN_AS_NODE',
  'ELECTRON_NO_ATTACH_CONSOLE',
  'ELECTRON_RENDERER_URL',
  'ELECTRON_ENTRY',
  'ELECTRON_CLI_ARGS',
  'CHROME_DESKTOP',
  'ORIGINAL_XDG_CURRENT_DESKTOP'
])
/** The test suite's run mark (test/leak-check.ts TEST_RUN_ENV). */
const TEST_RUN_MARK = 'SWITCHBOARD_TEST_RUN'
const KEPT = new Set([PROCESS_MARK_ENV, TEST_RUN_MARK])

/** Whether a variable of the environment Switchboard runs in is its own (or Electron's for it), not the user's. */
export function isSwitchboardsOwn(name: string): boolean {
  return !KEPT.has(name) && (OWN_NAMES.has(name) || name.startsWith(OWN_PREFIX))
}

/** The user's variables in an environment Switchboard runs in: without its own (`isSwitchboardsOwn`), Electron's change undone. */
export function usersVariables(env: Record<string, string | undefined>): Record<string, string> {
  const vars: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (value !== undefined && !isSwitchboardsOwn(name)) vars[name] = value
  const original = env.ORIGINAL_XDG_CURRENT_DESKTOP
  // Electron writes `undefined` when the user had none.
  if (original !== undefined) {
    if (original === '' || original === 'undefined') delete vars.XDG_CURRENT_DESKTOP
    else vars.XDG_CURRENT_DESKTOP = original
  }
  return vars
}

/**
 * The environment a Host's processes get: the login shell's when asked for and
 * readable, else the Host's own; what happened goes to the log (stderr, which
 * the terminal or the system journal keeps), a failure also to the window
 * (`environmentWarning`, in app.info's warnings).
 */
export async function hostEnvironment(loginShell: boolean | LoginShellOptions | undefined): Promise<UserEnvironment> {
  if (!loginShell) return UserEnvironment.ofProcess()
  const environment = await UserEnvironment.read(loginShell === true ? {} : loginShell)
  if (environment.problem) console.warn(`switchboard: ${environmentWarning(environment.problem)}`)
  else console.info(`switchboard: using the environment of your login shell (PATH=${environment.forChild().PATH ?? ''})`)
  return environment
}

export function environmentWarning(problem: string): string {
  return `Switchboard could not read your login shell's environment (${problem}). Agents, MCP servers and terminals start with the environment Switchboard was started with, so commands your shell's startup files put on PATH may not be found; start Switchboard from a terminal, or fix the shell's startup files.`
}

/** Whether to read the login shell's environment: not from a terminal, not on Windows, unless forced either way. */
export function wantsLoginShell(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  fromTerminal: boolean = startedFromTerminal()
): boolean {
  if (env[LOGIN_SHELL_ENV] === '1') return true
  if (env[LOGIN_SHELL_ENV] === '0') return false
  return platform !== 'win32' && !fromTerminal
}

/** Any of stdin, stdout or stderr is a terminal: someone started us from a shell, whose environment we have. */
export function startedFromTerminal(): boolean {
  return [0, 1, 2].some((fd) => isatty(fd))
}

/** Variables the shell sets for itself or we set for the reading, not the user's. */
const NOT_THE_USERS = new Set([
  'ELECTRON_RUN_AS_NODE',
  'ELECTRON_NO_ATTACH_CONSOLE',
  'SWITCHBOARD_RESOLVING_ENVIRONMENT',
  PROCESS_MARK_ENV,
  '_',
  'SHLVL',
  'PWD',
  'OLDPWD'
])
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024
const STDERR_TAIL_CHARS = 600

type ShellResult = { vars: Record<string, string> } | { problem: string }

async function readLoginShell(options: LoginShellOptions): Promise<ShellResult> {
  const base = process.env
  const shell = options.shell ?? base.SHELL ?? safeLoginShell()
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOGIN_SHELL_TIMEOUT_MS
  if (!shell) return { problem: 'no login shell is set (SHELL is empty)' }
  const marker = randomBytes(8).toString('hex')
  const command = `${shellQuote(process.execPath)} -p ${shellQuote(`"${marker}" + JSON.stringify(process.env) + "${marker}"`)}`
  const name = basename(shell)
  // csh and tcsh take no -l together with -c; every other shell here reads its login and interactive files with -i -l.
  const args = name === 'csh' || name === 'tcsh' ? ['-ic', command] : ['-i', '-l', '-c', command]
  // Marked, so a timed-out shell is stopped with all it started; not with the host's prefix, as what its startup
  // files start for good (an ssh-agent) must not count as this host's leftovers at its next start.
  const processMark = newProcessMark()
  return new Promise<ShellResult>((done) => {
    let settled = false
    let stdout = Buffer.alloc(0)
    let stderr = ''
    const child = spawn(shell, args, {
      cwd: homedir(),
      env: {
        ...base,
        ELECTRON_RUN_AS_NODE: '1',
        ELECTRON_NO_ATTACH_CONSOLE: '1',
        SWITCHBOARD_RESOLVING_ENVIRONMENT: '1',
        [PROCESS_MARK_ENV]: processMark
      },
      // Its own process group, away from any terminal: an interactive shell must not take one over, and a hung one is killed whole.
      detached: process.platform !== 'win32',
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true
    })
    let timer: NodeJS.Timeout | undefined
    const finish = (result: ShellResult): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      done(result)
    }
    timer = setTimeout(() => {
      // A shell that hangs (a prompt waiting for input, a slow startup file) goes, with everything it started.
      killProcessTree({ pid: child.pid, mark: processMark }, 'SIGKILL')
      finish({ problem: `${shell} did not print its environment within ${Math.round(timeoutMs / 1000)} s${tail(stderr)}` })
    }, timeoutMs)
    child.on('error', (error) => finish({ problem: `${shell} could not be started: ${error.message}` }))
    const failed = (code: number | null, signal: NodeJS.Signals | null): void => {
      const how = code !== null ? `exited with code ${code}` : `was ended by ${signal}`
      finish({ problem: `${shell} ${how} without printing an environment Switchboard could read${tail(stderr)}` })
    }
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT_BYTES) stdout = Buffer.concat([stdout, chunk])
      // Done as soon as the second mark is there: something the startup files left running may hold stdout open.
      const parsed = parseMarked(stdout.toString('utf8'), marker)
      if (parsed) finish({ vars: { ...stringsOf(base), ...parsed } })
    })
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS * 4)))
    child.on('close', failed)
    // The shell ended, but its output may still be held open by something it started: what came by then is all there is.
    child.on('exit', (code, signal) => setTimeout(() => failed(code, signal), 1000).unref())
  })
}

/** The JSON object between the two marks, without the variables that are not the user's; null when there is none. */
export function parseMarked(output: string, marker: string): Record<string, string> | null {
  const match = new RegExp(`${marker}([\\s\\S]*?)${marker}`).exec(output)
  if (!match) return null
  let value: unknown
  try {
    value = JSON.parse(match[1])
  } catch {
    return null
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  const vars: Record<string, string> = {}
  for (const [name, v] of Object.entries(value)) {
    if (typeof v === 'string' && !NOT_THE_USERS.has(name)) vars[name] = v
  }
  return vars
}

function stringsOf(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
}

function tail(stderr: string): string {
  const text = stderr.trim()
  return text ? `; it wrote: ${text.length > STDERR_TAIL_CHARS ? `…${text.slice(-STDERR_TAIL_CHARS)}` : text}` : ''
}

/** A word for a POSIX shell (and fish, csh): single quotes, a single quote as '\''. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

function safeLoginShell(): string | undefined {
  try {
    return userInfo().shell ?? undefined
  } catch {
    return undefined
  }
}
