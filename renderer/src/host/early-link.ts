import type { WireResponse } from '../../../shared/contract'
import { WireReader, type WireRead } from './wire-reader'

/**
 * The page's first script (main.ts) is small, and does one thing before the
 * window's code runs: it asks the Host for the window's first load. Over a
 * WebSocket (`serve`) it opens the socket and sends the first requests as
 * soon as it is open; inside Electron it sends them through the preload. The
 * window's code (fetched meanwhile: index.html preloads it) is run when the
 * answers are in, so the window mounts once, with its rows, instead of
 * mounting empty while its socket waits for the mount to end, then drawing
 * the rows. The window's transport takes the link over (`connectTransport`)
 * and checks what came on it as it checks everything (transport.ts): nothing
 * here trusts or checks a message, nor knows Vue or the stores.
 */

/** A request of the first load: the method and its parameters. */
export type FirstRequest = readonly [method: string, params: Record<string, unknown>]

/** The first requests sent over the page's socket, with ids 1 to `sent`. */
export interface EarlySocket {
  readonly kind: 'socket'
  readonly socket: WebSocket
  readonly token: string
  readonly requests: readonly FirstRequest[]
  /** How many requests were sent: all of them once the socket opened, else 0. */
  sent: number
  /** The messages read so far, in order: answers and event batches, for the transport to check and deliver. */
  readonly reads: WireRead[]
  /** Where a message that arrives in pieces is put together; the transport reads on with it. */
  readonly reader: WireReader
  /** Takes this script's handlers off the socket: the transport's take over. */
  handOver(): void
}

/** The first requests sent through Electron's preload: its answers, not checked yet. */
export interface EarlyBridge {
  readonly kind: 'bridge'
  readonly requests: readonly FirstRequest[]
  readonly answers: Promise<WireResponse>[]
}

export type EarlyLink = EarlySocket | EarlyBridge

export interface EarlyStart {
  link: EarlyLink
  /** True once every first request has its answer; false as soon as the link failed (the transport says why). */
  answered: Promise<boolean>
  /**
   * The result of the request at `index` as it came, not checked (the transport checks it again when it takes
   * the link over): for what the first script does itself before the window's code runs. Null when the Host
   * refused it, or the link failed or was handed over first.
   */
  result(index: number): Promise<unknown>
}

/** Sends `requests` to the Host at once, through the preload or over a new WebSocket. */
export function openEarlyLink(requests: readonly FirstRequest[]): EarlyStart {
  const bridge = window.switchboard
  if (bridge) {
    const answers = requests.map(([method, params]) => bridge.request(method, params))
    return {
      link: { kind: 'bridge', requests, answers },
      answered: Promise.all(answers).then(
        () => true,
        () => false
      ),
      result: (index) =>
        (answers[index] ?? Promise.resolve(null)).then(
          (answer) => (answer.ok ? answer.result : null),
          () => null
        )
    }
  }
  const token = readToken()
  const socket = new WebSocket(socketUrl(token))
  let settle: (answered: boolean) => void = () => undefined
  const answered = new Promise<boolean>((resolve) => (settle = resolve))
  const waiting = new Set<number>()
  // One result per request, kept as it comes: `result` gives it whenever it is asked for.
  const settles: ((result: unknown) => void)[] = []
  const results = requests.map(() => new Promise<unknown>((resolve) => settles.push(resolve)))
  const settleResults = (): void => {
    for (const resolve of settles) resolve(null)
  }
  const link: EarlySocket = {
    kind: 'socket',
    socket,
    token,
    requests,
    sent: 0,
    reads: [],
    reader: new WireReader(),
    handOver() {
      socket.onopen = socket.onmessage = socket.onclose = null
      settle(waiting.size === 0 && link.sent > 0)
      settleResults()
    }
  }
  socket.onopen = () => {
    try {
      requests.forEach(([method, params], index) => socket.send(JSON.stringify({ kind: 'request', id: index + 1, method, params })))
    } catch {
      // The socket closed as it opened: the transport opens another and asks again.
      settle(false)
      return
    }
    link.sent = requests.length
    for (let id = 1; id <= requests.length; id++) waiting.add(id)
  }
  socket.onmessage = (event) => {
    const read = link.reader.read(String(event.data))
    if (!read) return
    link.reads.push(read)
    const id = read.kind === 'message' ? answerId(read.message) : null
    if (id === null) return
    const answer = read.kind === 'message' ? (read.message as { ok?: unknown; result?: unknown }) : null
    settles[id - 1]?.(answer?.ok === true ? answer.result : null)
    if (waiting.delete(id) && waiting.size === 0) settle(true)
  }
  socket.onclose = () => {
    settle(false)
    settleResults()
  }
  return { link, answered, result: (index) => results[index] ?? Promise.resolve(null) }
}

/** The id of a response (any envelope with a numeric id and kind `response`); the transport checks the rest. */
function answerId(message: unknown): number | null {
  if (typeof message !== 'object' || message === null) return null
  const { kind, id } = message as { kind?: unknown; id?: unknown }
  return kind === 'response' && typeof id === 'number' ? id : null
}

export function socketUrl(token: string): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws'
  return `${scheme}://${location.host}/ws?token=${encodeURIComponent(token)}`
}

const TOKEN_KEY = 'switchboard.token'

/** The token arrives in the URL fragment; keep it for reloads and take it out of the address bar. */
export function readToken(): string {
  return takeTokenFromHash() ?? sessionStorage.getItem(TOKEN_KEY) ?? ''
}

export function takeTokenFromHash(): string | null {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash)
  if (!match) return null
  const token = decodeURIComponent(match[1])
  sessionStorage.setItem(TOKEN_KEY, token)
  history.replaceState(history.state, '', location.pathname + location.search)
  return token
}
