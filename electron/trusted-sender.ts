/**
 * Whether an IPC request comes from our window's main frame showing our
 * renderer's page. No Electron import: the shapes below are the parts of
 * `IpcMainInvokeEvent` and `BrowserWindow` it reads, so it is unit-tested
 * with plain objects.
 */

export interface SenderEvent {
  sender: unknown
  /** Electron's `event.senderFrame`: null once the frame has navigated or been destroyed. */
  senderFrame: { url: string } | null
}

export interface OurWindow {
  isDestroyed(): boolean
  webContents: { mainFrame: unknown }
}

export function isTrustedSender(event: SenderEvent, window: OurWindow, isOurRendererUrl: (url: string) => boolean): boolean {
  if (window.isDestroyed() || event.sender !== window.webContents) return false
  const frame = event.senderFrame
  return frame !== null && frame === window.webContents.mainFrame && isOurRendererUrl(frame.url)
}
