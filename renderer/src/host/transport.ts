import type { HostEvent, HostTransport, WireResponse } from '../../../shared/contract'
import { wireServerMessageSchema } from '../../../shared/wire-envelope'
import { joinWire, wireFrameCount, wireHeader, type WirePieces } from '../../../shared/wire-pieces'

/**
 * Picks how this page reaches the Host. Inside Electron the preload exposes a
 * transport as `window.switchboard`; in a browser (`npm run serve`) the same
 * contract travels over a loopback WebSocket. Nothing else in the renderer
 * knows which one it has. Whatever arrives is checked against the wire schema
 * first: the envelope (a response's kind, id, ok and error; an event's type
 * and that it has a payload). Results and payloads are `z.unknown()` there:
 * they are the Host's own output, typed by the contract, and not checked
 * field by field. A malformed envelope is reported and ignored, never a crash.
 */
export function connectTransport(hooks: TransportHooks): HostTransport {
  const bridge = window.switchboard
  if (bridge) {
    hooks.connection('connected')
    return checkedBridge(bridge, hooks)
  }
  return new WebSocketTransport(readToken(), hooks)
}

/** `refused`: the host is there but does not take this page's token (restarted with a new one): the page must be opened again. */
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'refused'

export interface TransportHooks {
  /** Something from the Host had to be ignored; the user should know. */
  problem(message: string): void
  /** The link to the Host came up (first time or again) or went down; `detail` says what to do. */
  connection(state: ConnectionState, detail?: string): void
}

export const LOST_CONNECTION = 'Lost the connection to the Switchboard host'

const TOKEN_KEY = 'switchboard.token'

/** The token arrives in the URL fragment; keep it for reloads and take it out of the address bar. */
function readToken(): string {
  return takeTokenFromHash() ?? sessionStorage.getItem(TOKEN_KEY) ?? ''
}

function takeTokenFromHash(): string | null {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash)
  if (!match) return null
  const token = decodeURIComponent(match[1])
  sessionStorage.setItem(TOKEN_KEY, token)
  history.replaceState(history.state, '', location.pathname + location.search)
  return token
}

/** The preload's transport, with the same checks the WebSocket gets. */
function checkedBridge(bridge: HostTransport, hooks: TransportHooks): HostTransport {
  return {
    async request(method, params) {
      const response: unknown = await bridge.request(method, params)
      const checked = wireServerMessageSchema.safeParse(
        typeof response === 'object' && response !== null ? { ...response, kind: 'response', id: 0 } : response
      )
      if (!checked.success || checked.data.kind !== 'response') {
        console.error(`Malformed answer from the host to ${method}`, response)
        hooks.problem(`The host sent a malformed answer to ${method}; it was ignored`)
        return { ok: false, error: { message: `The host sent a malformed answer to ${method}` } }
      }
      return checked.data.ok ? { ok: true, result: checked.data.result } : { ok: false, error: checked.data.error }
    },
    onEvents(listener) {
      return bridge.onEvents((events) => {
        const checked = wireServerMessageSchema.safeParse({ kind: 'events', events })
        if (!checked.success) {
          console.error('Malformed events from the host', events)
          hooks.problem('Ignored malformed events from the host')
          return
        }
        deliver(listener, events, hooks)
      })
    }
  }
}

/** A listener's failure is reported, not thrown into the transport. */
function deliver(listener: (events: HostEvent[]) => void, events: HostEvent[], hooks: TransportHooks): void {
  try {
    listener(events)
  } catch (error) {
    console.error('Applying events from the host failed', error, events)
    hooks.problem(`Could not apply an update from the host: ${(error as Error).message}`)
  }
}

interface Pending {
  resolve: (response: WireResponse) => void
  reject: (error: Error) => void
}

const FIRST_RETRY_MS = 250
const MAX_RETRY_MS = 5000

/** Said when the host is there but refuses this page's token: waiting will not help, the printed address will. */
function refusedDetail(token: string): string {
  return token
    ? 'Switchboard refused the key this page was opened with: it was restarted with a new one (--new-token), or another Switchboard now answers at this address. ' +
        'Open the address Switchboard printed on its console (it ends with #token=…).'
    : 'This page was opened without its key. Open the address Switchboard printed on its console when it started (it ends with #token=…).'
}

/**
 * Requests and event batches over `/ws`. Requests are matched to responses by
 * id; a closed socket rejects what is pending and is reopened with backoff.
 * When a socket cannot open, the browser does not tell the page why: `/auth`
 * says whether the host is there and takes the token. A refused token stops
 * the attempts (each would only be refused again) and tells the user to open
 * the printed address; the page keeps asking `/auth` meanwhile, and goes on
 * at once when the address is pasted again (hashchange) or the token is
 * accepted again.
 */
class WebSocketTransport implements HostTransport {
  private socket: WebSocket | null = null
  private opening: Promise<WebSocket> | null = null
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly listeners = new Set<(events: HostEvent[]) => void>()
  private retryDelay = FIRST_RETRY_MS
  private retryTimer: ReturnType<typeof setTimeout> | null = null
  private everConnected = false
  /** The host said no to the token: ask /auth before opening a socket again. */
  private refused = false
  /** A long message arriving in pieces (`WirePieces`): its header and the frames received so far. */
  private pieces: { header: WirePieces; total: number; received: string[] } | null = null

  constructor(
    private token: string,
    private readonly hooks: TransportHooks
  ) {
    hooks.connection('connecting')
    this.connect().catch(() => undefined)
    // The address pasted again with its token (after opening the page without it): use it at once.
    window.addEventListener('hashchange', () => {
      const token = takeTokenFromHash()
      if (!token || this.socket) return
      this.token = token
      this.refused = false
      this.retryNow()
    })
  }

