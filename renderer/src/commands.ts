import { isAppCommand, type AppCommand } from '../../shared/app-commands'
import { linkTarget, type Navigation } from '../../shared/navigation'

/**
 * What each app command does, registered by the part of the window that owns it
 * (App.vue's desktop wiring, and other views as they arrive). Commands come from
 * the native menu (the `app.command` event) and from keyboard shortcuts.
 */

const handlers = new Map<AppCommand, () => void>()

/** Registers what a command does; the returned function unregisters it. */
export function onAppCommand(command: AppCommand, handler: () => void): () => void {
  handlers.set(command, handler)
  return () => {
    if (handlers.get(command) === handler) handlers.delete(command)
  }
}

/** Runs a command; false when nothing handles it (yet) or it is not a command. */
export function runAppCommand(command: unknown): boolean {
  if (!isAppCommand(command)) return false
  const handler = handlers.get(command)
  if (!handler) return false
  handler()
  return true
}

let navigator: ((navigation: Navigation) => void) | null = null
/** Where the window was told to go before its code could go anywhere (the app just started): gone to once it can. */
let pending: Navigation | null = null

/**
 * Registers where the window goes when told from outside (`app.navigate`: `switchboard open`, a switchboard://
 * link); the returned function unregisters it.
 */
export function onNavigate(handler: (navigation: Navigation) => void): () => void {
  navigator = handler
  const waiting = pending
  pending = null
  if (waiting) handler(waiting)
  return () => {
    if (navigator === handler) navigator = null
  }
}

/** Goes where the window is told, now or as soon as the window can. */
export function runNavigation(navigation: Navigation): void {
  if (navigator) navigator(navigation)
  else pending = navigation
}

/**
 * A switchboard:// link followed from inside the window (a notification's): read as the shell reads a link from
 * outside (`linkTarget`), then gone to as `app.navigate` goes. Only session links (a project link names a folder,
 * which the Host finds); false, with a log line, for any other.
 */
export function followLink(link: string): boolean {
  const read = linkTarget(link)
  if ('ignored' in read || read.target.kind !== 'session') {
    console.warn(`Switchboard ignored the link ${JSON.stringify(link.slice(0, 300))}: ${'ignored' in read ? read.ignored : 'not a session link'}.`)
    return false
  }
  runNavigation({ kind: 'session', id: read.target.id })
  return true
}
