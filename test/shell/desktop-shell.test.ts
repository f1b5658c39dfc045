import { fork, spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { hostLogFile } from '../../electron/host/host-process/host-supervisor'
import { DOOR_FILE } from '../../electron/host/web/door'
import { PortClient, type WebPort } from '../../electron/port-client'
import type { WireResponse } from '../../shared/contract'
import { ipcChannels } from '../../shared/ipc'
import { runCli } from '../cli/run-cli'
import { confirmEverything, isProcessRunning, removeDir, tempDir, waitUntil } from '../helpers'
import { Host } from '../../electron/host/host'
import { projectLink } from '../../shared/navigation'

/**
 * The desktop app's main process, as built (out/main/index.js, run `npx electron-vite build` first), under
 * plain Node with a stand-in for the `electron` module (test/shell/fake-electron/): start-up, the window's
 * port to the Host's own process, the Host killed and started again, a Host that hangs, a Host that cannot
 * open, and quitting. This test is the renderer: it asks for the window's port as the preload does, and
 * talks over it with the preload's own client (electron/port-client.ts).
 *
 * What the stand-in does not prove:
 * - that Electron's real `utilityProcess`, `MessageChannelMain` and `MessagePortMain` behave as the stand-in
 *   does (it forks a Node child and relays ports over Node's IPC channel, cloning each message as Electron does);
 * - anything about Chromium: the sandboxed preload (preload.ts) is not run, only the client it wraps; the
 *   `app://` scheme, the window's page, the CSP and the error page's rendering are not loaded;
 * - native dialogs, the keychain (safeStorage says no encryption here), menus, the badge on a real dock;
 * - that a utility process dies with the main process (the stand-in's child exits when its IPC channel closes);
 * - macOS and Windows: the leftover-process cleanup after a dead Host finds processes through /proc (Linux);
 * - a real AppImage: its runtime (the mount, APPIMAGE) and AppRun are a shell script here, and the relay's
 *   `ELECTRON_RUN_AS_NODE` is ignored by Node (the stand-in's process.execPath).
 */

const built = fileURLToPath(new URL('../../out/main/index.js', import.meta.url))
const register = fileURLToPath(new URL('./fake-electron/register.mjs', import.meta.url))

type FromMain =
  | { fake: 'window'; windowId: number }
  | { fake: 'loadURL'; windowId: number; url: string }
  | { fake: 'postMessage'; windowId: number; channel: string; portIds: number[] }
  | { fake: 'send'; windowId: number; channel: string; args: unknown[] }
  | { fake: 'utility'; pid: number }
  | { fake: 'quit' | 'badge' | 'errorBox' }
  | { __port: number; data: unknown }
  | { __portClose: number }

/** The app's main process, run by the test; `messages` is everything the stand-in told the test, in order. */
class App {
  readonly messages: FromMain[] = []
  readonly hostPids: number[] = []
  readonly exited: Promise<number | null>
  private readonly ports = new Map<number, WebPort & { deliver(data: unknown): void; closed: boolean }>()
  readonly client = new PortClient()
  private stderr = ''

  constructor(
    readonly child: ChildProcess,
    readonly dataDir: string
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()))
    child.on('message', (message: FromMain) => this.receive(message))
  }

  private receive(message: FromMain): void {
    if ('__port' in message) return this.ports.get(message.__port)?.deliver(message.data)
    if ('__portClose' in message) {
      const port = this.ports.get(message.__portClose)
      if (port) port.closed = true
      return
    }
    this.messages.push(message)
    if (message.fake === 'utility') this.hostPids.push(message.pid)
    if (message.fake === 'postMessage' && message.channel === ipcChannels.port) this.client.usePort(this.port(message.portIds[0]))
    if (message.fake === 'send' && message.channel === ipcChannels.down) this.client.hostDown(String(message.args[0]))
  }

  /** The window's end of a port the main process handed it, as a web MessagePort. */
  private port(id: number): WebPort & { deliver(data: unknown): void; closed: boolean } {
    const port = {
      onmessage: null as WebPort['onmessage'],
      closed: false,
      postMessage: (data: unknown) => this.child.connected && this.child.send({ __port: id, data }),
      close: () => {
        port.closed = true
        if (this.child.connected) this.child.send({ __portClose: id })
      },
      deliver: (data: unknown) => port.onmessage?.({ data })
    }
    this.ports.set(id, port)
    return port
  }

  /** The page's preload asks for its port (from the window's main frame, or from another frame's page), once the page loads. */
  async askForPort(otherFrame?: string): Promise<void> {
    await waitUntil('the window to load our page', () => this.loads().includes('app://switchboard/index.html'))
    this.child.send({ fake: 'ipc-send', windowId: 1, channel: ipcChannels.connect, otherFrame })
  }

  loads(): string[] {
    return this.messages.flatMap((m) => ('fake' in m && m.fake === 'loadURL' ? [m.url] : []))
  }

  portsHanded(): number {
    return this.messages.filter((m) => 'fake' in m && m.fake === 'postMessage' && m.channel === ipcChannels.port).length
  }

  output(): string {
    return this.stderr
  }
}

