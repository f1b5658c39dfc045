import {
  wireServerMessageSchema,
  type HostEvent,
  type HostTransport,
  type WireResponse
} from '../../../shared/contract'

/**
 * Picks how this page reaches the Host. Inside Electron the preload exposes a
 * transport as `window.switchboard`; in a browser (`npm run serve`) the same
 * contract travels over a loopback WebSocket. Nothing else in the renderer
 * knows which one it has.
 */
export function connectTransport(onProblem: (message: string) => void): HostTransport {
  return window.switchboard ?? new WebSocketTransport(readToken(), onProblem)
}

const TOKEN_KEY = 'switchboard.token'

/** The token arrives in the URL fragment; keep it for reloads and take it out of the address bar. */
function readToken(): string {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash)
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, match[1])
    history.replaceState(null, '', location.pathname + location.search)
    return match[1]
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? ''
}

interface Pending {
  resolve: (response: WireResponse) => void
  reject: (error: Error) => void
}

const LOST = 'Lost the connection to the Switchboard host'

class WebSocketTransport implements HostTransport {
  private socket: WebSocket | null = null
  private open: Promise<WebSocket> | null = null
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly listeners = new Set<(events: HostEvent[]) => void>()
  private retryDelay = 250

  constructor(
    private readonly token: string,
    private readonly onProblem: (message: string) => void
  ) {
    void this.connect().catch(() => undefined)
  }

  async request(method: string, params: unknown): Promise<WireResponse> {
    const socket = await this.connect()
    const id = this.nextId++
    return new Promise<WireResponse>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      socket.send(JSON.stringify({ kind: 'request', id, method, params }))
    })
  }

  onEvents(listener: (events: HostEvent[]) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private connect(): Promise<WebSocket> {
    if (this.open) return this.open
    this.open = new Promise<WebSocket>((resolve, reject) => {
      const scheme = location.protocol === 'https:' ? 'wss' : 'ws'
      const socket = new WebSocket(`${scheme}://${location.host}/ws?token=${encodeURIComponent(this.token)}`)
      socket.onopen = () => {
        this.socket = socket
        this.retryDelay = 250
        resolve(socket)
      }
      socket.onmessage = (event) => this.receive(event.data)
      socket.onclose = () => {
        const wasOpen = this.socket === socket
        this.socket = null
        this.open = null
        for (const pending of this.pending.values()) pending.reject(new Error(LOST))
        this.pending.clear()
        if (!wasOpen) {
          reject(new Error(`${LOST}. Is \`npm run serve\` still running, and was the page opened with its URL (token included)?`))
        } else {
          this.onProblem(`${LOST}; reconnecting…`)
        }
        setTimeout(() => void this.connect().catch(() => undefined), this.retryDelay)
        this.retryDelay = Math.min(this.retryDelay * 2, 5000)
      }
    })
    return this.open
  }

  private receive(data: unknown): void {
    let parsed: unknown
    try {
      parsed = JSON.parse(String(data))
    } catch {
      this.onProblem('Ignored a message from the host that is not JSON')
      return
    }
    const message = wireServerMessageSchema.safeParse(parsed)
    if (!message.success) {
      console.error('Malformed message from the host', parsed)
      this.onProblem('Ignored a malformed message from the host')
      return
    }
    const value = message.data
    if (value.kind === 'events') {
      const events = value.events as HostEvent[]
      for (const listener of this.listeners) listener(events)
      return
    }
    const pending = this.pending.get(value.id)
    if (!pending) return
    this.pending.delete(value.id)
    pending.resolve(value.ok ? { ok: true, result: value.result } : { ok: false, error: value.error })
  }
}
