// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { connectTransport } from '../../renderer/src/host/transport'

/**
 * The browser's link to the Host (`npm run serve`): a request goes on the socket in the task that made it, as the
 * preload's bridge sends it in the app. Sent after a microtask, it went out behind the render the same click had
 * queued (a conversation's open asked for once its pane was drawn, the Host idle meanwhile: e2e/thread's "asks the
 * Host for a conversation at its click"). Those made before the socket opened still go first, in their order.
 */

class FakeSocket {
  static readonly CONNECTING = 0
  static readonly OPEN = 1
  static readonly CLOSING = 2
  static readonly CLOSED = 3
  static made: FakeSocket[] = []
  readyState = FakeSocket.CONNECTING
  readonly sent: string[] = []
  onopen: (() => void) | null = null
  onmessage: ((event: { data: string }) => void) | null = null
  onclose: (() => void) | null = null
  constructor(readonly url: string) {
    FakeSocket.made.push(this)
  }
  send(data: string): void {
    this.sent.push((JSON.parse(data) as { method: string }).method)
  }
  close(): void {
    this.readyState = FakeSocket.CLOSED
  }
  open(): void {
    this.readyState = FakeSocket.OPEN
    this.onopen?.()
  }
}

const original = globalThis.WebSocket
beforeEach(() => {
  FakeSocket.made = []
  globalThis.WebSocket = FakeSocket as unknown as typeof WebSocket
})
afterEach(() => {
  globalThis.WebSocket = original
})

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0))

describe("the browser's socket to the Host", () => {
  it('sends a request on an open socket in the task that made it, before the microtasks queued before it', async () => {
    const transport = connectTransport({ problem: () => undefined, connection: () => undefined })
    const socket = FakeSocket.made[0]
    socket.open()
    await settle()
    let sentWhenRendered: string[] | null = null
    // A render the click queued first (Vue's is a microtask), then the click's request.
    queueMicrotask(() => (sentWhenRendered = [...socket.sent]))
    void transport.request('sessions.open', { id: 's1' })
    expect(socket.sent).toEqual(['sessions.open'])
    await settle()
    expect(sentWhenRendered).toEqual(['sessions.open'])
  })

  it('sends the requests made while it opened first, in their order, then one made as it says it is connected', async () => {
    let socket: FakeSocket | null = null
    let transport: ReturnType<typeof connectTransport> | null = null
    transport = connectTransport({
      problem: () => undefined,
      // The window re-reads what it shows as the link comes up: a request made in the same task as the opening.
      connection: (state) => {
        if (state === 'connected') void transport?.request('sessions.states', {})
      }
    })
    socket = FakeSocket.made[0]
    void transport.request('projects.list', {})
    void transport.request('sessions.summary', {})
    expect(socket.sent).toEqual([])
    socket.open()
    await settle()
    expect(socket.sent).toEqual(['projects.list', 'sessions.summary', 'sessions.states'])
    void transport.request('settings.get', {})
    expect(socket.sent.at(-1)).toBe('settings.get')
  })
})
