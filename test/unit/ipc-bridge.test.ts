import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Host } from '../../electron/host/host'
import type { WireResponse } from '../../shared/contract'
import { ipcChannels } from '../../shared/ipc'
import { fakeWindow } from '../host/fake-window'
import { openHost, removeDir, tempDir, waitUntil } from '../helpers'

/**
 * The desktop app's IPC bridge (electron/ipc-bridge.ts) while the Host is
 * still opening the data folder: the window loads meanwhile (electron/main.ts)
 * and its first requests wait for the Host. Electron's ipcMain is a stand-in
 * (no test launches Electron); the Host is real.
 */

const electron = vi.hoisted(() => ({ handlers: new Map<string, (event: unknown, message: unknown) => Promise<WireResponse>>() }))

vi.mock('electron', () => ({
  ipcMain: {
    handle: (channel: string, handler: (event: unknown, message: unknown) => Promise<WireResponse>) => electron.handlers.set(channel, handler),
    removeHandler: (channel: string) => electron.handlers.delete(channel)
  }
}))

const { bridgeHost } = await import('../../electron/ipc-bridge')

let root: string
let host: Host
const { mainFrame, webContents, window, fromWindow } = fakeWindow(electron.handlers)

beforeEach(async () => {
  root = await tempDir('ipc-bridge')
  webContents.send.mockReset()
  host = await openHost(join(root, 'data'))
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

describe('the IPC bridge, given a Host still opening', () => {
  it('holds the window’s requests until the Host is open, answers them, and then sends its events', async () => {
    let open: (h: Host) => void = () => undefined
    const unbridge = bridgeHost(new Promise<Host>((resolve) => (open = resolve)), window, (url) => url === mainFrame.url)
    try {
      let answered: WireResponse | null = null
      const asked = fromWindow('app.info', {}).then((r) => (answered = r))
      await new Promise((r) => setTimeout(r, 100))
      expect(answered).toBeNull()
      open(host)
      expect(await asked).toMatchObject({ ok: true, result: { version: 'test' } })
      host.events.emit('agent.login.output', { loginId: 'after', data: 'opened' })
      await waitUntil('the event sent to the window', () => webContents.send.mock.calls.some((call) => JSON.stringify(call).includes('"after"')))
      expect(webContents.send.mock.calls[0][0]).toBe(ipcChannels.events)
    } finally {
      unbridge()
    }
  })

  it('answers with the reason when the Host could not open, and still refuses a frame that is not the window’s', async () => {
    const unbridge = bridgeHost(Promise.reject(new Error('db.json was written by a newer Switchboard')), window, (url) => url === mainFrame.url)
    try {
      expect(await fromWindow('projects.list', {})).toEqual({
        ok: false,
        error: { message: 'Switchboard could not open its data folder: db.json was written by a newer Switchboard' }
      })
      const handler = electron.handlers.get(ipcChannels.request)!
      const other = { url: 'https://evil.example/' }
      expect(await handler({ sender: webContents, senderFrame: other }, { method: 'projects.list', params: {} })).toMatchObject({
        ok: false,
        error: { code: 'forbidden' }
      })
    } finally {
      unbridge()
    }
  })
})
