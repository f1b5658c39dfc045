import type { BridgeTransport, HostEvent, HostTransport, WireResponse } from '../../../shared/contract'
import { wireServerMessageSchema } from '../../../shared/wire-envelope'
import { readToken, socketUrl, takeTokenFromHash, type EarlyBridge, type EarlyLink, type EarlySocket } from './early-link'
import { WireReader, type WireRead } from './wire-reader'

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
export function connectTransport(hooks: TransportHooks, early: EarlyLink | null = null): WindowTransport {
  const bridge = window.switchboard
  if (bridge) {
    hooks.connection('connected')
    return checkedBridge(bridge, hooks, early?.kind === 'bridge' ? early : null)
  }
  return new WebSocketTransport(early?.kind === 'socket' ? early : null, hooks)
}

/** A transport, and the answers to the first load when the page's first script asked for it (early-link.ts). */
export interface WindowTransport extends HostTransport {
  /** The answers to the first requests, in their order, checked as every answer is; given once, then null (also when none were sent). */
  earlyAnswers(): Promise<WireResponse>[] | null
}

/** `refused`: the host is there but does not take this page's token (restarted with a new one): the page must be opened again. */
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'refused'

export interface TransportHooks {
  /** Something from the Host had to be ignored; the user should know. */
  problem(message: string): void
  /**
   * The link to the Host came up (first time or again) or went down; `detail` says what to do. A `connected`
   * after `reconnecting` or `refused` is the window's signal to re-read what it shows (app store, `resync`),
   * whichever transport raised it: the WebSocket when it reopens, the preload's bridge when it says so
   * (`BridgeTransport.onConnection`, e.g. a Host restarted after a crash handing the window a new port).
   */
  connection(state: ConnectionState, detail?: string): void
  /**
   * The link came back after it was lost (a new port after the Host was started again, a socket opened again):
   * what the window shows may be stale and should be read again. Not called for the first connection.
   */
  reconnected?(): void
}

export const LOST_CONNECTION = 'Lost the connection to the Switchboard host'
const UNREACHABLE = 'Cannot reach the Switchboard host'

/** A message a request failed with because the link was down (it may be carried in a longer one): moot once it is back. */
export function aboutLostConnection(message: string): boolean {
  return message.includes(LOST_CONNECTION) || message.includes(UNREACHABLE)
}

