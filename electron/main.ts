import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import {
  app,
  BrowserWindow,
  dialog,
  Menu,
  shell,
  session,
  type MenuItemConstructorOptions
} from 'electron'
import { Host } from './host/host'
import { bridgeHost } from './ipc-bridge'
import { SafeStorageSecretStore } from './secret-store'

/**
 * The Electron shell: app lifecycle, the one window, the menu. Everything the
 * app does lives in the Host; this file only wires it to a window.
 */

const here = dirname(fileURLToPath(import.meta.url))
const rendererIndex = join(here, '..', 'renderer', 'index.html')
const devServerUrl = !app.isPackaged ? process.env.ELECTRON_RENDERER_URL : undefined

let host: Host | null = null
let mainWindow: BrowserWindow | null = null
let unbridge: (() => void) | null = null
let hostClosed = false

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
      if (/^https?:\/\//i.test(url)) void shell.openExternal(url)
      return { action: 'deny' }
    })
  })

  app.whenReady().then(start).catch((error: Error) => {
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
    if (!host || hostClosed) return
    // Stop every agent (and its children) before the process goes away.
    event.preventDefault()
    const closing = host
    host = null
    void closing.close().finally(() => {
      hostClosed = true
      app.quit()
    })
  })
}

async function start(): Promise<void> {
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false))
  const dataDir = process.env.SWITCHBOARD_DATA_DIR ?? app.getPath('userData')
  host = await Host.open({
    dataDir,
    version: app.getVersion(),
    secrets: new SafeStorageSecretStore(dataDir),
    pickFolder: async () => {
      const options = { title: 'Add a project folder', properties: ['openDirectory' as const, 'createDirectory' as const] }
      const result = mainWindow ? await dialog.showOpenDialog(mainWindow, options) : await dialog.showOpenDialog(options)
      return result.canceled ? null : (result.filePaths[0] ?? null)
    },
    // Shown, never opened: a path the agent named must not run anything when clicked.
    revealPath: (path) => shell.showItemInFolder(path)
  })
  Menu.setApplicationMenu(buildMenu())
  openWindow(host)
}

function openWindow(activeHost: Host): void {
  const window = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 720,
    minHeight: 480,
    title: 'Switchboard',
    show: false,
    webPreferences: {
      preload: join(here, '..', 'preload', 'index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: true
    }
  })
  mainWindow = window
  unbridge?.()
  unbridge = bridgeHost(activeHost, window, isOurRendererUrl)
  window.once('ready-to-show', () => window.show())
  window.on('closed', () => {
    if (mainWindow === window) mainWindow = null
  })
  if (devServerUrl) void window.loadURL(devServerUrl)
  else void window.loadFile(rendererIndex)
}

function isOurRendererUrl(url: string): boolean {
  if (devServerUrl) return url.startsWith(devServerUrl)
  return url.split('#')[0] === pathToFileURL(rendererIndex).href
}

function buildMenu(): Menu {
  const isMac = process.platform === 'darwin'
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    { role: 'fileMenu' },
    { role: 'editMenu' },
    { role: 'viewMenu' },
    { role: 'windowMenu' },
    {
      role: 'help',
      submenu: [
        {
          label: 'Open Data Folder',
          click: () => void shell.openPath(process.env.SWITCHBOARD_DATA_DIR ?? app.getPath('userData'))
        },
        {
          label: 'Agent Client Protocol',
          click: () => void shell.openExternal('https://agentclientprotocol.com')
        }
      ]
    }
  ]
  return Menu.buildFromTemplate(template)
}
