/**
 * Names of the Electron IPC channels, shared by the preload and the main
 * process. Kept free of runtime imports so the sandboxed preload bundle stays tiny.
 *
 * The window does not send its requests through the main process: it asks for
 * a port (`connect`), and the main process hands it one end of a
 * `MessageChannelMain` whose other end goes to the Host's process (`port`).
 * When the Host goes away, the main process says so (`down`, with a sentence)
 * and hands a new port once a new Host is open.
 */
export const ipcChannels = {
  connect: 'switchboard:connect',
  port: 'switchboard:port',
  down: 'switchboard:host-down'
} as const