/** The preload's transport, with the same checks the WebSocket gets; its link going down and coming back is said as the socket's is. */
function checkedBridge(bridge: BridgeTransport, hooks: TransportHooks, early: EarlyBridge | null): WindowTransport {
  let lost = false
  bridge.onConnection((state, detail) => {
    hooks.connection(state, state === 'reconnecting' ? `${LOST_CONNECTION}: ${detail ?? ''}`.replace(/: $/, '') : undefined)
    if (state === 'reconnecting') lost = true
    else if (lost) {
      lost = false
      hooks.reconnected?.()
    }
  })
  async function checked(method: string, answer: Promise<WireResponse>): Promise<WireResponse> {
    const response: unknown = await answer
    const wellFormed = checkedAnswer(response)
    if (!wellFormed) {
      console.error(`Malformed answer from the host to ${method}`, response)
      hooks.problem(`The host sent a malformed answer to ${method}; it was ignored`)
      return { ok: false, error: { message: `The host sent a malformed answer to ${method}` } }
    }
    return wellFormed
  }
  let earlyAnswers = early && early.answers.map((answer, index) => checked(early.requests[index][0], answer))
  // Taken by the first load; until then a failure is not an unhandled rejection.
  for (const answer of earlyAnswers ?? []) answer.catch(() => undefined)
  return {
    request: (method, params) => checked(method, bridge.request(method, params)),
    earlyAnswers() {
      const answers = earlyAnswers
      earlyAnswers = null
      return answers
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

/** An answer (without the wire's kind and id) checked as the wire's envelope is: null when it is not one. */
export function checkedAnswer(response: unknown): WireResponse | null {
  const checked = wireServerMessageSchema.safeParse(
    typeof response === 'object' && response !== null ? { ...response, kind: 'response', id: 0 } : response
  )
  if (!checked.success || checked.data.kind !== 'response') return null
  return checked.data.ok ? { ok: true, result: checked.data.result } : { ok: false, error: checked.data.error }
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
 *
 * The first socket is the one the page's first script opened (`early`), with
 * the first load sent on it: it is taken over, its first requests wait for
 * their answers here like any other, and what came on it before is read as if
 * it came now (in a microtask, once whoever made this transport listens).
 */
class WebSocketTransport implements WindowTransport {
  private socket: WebSocket | null = null
  private opening: Promise<WebSocket> | null = null
  private nextId = 1
  /** Requests waiting for the socket to open (sent in turn once it is). */
  private waiting = 0
  private readonly pending = new Map<number, Pending>()
  private readonly listeners = new Set<(events: HostEvent[]) => void>()
  private retryDelay = FIRST_RETRY_MS
  private retryTimer: ReturnType<typeof setTimeout> | null = null
  private everConnected = false
  /** The host said no to the token: ask /auth before opening a socket again. */
  private refused = false
  private reader = new WireReader()
  /** The answers to the early socket's first requests, until `earlyAnswers` gives them. */
  private firstAnswers: Promise<WireResponse>[] | null = null

  private token: string

  constructor(
    early: EarlySocket | null,
    private readonly hooks: TransportHooks
  ) {
    this.token = early?.token ?? readToken()
    hooks.connection('connecting')
    if (early) this.takeOver(early)
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

  /**
   * Sent at once on an open socket, in the caller's task: a request that first awaited the socket went out only
   * after the microtasks queued before it, among them the render the same click asked for (a conversation's open
   * was sent after the window had drawn its pane and the session's view, the Host idle meanwhile). Those that wait
   * for the socket to open go first, in the order they were made.
   */
  request(method: string, params: unknown): Promise<WireResponse> {
    if (this.waiting === 0 && this.socket?.readyState === WebSocket.OPEN) return this.send(this.socket, method, params)
    this.waiting++
    return this.connect().then(
      (socket) => {
        this.waiting--
        return this.send(socket, method, params)
      },
      (error: unknown) => {
        this.waiting--
        throw error
      }
    )
  }

  private send(socket: WebSocket, method: string, params: unknown): Promise<WireResponse> {
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

  earlyAnswers(): Promise<WireResponse>[] | null {
    const answers = this.firstAnswers
    this.firstAnswers = null
    return answers
  }

  onEvents(listener: (events: HostEvent[]) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /**
   * Makes the early socket this transport's: its first requests pending here (ids 1 to `sent`), what it read
   * so far read again in a microtask, in order. A socket that closed meanwhile is left, with what came on it:
   * `connect` opens another (and says why, if it cannot), and the first load is asked for on that one.
   */
  private takeOver(early: EarlySocket): void {
    early.handOver()
    const { socket } = early
    if (socket.readyState !== WebSocket.OPEN && socket.readyState !== WebSocket.CONNECTING) return
    this.reader = early.reader
    this.nextId = early.sent + 1
    const answers: Promise<WireResponse>[] = []
    for (let id = 1; id <= early.sent; id++) {
      const answer = new Promise<WireResponse>((resolve, reject) => this.pending.set(id, { resolve, reject }))
      // Taken by the first load; until then a lost connection is not an unhandled rejection.
      answer.catch(() => undefined)
      answers.push(answer)
    }
    this.firstAnswers = answers.length > 0 ? answers : null
    if (socket.readyState === WebSocket.OPEN) {
      this.watch(
        socket,
        () => undefined,
        () => undefined
      )
    } else {
      this.opening = new Promise<WebSocket>((resolve, reject) => this.watch(socket, resolve, reject))
      this.opening.catch(() => undefined)
    }
    queueMicrotask(() => {
      for (const read of early.reads.splice(0)) this.handle(read)
    })
  }

  private connect(): Promise<WebSocket> {
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket)
    if (this.opening) return this.opening
    if (this.refused) return Promise.reject(new Error(refusedDetail(this.token)))
    this.opening = new Promise<WebSocket>((resolve, reject) => this.watch(new WebSocket(socketUrl(this.token)), resolve, reject))
    return this.opening
  }

  /** This transport's handlers on a socket opening or open; `resolve`/`reject` settle `opening`. */
  private watch(socket: WebSocket, resolve: (socket: WebSocket) => void, reject: (error: Error) => void): void {
    const open = (): void => {
      // The requests waiting for it first: one the window makes as it hears of the link (a resync) goes after them.
      resolve(socket)
      this.opened(socket)
    }
    socket.onopen = open
    // Taken over open (the page's first socket): it will not say so again.
    if (socket.readyState === WebSocket.OPEN) open()
    socket.onmessage = (event) => {
      const read = this.reader.read(String(event.data))
      if (read) this.handle(read)
    }
    socket.onclose = () => {
      const wasOpen = this.socket === socket
      this.socket = null
      this.reader.reset()
      this.dropPending()
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
  }

  private opened(socket: WebSocket): void {
    const again = this.everConnected
    this.socket = socket
    this.opening = null
    this.retryDelay = FIRST_RETRY_MS
    this.everConnected = true
    this.hooks.connection('connected')
    if (again) this.hooks.reconnected?.()
  }

  private dropPending(): void {
    for (const pending of this.pending.values()) pending.reject(new Error(LOST_CONNECTION))
    this.pending.clear()
  }

  /** Asks the host whether it takes the token; says what the user should know. */
  private async whyNotOpen(): Promise<string> {
    const accepted = await this.tokenAccepted()
    this.refused = accepted === false
    if (this.refused) return refusedDetail(this.token)
    if (this.everConnected) return `${LOST_CONNECTION}; reconnecting…`
    return `${UNREACHABLE}. Is it still running, and was this page opened with the address it printed? Retrying…`
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

  /** A message read from the socket (`WireReader`), or what was wrong with it. */
  private handle(read: WireRead): void {
    if (read.kind === 'not-json') {
      console.error('A message from the host is not JSON', read.start)
      this.hooks.problem('Ignored a message from the host that is not JSON')
      return
    }
    if (read.kind === 'broken') {
      console.error('A long message from the host does not fit together', read.error)
      this.hooks.problem('Ignored a message from the host that did not arrive whole')
      return
    }
    this.accept(read.message)
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
