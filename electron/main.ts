import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  MessageChannelMain,
  protocol,
  screen,
  shell,
  session,
  utilityProcess,
  type IpcMainEvent,
  type MessagePortMain
} from 'electron'
import type { AppCommand } from '../shared/app-commands'
import { ipcChannels } from '../shared/ipc'
import { APP_INDEX_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, isRendererPageUrl, opensInBrowser, serveAppRequest } from './app-scheme'
import { isCliRelay, relayToCli } from './cli-relay'
import { dialogConfirmation } from './confirm-dialog'
import { failurePage } from './failure-page'
import { wantsLoginShell } from './host/child-processes/environment'
import { HOST_EXEC_ARGV, RENDERER_JS_FLAGS } from './host/host-process/exec-argv'
import type { FromHost, ShellCall } from './host/host-process/host-channel'
import { HostSupervisor, type HostFailure, type HostProcess } from './host/host-process/host-supervisor'
import { LinkRouter, registerLinkScheme } from './links'
import { installCommandFromMenu } from './install-command'
import { buildMenuTemplate } from './menu'
import { configureSpellcheck, spellcheckOn } from './spellcheck'
import { SafeStorageSecretStore } from './secret-store'
import { isTrustedSender } from './trusted-sender'
import { startUpdates, type ShellUpdates } from './updates'
import { debounce, loadWindowState, restoreBounds, saveWindowState, type WindowState } from './window-state'

/**
 * The Electron shell: app lifecycle, the one window, the menu, and what only
 * Electron can do for the Host (native dialogs, the keychain, the badge).
 * The Host runs in a process of its own (host-process.ts, an Electron
 * `utilityProcess`), supervised here (host/host-process/host-supervisor.ts: started
 * again when it dies or hangs, an error page when it cannot start); the
 * window talks to it over a port this process hands it. Nothing here waits
 * on the Host's work: menus, window moves and dialogs stay responsive.
 */

const here = dirname(fileURLToPath(import.meta.url))
/** The built renderer, served as app://switchboard/ (app-scheme.ts); never loaded from file://. */
const rendererDir = join(here, '..', 'renderer')
const devServerUrl = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined

// Before `ready`, as Electron requires: the scheme gets a real origin and a secure context; the window's V8 its flags.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: APP_SCHEME_PRIVILEGES }])
app.commandLine.appendSwitch('js-flags', RENDERER_JS_FLAGS)

let supervisor: HostSupervisor | null = null
let hostStopped = false
let mainWindow: BrowserWindow | null = null
/** The windows whose page asked for a port to the Host: each gets a new one when a new Host is open. */
const connectedWindows = new Set<BrowserWindow>()
/** Set once the Host will not be started again: windows show why. */
let failure: HostFailure | null = null
let savedWindowState: WindowState | null = null
/** switchboard:// links, followed once the Host is open (links.ts). */
const links = new LinkRouter()
/** The updater (updates.ts); its state goes to each Host as it opens. */
let updates: ShellUpdates | null = null

const WINDOW_DEFAULTS = { width: 1280, height: 820, minWidth: 720, minHeight: 480 }
const dataDirectory = (): string => process.env.SWITCHBOARD_DATA_DIR ?? app.getPath('userData')
const windowStateFile = (): string => join(dataDirectory(), 'window-state.json')
/** How often the Host is pinged, and how long without an answer before it counts as dead (tests shorten them). */
const pingEveryMs = Number(process.env.SWITCHBOARD_HOST_PING_MS) || undefined
const deadAfterMs = Number(process.env.SWITCHBOARD_HOST_DEAD_MS) || undefined

