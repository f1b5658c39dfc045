import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseMarked, UserEnvironment, usersVariables, wantsLoginShell } from '../../electron/host/child-processes/environment'
import { isProcessRunning, removeDir, tempDir, waitUntil } from '../helpers'

/** Reading the user's login shell's environment (electron/host/child-processes/environment.ts) with shells written for the test. */

let dir: string

beforeAll(async () => {
  dir = await tempDir('environment')
  await mkdir(join(dir, 'bin'))
})
afterAll(() => removeDir(dir))

async function script(name: string, text: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, `#!/bin/sh\n${text}\n`)
  await chmod(path, 0o755)
  return path
}

/** A login shell whose "startup files" print a banner, put a folder on PATH and set variables, then run the command it was given. */
function loginShell(extra = ''): Promise<string> {
  return script(
    'login-shell',
    [
      'echo "Welcome! (a banner from the profile, printed to stdout)"',
      `PATH="${join(dir, 'bin')}:$PATH"; export PATH`,
      'FROM_PROFILE="set by the profile"; export FROM_PROFILE',
      'TRICKY=\'two\nlines and "quotes"\'; export TRICKY',
      extra,
      'for last; do :; done',
      'exec /bin/sh -c "$last"'
    ].join('\n')
  )
}

describe.skipIf(process.platform === 'win32')('the login shell’s environment', () => {
  it('is read from the shell and laid over the process’s own', async () => {
    // Switchboard's own setting in the profile is for Switchboard, not for what it starts.
    const shell = await loginShell('SWITCHBOARD_DATA_DIR=/elsewhere; export SWITCHBOARD_DATA_DIR')
    const environment = await UserEnvironment.read({ shell, timeoutMs: 20_000 })
    expect(environment.problem).toBeUndefined()
    expect(environment.source).toBe('login-shell')
    const env = environment.forChild({ MINE: 'added' })
    expect(env.PATH?.split(':')[0]).toBe(join(dir, 'bin'))
    expect(env.FROM_PROFILE).toBe('set by the profile')
    expect(env.TRICKY).toBe('two\nlines and "quotes"')
    expect(env.MINE).toBe('added')
    // Kept from the process (the shell did not unset it), and nothing of the reading itself.
    expect(env.HOME).toBe(process.env.HOME)
    expect(env.ELECTRON_RUN_AS_NODE).toBeUndefined()
    expect(env.SWITCHBOARD_RESOLVING_ENVIRONMENT).toBeUndefined()
    expect(env.SWITCHBOARD_PROCESS_MARK).toBeUndefined()
    expect(env.SWITCHBOARD_DATA_DIR).toBeUndefined()
  })

  it('finds commands on the shell’s PATH, and a relative path from the working folder', async () => {
    await script('bin/only-in-the-shell', 'exit 0')
    const environment = await UserEnvironment.read({ shell: await loginShell(), timeoutMs: 20_000 })
    expect(await environment.find('only-in-the-shell')).toBe(join(dir, 'bin', 'only-in-the-shell'))
    expect(await UserEnvironment.ofProcess().find('only-in-the-shell')).toBeNull()
    expect(await environment.find('./bin/only-in-the-shell', { cwd: dir })).toBe(join(dir, 'bin', 'only-in-the-shell'))
    expect(await environment.find('./bin/only-in-the-shell', { cwd: join(dir, 'bin') })).toBeNull()
  })

  it('falls back to the process’s environment, saying why, when the shell hangs; the shell and what it started are stopped', async () => {
    const pids = join(dir, 'hang.pids')
    const shell = await script('hanging-shell', `sleep 600 & echo "$$ $!" > "${pids}"\nwait`)
    const environment = await UserEnvironment.read({ shell, timeoutMs: 1000 })
    expect(environment.source).toBe('process')
    expect(environment.problem).toBe(`${shell} did not print its environment within 1 s`)
    expect(environment.forChild().PATH).toBe(process.env.PATH)
    const [shellPid, sleepPid] = (await readFile(pids, 'utf8')).trim().split(' ').map(Number)
    await waitUntil('the hung shell and its sleep to be gone', () => !isProcessRunning(shellPid) && !isProcessRunning(sleepPid))
  })

  it('falls back when the shell prints garbage, or nothing, or cannot be started', async () => {
    const garbage = await script('garbage-shell', 'echo "{not: json]"; echo "PATH=/nowhere"')
    expect((await UserEnvironment.read({ shell: garbage, timeoutMs: 20_000 })).problem).toBe(
      `${garbage} exited with code 0 without printing an environment Switchboard could read`
    )
    const failing = await script('failing-shell', 'echo "zsh: bad option -l" >&2\nexit 3')
    expect((await UserEnvironment.read({ shell: failing, timeoutMs: 20_000 })).problem).toBe(
      `${failing} exited with code 3 without printing an environment Switchboard could read; it wrote: zsh: bad option -l`
    )
    const missing = join(dir, 'no-such-shell')
    expect((await UserEnvironment.read({ shell: missing, timeoutMs: 20_000 })).problem).toMatch(
      new RegExp(`^${missing} could not be started: .*ENOENT`)
    )
  })

  it('reads the marked JSON only, without what the shell sets for itself', () => {
    const marker = 'a1b2c3'
    expect(parseMarked(`motd\n${marker}{"PATH":"/x","SHLVL":"2","_":"/usr/bin/node","N":5}${marker}\n`, marker)).toEqual({ PATH: '/x' })
    expect(parseMarked(`${marker}[1,2]${marker}`, marker)).toBeNull()
    expect(parseMarked(`${marker}{"PATH":${marker}`, marker)).toBeNull()
    expect(parseMarked('{"PATH":"/x"}', marker)).toBeNull()
  })
})

