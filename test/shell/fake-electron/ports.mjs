import { EventEmitter } from 'node:events'

/**
 * Electron's MessagePortMain, as far as the shell uses it: `postMessage`
 * (structured clone), 'message' events ({ data, ports }) queued until
 * `start()`, `close()` closing both ends with a 'close' event. Ports that
 * cross a process are relayed over that process's IPC channel
 * (`{ __port: id, data }`, `{ __portClose: id }`): see `relay`.
 */
export class FakePort extends EventEmitter {
  other = null
  queue = []
  started = false
  closed = false

  postMessage(data) {
    const other = this.other
    if (this.closed || !other || other.closed) return
    const copy = structuredClone(data)
    setImmediate(() => other.receive(copy))
  }

  receive(data) {
    if (this.closed) return
    if (this.started) this.emit('message', { data, ports: [] })
    else this.queue.push(data)
  }

  start() {
    if (this.started) return
    this.started = true
    for (const data of this.queue.splice(0)) this.emit('message', { data, ports: [] })
  }

  close() {
    if (this.closed) return
    this.closed = true
    this.emit('close')
    if (this.other) this.other.close()
  }
}

export function fakeChannel() {
  const port1 = new FakePort()
  const port2 = new FakePort()
  port1.other = port2
  port2.other = port1
  return { port1, port2 }
}

/**
 * `port` handed to another process as `id`: what reaches it there goes out through `send`;
 * what comes back (`deliver`) is posted on it, to its other end.
 */
export class Relay {
  ports = new Map()
  nextId = 1

  constructor(send) {
    this.send = send
  }

  add(port) {
    const id = this.nextId++
    this.ports.set(id, port)
    port.on('message', (event) => this.send({ __port: id, data: event.data }))
    port.on('close', () => {
      this.ports.delete(id)
      this.send({ __portClose: id })
    })
    port.start()
    return id
  }

  /** A relay message from the other process: true when it was one. */
  deliver(message) {
    if (typeof message !== 'object' || message === null) return false
    if ('__port' in message) {
      this.ports.get(message.__port)?.postMessage(message.data)
      return true
    }
    if ('__portClose' in message) {
      this.ports.get(message.__portClose)?.close()
      return true
    }
    return false
  }

  closeAll() {
    for (const port of [...this.ports.values()]) port.close()
  }
}

/** The far side of a relayed port: a port whose messages go out through `send` as `id`. */
export function remotePort(id, send) {
  const { port1, port2 } = fakeChannel()
  port2.on('message', (event) => send({ __port: id, data: event.data }))
  port2.on('close', () => send({ __portClose: id }))
  port2.start()
  return { port: port1, end: port2 }
}