if (isCliRelay()) {
  // An AppImage run as the `switchboard` command (cli-relay.ts): no window, no lock, only the command.
  relayToCli(here, (code) => app.exit(code))
} else if (!app.requestSingleInstanceLock()) {
  app.quit()
} else {
  app.on('second-instance', (_event, argv) => {
    links.openAll(argv)
    if (!mainWindow) return
    if (mainWindow.isMinimized()) mainWindow.restore()
    mainWindow.focus()
  })
  // macOS hands links to the running app (and to a starting one) this way, not in argv.
  app.on('open-url', (event, url) => {
    event.preventDefault()
    links.open(url)
  })
  links.openAll(process.argv)

  app.on('web-contents-created', (_event, contents) => {
    // No page may navigate away from the app or open windows; http(s) links go to the browser.
    contents.on('will-navigate', (event) => event.preventDefault())
    contents.on('will-attach-webview', (event) => event.preventDefault())
    contents.setWindowOpenHandler(({ url }) => {
      openInBrowser(url)
      return { action: 'deny' }
    })
  })

  app
    .whenReady()
    .then(start)
    .catch((error: Error) => {
      dialog.showErrorBox('Switchboard could not start', error.message)
      app.exit(1)
    })

  app.on('activate', () => {
    if (supervisor && BrowserWindow.getAllWindows().length === 0) openWindow()
  })

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })

  app.on('before-quit', (event) => {
    if (!supervisor || hostStopped) return
    // Stop every agent (and its children) before the process goes away: the Host closes, then the app quits.
    event.preventDefault()
    void supervisor.stop().finally(() => {
      hostStopped = true
      app.quit()
    })
  })
}

async function start(): Promise<void> {
  registerLinkScheme()
  // The app's own files, and nothing else, are answered on app://switchboard/.
  protocol.handle(APP_SCHEME, (request) => serveAppRequest(rendererDir, request))
  // Spelling is checked by the system's own spellchecker (macOS), else not at all: no dictionary is ever downloaded.
  configureSpellcheck(session.defaultSession, process.platform)
  // Every permission a page asks for is denied, except notifications for our own window
  // (a turn that ended, or a permission request waiting, while the window is in the background).
  session.defaultSession.setPermissionRequestHandler((contents, permission, callback) =>
    callback(permission === 'notifications' && isOurRendererUrl(contents.getURL()))
  )
  // The window downloads only files it made itself (the Spend page's CSV, an agent's check report: blob: URLs of our
  // page, renderer/src/download.ts); the user picks where each goes in the save dialog. Anything else is refused.
  session.defaultSession.on('will-download', (event, item, contents) => {
    if (!item.getURL().startsWith('blob:') || !isOurRendererUrl(contents.getURL())) {
      event.preventDefault()
      return
    }
    const extension = extname(item.getFilename()).slice(1)
    item.setSaveDialogOptions({
      title: `Save ${item.getFilename()}`,
      defaultPath: join(app.getPath('downloads'), item.getFilename()),
      filters: extension ? [{ name: extension.toUpperCase(), extensions: [extension] }] : []
    })
  })
  savedWindowState = await loadWindowState(windowStateFile())
  const dataDir = dataDirectory()
  const secrets = new SafeStorageSecretStore(dataDir)
  // A change that would run a program is confirmed in a native dialog, never on the page's word alone.
  const confirmCommand = dialogConfirmation(() => mainWindow)
  /** What the Host asks of the shell (host-channel.ts), answered here. */
  const answer = async (call: ShellCall): Promise<unknown> => {
    switch (call.name) {
      case 'confirmCommand':
        return confirmCommand(call.change, undefined)
      case 'pickFolder': {
        const options = { title: 'Add a project folder', properties: ['openDirectory' as const, 'createDirectory' as const] }
        const result = mainWindow ? await dialog.showOpenDialog(mainWindow, options) : await dialog.showOpenDialog(options)
        return result.canceled ? null : (result.filePaths[0] ?? null)
      }
      case 'revealPath':
        // Shown, never opened: a path the agent named must not run anything when clicked.
        shell.showItemInFolder(call.path)
        return null
      case 'secrets.get':
        return secrets.get(call.key)
      case 'secrets.set':
        await secrets.set(call.key, call.value)
        return null
      case 'secrets.delete':
        await secrets.delete(call.key)
        return null
      case 'installUpdate':
        updates?.install(call.when)
        return null
    }
  }
  const onMessage = (host: HostProcess, message: FromHost): void => {
    if (message.type === 'badge') {
      // The dock or taskbar badge counts what waits in the inbox, where the platform shows one.
      app.setBadgeCount(message.count)
    } else if (message.type === 'call') {
      void answer(message.call).then(
        (value) => sendTo(host, { type: 'reply', id: message.id, ok: true, value }),
        (error: Error) => sendTo(host, { type: 'reply', id: message.id, ok: false, message: error.message })
      )
    }
  }
  supervisor = new HostSupervisor({
    open: {
      dataDir,
      version: app.getVersion(),
      // Started from the Dock or a desktop menu, the app has a minimal PATH: agents get the login shell's environment.
      loginShell: wantsLoginShell(),
      shell: 'desktop',
      secretsPersistent: secrets.persistent,
      rendererDir
    },
    start: startHostProcess,
    pingEveryMs,
    deadAfterMs,
    onMessage,
    onUp: (host) => {
      if (updates) sendTo(host, { type: 'update', state: updates.state })
      for (const window of connectedWindows) handPort(window)
      links.ready((target) => sendTo(supervisor?.current ?? host, { type: 'navigate', target }))
    },
    onDown: (reason) => {
      for (const window of connectedWindows) if (!window.isDestroyed()) window.webContents.send(ipcChannels.down, reason)
    },
    onGaveUp: (gaveUp) => {
      failure = gaveUp
      if (!mainWindow) openWindow()
      else showFailure(mainWindow, gaveUp)
    }
  })
  // The window asks for its port as its preload starts; only our renderer's page, in our window's main frame, gets one.
  ipcMain.on(ipcChannels.connect, (event: IpcMainEvent) => {
    const window = BrowserWindow.fromWebContents(event.sender)
    if (!window || !isTrustedSender(event, window, isOurRendererUrl)) return
    connectedWindows.add(window)
    handPort(window)
  })
  // The window loads while the Host opens the data folder: its first requests wait for their port (port-client.ts).
  await supervisor.start()
  openWindow()
  Menu.setApplicationMenu(buildMenu())
  updates = await startUpdates(dataDir, (state) => {
    const host = supervisor?.current
    if (host) sendTo(host, { type: 'update', state })
  })
}

