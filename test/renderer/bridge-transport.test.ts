// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest'
import { PortClient, type WebPort } from '../../electron/port-client'
import { connectTransport, LOST_CONNECTION, type ConnectionState } from '../../renderer/src/host/transport'

/**
 * The window's transport inside the desktop app: the preload's client (electron/port-client.ts) as
 * `window.switchboard`, on ports that stand for the Host's. When the Host goes away and a new one
 * comes, the window hears "reconnecting" with the reason, then "connected", and `reconnected` (where
 * the window's resync hooks in); a request left unanswered by the dead Host gets the reason.
 */

/** A port to a stand-in Host that answers every request with its name, or leaves it unanswered when `silent`. */
function hostPort(name: string, silent = false): WebPort & { closed: boolean } {
  const port = {
    onmessage: null as WebPort['onmessage'],
    closed: false,
    postMessage(message: unknown) {
      const { id } = message as { id: number }
      if (!silent) queueMicrotask(() => port.onmessage?.({ data: { kind: 'response', id, ok: true, result: { name } } }))
    },
    close() {
      port.closed = true
    }
  }
  return port
}

afterEach(() => {
  delete window.switchboard
})

describe('the desktop transport', () => {
  it('waits for the first port, says the Host went down and came back, and calls reconnected once', async () => {
    const client = new PortClient()
    window.switchboard = client
    const states: [ConnectionState, string | undefined][] = []
    let reconnected = 0
    const transport = connectTransport({
      problem: () => undefined,
      connection: (state, detail) => states.push([state, detail]),
      reconnected: () => reconnected++
    })

    const early = transport.request('app.info', {})
    client.usePort(hostPort('first'))
    expect(await early).toEqual({ ok: true, result: { name: 'first' } })
    expect(reconnected).toBe(0)

    const silent = hostPort('dying', true)
    client.usePort(silent)
    const unanswered = transport.request('app.info', {})
    client.hostDown('The Switchboard host stopped (it was killed (SIGKILL)); starting it again…')
    expect(await unanswered).toEqual({
      ok: false,
      error: { message: 'The Switchboard host stopped (it was killed (SIGKILL)); starting it again…' }
    })
    expect(silent.closed).toBe(true)
    expect(states.at(-1)).toEqual(['reconnecting', `${LOST_CONNECTION}: The Switchboard host stopped (it was killed (SIGKILL)); starting it again…`])

    const meanwhile = transport.request('app.info', {})
    client.usePort(hostPort('second'))
    expect(await meanwhile).toEqual({ ok: true, result: { name: 'second' } })
    expect(states.at(-1)).toEqual(['connected', undefined])
    expect(reconnected).toBe(1)
  })
})
