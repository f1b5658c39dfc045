import { fork, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PortClient, type WebPort } from '../../electron/port-client'
import type { HostEvent } from '../../shared/contract'
import { ipcChannels } from '../../shared/ipc'
import type { SessionState } from '../../shared/domain'
import type { UpdateState } from '../../shared/updates'
import { removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * Updates that install themselves (electron/updates.ts), through the built main process (out/main/index.js: run
 * `npx electron-vite build` first) under plain Node with the `electron` stand-in (test/shell/fake-electron/), as a
 * packaged Linux AppImage of version 0.1.0 would meet them: a local update server on 127.0.0.1 serves
 * `latest-linux.yml` and a fake build (a shell script standing in for the new AppImage), slowly enough that the
 * download is seen in steps. This test is the window: it hears `updates.changed` on its port to the Host and
 * answers "Restart to update" with `updates.install`.
 *
 * What the stand-in does not prove:
 * - Electron's network stack: the stand-in's `net.request` is Node's http.request (no proxy, no Chromium cache);
 * - the installers of other platforms: Windows' NSIS installer and its publisher signature check
 *   (electron-updater's verifyUpdateCodeSignature, against app-update.yml's publisherName), macOS's Squirrel (and
 *   the `zip` it needs), deb packages: only the AppImage path runs here, and its new file is a script, not an AppImage;
 * - the window's notice itself (the e2e test shows it, test/e2e/updates.test.ts) and the native dialog that asks
 *   before a restart stops turns (the Host's side of that is test/host/updates.test.ts);
 * - that the new instance started after a restart finds the old one gone (single-instance lock, data folder lock).
 */

const built = fileURLToPath(new URL('../../out/main/index.js', import.meta.url))
const register = fileURLToPath(new URL('./fake-electron/register.mjs', import.meta.url))
const NEW_VERSION = '0.2.0'
/** The new "AppImage": says it ran (and with what) beside itself, then exits, as an AppImage run to install would. */
const FAKE_BUILD = `#!/bin/sh\nprintf 'new build ran, silent install: %s\\n' "$APPIMAGE_SILENT_INSTALL" > "$0.ran"\nexit 0\n# ${'x'.repeat(2 * 1024 * 1024)}\n`

let root: string
let server: UpdateServer | null = null
let running: ChildProcess[] = []

beforeEach(async () => {
  if (!existsSync(built)) throw new Error('out/main/index.js is not built: run `npx electron-vite build` first')
  root = await tempDir('updates')
})

afterEach(async () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  running = []
  await server?.close()
  server = null
  await removeDir(root)
})

