import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { installCommand, type InstallPlace } from '../../electron/shell-command'
import { removeDir, tempDir } from '../helpers'

/**
 * "Install the switchboard Command" (electron/shell-command.ts) on each platform, in temporary folders: where the
 * command goes, what is already there (ours, or someone else's, left alone), and rights refused. The AppImage's case
 * runs end to end in test/shell/desktop-shell.test.ts. Then the deb's own scripts (build/linux/), run with stand-ins
 * for the system's tools.
 *
 * Not proven here: osascript's password dialog and PowerShell's writing of the user's PATH (their wrappers,
 * runAsAdminOnMac and windowsUserPath, are not run on Linux); that a terminal opened afterwards finds the command.
 */

let root: string
let resources: string

beforeEach(async () => {
  root = await tempDir('shell-command')
  resources = join(root, 'Switchboard.app', 'Contents', 'Resources')
  mkdirSync(join(resources, 'bin'), { recursive: true })
  writeFileSync(join(resources, 'bin', 'switchboard'), '#!/bin/sh\n', { mode: 0o755 })
  writeFileSync(join(resources, 'bin', 'switchboard.cmd'), '@echo off\r\n')
})

afterEach(() => removeDir(root))

const launcher = (): string => join(resources, 'bin', 'switchboard')

describe('on macOS: a link in /usr/local/bin', () => {
  const place = (extra: Partial<InstallPlace> = {}): InstallPlace => ({
    platform: 'darwin',
    resourcesPath: resources,
    macBin: join(root, 'usr-local-bin'),
    pathEnv: join(root, 'usr-local-bin'),
    ...extra
  })

  it('links the command to the app’s launcher, says so, and says it is there the second time', async () => {
    expect(await installCommand(place())).toMatchObject({ ok: true, message: 'The switchboard command is installed.' })
    expect(readlinkSync(join(root, 'usr-local-bin', 'switchboard'))).toBe(launcher())
    expect(await installCommand(place())).toMatchObject({ ok: true, message: 'The switchboard command is already installed.' })
  })

  it('replaces the link of another copy of Switchboard, and leaves a file that is not Switchboard’s', async () => {
    mkdirSync(join(root, 'usr-local-bin'))
    const link = join(root, 'usr-local-bin', 'switchboard')
    symlinkSync('/Volumes/Old/Switchboard.app/Contents/Resources/bin/switchboard', link)
    expect(await installCommand(place())).toMatchObject({ ok: true, message: 'The switchboard command is installed.' })
    expect(readlinkSync(link)).toBe(launcher())

    await removeDir(link)
    writeFileSync(link, '#!/bin/sh\necho another switchboard\n')
    const refused = await installCommand(place())
    expect(refused).toMatchObject({ ok: false, message: `There is already a file ${link} that is not Switchboard's.` })
    expect(readFileSync(link, 'utf8')).toBe('#!/bin/sh\necho another switchboard\n')
  })

  it('asks for an administrator’s rights where it may not write, and says so when they are not given', async () => {
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })
    const asked: string[] = []
    const link = join(root, 'usr-local-bin', 'switchboard')
    const refusing = place({ makeLink: () => Promise.reject(denied), runAsAdmin: async (command) => void asked.push(command) })
    // Given: the command the administrator runs makes the link (run here as the user it would be run as).
    const given = await installCommand({
      ...refusing,
      runAsAdmin: async (command) => {
        asked.push(command)
        execFileSync('/bin/sh', ['-c', command])
      }
    })
    expect(given).toMatchObject({ ok: true, message: 'The switchboard command is installed.' })
    expect(asked[0]).toBe(`mkdir -p '${join(root, 'usr-local-bin')}' && ln -sfn '${launcher()}' '${link}'`)
    expect(readlinkSync(link)).toBe(launcher())

    await removeDir(link)
    const notGiven = await installCommand({ ...refusing, runAsAdmin: () => Promise.reject(new Error('User canceled. (-128)')) })
    expect(notGiven.ok).toBe(false)
    expect(notGiven.message).toBe(
      `The switchboard command could not be installed: writing ${link} needs an administrator's rights, which were not given.`
    )
    expect(existsSync(link)).toBe(false)
  })

  it('says the app has no command when its launcher is missing', async () => {
    await removeDir(join(resources, 'bin'))
    expect(await installCommand(place())).toMatchObject({ ok: false, message: 'This Switchboard has no command to install.' })
  })
})