  async request(method: string, params: unknown): Promise<WireResponse> {
    const socket = await this.connect()
    const id = this.nextId++
    return new Promise<WireResponse>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      try {
        socket.send(JSON.stringify({ kind: 'request', id, method, params }))
      } catch (error) {
        this.pending.delete(id)
        reject(new Error(`Could not send ${method} to the Switchboard host: ${(error as Error).message}`))
      }
    })
  }

  onEvents(listener: (events: HostEvent[]) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private connect(): Promise<WebSocket> {
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket)
    if (this.opening) return this.opening
    if (this.refused) return Promise.reject(new Error(refusedDetail(this.token)))
    this.opening = new Promise<WebSocket>((resolve, reject) => {
      const scheme = location.protocol === 'https:' ? 'wss' : 'ws'
      const socket = new WebSocket(`${scheme}://${location.host}/ws?token=${encodeURIComponent(this.token)}`)
      socket.onopen = () => {
        this.socket = socket
        this.opening = null
        this.retryDelay = FIRST_RETRY_MS
        this.everConnected = true
        this.hooks.connection('connected')
        resolve(socket)
      }
      socket.onmessage = (event) => this.frame(String(event.data))
      socket.onclose = () => {
        const wasOpen = this.socket === socket
        this.socket = null
        this.pieces = null
        for (const pending of this.pending.values()) pending.reject(new Error(LOST_CONNECTION))
        this.pending.clear()
        if (wasOpen) {
          this.opening = null
          this.hooks.connection('reconnecting', `${LOST_CONNECTION}; reconnecting…`)
          this.scheduleReconnect()
          return
        }
        // Never opened: the host is down, or it refused the token. Requests wait for the answer.
        void this.whyNotOpen().then((detail) => {
          this.opening = null
          reject(new Error(detail))
          this.hooks.connection(this.refused ? 'refused' : 'reconnecting', detail)
          this.scheduleReconnect()
        })
      }
    })
    return this.opening
  }

  /** Asks the host whether it takes the token; says what the user should know. */
  private async whyNotOpen(): Promise<string> {
    const accepted = await this.tokenAccepted()
    this.refused = accepted === false
    if (this.refused) return refusedDetail(this.token)
    if (this.everConnected) return `${LOST_CONNECTION}; reconnecting…`
    return 'Cannot reach the Switchboard host. Is it still running, and was this page opened with the address it printed? Retrying…'
  }

  /** True or false as the host says; null when it cannot be reached. */
  private async tokenAccepted(): Promise<boolean | null> {
    try {
      const response = await fetch('/auth', { headers: { authorization: `Bearer ${this.token}` }, cache: 'no-store' })
      if (!response.ok) return null
      const answer = (await response.json()) as { accepted?: unknown }
      return typeof answer.accepted === 'boolean' ? answer.accepted : null
    } catch {
      return null
    }
  }

  private retryNow(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.retryTimer = null
    this.retryDelay = FIRST_RETRY_MS
    this.connect().catch(() => undefined)
  }

  private scheduleReconnect(): void {
    if (this.retryTimer) return
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      if (this.refused) void this.askAgain()
      else this.connect().catch(() => undefined)
    }, this.retryDelay)
    this.retryDelay = Math.min(this.retryDelay * 2, MAX_RETRY_MS)
  }

  /** While refused: only /auth is asked (quietly), until the token is taken again. */
  private async askAgain(): Promise<void> {
    if ((await this.tokenAccepted()) === true) {
      this.refused = false
      this.retryNow()
    } else {
      this.scheduleReconnect()
    }
  }

  /** A text frame: a message, or the header or a piece of one sent in pieces (`shared/wire-pieces.ts`). */
  private frame(data: string): void {
    if (this.pieces) {
      const pieces = this.pieces
      pieces.received.push(data)
      if (pieces.received.length < pieces.total) return
      this.pieces = null
      let message: unknown
      try {
        message = joinWire(pieces.header, pieces.received)
      } catch (error) {
        console.error('A long message from the host does not fit together', error)
        this.hooks.problem('Ignored a message from the host that did not arrive whole')
        return
      }
      this.accept(message)
      return
    }
    const header = wireHeader(data)
    if (header) this.pieces = { header, total: wireFrameCount(header), received: [] }
    else this.receive(data)
  }

  private notJson(start: string): void {
    console.error('A message from the host is not JSON', start)
    this.hooks.problem('Ignored a message from the host that is not JSON')
  }

  private receive(data: string): void {
    let parsed: unknown
    try {
      parsed = JSON.parse(data)
    } catch {
      this.notJson(data.slice(0, 200))
      return
    }
    this.accept(parsed)
  }

  private accept(parsed: unknown): void {
    const message = wireServerMessageSchema.safeParse(parsed)
    if (!message.success) {
      console.error('Malformed message from the host', parsed, message.error)
      this.hooks.problem('Ignored a malformed message from the host')
      return
    }
    const value = message.data
    if (value.kind === 'events') {
      for (const listener of this.listeners) deliver(listener, value.events as HostEvent[], this.hooks)
      return
    }
    const pending = this.pending.get(value.id)
    if (!pending) {
      console.error('An answer from the host matches no request', value)
      return
    }
    this.pending.delete(value.id)
    pending.resolve(value.ok ? { ok: true, result: value.result } : { ok: false, error: value.error })
  }
}
