import { execFile } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { promisify } from 'node:util'

/**
 * "Install the switchboard Command" (the app's menu, as VS Code's "Install 'code' command in PATH"): puts the
 * packaged command's launcher (build/bin/, in resources/bin) where a terminal finds it. No Electron import: the
 * shell shows the result in a dialog; tests drive this with temporary folders.
 *
 * - macOS: a link /usr/local/bin/switchboard → Switchboard.app/Contents/Resources/bin/switchboard; without the
 *   rights to write there, the system asks for an administrator's (osascript).
 * - Linux: the deb links /usr/bin/switchboard itself (build/linux/after-install.sh): nothing to do. An AppImage
 *   (mounted elsewhere at each start) gets a small script in ~/.local/bin that runs the AppImage as the command
 *   (electron/cli-relay.ts); an unpacked app a link there to its launcher.
 * - Windows: the launcher's folder (resources\bin, with switchboard.cmd) added to the user's PATH.
 *
 * Never overwrites what is not Switchboard's: a file already there that is not a link to a Switchboard launcher
 * (nor a script this wrote) is left as it is, and the message says what to do.
 */

export interface InstallPlace {
  platform: NodeJS.Platform
  /** The app's resources folder (process.resourcesPath): the launcher is bin/switchboard(.cmd) in it. */
  resourcesPath: string
  home?: string
  /** The AppImage file this app runs from ($APPIMAGE), on Linux. */
  appImage?: string
  /** The PATH of the app's environment, to say when the folder of the command is not on it. */
  pathEnv?: string
  /** Where the command goes on macOS (/usr/local/bin) and where the deb put it on Linux (/usr/bin): tests move them. */
  macBin?: string
  systemBin?: string
  /** macOS: runs a shell command with an administrator's rights (asking for them); rejects when they are not given. */
  runAsAdmin?: (command: string) => Promise<void>
  /** Makes a link (default: beside it, renamed over it); tests refuse it as a folder without rights would. */
  makeLink?: (link: string, target: string) => Promise<void>
  /** Windows: the user's own PATH (HKCU\Environment). */
  userPath?: { get(): Promise<string>; set(value: string): Promise<void> }
}

export interface InstallResult {
  ok: boolean
  message: string
  detail?: string
}

export const COMMAND_NAME = 'switchboard'
/** The line that marks the script this writes for an AppImage (so it is replaced, never a stranger's file). */
export const SCRIPT_MARK = '# Written by Switchboard\'s "Install the switchboard Command"'

export async function installCommand(place: InstallPlace): Promise<InstallResult> {
  const launcher = join(place.resourcesPath, 'bin', place.platform === 'win32' ? `${COMMAND_NAME}.cmd` : COMMAND_NAME)
  if (!(await exists(launcher))) {
    return {
      ok: false,
      message: 'This Switchboard has no command to install.',
      detail: `Its launcher ${launcher} is missing: install the app again.`
    }
  }
  try {
    if (place.platform === 'darwin') return await installMac(place, launcher)
    if (place.platform === 'win32') return await installWindows(place, launcher)
    return await installLinux(place, launcher)
  } catch (error) {
    return { ok: false, message: 'The switchboard command could not be installed.', detail: (error as Error).message }
  }
}

async function installMac(place: InstallPlace, launcher: string): Promise<InstallResult> {
  const bin = place.macBin ?? '/usr/local/bin'
  const link = join(bin, COMMAND_NAME)
  const there = await whatIsAt(link, launcher)
  if (there === 'ours' && (await fs.readlink(link).catch(() => '')) === launcher) return installed(link, launcher, place, true)
  if (there === 'stranger') return notOurs(link)
  try {
    await fs.mkdir(bin, { recursive: true })
    await (place.makeLink ?? replaceLink)(link, launcher)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EACCES' && code !== 'EPERM') throw error
    if (!place.runAsAdmin) return noRights(link)
    try {
      await place.runAsAdmin(`mkdir -p ${shellQuote(bin)} && ln -sfn ${shellQuote(launcher)} ${shellQuote(link)}`)
    } catch {
      return noRights(link)
    }
  }
  return installed(link, launcher, place, false)
}

async function installLinux(place: InstallPlace, launcher: string): Promise<InstallResult> {
  const system = join(place.systemBin ?? '/usr/bin', COMMAND_NAME)
  if ((await realPath(system)) === (await realPath(launcher))) return installed(system, launcher, place, true)
  const bin = join(place.home ?? homedir(), '.local', 'bin')
  const target = join(bin, COMMAND_NAME)
  const there = await whatIsAt(target, launcher)
  if (there === 'stranger') return notOurs(target)
  await fs.mkdir(bin, { recursive: true })
  if (place.appImage) {
    // The AppImage is mounted in a new place at each start: the command runs the AppImage, which hands over to it.
    // Chromium's --headless: its main process then starts without a display (a terminal over SSH), never opening one.
    const script = `#!/bin/sh\n${SCRIPT_MARK} for this AppImage:\nSWITCHBOARD_CLI=1 exec ${shellQuote(place.appImage)} --headless --disable-gpu --switchboard-cli "$@"\n`
    if (there === 'ours' && (await fs.readFile(target, 'utf8').catch(() => '')) === script) return installed(target, launcher, place, true)
    await fs.rm(target, { force: true })
    await fs.writeFile(target, script, { mode: 0o755 })
  } else {
    if (there === 'ours' && (await realPath(target)) === (await realPath(launcher))) return installed(target, launcher, place, true)
    await replaceLink(target, launcher)
  }
  return installed(target, launcher, place, false)
}

