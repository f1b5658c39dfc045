import { describe, expect, it } from 'vitest'
import { APP_INDEX_URL, isRendererPageUrl } from '../../electron/app-scheme'
import { isTrustedSender, type OurWindow } from '../../electron/trusted-sender'

/**
 * The IPC bridge answers only our window's main frame showing our renderer
 * (electron/trusted-sender.ts, used by ipc-bridge.ts); plain objects stand in
 * for Electron's event and window.
 */

function setup(options: { destroyed?: boolean } = {}) {
  const mainFrame = { url: APP_INDEX_URL }
  const webContents = { mainFrame }
  const window: OurWindow = { isDestroyed: () => options.destroyed ?? false, webContents }
  return { window, webContents, mainFrame }
}

const packaged = (url: string): boolean => isRendererPageUrl(url)

describe('the IPC sender check', () => {
  it("accepts our window's main frame on app://switchboard/index.html", () => {
    const { window, webContents, mainFrame } = setup()
    expect(isTrustedSender({ sender: webContents, senderFrame: mainFrame }, window, packaged)).toBe(true)
    mainFrame.url = `${APP_INDEX_URL}#section`
    expect(isTrustedSender({ sender: webContents, senderFrame: mainFrame }, window, packaged)).toBe(true)
  })

  it('refuses the same frame once it shows a file:// page or another origin', () => {
    const { window, webContents, mainFrame } = setup()
    for (const url of [
      'file:///opt/Switchboard/resources/app.asar/out/renderer/index.html',
      'https://example.com/',
      'app://evil/index.html',
      'about:blank'
    ]) {
      mainFrame.url = url
      expect(isTrustedSender({ sender: webContents, senderFrame: mainFrame }, window, packaged), url).toBe(false)
    }
  })

  it('refuses a subframe, another webContents, a gone frame and a destroyed window', () => {
    const { window, webContents, mainFrame } = setup()
    const subframe = { url: APP_INDEX_URL }
    expect(isTrustedSender({ sender: webContents, senderFrame: subframe }, window, packaged)).toBe(false)
    expect(isTrustedSender({ sender: { mainFrame }, senderFrame: mainFrame }, window, packaged)).toBe(false)
    expect(isTrustedSender({ sender: webContents, senderFrame: null }, window, packaged)).toBe(false)
    const gone = setup({ destroyed: true })
    expect(isTrustedSender({ sender: gone.webContents, senderFrame: gone.mainFrame }, gone.window, packaged)).toBe(false)
  })

  it('under npm run dev, accepts the dev server page and nothing that only starts like it', () => {
    const dev = (url: string): boolean => isRendererPageUrl(url, 'http://localhost:5173')
    const { window, webContents, mainFrame } = setup()
    mainFrame.url = 'http://localhost:5173/'
    expect(isTrustedSender({ sender: webContents, senderFrame: mainFrame }, window, dev)).toBe(true)
    mainFrame.url = 'http://localhost:5173.attacker.test/'
    expect(isTrustedSender({ sender: webContents, senderFrame: mainFrame }, window, dev)).toBe(false)
  })
})
