import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import * as asar from '@electron/asar'
import { parseSync, Visitor } from 'vite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deadAddress, FAKE_ELECTRON, fakeElectronZip, run, sha256, startMirror, type Mirror, type Run } from './fake-electron'
import { tempDir, removeDir } from '../helpers'

/**
 * First launch, as a new user meets it: a fresh `npm ci` of the project (the files git would commit,
 * copied from this checkout), then `npm start`, which must fetch Electron's binary before electron-vite
 * runs — here from a local mirror holding a fake Electron build, so the test is offline — and launch
 * it on the built app. Then what goes wrong: an old Node.js, the mirror down, a 404, a corrupt file.
 * Then packaging: electron-builder --dir with the fake build as electronDist, and the app.asar it
 * makes must hold every module the bundles import, with the native binaries outside it.
 *
 * One `npm ci` serves the whole file (the npm cache is warm in CI: .ci/run has just run npm ci). It installs the project
 * less the dev dependencies only other test files run (TEST_ONLY: the preset agents, whose binaries are 0.8 of
 * node_modules' 1.4 GB, and Electronegativity), taken out of the copy's package.json and lock file by npm itself:
 * npm start and electron-builder never load them, and they were half of npm ci's time (quiet: 50 s with them, 27 s
 * without; 105 to 160 s with them in a whole run). So are the tools only the other steps of `npm test` and `npm run
 * bench` run (CHECK_ONLY: the test runner, the browser driver, the linters, the type checker), a further 222 of the
 * 743 packages left (see the commit that added them for the time). That the whole lock file installs is shown by
 * .ci/run's `npm ci`; that npm start and electron-builder need none of them, by this file passing without them.
 *
 * What the packaging part does not prove: that a real Electron run as Node (ELECTRON_RUN_AS_NODE) loads the
 * command's ES modules from inside app.asar as the stand-in does from the extracted archive; the deb, AppImage,
 * dmg and NSIS installers themselves (only `--dir` builds: the deb's scripts are run with stand-in tools in
 * test/unit/shell-command.test.ts; its .desktop entry is computed, not installed); the Windows launcher run by
 * cmd.exe (its paths are checked, it is not run); macOS (no build here: its Info.plist URL scheme is not checked).
 */

const root = resolve(import.meta.dirname, '../..')
const electronVersion = (JSON.parse(readFileSync(join(root, 'node_modules/electron/package.json'), 'utf8')) as { version: string }).version
const target = `${process.platform}-${process.arch}`
const zipName = `electron-v${electronVersion}-${target}.zip`
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const stackTrace = /\n\s+at .+:\d+:\d+\)?\n/
/** Dev dependencies that only other test files run (test/real/, test/security/): not installed here (see above). */
const TEST_ONLY = ['@agentclientprotocol/claude-agent-acp', '@agentclientprotocol/codex-acp', '@google/gemini-cli', '@doyensec/electronegativity']
/** Dev dependencies only `npm test`'s other steps (tests, lint, format and type checks) and the benchmarks run: not installed here either. */
const CHECK_ONLY = [
  '@vue/test-utils',
  'acp-sdk-v1',
  'ajv',
  'axe-core',
  'eslint',
  'eslint-plugin-import-x',
  'eslint-plugin-vue',
  'happy-dom',
  'npm-run-all2',
  'playwright-core',
  'prettier',
  'tsx',
  'typescript-eslint',
  'vitest',
  'vue-eslint-parser',
  'vue-tsc'
]

let work: string
let app: string
let electronCache: string
let mirror: Mirror
const timings: Record<string, number> = {}
let packaging: Promise<{ builder: Run; output: string }> | undefined

/** The environment of a user with no Electron settings, plus `extra` (npm's own variables from an outer `npm test` left out). */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|electron_|ELECTRON_|NODE_OPTIONS$|INIT_CWD$)/i.test(key)) continue
    env[key] = value
  }
  return { ...env, electron_config_cache: electronCache, ...extra }
}

function npmStart(extra: Record<string, string>, args: string[] = []): Promise<Run> {
  return run(npm, ['start', ...(args.length ? ['--', ...args] : [])], { cwd: app, env: userEnv(extra) })
}

/** Takes the downloaded Electron out again, as on a fresh install. */
function forgetElectron(): void {
  rmSync(join(app, 'node_modules/electron/dist'), { recursive: true, force: true })
  rmSync(join(app, 'node_modules/electron/path.txt'), { force: true })
  rmSync(electronCache, { recursive: true, force: true })
}