async function installWindows(place: InstallPlace, launcher: string): Promise<InstallResult> {
  if (!place.userPath) throw new Error("the user's PATH cannot be read here")
  const folder = dirname(launcher)
  const current = await place.userPath.get()
  const entries = current.split(';').filter((entry) => entry.trim() !== '')
  const same = (entry: string): boolean => entry.replace(/[\\/]+$/, '').toLowerCase() === folder.replace(/[\\/]+$/, '').toLowerCase()
  if (entries.some(same)) return installed(folder, launcher, place, true)
  await place.userPath.set([...entries, folder].join(';'))
  return {
    ok: true,
    message: 'The switchboard command is installed.',
    detail: `${folder} was added to your PATH. Open a new terminal to use it: switchboard --help.`
  }
}

function installed(where: string, launcher: string, place: InstallPlace, already: boolean): InstallResult {
  const folder = place.platform === 'win32' ? where : dirname(where)
  const onPath = (place.pathEnv ?? process.env.PATH ?? '').split(delimiter).includes(folder)
  const hint =
    onPath || place.platform === 'win32' ? '' : ` ${folder} is not on your PATH: add it in your shell's profile to type just "switchboard".`
  return {
    ok: true,
    message: already ? 'The switchboard command is already installed.' : 'The switchboard command is installed.',
    detail: `${where} runs ${place.appImage ?? launcher}. Try: switchboard --help.${hint}`
  }
}

function notOurs(path: string): InstallResult {
  return {
    ok: false,
    message: `There is already a file ${path} that is not Switchboard's.`,
    detail: 'It was left as it is. Remove or rename it if it is not needed, then choose Install the switchboard Command again.'
  }
}

function noRights(path: string): InstallResult {
  return {
    ok: false,
    message: `The switchboard command could not be installed: writing ${path} needs an administrator's rights, which were not given.`,
    detail: `To do it in a terminal: sudo ln -sfn "<Switchboard.app>/Contents/Resources/bin/switchboard" ${path}`
  }
}

/**
 * What is at `path`: nothing; ours (a link to this launcher, or to another Switchboard's launcher, or a script
 * this wrote); or a stranger's file, left alone.
 */
async function whatIsAt(path: string, launcher: string): Promise<'nothing' | 'ours' | 'stranger'> {
  let stat
  try {
    stat = await fs.lstat(path)
  } catch {
    return 'nothing'
  }
  if (stat.isSymbolicLink()) {
    const to = await fs.readlink(path)
    return to === launcher || /[\\/]resources[\\/]bin[\\/]switchboard$/i.test(to) ? 'ours' : 'stranger'
  }
  if (stat.isFile() && stat.size < 4096) return (await fs.readFile(path, 'utf8')).includes(SCRIPT_MARK) ? 'ours' : 'stranger'
  return 'stranger'
}

/** A new link in place of ours, made beside it and renamed over it. */
async function replaceLink(link: string, target: string): Promise<void> {
  const temp = `${link}.${process.pid}.tmp`
  await fs.rm(temp, { force: true })
  await fs.symlink(target, temp)
  await fs.rename(temp, link)
}

async function exists(path: string): Promise<boolean> {
  return fs.access(path).then(
    () => true,
    () => false
  )
}

async function realPath(path: string): Promise<string | null> {
  return fs.realpath(path).catch(() => null)
}

/** A word for /bin/sh, in single quotes. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`
}

const run = promisify(execFile)

/** macOS: the command run by /bin/sh as an administrator, after the system asked for the password (osascript). */
export async function runAsAdminOnMac(command: string): Promise<void> {
  const script = `do shell script "${command.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}" with administrator privileges`
  await run('osascript', ['-e', script])
}

/** Windows: the user's PATH through PowerShell (which also tells running programs it changed); the value goes by environment, never in the command. */
export const windowsUserPath = {
  async get(): Promise<string> {
    const { stdout } = await run('powershell.exe', [
      '-NoProfile',
      '-NonInteractive',
      '-Command',
      "[Environment]::GetEnvironmentVariable('Path','User')"
    ])
    return stdout.trim()
  },
  async set(value: string): Promise<void> {
    await run(
      'powershell.exe',
      ['-NoProfile', '-NonInteractive', '-Command', "[Environment]::SetEnvironmentVariable('Path',$env:SWITCHBOARD_NEW_PATH,'User')"],
      {
        env: { ...process.env, SWITCHBOARD_NEW_PATH: value }
      }
    )
  }
}