describe('on Linux', () => {
  it('the deb put it on the PATH already: nothing to do', async () => {
    const usrBin = join(root, 'usr-bin')
    mkdirSync(usrBin)
    symlinkSync(launcher(), join(usrBin, 'switchboard'))
    const result = await installCommand({ platform: 'linux', resourcesPath: resources, systemBin: usrBin, home: join(root, 'home') })
    expect(result).toMatchObject({ ok: true, message: 'The switchboard command is already installed.' })
    expect(existsSync(join(root, 'home'))).toBe(false)
  })

  it('an unpacked app: a link in ~/.local/bin, with a word when that folder is not on the PATH', async () => {
    const home = join(root, 'home')
    const result = await installCommand({ platform: 'linux', resourcesPath: resources, systemBin: join(root, 'none'), home, pathEnv: '/usr/bin' })
    expect(result.ok).toBe(true)
    expect(result.detail).toContain(`${join(home, '.local', 'bin')} is not on your PATH`)
    expect(lstatSync(join(home, '.local', 'bin', 'switchboard')).isSymbolicLink()).toBe(true)
    expect(readlinkSync(join(home, '.local', 'bin', 'switchboard'))).toBe(launcher())
  })
})

describe('on Windows: the launcher’s folder on the user’s PATH', () => {
  it('adds the folder once, keeping what was there', async () => {
    let userPath = 'C:\\Tools;C:\\Users\\me\\bin;'
    const place: InstallPlace = {
      platform: 'win32',
      resourcesPath: resources,
      userPath: { get: async () => userPath, set: async (value) => void (userPath = value) }
    }
    const result = await installCommand(place)
    expect(result).toMatchObject({ ok: true, message: 'The switchboard command is installed.' })
    expect(result.detail).toContain('Open a new terminal')
    expect(userPath).toBe(`C:\\Tools;C:\\Users\\me\\bin;${join(resources, 'bin')}`)
    expect(await installCommand(place)).toMatchObject({ ok: true, message: 'The switchboard command is already installed.' })
    expect(userPath.split(';')).toHaveLength(3)
  })
})

describe("the deb's scripts (build/linux/), as electron-builder fills them in", () => {
  /** Fills the template's macros as electron-builder's FpmTarget does (an unknown one is an error), and runs it with stand-in tools that log their calls. */
  function runScript(name: string, tools: string[]): string[] {
    const template = readFileSync(new URL(`../../build/linux/${name}`, import.meta.url), 'utf8')
    const values: Record<string, string> = { executable: 'switchboard', sanitizedProductName: 'Switchboard' }
    const script = template.replace(/\${([a-zA-Z]+)}/g, (_match, macro: string) => {
      if (!(macro in values)) throw new Error(`Macro ${macro} is not defined`)
      return values[macro] as string
    })
    const bin = join(root, `tools-${name}`)
    mkdirSync(bin)
    const log = join(root, `${name}.log`)
    for (const tool of tools) {
      writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> '${log}'\n`)
      chmodSync(join(bin, tool), 0o755)
    }
    writeFileSync(join(root, name), script)
    execFileSync('/bin/bash', [join(root, name)], { env: { PATH: bin }, stdio: 'ignore' })
    return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []
  }

  it('after install: /usr/bin/switchboard is the command’s launcher (update-alternatives, else a link), not the app’s executable', () => {
    const launcherPath = '/opt/Switchboard/resources/bin/switchboard'
    const withAlternatives = runScript('after-install.sh', ['update-alternatives', 'chmod', 'unshare', 'ln', 'rm'])
    expect(withAlternatives).toContain(`update-alternatives --install /usr/bin/switchboard switchboard ${launcherPath} 100`)
    expect(withAlternatives).toContain('update-alternatives --remove switchboard /opt/Switchboard/switchboard')
    expect(withAlternatives.join('\n')).not.toContain('/usr/bin/switchboard switchboard /opt/Switchboard/switchboard')
  })

  it('after install without update-alternatives: a link; after remove: the launcher’s alternative taken away', async () => {
    expect(runScript('after-install.sh', ['chmod', 'unshare', 'ln'])).toContain(
      'ln -sf /opt/Switchboard/resources/bin/switchboard /usr/bin/switchboard'
    )
    expect(runScript('after-remove.sh', ['update-alternatives'])).toEqual([
      'update-alternatives --remove switchboard /opt/Switchboard/resources/bin/switchboard'
    ])
  })
})
