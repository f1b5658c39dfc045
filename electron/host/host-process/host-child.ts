import type { FirstScreenRenderer, HostEvent } from '../../../shared/contract'
import type { UpdateState } from '../../../shared/updates'
import type { ConfirmCommand } from '../contract/confirmations'
import type { FromHost, HostOpen, PortMessage, PortRequest, ShellAnswers, ShellCall, ToHost } from './host-channel'
import { Host } from '../host'
import { QuietCollector } from './quiet-gc'
import type { SecretStore } from '../storage/secrets'
import { serveDoor } from '../web/door'
import { startServing } from '../web/serving'

/**
 * The Host's own process, whichever started it: the desktop app's
 * `utilityProcess` (electron/host-process.ts) or `npm run serve`'s fork
 * (serve.ts). It waits for `open`, opens the Host (desktop) or the Host and
 * its WebSocket server (serve), says `ready` or why it `failed`, answers
 * pings, serves the contract on each window's port it is handed, and closes
 * when asked. What only the desktop shell can do (a native dialog, the
 * keychain, revealing a file) it asks the supervisor for (host-channel.ts).
 * No Electron import: the link to the supervisor is given.
 */

/** The link to the supervising process: Electron's `process.parentPort`, or Node's IPC channel. */
export interface ParentLink {
  send(message: FromHost): void
  onMessage(listener: (message: ToHost, ports: WindowPort[]) => void): void
}

/** A window's end of a port (Electron's MessagePortMain; its shape only). */
export interface WindowPort {
  postMessage(message: unknown): void
  on(event: 'message', listener: (event: { data: unknown }) => void): unknown
  on(event: 'close', listener: () => void): unknown
  start(): void
}

