import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron'
import type { HostEvent, HostTransport, WireResponse } from '../shared/contract'
import { ipcChannels } from '../shared/ipc'

/**
 * Exposes the contract's transport and nothing else: one request function and
 * one event subscription. No Node or Electron object reaches the page.
 */
const transport: HostTransport = {
  request: (method: string, params: unknown): Promise<WireResponse> => ipcRenderer.invoke(ipcChannels.request, { method, params }),
  onEvents: (listener: (events: HostEvent[]) => void): (() => void) => {
    const handler = (_event: IpcRendererEvent, events: HostEvent[]): void => listener(events)
    ipcRenderer.on(ipcChannels.events, handler)
    return () => {
      ipcRenderer.removeListener(ipcChannels.events, handler)
    }
  }
}

contextBridge.exposeInMainWorld('switchboard', transport)
