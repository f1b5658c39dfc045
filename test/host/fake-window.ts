import type { BrowserWindow } from 'electron'
import { vi } from 'vitest'
import type { WireResponse } from '../../shared/contract'
import { ipcChannels } from '../../shared/ipc'

/** What a test's stand-in for Electron's `ipcMain.handle` keeps: the handler of each channel. */
export type IpcHandlers = Map<string, (event: unknown, message: unknown) => Promise<WireResponse>>

/**
 * Our window as the IPC bridge sees it (no test launches Electron): its main
 * frame on app://switchboard/index.html, its `webContents.send` a mock, and
 * `fromWindow`, a request as its preload sends it through the handler the
 * bridge installed in `handlers`.
 */
export function fakeWindow(handlers: IpcHandlers) {
  const mainFrame = { url: 'app://switchboard/index.html' }
  const webContents = { mainFrame, send: vi.fn() }
  const window = { isDestroyed: () => false, webContents } as unknown as BrowserWindow
  const fromWindow = (method: string, params: unknown): Promise<WireResponse> => {
    const handler = handlers.get(ipcChannels.request)
    if (!handler) throw new Error('the bridge is not installed')
    return handler({ sender: webContents, senderFrame: mainFrame }, { method, params })
  }
  return { mainFrame, webContents, window, fromWindow }
}