/** Returns `close`: the Host closed (its agents stopped, its files written), once, then `closed` is said. */
export function runHostProcess(parent: ParentLink, firstScreen: FirstScreenRenderer | undefined): { close(): Promise<void> } {
  // The last resort, in the Host's own process (the app's utility process, serve's child): an error that got past
  // the rooms (each reports and resets its own, room-errors.ts) goes to the Host's log (its stderr) with its stack,
  // and the Host goes on instead of stopping every agent; a Host truly broken stops answering pings and is restarted.
  // Once the Host is open, that is its RoomErrors: logged with its stack, a warning in app.info, told to the windows.
  process.on('uncaughtException', (error) => {
    if (host) host.rooms.report('The Switchboard host', error)
    else console.error('switchboard host: an error nothing caught (the Host goes on):', error)
  })
  process.on('unhandledRejection', (reason) => {
    if (host) host.rooms.report('The Switchboard host', reason)
    else console.error('switchboard host: a promise failed and nothing caught it (the Host goes on):', reason)
  })
  let host: Host | null = null
  // The start's garbage and a burst's are handed back once the Host is quiet (quiet-gc.ts; `gc` is there with --expose-gc).
  const collector = new QuietCollector((globalThis as { gc?: () => void }).gc)
  const windows = new WindowsSeen()
  let close: (() => Promise<void>) | null = null
  let closing = false
  let opening: Promise<void> | null = null
  const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  let nextCall = 0
  let lastUpdate: UpdateState | null = null
  function ask<N extends ShellCall['name']>(call: Extract<ShellCall, { name: N }>): Promise<ShellAnswers[N]> {
    const id = ++nextCall
    return new Promise((resolve, reject) => {
      calls.set(id, { resolve: resolve as (value: unknown) => void, reject })
      parent.send({ type: 'call', id, call })
    })
  }

  parent.onMessage((message, ports) => {
    switch (message.type) {
      case 'open':
        opening ??= open(message)
        return
      case 'ping':
        parent.send({ type: 'pong', id: message.id })
        return
      case 'reply': {
        const pending = calls.get(message.id)
        calls.delete(message.id)
        if (message.ok) pending?.resolve(message.value)
        else pending?.reject(new Error(message.message))
        return
      }
      case 'connect':
        if (host && ports[0]) servePort(host, ports[0], windows)
        return
      case 'command':
        host?.events.emit('app.command', { command: message.command })
        return
      case 'navigate':
        void host?.handle('app.navigate', { target: message.target }).then((answer) => {
          if (!answer.ok) console.error(`A switchboard:// link was not followed: ${answer.error.message}`)
        })
        return
      case 'update':
        // Kept until the Host is open (the shell's updater may speak first).
        lastUpdate = message.state
        host?.updates.note(message.state)
        return
      case 'close':
        void shutDown()
        return
    }
  })

  let closed: Promise<void> | null = null
  function shutDown(): Promise<void> {
    closing = true
    collector.stop()
    // A Host still opening is closed once open (its lock taken, its agents not started yet).
    closed ??= (opening ?? Promise.resolve())
      .then(() => close?.())
      .catch((error: Error) => console.error(`The Host did not close cleanly: ${error.message}`))
      .finally(() => parent.send({ type: 'closed' }))
    return closed
  }

  async function open(options: HostOpen): Promise<void> {
    if (host || closing) return
    try {
      if (options.shell === 'serve') {
        const serving = await startServing({
          dataDir: options.dataDir,
          rendererDir: options.serve?.rendererDir ?? '',
          version: options.version,
          port: options.serve?.port,
          newToken: options.serve?.newToken,
          host: { loginShell: options.loginShell, firstScreen }
        })
        host = serving.host
        close = serving.close
        const { warnings } = await host.request('app.info', {})
        parent.send({ type: 'ready', warnings, url: serving.server.url, notes: serving.notes })
        return
      }
      const secrets: SecretStore = {
        persistent: options.secretsPersistent ?? false,
        get: (key) => ask({ name: 'secrets.get', key }),
        set: async (key, value) => void (await ask({ name: 'secrets.set', key, value })),
        delete: async (key) => void (await ask({ name: 'secrets.delete', key }))
      }
      const confirmCommand: ConfirmCommand = (change) => ask({ name: 'confirmCommand', change })
      const opened = await Host.open({
        dataDir: options.dataDir,
        version: options.version,
        secrets,
        loginShell: options.loginShell,
        pickFolder: () => ask({ name: 'pickFolder' }),
        revealPath: (path) => void ask({ name: 'revealPath', path }).catch(() => undefined),
        confirmCommand,
        installUpdate: async (when) => void (await ask({ name: 'installUpdate', when })),
        firstScreen
      })
      host = opened
      if (lastUpdate) opened.updates.note(lastUpdate)
      opened.events.subscribe((events) => windows.noteNavigation(events))
      // The `switchboard` command reaches this Host through its door instead of opening the data folder again.
      const door = options.rendererDir
        ? await serveDoor(opened, options.dataDir, options.rendererDir).catch((error: Error) => {
            console.error(`The switchboard command cannot reach this Host: ${error.message}`)
            return null
          })
        : null
      close = async () => {
        await door?.close()
        await opened.close()
      }
      // The dock badge counts what waits in the inbox: the shell only hears the count.
      opened.events.subscribe((events) => {
        const last = events.findLast((e) => e.type === 'inbox.changed')
        if (last?.type === 'inbox.changed') parent.send({ type: 'badge', count: last.payload.length })
      })
      void opened.request('inbox.list', {}).then(
        (items) => parent.send({ type: 'badge', count: items.length }),
        (error: Error) => console.error(`Could not read the inbox for the badge: ${error.message}`)
      )
      const { warnings } = await opened.request('app.info', {})
      parent.send({ type: 'ready', warnings })
    } catch (error) {
      console.error(`The Switchboard host could not open ${options.dataDir}: ${(error as Error).stack ?? String(error)}`)
      parent.send({ type: 'failed', message: (error as Error).message })
    }
  }
  return { close: shutDown }
}

/**
 * Where the windows were told to go while none was connected (`switchboard .` starts the app, and tells it where to
 * go as soon as its Host is open, before the window has its port): the first window to connect is told then.
 */
class WindowsSeen {
  private open = 0
  private missed: HostEvent | null = null

  noteNavigation(events: HostEvent[]): void {
    const navigation = events.findLast((event) => event.type === 'app.navigate')
    if (navigation && this.open === 0) this.missed = navigation
  }

  connected(): HostEvent | null {
    this.open++
    const missed = this.missed
    this.missed = null
    return missed
  }

  closed(): void {
    this.open--
  }
}

/** The contract on a window's port: each request answered by id, every event batch sent, until the port closes. */
function servePort(host: Host, port: WindowPort, windows: WindowsSeen): void {
  const post = (message: PortMessage): void => {
    try {
      port.postMessage(message)
    } catch (error) {
      console.error(`Could not send to a window: ${(error as Error).message}`)
    }
  }
  const unsubscribe = host.events.subscribe((events) => post({ kind: 'events', events }))
  port.on('message', ({ data }) => {
    const request = data as Partial<PortRequest> | null
    if (typeof request !== 'object' || request === null || request.kind !== 'request' || typeof request.id !== 'number') return
    const id = request.id
    void host.handle(request.method, request.params).then((response) => post({ kind: 'response', id, ...response }))
  })
  port.on('close', () => {
    unsubscribe()
    windows.closed()
  })
  port.start()
  const missed = windows.connected()
  if (missed) post({ kind: 'events', events: [missed] })
}
