import { ipcMain, type BrowserWindow, type IpcMainInvokeEvent } from 'electron'
import type { WireResponse } from '../shared/contract'
import { ipcChannels } from '../shared/ipc'
import type { Host } from './host/host'
import { openingHost } from './host/opening-host'
import { isTrustedSender } from './trusted-sender'

/**
 * Maps the contract onto Electron IPC, once: every request goes through one
 * `ipcMain.handle` channel into `host.handle` (which validates the params),
 * and the Host's event batches go to the window with `webContents.send`.
 * Requests from any frame other than our window's main frame, or from a page
 * not loaded from our renderer (app://switchboard/index.html, or the dev
 * server's page under `npm run dev`), are refused (`trusted-sender.ts`).
 *
 * `host` may be the Host still opening the data folder: the window loads
 * meanwhile (opening-host.ts).
 */
export function bridgeHost(host: Host | Promise<Host>, window: BrowserWindow, isOurRendererUrl: (url: string) => boolean): () => void {
  const opening = openingHost(host)
  ipcMain.handle(ipcChannels.request, async (event: IpcMainInvokeEvent, message: unknown): Promise<WireResponse> => {
    if (!isTrustedSender(event, window, isOurRendererUrl)) {
      return { ok: false, error: { message: 'Refused: the request did not come from the Switchboard window', code: 'forbidden' } }
    }
    const { method, params } = (typeof message === 'object' && message !== null ? message : {}) as {
      method?: unknown
      params?: unknown
    }
    return opening.handle(method, params)
  })
  const unsubscribe = opening.subscribe((events) => {
    if (!window.isDestroyed()) window.webContents.send(ipcChannels.events, events)
  })
  return () => {
    unsubscribe()
    ipcMain.removeHandler(ipcChannels.request)
  }
}
