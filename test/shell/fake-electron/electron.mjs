import { fork } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { fakeChannel, Relay } from './ports.mjs'

/**
 * A small stand-in for the `electron` module, for running the built main
 * process (out/main/index.js) under plain Node (test/shell/desktop-shell.test.ts).
 * The test is the "renderer": it forks this process with an IPC channel and
 * speaks to it with `{ fake: … }` messages; ports handed to a window are
 * relayed to it (ports.mjs). `utilityProcess.fork` is `child_process.fork`
 * with `process.parentPort` added in the child (parent-port.mjs).
 *
 * What it does not prove is listed in the test file.
 */

const toTest = (message) => process.send?.(message)
const testPorts = new Relay(toTest)

class Emitter extends EventEmitter {}

// ---- app ----------------------------------------------------------------
export const app = new Emitter()
let quitting = false
// A packaged app (FAKE_ELECTRON_PACKAGED=1, for the updater), with its resources folder (app-update.yml) and version.
app.isPackaged = process.env.FAKE_ELECTRON_PACKAGED === '1'
if (process.env.FAKE_ELECTRON_RESOURCES) process.resourcesPath = process.env.FAKE_ELECTRON_RESOURCES
app.requestSingleInstanceLock = () => true
// Chromium's switches the shell appends (the renderer's V8 flags): told to the test.
app.commandLine = { appendSwitch: (name, value) => toTest({ fake: 'switch', name, value }) }
// switchboard:// (a packaged app registers itself as its handler): recorded, never registered with the system.
const protocolClients = new Set()
app.isDefaultProtocolClient = (scheme) => protocolClients.has(scheme)
app.setAsDefaultProtocolClient = (scheme) => (protocolClients.add(scheme), toTest({ fake: 'protocolClient', scheme }), true)
app.whenReady = () => new Promise((resolve) => setImmediate(() => (app.emit('ready'), resolve())))
app.getVersion = () => process.env.FAKE_ELECTRON_VERSION ?? '0.0.0-shell-test'
app.getName = () => 'Switchboard'
app.getAppPath = () => process.cwd()
app.relaunch = () => toTest({ fake: 'relaunch' })
app.getPath = (name) => `${tmpdir()}/fake-electron-${name}`
app.setBadgeCount = (count) => toTest({ fake: 'badge', count })
app.exit = (code = 0) => process.exit(code)
app.quit = () => {
  let prevented = false
  app.emit('before-quit', { preventDefault: () => (prevented = true) })
  if (prevented || quitting) return
  quitting = true
  for (const window of windows) window.destroy()
  app.emit('will-quit', { preventDefault: () => undefined })
  app.emit('quit', {}, 0)
  toTest({ fake: 'quit' })
  setImmediate(() => process.exit(0))
}

// ---- windows -------------------------------------------------------------
const windows = new Set()
let nextWindowId = 1

export class BrowserWindow extends Emitter {
  static getAllWindows = () => [...windows]
  static fromWebContents = (contents) => [...windows].find((w) => w.webContents === contents) ?? null

  constructor(options) {
    super()
    this.id = nextWindowId++
    this.options = options
    this.destroyed = false
    const window = this
    const mainFrame = {
      url: '',
      postMessage: (channel, message, ports) => window.webContents.postMessage(channel, message, ports)
    }
    this.webContents = Object.assign(new Emitter(), {
      mainFrame,
      getURL: () => mainFrame.url,
      send: (channel, ...args) => toTest({ fake: 'send', windowId: window.id, channel, args }),
      postMessage: (channel, message, ports = []) => {
        const portIds = ports.map((port) => testPorts.add(port))
        toTest({ fake: 'postMessage', windowId: window.id, channel, message, portIds })
      },
      setWindowOpenHandler: () => undefined
    })
    windows.add(this)
    app.emit('web-contents-created', {}, this.webContents)
    toTest({ fake: 'window', windowId: this.id })
  }

  loadURL(url) {
    this.webContents.mainFrame.url = url
    toTest({ fake: 'loadURL', windowId: this.id, url })
    setImmediate(() => this.emit('ready-to-show'))
    return Promise.resolve()
  }

  isDestroyed = () => this.destroyed
  destroy() {
    if (this.destroyed) return
    this.destroyed = true
    windows.delete(this)
    this.emit('closed')
  }
  show() {}
  focus() {}
  restore() {}
  maximize() {}
  setFullScreen() {}
  isMinimized = () => false
  isMaximized = () => false
  isFullScreen = () => false
  getNormalBounds = () => ({ x: 0, y: 0, width: 1280, height: 820 })
}

// ---- IPC and ports ---------------------------------------------------------
export const ipcMain = new Emitter()
ipcMain.handle = () => undefined
ipcMain.removeHandler = () => undefined

export class MessageChannelMain {
  constructor() {
    Object.assign(this, fakeChannel())
  }
}