/** The Host's own process, as the supervisor drives it. */
function startHostProcess(): HostProcess {
  const child = utilityProcess.fork(join(here, 'host-process.js'), [], { serviceName: 'Switchboard Host', stdio: 'pipe', execArgv: HOST_EXEC_ARGV })
  let pid: number | undefined = child.pid
  child.once('spawn', () => (pid = child.pid))
  return {
    get pid() {
      return pid
    },
    send: (message, transfer) => child.postMessage(message, transfer as MessagePortMain[] | undefined),
    onMessage: (listener) => child.on('message', (message: FromHost) => listener(message)),
    onExit: (listener) => child.once('exit', (code) => listener(code, null)),
    onOutput: (listener) => {
      child.stdout?.on('data', listener)
      child.stderr?.on('data', listener)
    },
    kill: () => {
      // SIGKILL: a hung or stopped Host does not act on SIGTERM (utilityProcess.kill's).
      if (pid === undefined || !trySigkill(pid)) child.kill()
    }
  }
}

function trySigkill(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL')
    return true
  } catch {
    return false
  }
}

function sendTo(host: HostProcess, message: Parameters<HostProcess['send']>[0], transfer?: MessagePortMain[]): void {
  try {
    host.send(message, transfer)
  } catch (error) {
    console.error(`Could not reach the Switchboard host: ${(error as Error).message}`)
  }
}

/** A new port between the window and the open Host (none while the Host is starting: it follows once it is open). */
function handPort(window: BrowserWindow): void {
  const host = supervisor?.current
  if (window.isDestroyed()) {
    connectedWindows.delete(window)
    return
  }
  if (!host || !isOurRendererUrl(window.webContents.getURL())) return
  const { port1, port2 } = new MessageChannelMain()
  sendTo(host, { type: 'connect' }, [port1])
  window.webContents.postMessage(ipcChannels.port, null, [port2])
}

