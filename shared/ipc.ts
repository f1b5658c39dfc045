/**
 * Names of the Electron IPC channels, shared by the preload and the bridge.
 * Kept free of imports so the sandboxed preload bundle stays tiny.
 */
export const ipcChannels = {
  request: 'switchboard:request',
  events: 'switchboard:events'
} as const
