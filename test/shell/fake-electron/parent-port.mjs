// `--import`ed into a "utility process" the stand-in forks: Electron's `process.parentPort` over Node's IPC channel.
import { EventEmitter } from 'node:events'
import { remotePort } from './ports.mjs'

const send = (message) => process.send?.(message)
const remote = new Map()
const parentPort = new EventEmitter()
parentPort.postMessage = (data) => send({ __fake: 'msg', data })
process.parentPort = parentPort
// As Electron's: messages wait until the process listens (the module that listens is loaded after this one).
let waiting = []
parentPort.on('newListener', (event) => {
  if (event !== 'message' || !waiting) return
  const queued = waiting
  waiting = null
  setImmediate(() => queued.forEach((message) => parentPort.emit('message', message)))
})
const deliver = (message) => (waiting ? waiting.push(message) : parentPort.emit('message', message))

process.on('message', (message) => {
  if (message.__fake === 'msg') {
    const ports = (message.portIds ?? []).map((id) => {
      const made = remotePort(id, send)
      remote.set(id, made.end)
      return made.port
    })
    deliver({ data: message.data, ports })
  } else if ('__port' in message) {
    remote.get(message.__port)?.postMessage(message.data)
  } else if ('__portClose' in message) {
    remote.get(message.__portClose)?.close()
    remote.delete(message.__portClose)
  }
})
// A utility process does not outlive the app's main process.
process.on('disconnect', () => process.exit(1))
