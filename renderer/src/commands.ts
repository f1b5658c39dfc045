import { isAppCommand, type AppCommand } from '../../shared/app-commands'

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