function launch(dataDir: string, env: Record<string, string> = {}): App {
  const child = fork(built, [], {
    execArgv: ['--import', register],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'advanced',
    env: { ...process.env, SWITCHBOARD_DATA_DIR: dataDir, ...env }
  })
  return new App(child, dataDir)
}

async function answered(app: App, method: string, params: unknown = {}): Promise<WireResponse> {
  return app.client.request(method, params)
}

let root: string
let app: App | null = null

beforeEach(async () => {
  if (!existsSync(built)) throw new Error('out/main/index.js is not built: run `npx electron-vite build` first')
  root = await tempDir('desktop-shell')
})

afterEach(async () => {
  if (app && app.child.exitCode === null && app.child.signalCode === null) {
    app.child.kill('SIGKILL')
    await app.exited
  }
  for (const pid of app?.hostPids ?? []) if (isProcessRunning(pid)) process.kill(pid, 'SIGKILL')
  app = null
  await removeDir(root)
})

describe.runIf(process.platform === 'linux')('the desktop shell with the Host in its own process', () => {
  it('hands the window a port to the Host, starts a killed Host again with a new port, and quits leaving no process', async () => {
    app = launch(join(root, 'data'))
    // Asked at once, before the Host is open: the request waits for the port.
    const first = answered(app, 'app.info')
    await app.askForPort()
    expect(await first).toMatchObject({ ok: true, result: { version: '0.0.0-shell-test' } })
    expect(app.hostPids).toHaveLength(1)
    const [hostPid] = app.hostPids
    expect(hostPid).not.toBe(app.child.pid)
    // V8's flags reach the Host's process (host-process/exec-argv.ts): its `gc` for quiet-gc.ts, its young generation
    // 2 × 8 MB, no memory reducer (its collections woke an idle Host).
    expect(readFileSync(`/proc/${hostPid}/cmdline`, 'utf8').split('\0')).toEqual(
      expect.arrayContaining(['--expose-gc', '--max-semi-space-size=8', '--no-memory-reducer'])
    )
    // And the window's renderer V8's settings for small memory (Chromium's `--js-flags`).
    expect(app.messages).toContainEqual({ fake: 'switch', name: 'js-flags', value: '--initial-old-space-size=8 --heap-growing-percent=10' })
    expect(await answered(app, 'projects.list')).toEqual({ ok: true, result: [] })
    // The `switchboard` command goes through the app's Host, by its door, while the app holds the data folder.
    const listed = await runCli(['ls', '--json'], { env: { SWITCHBOARD_DATA_DIR: app.dataDir } })
    expect(listed).toMatchObject({ code: 0, stdout: '[]\n' })

    // A page in another frame (or not ours) gets no port: only the window's main frame showing our page.
    await app.askForPort('https://evil.example/')
    expect(app.portsHanded()).toBe(1)

    let reconnected = 0
    app.client.onConnection((state) => state === 'connected' && reconnected++)
    process.kill(hostPid, 'SIGKILL')
    await waitUntil('a new Host', () => app!.hostPids.length === 2)
    await waitUntil('a new port handed to the window', () => app!.portsHanded() === 2)
    expect(reconnected).toBe(1)
    expect(await answered(app, 'app.info')).toMatchObject({ ok: true })
    expect(app.messages.some((m) => 'fake' in m && m.fake === 'send' && m.channel === ipcChannels.down)).toBe(true)

    app.child.send({ fake: 'quit' })
    expect(await app.exited).toBe(0)
    for (const pid of app.hostPids) expect(isProcessRunning(pid)).toBe(false)
    // The Host closed as asked: its lock on the data folder is released, its door is gone.
    expect(existsSync(join(app.dataDir, 'switchboard.lock'))).toBe(false)
    expect(existsSync(join(app.dataDir, DOOR_FILE))).toBe(false)
  })

  it('a Host that stops answering pings is treated as dead: stopped and started again', async () => {
    app = launch(join(root, 'data'), { SWITCHBOARD_HOST_PING_MS: '200', SWITCHBOARD_HOST_DEAD_MS: '1500' })
    await app.askForPort()
    expect(await answered(app, 'app.info')).toMatchObject({ ok: true })
    const [hostPid] = app.hostPids
    process.kill(hostPid, 'SIGSTOP')
    await waitUntil('the hung Host to be stopped', () => !isProcessRunning(hostPid))
    await waitUntil('a new port handed to the window', () => app!.portsHanded() === 2)
    expect(await answered(app, 'projects.list')).toEqual({ ok: true, result: [] })
    await waitUntil('the log to say why', async () => {
      const { readFile } = await import('node:fs/promises')
      return (await readFile(hostLogFile(app!.dataDir), 'utf8')).includes('did not answer for')
    })
  })

  it('a Host that cannot open its data folder shows an error page with the cause and the log, and is not started again', async () => {
    const dataDir = join(root, 'data')
    await mkdir(dataDir, { recursive: true })
    await writeFile(join(dataDir, 'db.json'), JSON.stringify({ version: 99, projects: [], agents: [], sessions: [] }))
    app = launch(dataDir)
    const page = await waitUntil('the error page', () => app!.loads().find((url) => url.startsWith('data:text/html')))
    const html = decodeURIComponent(page.slice(page.indexOf(',') + 1))
    expect(html).toContain('was written by a newer Switchboard (database version 99')
    expect(html).toContain(hostLogFile(dataDir))
    expect(app.hostPids).toHaveLength(1)
    await waitUntil('the Host to be gone', () => !isProcessRunning(app!.hostPids[0]))
    expect(app.portsHanded()).toBe(0)
    app.child.send({ fake: 'quit' })
    expect(await app.exited).toBe(0)
    expect(app.hostPids).toHaveLength(1)
  })

  it('follows a switchboard:// link handed over by a second start: the window is told where to go, also when it connects after; a malformed one is ignored with a log line', async () => {
    const dataDir = join(root, 'data')
    const folder = join(root, 'project')
    await mkdir(folder)
    const setUp = await Host.open({ dataDir, version: 'test', presets: [], confirmCommand: confirmEverything })
    const project = await setUp.request('projects.add', { cwd: folder })
    await setUp.close()
    app = launch(dataDir)
    // `switchboard FOLDER` while the app's Host is open but its window has no port yet (the command started the
    // app): the window is told once it connects.
    await waitUntil('the Host open (its door written)', () => existsSync(join(dataDir, DOOR_FILE)))
    expect(await runCli([folder], { env: { SWITCHBOARD_DATA_DIR: dataDir } })).toMatchObject({ code: 0 })
    const navigated: unknown[] = []
    app.client.onEvents((events) => navigated.push(...events.filter((e) => e.type === 'app.navigate').map((e) => e.payload)))
    await app.askForPort()
    await waitUntil('the window told to show the project', () => navigated.length > 0)
    // A link a second start hands over.
    app.child.send({ fake: 'second-instance', argv: ['switchboard', 'switchboard://session/../../etc', projectLink(folder)] })
    await waitUntil('the window told again', () => navigated.length > 1)
    expect(navigated).toEqual([
      { kind: 'project', id: project.id },
      { kind: 'project', id: project.id }
    ])
    expect(app.output()).toContain('Switchboard ignored the link "switchboard://session/../../etc"')
    app.child.send({ fake: 'quit' })
    expect(await app.exited).toBe(0)
  })

  it('`switchboard FOLDER` starts the app when none runs, waits for its Host, and has the window show the project', async () => {
    const dataDir = join(root, 'data')
    const folder = join(root, 'project')
    await mkdir(folder)
    const setUp = await Host.open({ dataDir, version: 'test', presets: [], confirmCommand: confirmEverything })
    await setUp.request('projects.add', { cwd: folder })
    await setUp.close()
    // The app as the launcher starts it, here under Node with the stand-in for Electron.
    const command = JSON.stringify([process.execPath, '--import', register, built])
    const run = await runCli([folder], { env: { SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_APP_COMMAND: command } })
    const door = JSON.parse(readFileSync(join(dataDir, DOOR_FILE), 'utf8')) as { pid: number }
    // The app's main process is the parent of its Host's.
    const main = Number(readFileSync(`/proc/${door.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1])
    try {
      expect(run.stderr).toBe(`Switchboard shows ${folder}.\n`)
      expect(run.code).toBe(0)
    } finally {
      process.kill(main, 'SIGKILL')
      await waitUntil('the started app and its Host to be gone', () => !isProcessRunning(main) && !isProcessRunning(door.pid))
    }
  })
})

describe.runIf(process.platform === 'linux')('the switchboard command of an AppImage', () => {
  it('"Install the switchboard Command" writes ~/.local/bin/switchboard, which runs the AppImage as the command (the relay), and leaves a stranger’s file alone', async () => {
    const dataDir = join(root, 'data')
    const home = join(root, 'home')
    const resources = join(root, 'resources')
    await mkdir(join(resources, 'bin'), { recursive: true })
    copyFileSync(fileURLToPath(new URL('../../build/bin/switchboard', import.meta.url)), join(resources, 'bin', 'switchboard'))
    // The AppImage, as its runtime and AppRun start the app: APPIMAGE set to its file, the executable with --no-sandbox
    // first, then the arguments. Each start that is the app (not the command) writes down its environment.
    const appImage = join(root, 'Switchboard.AppImage')
    await writeFile(
      appImage,
      `#!/bin/sh\nexport APPIMAGE='${appImage}'\n[ "$SWITCHBOARD_CLI" = 1 ] || env > '${root}/app-started.env'\nexec '${process.execPath}' --import '${register}' '${built}' --no-sandbox "$@"\n`,
      { mode: 0o755 }
    )
    app = launch(dataDir, {
      FAKE_ELECTRON_PACKAGED: '1',
      FAKE_ELECTRON_RESOURCES: resources,
      FAKE_ELECTRON_ASK_DIALOGS: '1',
      APPIMAGE: appImage,
      HOME: home,
      PATH: `${join(home, '.local', 'bin')}:${process.env.PATH}`
    })
    await waitUntil('the window', () => app!.loads().length > 0)
    const install = async (): Promise<{ message: string; detail: string }> => {
      const before = app!.messages.length
      await waitUntil('the menu', async () => {
        app!.child.send({ fake: 'menu-click', label: 'Install the switchboard Command…' })
        return waitUntil('the click', () => app!.messages.slice(before).find((m) => 'fake' in m && (m.fake as string) === 'menu-clicked')).then(
          (m) => (m as unknown as { found: boolean }).found
        )
      })
      const box = (await waitUntil('the dialog', () =>
        app!.messages.slice(before).find((m) => 'fake' in m && (m.fake as string) === 'messageBox')
      )) as unknown as { id: number; message: string; detail: string }
      app!.child.send({ fake: 'messageBoxAnswer', id: box.id, response: 0 })
      return box
    }
    expect(await install()).toMatchObject({ message: 'The switchboard command is installed.' })
    const command = join(home, '.local', 'bin', 'switchboard')
    expect(readFileSync(command, 'utf8')).toContain(`SWITCHBOARD_CLI=1 exec '${appImage}' --headless --disable-gpu --switchboard-cli "$@"`)

    // The command runs the AppImage, which hands over to the command's bundle at once: --version, then `ls` through
    // the running app's Host (its door), as a user types them.
    const version = await runCommand(command, ['--version'], { SWITCHBOARD_DATA_DIR: dataDir })
    expect(version).toMatchObject({ code: 0, stdout: `switchboard ${packageVersion()}\n` })
    expect(await runCommand(command, ['ls', '--json'], { SWITCHBOARD_DATA_DIR: dataDir })).toMatchObject({ code: 0, stdout: '[]\n' })
    const bad = await runCommand(command, ['run', '--agent', 'x', '--project', join(root, 'nope'), 'hi'], { SWITCHBOARD_DATA_DIR: dataDir })
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('does not exist') })
    expect(existsSync(join(root, 'app-started.env'))).toBe(false)
    expect(await install()).toMatchObject({ message: 'The switchboard command is already installed.' })

    // Started by the command (no app on another data folder), the app is the AppImage, without the command's marks.
    const other = join(root, 'other-data')
    const started = await runCommand(command, ['open', 'some-session'], { SWITCHBOARD_DATA_DIR: other })
    await waitUntil('the app started', () => existsSync(join(root, 'app-started.env')))
    const startedEnv = readFileSync(join(root, 'app-started.env'), 'utf8')
    expect(startedEnv).toContain(`SWITCHBOARD_DATA_DIR=${other}`)
    expect(startedEnv).not.toMatch(/^(SWITCHBOARD_CLI|ELECTRON_RUN_AS_NODE)=/m)
    expect(started).toMatchObject({ code: 2, stderr: expect.stringContaining('some-session') })
    const door = JSON.parse(readFileSync(join(other, DOOR_FILE), 'utf8')) as { pid: number }
    const main = Number(readFileSync(`/proc/${door.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1])
    process.kill(main, 'SIGKILL')
    await waitUntil('the started app and its Host to be gone', () => !isProcessRunning(main) && !isProcessRunning(door.pid))

    // A file of someone else's is left as it is.
    writeFileSync(command, '#!/bin/sh\necho mine\n')
    expect(await install()).toMatchObject({ message: `There is already a file ${command} that is not Switchboard's.` })
    expect(readFileSync(command, 'utf8')).toBe('#!/bin/sh\necho mine\n')
    app.child.send({ fake: 'quit' })
    expect(await app.exited).toBe(0)
  })
})

function runCommand(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString()))
    child.stderr.on('data', (data: Buffer) => (stderr += data.toString()))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string }).version
}
