import { firstScreenBeside } from './host/host-process/first-screen-module'
import { runHostProcess } from './host/host-process/host-child'

/**
 * The Host's own process in the desktop app: an Electron `utilityProcess`
 * started and supervised by the main process (main.ts, host-supervisor.ts).
 * It talks to the main process over `process.parentPort`, and to each window
 * over the port the main process hands it (host-child.ts). No Electron
 * import: a utility process is Node, with `parentPort` added.
 */

const parentPort = process.parentPort
runHostProcess(
  {
    send: (message) => parentPort.postMessage(message),
    onMessage: (listener) => parentPort.on('message', (event) => listener(event.data as never, event.ports))
  },
  firstScreenBeside(import.meta.url)
)