/** The page that says why the Host will not start again, and where its log is, in place of the window's page. */
function showFailure(window: BrowserWindow, failed: HostFailure): void {
  connectedWindows.delete(window)
  void window.loadURL(failurePage(failed))
  window.show()
}

function openWindow(): void {
  // The primary display first: a window whose place is gone opens there.
  const primary = screen.getPrimaryDisplay()
  const displays = [primary, ...screen.getAllDisplays().filter((d) => d.id !== primary.id)]
  const bounds = restoreBounds(
    savedWindowState,
    displays.map((d) => d.workArea),
    WINDOW_DEFAULTS
  )
  const window = new BrowserWindow({
    ...bounds,
    minWidth: WINDOW_DEFAULTS.minWidth,
    minHeight: WINDOW_DEFAULTS.minHeight,
    title: 'Switchboard',
    show: false,
    webPreferences: {
      preload: join(here, '..', 'preload', 'index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      // No middle-click (auxclick) events: nothing uses them, and they are one more way to open a window.
      disableBlinkFeatures: 'Auxclick',
      spellcheck: spellcheckOn(process.platform)
    }
  })
  mainWindow = window
  if (savedWindowState?.maximized) window.maximize()
  if (savedWindowState?.fullScreen) window.setFullScreen(true)
  rememberWindowState(window)
  window.once('ready-to-show', () => window.show())
  window.on('closed', () => {
    connectedWindows.delete(window)
    if (mainWindow === window) mainWindow = null
  })
  if (failure) showFailure(window, failure)
  else void window.loadURL(devServerUrl ?? APP_INDEX_URL)
}

/** Our renderer's page: app://switchboard/index.html, or the dev server's page under `npm run dev`. */
function isOurRendererUrl(url: string): boolean {
  return isRendererPageUrl(url, devServerUrl)
}

/** Saves the window's size, place and maximised state (debounced) as it changes, and once more as it closes. */
function rememberWindowState(window: BrowserWindow): void {
  const save = debounce(() => {
    if (window.isDestroyed() || window.isMinimized()) return
    savedWindowState = { bounds: window.getNormalBounds(), maximized: window.isMaximized(), fullScreen: window.isFullScreen() }
    void saveWindowState(windowStateFile(), savedWindowState).catch((error: Error) =>
      console.error(`Could not save the window's place: ${error.message}`)
    )
  }, 400)
  const changed = (): void => save.schedule()
  window.on('resize', changed)
  window.on('move', changed)
  window.on('maximize', changed)
  window.on('unmaximize', changed)
  window.on('enter-full-screen', changed)
  window.on('leave-full-screen', changed)
  window.on('close', () => {
    save.schedule()
    save.flush()
  })
}

/** A menu item's command goes to the renderer as an `app.command` event, through the Host: the same path as its events. */
function sendCommand(command: AppCommand): void {
  if (!mainWindow) {
    openWindow()
    return
  }
  if (mainWindow.isMinimized()) mainWindow.restore()
  mainWindow.focus()
  const host = supervisor?.current
  if (host) sendTo(host, { type: 'command', command })
}

function buildMenu(): Menu {
  return Menu.buildFromTemplate(
    buildMenuTemplate({
      platform: process.platform,
      // Reload and DevTools only while developing: in the packaged app a page reloaded loses what is being typed, and DevTools runs code in the window.
      development: !app.isPackaged,
      send: sendCommand,
      openDataFolder: () => void shell.openPath(dataDirectory()),
      openExternal: openInBrowser,
      installCommand: app.isPackaged ? () => void installCommandFromMenu(mainWindow) : undefined
    })
  )
}

/** The one place a URL leaves the app: only a plain http(s) address goes to the system browser (`opensInBrowser`). */
function openInBrowser(url: string): void {
  if (opensInBrowser(url)) void shell.openExternal(url)
}