/** The files git would commit from this checkout: tracked, and untracked but not ignored. */
function copyProject(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean)
  for (const file of new Set(files)) {
    const from = join(root, file)
    if (!existsSync(from) || !lstatSync(from).isFile()) continue // deleted in the work tree, or a submodule
    mkdirSync(dirname(join(to, file)), { recursive: true })
    copyFileSync(from, join(to, file))
  }
}

/**
 * electron-builder --dir for Linux and Windows on the app as built, started once: by the test that builds the app, as
 * soon as it is built, so that it runs beside the two tests after it (which only run `npm start -- --skipBuild` and
 * take Electron's download out; electron-builder reads out/, package.json and the production node_modules, and copies
 * the fake build from its own folder), or by the packaging test when that one runs alone. The packaging test then
 * extracts the archive once, for the command's launcher and the imports' check both (it was extracted twice). Side by
 * side with the old file (both at once, load 16-22): the packaging test 164 -> 121 s, the file 609 -> 582 s.
 */
function packageApp(): Promise<{ builder: Run; output: string }> {
  packaging ??= (async () => {
    if (!existsSync(join(app, 'out/main/index.js'))) {
      const build = await run(npm, ['run', 'build'], { cwd: app, env: userEnv() })
      expect(build.code, build.output).toBe(0)
    }
    // An unpacked Electron for electron-builder to copy instead of downloading one: the fake build as Linux's
    // executable and as Windows' (electron.exe).
    const electronDist = join(work, 'electron-unpacked')
    mkdirSync(electronDist, { recursive: true })
    for (const executable of ['electron', 'electron.exe']) {
      writeFileSync(join(electronDist, executable), FAKE_ELECTRON)
      chmodSync(join(electronDist, executable), 0o755)
    }
    writeFileSync(join(electronDist, 'version'), electronVersion)
    const output = join(work, 'packaged')
    // The Linux and the Windows build of the same tree, in one run of electron-builder (two runs took 90-110 s of a
    // whole CI run; in a copy of the project, load 20-25: two runs 136 + 136 s and 36 s of CPU, one run 132 s and 29 s,
    // the archives the same byte for byte, the files the same but for electron.exe beside Linux's executable).
    // Windows' executable is not edited: rcedit and the archive's integrity hash need a real one (electron-builder
    // writes that hash into the Windows and macOS executables only, so leaving it out changes nothing for Linux).
    const builder = await run(
      join(app, 'node_modules/.bin/electron-builder'),
      [
        '--dir',
        '--linux',
        '--win',
        '--publish',
        'never',
        `-c.electronDist=${electronDist}`,
        `-c.directories.output=${output}`,
        '-c.win.signAndEditExecutable=false',
        '-c.disableAsarIntegrity=true',
        // Writes the .desktop file the deb would get (--dir writes none), computed by electron-builder itself.
        `-c.afterPack=${join(app, 'test/launch/desktop-entry-hook.cjs')}`
      ],
      { cwd: app, env: userEnv() }
    )
    timings['electron-builder --dir --linux --win'] = builder.seconds
    return { builder, output }
  })()
  return packaging
}