describe.runIf(process.platform === 'linux')('updates that install themselves', () => {
  it('finds an update, downloads it with progress, installs nothing without a yes, and installs it on restart after one', async () => {
    server = await startUpdateServer(FAKE_BUILD, { gated: true })
    const app = await launch(server.url)
    await app.until('the download seen under way', (s) => s.status === 'downloading' && s.transferred > 0 && s.transferred < s.total)
    server.release()
    const ready = await app.until('the update downloaded', (s) => s.status === 'ready')
    expect(ready).toEqual({ status: 'ready', version: NEW_VERSION, installOnQuit: false })
    // Seen downloading, and in steps: at least one state between nothing and all of it.
    const downloading = app.states.filter((s) => s.status === 'downloading')
    for (const state of downloading) expect(state).toMatchObject({ version: NEW_VERSION, total: Buffer.byteLength(FAKE_BUILD) })
    expect(server.requests).toContain('/latest-linux.yml')
    expect(server.requests).toContain('/Switchboard-0.2.0.AppImage')
    // Asked later (a new window), the Host says the same.
    expect(await app.client.request('updates.get', {})).toEqual({ ok: true, result: ready })

    // Quitting without a yes installs nothing.
    await app.quit()
    expect(await readFile(app.appImage, 'utf8')).toBe('the old build')

    // Started again: the download is kept (checked again, not fetched again); the yes restarts and installs.
    const again = await launch(server.url, app.dataDir)
    await again.until('the kept update', (s) => s.status === 'ready')
    expect(await again.client.request('updates.install', { when: 'restart' })).toEqual({ ok: true, result: { restarting: true } })
    expect(await again.exited).toBe(0)
    expect(await readFile(again.appImage, 'utf8')).toBe(FAKE_BUILD)
    // Restarted: the new build was started (not silently, on its own: it runs as the app).
    const ran = await waitUntil('the new build to run', () => readFile(`${again.appImage}.ran`, 'utf8').catch(() => ''))
    expect(ran).toBe('new build ran, silent install: true\n')
  }, 90_000)

  it('with a yes for the next quit, installs as the app quits and not before', async () => {
    server = await startUpdateServer(FAKE_BUILD)
    const app = await launch(server.url)
    await app.until('the update downloaded', (s) => s.status === 'ready')
    expect(await app.client.request('updates.install', { when: 'quit' })).toEqual({ ok: true, result: { restarting: false } })
    await app.until('the update waiting for the quit', (s) => s.status === 'ready' && s.installOnQuit)
    expect(await readFile(app.appImage, 'utf8')).toBe('the old build')
    await app.quit()
    expect(await readFile(app.appImage, 'utf8')).toBe(FAKE_BUILD)
  }, 60_000)

  it('asks before a restart would stop an agent mid-turn: Cancel leaves the update waiting; once the turn is over it installs', async () => {
    server = await startUpdateServer(FAKE_BUILD)
    const app = await launch(server.url, undefined, { FAKE_ELECTRON_ASK_DIALOGS: '1' })
    await app.until('the update downloaded', (s) => s.status === 'ready')
    // A project and the scripted agent, each confirmed in its dialog as the user would.
    const project = join(root, 'project')
    await mkdir(project)
    const added = app.client.request('projects.add', { cwd: project })
    app.answer(await app.box(0), 1)
    const projectId = ((await added) as { result: { id: string } }).result.id
    const agentAdded = app.client.request('agents.add', scriptedAgent(join(root, 'agent-state')))
    app.answer(await app.box(1), 1)
    const agentId = ((await agentAdded) as { result: { id: string } }).result.id
    const session = (await app.client.request('sessions.new', { projectId, agentId })) as { ok: true; result: { id: string } }
    const id = session.result.id
    const turn = app.client.request('sessions.prompt', { id, text: '/sleep 60000' })
    await waitUntil('the turn under way', async () => {
      const states = (await app.client.request('sessions.states', {})) as { ok: true; result: SessionState[] }
      return states.result.some((state) => state.id === id && state.status === 'running')
    })

    const refused = app.client.request('updates.install', { when: 'restart' })
    const box = await app.box(2)
    expect(box.message).toBe('Restart to update Switchboard to 0.2.0 while an agent is mid-turn?')
    expect(box.detail).toBe(
      // The session is named by its first prompt.
      `“/sleep 60000” (Scripted) is mid-turn: its turn stops when Switchboard restarts.\n\nCancel to let the turns end first; the update waits.`
    )
    expect(box.buttons).toEqual(['Cancel', 'Stop and restart'])
    app.answer(box, 0)
    expect(await refused).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    expect(app.child.exitCode).toBeNull()
    expect(await readFile(app.appImage, 'utf8')).toBe('the old build')

    // The turn ends: the yes restarts without a question, and the update is installed.
    expect(await app.client.request('sessions.cancel', { id })).toMatchObject({ ok: true })
    await turn
    expect(await app.client.request('updates.install', { when: 'restart' })).toEqual({ ok: true, result: { restarting: true } })
    expect(await app.exited).toBe(0)
    expect(app.boxes).toHaveLength(3)
    expect(await readFile(app.appImage, 'utf8')).toBe(FAKE_BUILD)
    await waitUntil('the new build to run', () => readFile(`${app.appImage}.ran`, 'utf8').catch(() => ''))
  }, 90_000)

  it('refuses a download whose sha512 is not the one its feed published, with a clear message, and installs nothing', async () => {
    server = await startUpdateServer(FAKE_BUILD, { wrongSha512: true })
    const app = await launch(server.url)
    const failed = await app.until('the download refused', (s) => s.status === 'failed')
    expect(failed).toMatchObject({ status: 'failed', version: NEW_VERSION })
    expect(failed.status === 'failed' && failed.message).toMatch(
      /^The file downloaded does not match the checksum its feed published, so it was deleted and not installed \(sha512 checksum mismatch/
    )
    expect(await app.client.request('updates.install', { when: 'restart' })).toMatchObject({
      ok: false,
      error: { message: 'No update has been downloaded yet: there is nothing to install.' }
    })
    await app.quit()
    expect(await readFile(app.appImage, 'utf8')).toBe('the old build')
    expect(app.errorBoxes).toBe(0)
  }, 60_000)

  it('a feed that is down is a quiet log line: no notice, no dialog', async () => {
    server = await startUpdateServer(FAKE_BUILD)
    const down = server.url
    await server.close()
    server = null
    const app = await launch(down)
    await waitUntil('the log line', () => app.stderr.includes('switchboard updates: could not check for updates:'))
    expect(app.stderr).toMatch(/could not check for updates: .*ECONNREFUSED/)
    expect(await app.client.request('updates.get', {})).toEqual({ ok: true, result: { status: 'idle' } })
    expect(app.states.map((s) => s.status)).not.toContain('failed')
    expect(app.errorBoxes).toBe(0)
    await app.quit()
  }, 60_000)

  it('is off without a feed set', async () => {
    const app = await launch(undefined)
    expect(await app.client.request('updates.get', {})).toEqual({ ok: true, result: { status: 'off', reason: 'no-feed' } })
    await app.quit()
  }, 60_000)
})

interface UpdateServer {
  url: string
  requests: string[]
  /** Lets a gated download finish. */
  release(): void
  close(): Promise<void>
}

/** latest-linux.yml (and latest.yml) naming version 0.2.0 and `build`; `gated`: the build is served in small steps until `release`. */
async function startUpdateServer(build: string, { wrongSha512 = false, gated = false } = {}): Promise<UpdateServer> {
  let released = !gated
  const body = Buffer.from(build)
  const sha512 = createHash('sha512')
    .update(wrongSha512 ? Buffer.from('another build') : body)
    .digest('base64')
  const yml = `version: ${NEW_VERSION}
files:
  - url: Switchboard-${NEW_VERSION}.AppImage
    sha512: ${sha512}
    size: ${body.length}
path: Switchboard-${NEW_VERSION}.AppImage
sha512: ${sha512}
releaseDate: '2026-11-28T12:00:00.000Z'
`
  const requests: string[] = []
  const http: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://feed').pathname
    requests.push(path)
    if (path === '/latest-linux.yml' || path === '/latest.yml') {
      res.writeHead(200, { 'content-type': 'text/yaml' }).end(yml)
    } else if (path === `/Switchboard-${NEW_VERSION}.AppImage` && !req.headers.range) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length })
      // Gated: a 64th part every 200 ms, the last one held until `release` (the test has seen the download under way).
      const part = Math.ceil(body.length / 64)
      let sent = 0
      const next = (): void => {
        if (res.destroyed) return
        const end = released ? body.length : Math.min(sent + part, body.length - part)
        res.write(body.subarray(sent, end))
        sent = end
        if (sent >= body.length) res.end()
        else setTimeout(next, released ? 0 : 200)
      }
      next()
    } else {
      res.writeHead(404).end('not here')
    }
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/`,
    requests,
    release: () => (released = true),
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve())))
  }
}

/** A native message box the app showed (the stand-in asks the test to answer it). */
interface Box {
  id: number
  message: string
  detail: string
  buttons: string[]
}

interface Launched {
  child: ChildProcess
  boxes: Box[]
  /** The nth message box shown (0: the first), once it is. */
  box(n: number): Promise<Box>
  answer(box: Box, response: number): void
  dataDir: string
  appImage: string
  client: PortClient
  states: UpdateState[]
  stderr: string
  errorBoxes: number
  exited: Promise<number | null>
  until(what: string, check: (state: UpdateState) => boolean): Promise<UpdateState>
  quit(): Promise<void>
}

/** The app as a packaged AppImage of version 0.1.0 with `feed` as its updateFeed setting, its window connected. */
async function launch(feed: string | undefined, dataDir = join(root, 'data'), extraEnv: Record<string, string> = {}): Promise<Launched> {
  const resources = join(root, 'resources')
  const appImage = join(root, 'Switchboard.AppImage')
  await mkdir(dataDir, { recursive: true })
  await mkdir(resources, { recursive: true })
  if (feed !== undefined) await writeFile(join(dataDir, 'settings.json'), JSON.stringify({ updateFeed: feed }))
  // What electron-builder writes from electron-builder.yml's `publish` (the address is replaced by the setting).
  await writeFile(
    join(resources, 'app-update.yml'),
    'provider: generic\nurl: https://updates.invalid/switchboard/\nupdaterCacheDirName: switchboard-updater\n'
  )
  if (!existsSync(appImage)) {
    await writeFile(appImage, 'the old build')
    await chmod(appImage, 0o755)
  }
  const child = fork(built, [], {
    execArgv: ['--import', register],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'advanced',
    env: {
      ...process.env,
      SWITCHBOARD_DATA_DIR: dataDir,
      FAKE_ELECTRON_PACKAGED: '1',
      FAKE_ELECTRON_RESOURCES: resources,
      FAKE_ELECTRON_VERSION: '0.1.0',
      APPIMAGE: appImage,
      XDG_CACHE_HOME: join(root, 'cache'),
      ...extraEnv
    }
  })
  running.push(child)
  const client = new PortClient()
  const launched: Launched = {
    child,
    boxes: [],
    box: (n) => waitUntil(`message box ${n + 1}`, () => launched.boxes[n]),
    answer: (box, response) => child.send({ fake: 'messageBoxAnswer', id: box.id, response }),
    dataDir,
    appImage,
    client,
    states: [],
    stderr: '',
    errorBoxes: 0,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    until: (what, check) =>
      waitUntil(what, () => launched.states.findLast(check), { timeoutMs: 40_000 }).catch((error: Error) => {
        throw new Error(`${error.message}; states: ${JSON.stringify(launched.states)}; log: ${launched.stderr}`)
      }),
    quit: async () => {
      child.send({ fake: 'quit' })
      expect(await launched.exited).toBe(0)
    }
  }
  child.stderr?.on('data', (chunk: Buffer) => (launched.stderr += chunk.toString()))
  client.onEvents((events: HostEvent[]) => {
    for (const event of events) if (event.type === 'updates.changed') launched.states.push(event.payload)
  })
  const ports = new Map<number, WebPort & { deliver(data: unknown): void }>()
  let windowLoaded = false
  child.on('message', (message: Record<string, unknown>) => {
    if ('__port' in message) return ports.get(message.__port as number)?.deliver(message.data)
    if (message.fake === 'errorBox') launched.errorBoxes++
    if (message.fake === 'messageBox') launched.boxes.push(message as unknown as Box)
    if (message.fake === 'loadURL') windowLoaded = true
    if (message.fake === 'postMessage' && message.channel === ipcChannels.port) {
      const id = (message.portIds as number[])[0]
      const port = {
        onmessage: null as WebPort['onmessage'],
        postMessage: (data: unknown) => child.connected && child.send({ __port: id, data }),
        close: () => undefined,
        deliver: (data: unknown) => port.onmessage?.({ data })
      }
      ports.set(id, port)
      client.usePort(port)
    }
  })
  await waitUntil('the window to load', () => windowLoaded).catch((e: Error) => {
    throw new Error(e.message + ' stderr: ' + launched.stderr)
  })
  child.send({ fake: 'ipc-send', windowId: 1, channel: ipcChannels.connect })
  // What the updater did before the window connected: the Host tells a new window when asked (as the window's store asks).
  const current = await client.request('updates.get', {})
  if (current.ok) launched.states.push(current.result as UpdateState)
  return launched
}