process.on('message', (message) => {
  if (testPorts.deliver(message)) return
  if (message.fake === 'ipc-send') {
    // The page sends on an IPC channel (its preload): from the window's main frame, or from another frame.
    const window = [...windows].find((w) => w.id === message.windowId)
    if (!window) return
    const senderFrame = message.otherFrame ? { url: message.otherFrame } : window.webContents.mainFrame
    ipcMain.emit(message.channel, { sender: window.webContents, senderFrame }, ...(message.args ?? []))
  } else if (message.fake === 'quit') {
    app.quit()
  } else if (message.fake === 'second-instance') {
    // Another start of the app, its single-instance lock refused: its command line is handed to this one.
    app.emit('second-instance', {}, message.argv, process.cwd(), null)
  }
})

// ---- the Host's process --------------------------------------------------
const parentPortShim = new URL('./parent-port.mjs', import.meta.url).href

export const utilityProcess = {
  fork(modulePath, args = [], options = {}) {
    const child = fork(modulePath, args, {
      execArgv: ['--import', parentPortShim, ...(options.execArgv ?? [])],
      stdio: options.stdio === 'pipe' ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: options.env ?? process.env
    })
    const ports = new Relay((message) => child.connected && child.send(message))
    const utility = Object.assign(new Emitter(), {
      pid: undefined,
      stdout: child.stdout,
      stderr: child.stderr,
      postMessage(data, transfer = []) {
        const portIds = transfer.map((port) => ports.add(port))
        if (child.connected) child.send({ __fake: 'msg', data, portIds })
      },
      kill: () => child.kill('SIGTERM')
    })
    child.on('spawn', () => {
      utility.pid = child.pid
      toTest({ fake: 'utility', pid: child.pid })
      utility.emit('spawn')
    })
    child.on('message', (message) => {
      if (ports.deliver(message)) return
      if (message.__fake === 'msg') utility.emit('message', message.data)
    })
    child.on('exit', (code, signal) => {
      ports.closeAll()
      utility.pid = undefined
      utility.emit('exit', code ?? (signal ? 128 : 0))
    })
    return utility
  }
}

// ---- the rest, as far as main.ts uses it ------------------------------------
let lastBox = 0
const boxAnswers = new Map()
process.on('message', (message) => {
  if (message?.fake !== 'messageBoxAnswer') return
  boxAnswers.get(message.id)?.(message.response)
  boxAnswers.delete(message.id)
})
export const dialog = {
  showErrorBox: (title, content) => toTest({ fake: 'errorBox', title, content }),
  // Cancel (0), or with FAKE_ELECTRON_ASK_DIALOGS=1 the test's answer: it sees the box ({ fake: 'messageBox' }) and answers it.
  showMessageBox: async (...args) => {
    if (process.env.FAKE_ELECTRON_ASK_DIALOGS !== '1') return { response: 0, checkboxChecked: false }
    const options = args.at(-1)
    const id = ++lastBox
    toTest({ fake: 'messageBox', id, message: options.message, detail: options.detail, buttons: options.buttons })
    return new Promise((resolve) => boxAnswers.set(id, (response) => resolve({ response, checkboxChecked: false })))
  },
  showOpenDialog: async () => ({ canceled: true, filePaths: [] })
}
// The application menu: kept, so the test can click an item by its label ({ fake: 'menu-click', label }).
let applicationMenu = null
export const Menu = { buildFromTemplate: (template) => ({ template }), setApplicationMenu: (menu) => (applicationMenu = menu) }
process.on('message', (message) => {
  if (message?.fake !== 'menu-click') return
  const items = (applicationMenu?.template ?? []).flatMap((menu) => menu.submenu ?? [])
  const item = items.find((i) => i.label === message.label)
  if (item) item.click()
  toTest({ fake: 'menu-clicked', label: message.label, found: Boolean(item) })
})
export const protocol = { registerSchemesAsPrivileged: () => undefined, handle: () => undefined }
// Electron's `net.request` (what electron-updater downloads with) as Node's http.request: the same
// options and ClientRequest/IncomingMessage events, without Chromium's network stack (proxies, its cache).
export const net = { request: (options) => httpRequest(options) }
export const autoUpdater = new Emitter()
export const session = {
  fromPartition: (name) => ({ partition: name }),
  defaultSession: {
    setPermissionRequestHandler: () => undefined,
    on: () => undefined,
    setSpellCheckerEnabled: () => undefined,
    setSpellCheckerDictionaryDownloadURL: () => undefined
  }
}
const display = { id: 1, workArea: { x: 0, y: 0, width: 1920, height: 1080 } }
export const screen = { getPrimaryDisplay: () => display, getAllDisplays: () => [display] }
export const shell = { showItemInFolder: () => undefined, openExternal: async () => undefined, openPath: async () => '' }
export const safeStorage = {
  isEncryptionAvailable: () => false,
  encryptString: () => {
    throw new Error('no encryption in the stand-in')
  },
  decryptString: () => {
    throw new Error('no encryption in the stand-in')
  }
}
export const nativeTheme = new Emitter()
export default {
  app,
  BrowserWindow,
  ipcMain,
  MessageChannelMain,
  utilityProcess,
  dialog,
  Menu,
  protocol,
  session,
  screen,
  shell,
  safeStorage,
  nativeTheme,
  net,
  autoUpdater
}