describe.runIf(process.platform === 'linux')('first launch on a fresh install', () => {
  beforeAll(async () => {
    work = await tempDir('launch')
    app = join(work, 'app')
    electronCache = join(work, 'electron-cache')
    copyProject(app)
    expect(existsSync(join(app, 'node_modules'))).toBe(false)
    const pruned = await run(npm, ['uninstall', '--package-lock-only', '--prefer-offline', '--no-audit', '--no-fund', ...TEST_ONLY, ...CHECK_ONLY], {
      cwd: app,
      env: userEnv()
    })
    if (pruned.code !== 0) throw new Error(`npm uninstall --package-lock-only failed (${pruned.code}):\n${pruned.output}`)
    const ci = await run(npm, ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, env: userEnv() })
    timings['npm ci'] = ci.seconds
    if (ci.code !== 0) throw new Error(`npm ci failed (${ci.code}):\n${ci.output}`)
    expect(existsSync(join(app, 'node_modules/electron/dist'))).toBe(false)

    const zip = await fakeElectronZip(electronVersion)
    mirror = await startMirror(
      new Map([
        [`/v${electronVersion}/${zipName}`, zip],
        [
          `/v${electronVersion}/SHASUMS256.txt`,
          Buffer.from(`${sha256(zip)} *${zipName}\n${'0'.repeat(64)} *electron-v${electronVersion}-other.zip\n`)
        ],
        // A mirror whose checksum list does not match its zip.
        [`/corrupt/v${electronVersion}/${zipName}`, zip],
        [`/corrupt/v${electronVersion}/SHASUMS256.txt`, Buffer.from(`${sha256(Buffer.from('another file'))} *${zipName}\n`)]
      ])
    )
  }, 600_000)

  afterAll(async () => {
    console.log(`first launch timings (s): ${JSON.stringify(timings)}`)
    await mirror?.close()
    if (work) await removeDir(work)
  })

  it('names a Node.js that is too old before anything else runs', async () => {
    forgetElectron()
    // npm and every node it starts believe they are Node.js 18 (check-node.cjs itself parses on any Node.js: see test/unit/check-node.test.ts).
    const pretend = join(work, 'pretend-node-18.cjs')
    writeFileSync(pretend, "Object.defineProperty(process, 'version', { value: 'v18.20.4' })\n")
    const before = mirror.requests.length
    const result = await npmStart({ NODE_OPTIONS: `--require=${pretend}`, ELECTRON_MIRROR: mirror.url, electron_use_remote_checksums: '1' })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('Switchboard needs Node.js 22.12 or later (or 20.19 or later on Node.js 20); this is Node.js 18.20.4.')
    expect(result.output).not.toMatch(stackTrace)
    expect(result.output).not.toContain('Downloading Electron')
    expect(mirror.requests.length).toBe(before)
    expect(existsSync(join(app, 'out'))).toBe(false)
  }, 120_000)

  it('says what failed and what to do when the mirror is down, without a stack trace', async () => {
    forgetElectron()
    const down = await deadAddress()
    const result = await npmStart({ ELECTRON_MIRROR: down, electron_use_remote_checksums: '1' })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`Could not download Electron ${electronVersion} (${target}), which Switchboard runs in.`)
    expect(result.stderr).toContain('What failed: the connection was refused')
    expect(result.stderr).toContain(`URL tried:   ${down}v${electronVersion}/${zipName}`)
    expect(result.stderr).toContain('HTTPS_PROXY')
    expect(result.stderr).toContain('ELECTRON_GET_USE_PROXY=1')
    expect(result.stderr).toContain(`ELECTRON_MIRROR is set to ${down}`)
    expect(result.output).not.toMatch(stackTrace)
    expect(result.output).not.toContain('Electron uninstall')
    expect(result.output.match(/Could not download Electron/g)).toHaveLength(1)
    expect(existsSync(join(app, 'node_modules/electron/path.txt'))).toBe(false)
  }, 120_000)

  it('says the server has no such file on a 404', async () => {
    forgetElectron()
    const result = await npmStart({ ELECTRON_MIRROR: `${mirror.url}missing/`, electron_use_remote_checksums: '1' })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('What failed: the server answered 404 Not Found: it has no such file.')
    expect(result.stderr).toContain(`URL tried:   ${mirror.url}missing/v${electronVersion}/${zipName}`)
    expect(result.output).not.toMatch(stackTrace)
    expect(existsSync(join(app, 'node_modules/electron/path.txt'))).toBe(false)
  }, 120_000)

  it('refuses a file that does not match its checksum', async () => {
    forgetElectron()
    const result = await npmStart({ ELECTRON_MIRROR: `${mirror.url}corrupt/`, electron_use_remote_checksums: '1' })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('What failed: the file downloaded does not match its published checksum')
    expect(result.output).not.toMatch(stackTrace)
    expect(existsSync(join(app, 'node_modules/electron/dist/electron'))).toBe(false)
  }, 120_000)

  it('downloads Electron with its progress, then builds and launches the app on it', async () => {
    forgetElectron()
    mirror.requests.length = 0
    const result = await npmStart({ ELECTRON_MIRROR: mirror.url, electron_use_remote_checksums: '1' })
    timings['npm start (download + build)'] = result.seconds
    expect(result.code, result.output).toBe(0)
    expect(result.stderr).toContain(
      `Downloading Electron ${electronVersion} for ${target} (about 100 MB, only this once) from ${mirror.url}v${electronVersion}/${zipName}`
    )
    expect(result.stderr).toMatch(/\(100%\)/)
    expect(result.stderr).toContain(`Electron ${electronVersion} is ready.`)
    expect(mirror.requests).toContain(`/v${electronVersion}/${zipName}`)
    expect(mirror.requests).toContain(`/v${electronVersion}/SHASUMS256.txt`)
    expect(result.output).not.toMatch(stackTrace)

    // Electron's own layout: dist/ with the executable, path.txt naming it.
    const electron = join(app, 'node_modules/electron/dist/electron')
    expect(readFileSync(electron, 'utf8')).toBe(FAKE_ELECTRON)
    expect(statSync(electron).mode & 0o111).not.toBe(0)
    expect(readFileSync(join(app, 'node_modules/electron/path.txt'), 'utf8')).toBe('electron')

    // It was launched on the project, whose package.json main was built.
    const [cwd, ...args] = readFileSync(join(app, 'node_modules/electron/dist/launched.txt'), 'utf8').trimEnd().split('\n')
    expect(args).toEqual(['.'])
    const launched = resolve(cwd, args[0])
    expect(realpathSync(launched)).toBe(realpathSync(app))
    const main = (JSON.parse(readFileSync(join(launched, 'package.json'), 'utf8')) as { main: string }).main
    expect(main).toBe('out/main/index.js')
    expect(existsSync(join(launched, main))).toBe(true)
    expect(existsSync(join(launched, 'out/preload/index.cjs'))).toBe(true)
    expect(existsSync(join(launched, 'out/renderer/index.html'))).toBe(true)
    // Packaging starts now, beside the next tests; the packaging test waits for it (and fails with its output).
    packageApp().catch(() => undefined)
  }, 360_000)

  it('launches again without the network once Electron is there', async () => {
    const electron = join(app, 'node_modules/electron/dist/electron')
    expect(existsSync(electron)).toBe(true)
    rmSync(join(app, 'node_modules/electron/dist/launched.txt'), { force: true })
    // The mirror is down now; the app is already built (skipping electron-vite's build keeps this test short).
    const result = await npmStart({ ELECTRON_MIRROR: await deadAddress(), electron_use_remote_checksums: '1' }, ['--skipBuild'])
    expect(result.code, result.output).toBe(0)
    expect(result.output).not.toContain('Downloading Electron')
    const [cwd, ...args] = readFileSync(join(app, 'node_modules/electron/dist/launched.txt'), 'utf8').trimEnd().split('\n')
    expect(realpathSync(cwd)).toBe(realpathSync(app))
    expect(args).toEqual(['.'])
  }, 120_000)

  it('uses an Electron named by ELECTRON_EXEC_PATH instead of downloading one, and says so when it is not there', async () => {
    forgetElectron()
    const own = join(work, 'own-electron')
    mkdirSync(own, { recursive: true })
    writeFileSync(join(own, 'electron'), FAKE_ELECTRON)
    chmodSync(join(own, 'electron'), 0o755)
    const offline = { ELECTRON_MIRROR: await deadAddress(), electron_use_remote_checksums: '1' }

    const missing = await npmStart({ ...offline, ELECTRON_EXEC_PATH: join(own, 'nothing') }, ['--skipBuild'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`ELECTRON_EXEC_PATH is set to ${join(own, 'nothing')}, which does not exist.`)
    expect(missing.output).not.toMatch(stackTrace)

    const result = await npmStart({ ...offline, ELECTRON_EXEC_PATH: join(own, 'electron') }, ['--skipBuild'])
    expect(result.code, result.output).toBe(0)
    expect(result.output).not.toContain('Downloading Electron')
    expect(existsSync(join(app, 'node_modules/electron/dist'))).toBe(false)
    expect(readFileSync(join(own, 'launched.txt'), 'utf8').trimEnd().split('\n').slice(1)).toEqual(['.'])
  }, 120_000)

  it('packages the app (electron-builder --dir) with every module its bundles import inside app.asar, and the native binaries unpacked', async () => {
    const { builder, output } = await packageApp()
    expect(builder.code, builder.output).toBe(0)

    const resources = join(output, 'linux-unpacked/resources')
    const archive = join(resources, 'app.asar')
    expect(existsSync(join(output, 'linux-unpacked/switchboard'))).toBe(true)
    const listed = asar.listPackage(archive, { isPack: false })
    const packageJson = JSON.parse(asar.extractFile(archive, 'package.json').toString('utf8')) as { main: string }
    expect(listed).toContain(`/${packageJson.main}`)

    // Native binaries are outside the archive, where Node can load them.
    const natives = listed.filter((file) => file.endsWith('.node'))
    expect(natives).toContain(`/node_modules/@lydell/node-pty-${target}/pty.node`)
    for (const native of natives) {
      expect(asar.statFile(archive, native.slice(1)), native).toMatchObject({ unpacked: true })
      expect(existsSync(join(`${archive}.unpacked`, native)), native).toBe(true)
    }

    // What node-pty starts on its own from its package's folder (on Windows: the Worker reading the console, the
    // child listing a console's processes) is unpacked too, and nothing else in the archive is run or loaded natively.
    expect(runFromArchive(archive)).toEqual(RUN_FROM_ARCHIVE)
    // The updater's configuration (electron/updates.ts): a generic feed, replaced at run time by the user's setting.
    expect(readFileSync(join(resources, 'app-update.yml'), 'utf8')).toMatch(/^provider: generic$/m)
    // switchboard:// links: the deb's .desktop entry makes the app their handler; it starts the app's executable itself.
    const desktop = readFileSync(join(output, 'deb.desktop'), 'utf8')
    expect(desktop).toMatch(/^MimeType=x-scheme-handler\/switchboard;$/m)
    expect(desktop).toMatch(/^Exec=\/opt\/Switchboard\/switchboard %U$/m)
    // The archive's files as Electron reads them, extracted once (its unpacked files among them): the command's
    // stand-in Electron runs them from here (asar-node.mjs), and every import of the bundles is checked here.
    const extracted = `${archive}.as-folder`
    asar.extractAll(archive, extracted)
    await commandLauncher(join(output, 'linux-unpacked'))

    // The Windows build of the same tree: the same files unpacked.
    // The command's launcher on Windows (not run here): what it starts, found from its own folder, is there.
    const cmd = readFileSync(join(output, 'win-unpacked/resources/bin/switchboard.cmd'), 'utf8')
    expect(cmd).toContain('set ELECTRON_RUN_AS_NODE=1\r\n')
    const started = /^"%~dp0([^"]+)" "%~dp0([^"]+)" %\*\r$/m.exec(cmd)
    expect(started, cmd).not.toBeNull()
    const fromBin = (path: string): string => join(output, 'win-unpacked/resources/bin', ...path.split('\\'))
    expect(existsSync(fromBin(started![1]!)), started![1]).toBe(true)
    expect(fromBin(started![1]!)).toBe(join(output, 'win-unpacked/Switchboard.exe'))
    const winArchive = join(output, 'win-unpacked/resources/app.asar')
    expect(fromBin(started![2]!).startsWith(`${winArchive}/`)).toBe(true)
    expect(asar.listPackage(winArchive, { isPack: false })).toContain(`/${relative(winArchive, fromBin(started![2]!))}`)
    expect(runFromArchive(join(output, 'win-unpacked/resources/app.asar'))).toEqual(RUN_FROM_ARCHIVE)

    // Every package the main bundle (and its chunks) and the preload import, resolved and loaded from the extracted archive.
    const bundles = ['out/main', 'out/preload'].flatMap((dir) =>
      readdirSync(join(extracted, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.[cm]?js$/.test(file))
        .map((file) => join(extracted, dir, file))
    )
    expect(bundles.map((file) => relative(extracted, file))).toEqual(expect.arrayContaining(['out/main/index.js', 'out/preload/index.cjs']))
    const specifiers = new Set<string>()
    for (const bundle of bundles) for (const specifier of importsOf(bundle)) specifiers.add(specifier)
    const packages = [...specifiers].filter((s) => !s.startsWith('.') && !s.startsWith('/') && !isBuiltin(s) && s !== 'electron').sort()
    expect(packages).toEqual(expect.arrayContaining(['@lydell/node-pty', '@agentclientprotocol/sdk', 'lowdb', 'ws', 'zod']))
    // Relative imports between the bundles are there too.
    for (const bundle of bundles)
      for (const specifier of importsOf(bundle))
        if (specifier.startsWith('.')) expect(existsSync(resolve(dirname(bundle), specifier)), specifier).toBe(true)

    const checker = join(extracted, 'out/main/check-imports.mjs')
    writeFileSync(
      checker,
      `const found = {}, failed = {}
for (const specifier of JSON.parse(process.argv[2])) {
  try { found[specifier] = import.meta.resolve(specifier); await import(specifier) } catch (error) { failed[specifier] = String(error?.message ?? error).split('\\n')[0] }
}
process.stdout.write(JSON.stringify({ found, failed }))
process.exit(0)
`
    )
    const check = await run(process.execPath, [checker, JSON.stringify(packages)], { cwd: extracted, env: userEnv() })
    expect(check.code, check.stderr).toBe(0)
    const { found, failed } = JSON.parse(check.stdout) as { found: Record<string, string>; failed: Record<string, string> }
    expect(failed).toEqual({})
    for (const specifier of packages)
      expect(found[specifier], specifier).toMatch(new RegExp(`^${escape(pathToFileURL(join(extracted, 'node_modules')).href)}/`))
  }, 480_000)
})