describe('when the login shell is read', () => {
  it('only when not started from a terminal, never on Windows, unless forced either way', () => {
    expect(wantsLoginShell({}, 'darwin', false)).toBe(true)
    expect(wantsLoginShell({}, 'linux', false)).toBe(true)
    expect(wantsLoginShell({}, 'linux', true)).toBe(false)
    expect(wantsLoginShell({}, 'win32', false)).toBe(false)
    expect(wantsLoginShell({ SWITCHBOARD_LOGIN_SHELL_ENV: '1' }, 'linux', true)).toBe(true)
    expect(wantsLoginShell({ SWITCHBOARD_LOGIN_SHELL_ENV: '0' }, 'darwin', false)).toBe(false)
  })
})

describe('what a child is given of the environment Switchboard runs in', () => {
  const running = {
    PATH: '/usr/bin',
    HOME: '/home/someone',
    SWITCHBOARD_DATA_DIR: '/home/someone/.switchboard',
    SWITCHBOARD_LOGIN_SHELL_ENV: '1',
    SWITCHBOARD_PROCESS_MARK: 'sb.outer',
    SWITCHBOARD_TEST_RUN: 'run-1',
    ELECTRON_RUN_AS_NODE: '1',
    ELECTRON_NO_ATTACH_CONSOLE: '1',
    ELECTRON_RENDERER_URL: 'http://localhost:5173/',
    ELECTRON_MIRROR: 'https://mirror.example/electron/',
    CHROME_DESKTOP: 'switchboard.desktop',
    XDG_CURRENT_DESKTOP: 'Unity',
    ORIGINAL_XDG_CURRENT_DESKTOP: 'ubuntu:GNOME',
    NOT_SWITCHBOARD_: 'the user’s'
  }

  it('the user’s variables, none of Switchboard’s or Electron’s own but the marks, with the desktop Electron replaced put back', () => {
    expect(usersVariables(running)).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/someone',
      // The user's, for installing Electron: not a switch of Switchboard's own Electron.
      ELECTRON_MIRROR: 'https://mirror.example/electron/',
      SWITCHBOARD_PROCESS_MARK: 'sb.outer',
      SWITCHBOARD_TEST_RUN: 'run-1',
      XDG_CURRENT_DESKTOP: 'ubuntu:GNOME',
      NOT_SWITCHBOARD_: 'the user’s'
    })
    // Electron writes `undefined` when the user had no desktop name.
    expect(usersVariables({ XDG_CURRENT_DESKTOP: 'Unity', ORIGINAL_XDG_CURRENT_DESKTOP: 'undefined' })).toEqual({})
    expect(usersVariables({ XDG_CURRENT_DESKTOP: 'KDE' })).toEqual({ XDG_CURRENT_DESKTOP: 'KDE' })
  })

  it('then the child’s own layers, a later one winning, a name of Switchboard’s included when the child asks for it', () => {
    const env = UserEnvironment.of(running).forChild(
      { PATH: '/opt/agent/bin', SWITCHBOARD_DATA_DIR: '/tmp/a-switchboard-the-agent-runs', OWN: 'variable' },
      { OWN: 'secret', SKIPPED: undefined },
      { SWITCHBOARD_PROCESS_MARK: 'sb.child' }
    )
    expect(env).toEqual({
      PATH: '/opt/agent/bin',
      HOME: '/home/someone',
      ELECTRON_MIRROR: 'https://mirror.example/electron/',
      SWITCHBOARD_DATA_DIR: '/tmp/a-switchboard-the-agent-runs',
      SWITCHBOARD_PROCESS_MARK: 'sb.child',
      SWITCHBOARD_TEST_RUN: 'run-1',
      XDG_CURRENT_DESKTOP: 'ubuntu:GNOME',
      NOT_SWITCHBOARD_: 'the user’s',
      OWN: 'secret'
    })
  })

  it('the Host’s own environment as it is at each use, without Switchboard’s', () => {
    const saved = process.env.SWITCHBOARD_DATA_DIR
    process.env.SWITCHBOARD_DATA_DIR = '/somewhere'
    try {
      const env = UserEnvironment.ofProcess().forChild()
      expect(env.SWITCHBOARD_DATA_DIR).toBeUndefined()
      expect(env.PATH).toBe(process.env.PATH)
    } finally {
      if (saved === undefined) delete process.env.SWITCHBOARD_DATA_DIR
      else process.env.SWITCHBOARD_DATA_DIR = saved
    }
  })
})
