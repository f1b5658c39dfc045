import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron'
import type { BridgeTransport } from '../shared/contract'
import { ipcChannels } from '../shared/ipc'
import { PortClient, type WebPort } from './port-client'

/**
 * Exposes the contract's transport and nothing else: one request function,
 * one event subscription, and the link's state. No Node or Electron object
 * reaches the page. Requests and events travel on a port to the Host's own
 * process, which the main process hands this window (and hands again after
 * the Host was started again); port-client.ts keeps it.
 */
const client = new PortClient()
ipcRenderer.on(ipcChannels.port, (event: IpcRendererEvent) => {
  const port = event.ports[0] as unknown as WebPort | undefined
  if (port) client.usePort(port)
})
ipcRenderer.on(ipcChannels.down, (_event: IpcRendererEvent, reason: unknown) => client.hostDown(String(reason)))
ipcRenderer.send(ipcChannels.connect)

const transport: BridgeTransport = {
  request: (method, params) => client.request(method, params),
  onEvents: (listener) => client.onEvents(listener),
  onConnection: (listener) => client.onConnection(listener)
}

contextBridge.exposeInMainWorld('switchboard', transport)