/**
 * The `switchboard` command of the packaged Linux app (build/bin/switchboard in resources/bin), run as a user runs
 * it: directly, and through a link as the deb's /usr/bin/switchboard. Its Electron here is a stand-in that, given
 * ELECTRON_RUN_AS_NODE=1, runs Node on the archive's files as Electron would read them (asar-node.mjs: the archive
 * extracted, its unpacked files over it); without it, it only writes launched.txt, as the fake build does.
 */
async function commandLauncher(appDir: string): Promise<void> {
  const launcher = join(appDir, 'resources/bin/switchboard')
  expect(statSync(launcher).mode & 0o111, 'the launcher is executable').not.toBe(0)
  writeFileSync(
    join(appDir, 'switchboard'),
    `#!/bin/sh\nif [ "$ELECTRON_RUN_AS_NODE" = 1 ]; then exec '${process.execPath}' '${join(app, 'test/launch/asar-node.mjs')}' "$@"; fi\n${FAKE_ELECTRON.split('\n').slice(1).join('\n')}`
  )
  const linked = join(work, 'usr-bin', 'switchboard')
  mkdirSync(dirname(linked), { recursive: true })
  symlinkSync(launcher, linked)
  const dataDir = join(work, 'command-data')
  mkdirSync(dataDir, { recursive: true })
  const env = userEnv({ SWITCHBOARD_DATA_DIR: dataDir })
  const version = (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { version: string }).version
  for (const command of [launcher, linked]) {
    expect(await run(command, ['--version'], { cwd: work, env }), command).toMatchObject({ code: 0, stdout: `switchboard ${version}\n` })
  }
  const help = await run(linked, ['--help'], { cwd: work, env })
  expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('switchboard run (--agent A | --preset P)') })
  // A Host opened by the command from the archive's files, on an empty data folder; then bad input's exit code.
  expect(await run(linked, ['ls', '--json'], { cwd: work, env })).toMatchObject({ code: 0, stdout: '[]\n' })
  const bad = await run(linked, ['run', '--agent', 'Nobody', 'hello'], { cwd: work, env })
  expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("No agent 'Nobody'") })
  expect(existsSync(join(appDir, 'launched.txt')), 'the app was never started as an app').toBe(false)
}

