import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { app, BrowserWindow, dialog, Menu, protocol, screen, shell, session } from 'electron'
import type { AppCommand } from '../shared/app-commands'
import { APP_INDEX_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, isRendererPageUrl, opensInBrowser, serveAppRequest } from './app-scheme'
import { dialogConfirmation } from './confirm-dialog'
import { wantsLoginShell } from './host/environment'
import { firstScreenBeside } from './host/first-screen-module'
import { Host } from './host/host'
import { bridgeHost } from './ipc-bridge'
import { buildMenuTemplate } from './menu'
import { configureSpellcheck, spellcheckOn } from './spellcheck'
import { SafeStorageSecretStore } from './secret-store'
import { debounce, loadWindowState, restoreBounds, saveWindowState, type WindowState } from './window-state'

/**
 * The Electron shell: app lifecycle, the one window, the menu. Everything the
 * app does lives in the Host; this file only wires it to a window.
 */

const here = dirname(fileURLToPath(import.meta.url))
/** The built renderer, served as app://switchboard/ (app-scheme.ts); never loaded from file://. */
const rendererDir = join(here, '..', 'renderer')
const devServerUrl = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined

// Before `ready`, as Electron requires: the scheme gets a real origin and a secure context.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: APP_SCHEME_PRIVILEGES }])

let host: Host | null = null
/** The Host while it opens the data folder (the window loads meanwhile); null once open or failed. */
let hostOpening: Promise<Host> | null = null
let mainWindow: BrowserWindow | null = null
let unbridge: (() => void) | null = null
let hostClosed = false
let savedWindowState: WindowState | null = null

const WINDOW_DEFAULTS = { width: 1280, height: 820, minWidth: 720, minHeight: 480 }
const dataDirectory = (): string => process.env.SWITCHBOARD_DATA_DIR ?? app.getPath('userData')
const windowStateFile = (): string => join(dataDirectory(), 'window-state.json')

if (!app.requestSingleInstanceLock()) {
  app.quit()
} else {
  app.on('second-instance', () => {
    if (!mainWindow) return
    if (mainWindow.isMinimized()) mainWindow.restore()
    mainWindow.focus()
  })

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
    if (host && BrowserWindow.getAllWindows().length === 0) openWindow(host)
  })

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })

  app.on('before-quit', (event) => {
    const closing = host ?? hostOpening
    if (!closing || hostClosed) return
    // Stop every agent (and its children) before the process goes away; a Host still opening is closed once open.
    event.preventDefault()
    host = null
    hostOpening = null
    void Promise.resolve(closing)
      .then((opened) => opened.close())
      .catch(() => undefined)
      .finally(() => {
        hostClosed = true
        app.quit()
      })
  })
}

async function start(): Promise<void> {
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
  // The window loads while the Host opens the data folder: its first requests wait for the Host (ipc-bridge.ts).
  const opening = (hostOpening = Host.open({
    dataDir,
    version: app.getVersion(),
    secrets: new SafeStorageSecretStore(dataDir),
    // Started from the Dock or a desktop menu, the app has a minimal PATH: agents get the login shell's environment.
    loginShell: wantsLoginShell(),
    pickFolder: async () => {
      const options = { title: 'Add a project folder', properties: ['openDirectory' as const, 'createDirectory' as const] }
      const result = mainWindow ? await dialog.showOpenDialog(mainWindow, options) : await dialog.showOpenDialog(options)
      return result.canceled ? null : (result.filePaths[0] ?? null)
    },
    // Shown, never opened: a path the agent named must not run anything when clicked.
    revealPath: (path) => shell.showItemInFolder(path),
    // A change that would run a program is confirmed in a native dialog, never on the page's word alone.
    confirmCommand: dialogConfirmation(() => mainWindow),
    // The window's first screen, drawn here as the window starts (out/main/first-screen.js).
    firstScreen: firstScreenBeside(import.meta.url)
  }))
  openWindow(opening)
  try {
    const opened = await opening
    // Quit while it opened: before-quit closes it.
    if (hostOpening !== opening) return
    host = opened
  } catch (error) {
    if (hostOpening !== opening) return // quitting already
    // Not opened (another Switchboard holds the folder, a newer database…): the error is shown without the window.
    mainWindow?.destroy()
    throw error
  } finally {
    if (hostOpening === opening) hostOpening = null
  }
  Menu.setApplicationMenu(buildMenu())
  showInboxOnBadge(host)
}

/** The dock or taskbar badge counts what waits in the inbox (the Host's `inbox.changed`), where the platform shows one. */
function showInboxOnBadge(activeHost: Host): void {
  activeHost.events.subscribe((events) => {
    const last = events.findLast((e) => e.type === 'inbox.changed')
    if (last?.type === 'inbox.changed') app.setBadgeCount(last.payload.length)
  })
  void activeHost.request('inbox.list', {}).then(
    (items) => app.setBadgeCount(items.length),
    (error: Error) => console.error(`Could not read the inbox for the badge: ${error.message}`)
  )
}

function openWindow(activeHost: Host | Promise<Host>): void {
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
  unbridge?.()
  unbridge = bridgeHost(activeHost, window, isOurRendererUrl)
  if (savedWindowState?.maximized) window.maximize()
  if (savedWindowState?.fullScreen) window.setFullScreen(true)
  rememberWindowState(window)
  window.once('ready-to-show', () => window.show())
  window.on('closed', () => {
    if (mainWindow === window) mainWindow = null
  })
  void window.loadURL(devServerUrl ?? APP_INDEX_URL)
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

/** A menu item's command goes to the renderer as an `app.command` event, through the same path as the Host's events. */
function sendCommand(command: AppCommand): void {
  if (!host) return
  if (!mainWindow) {
    openWindow(host)
    return
  }
  if (mainWindow.isMinimized()) mainWindow.restore()
  mainWindow.focus()
  host.events.emit('app.command', { command })
}

function buildMenu(): Menu {
  return Menu.buildFromTemplate(
    buildMenuTemplate({
      platform: process.platform,
      // Reload and DevTools only while developing: in the packaged app a page reloaded loses what is being typed, and DevTools runs code in the window.
      development: !app.isPackaged,
      send: sendCommand,
      openDataFolder: () => void shell.openPath(dataDirectory()),
      openExternal: openInBrowser
    })
  )
}

/** The one place a URL leaves the app: only a plain http(s) address goes to the system browser (`opensInBrowser`). */
function openInBrowser(url: string): void {
  if (opensInBrowser(url)) void shell.openExternal(url)
}
