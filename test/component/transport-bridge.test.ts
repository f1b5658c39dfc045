// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest'
import type { BridgeTransport } from '../../shared/contract'
import { connectTransport, LOST_CONNECTION, type ConnectionState } from '../../renderer/src/host/transport'

/**
 * The preload's bridge (the app) raises the same signal the WebSocket does when
 * its link to the Host goes and comes back (the main process restarted a Host
 * that died and handed the window a new port): the window's resync hangs on it.
 */

afterEach(() => {
  delete window.switchboard
})

describe("the preload's bridge", () => {
  it('passes on the link going down and coming back, as the window hears it from the WebSocket', () => {
    let tell: (state: 'connected' | 'reconnecting', detail?: string) => void = () => undefined
    const bridge: BridgeTransport = {
      request: async () => ({ ok: true, result: {} }),
      onEvents: () => () => undefined,
      onConnection: (listener) => {
        tell = listener
        return () => undefined
      }
    }
    window.switchboard = bridge
    const heard: [ConnectionState, string | undefined][] = []
    connectTransport({ problem: () => undefined, connection: (state, detail) => heard.push([state, detail]) })
    tell('reconnecting')
    tell('connected')
    tell('reconnecting', 'The Switchboard host stopped; starting it again…')
    expect(heard).toEqual([
      ['connected', undefined],
      ['reconnecting', LOST_CONNECTION],
      ['connected', undefined],
      ['reconnecting', `${LOST_CONNECTION}: The Switchboard host stopped; starting it again…`]
    ])
  })
})