/**
 * The files of the archive something starts or loads natively at run time, and whether each is unpacked: native
 * binaries (.node), node-pty's Worker script and the modules it loads, the script it forks, any other worker or
 * helper script. Listed whole, so a new one shows up here and is looked at.
 */
const RUN_FROM_ARCHIVE = {
  '/node_modules/@lydell/node-pty/conpty_console_list_agent.js': true,
  '/node_modules/@lydell/node-pty/shared/conout.js': true,
  '/node_modules/@lydell/node-pty/worker/conoutSocketWorker.js': true
}

function runFromArchive(archive: string): Record<string, boolean> {
  const found: Record<string, boolean> = {}
  for (const file of asar.listPackage(archive, { isPack: false })) {
    const runtime = /\/(worker|workers)\/[^/]+\.[cm]?js$|_agent\.js$|\/node-pty\/shared\/[^/]+\.js$/.test(file)
    if (!runtime) continue
    const unpacked = (asar.statFile(archive, file.slice(1)) as { unpacked?: boolean }).unpacked === true
    found[file] = unpacked && existsSync(join(`${archive}.unpacked`, file))
  }
  return found
}

function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0])
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** The module specifiers a bundle imports: static and dynamic imports, re-exports and require() calls with a literal. */
function importsOf(file: string): string[] {
  const found: string[] = []
  const parsed = parseSync(file, readFileSync(file, 'utf8'))
  expect(parsed.errors, file).toEqual([])
  const literal = (node: { type: string; value?: unknown } | null | undefined) => {
    if (node?.type === 'Literal' && typeof node.value === 'string') found.push(node.value)
  }
  new Visitor({
    ImportDeclaration: (node) => literal(node.source),
    ExportAllDeclaration: (node) => literal(node.source),
    ExportNamedDeclaration: (node) => literal(node.source),
    ImportExpression: (node) => literal(node.source),
    CallExpression: (node) => {
      if (node.callee.type === 'Identifier' && node.callee.name === 'require') literal(node.arguments[0])
    }
  }).visit(parsed.program)
  return found
}
