/**
 * Commands the app can be told to run from outside the page: the native
 * application menu sends them as the `app.command` event (electron/menu.ts), and
 * the renderer's own keyboard shortcuts run the same ones (renderer/src/commands.ts).
 */
export const appCommands = ['new-session', 'new-session-picker', 'search', 'shortcuts', 'agents', 'mcp', 'inbox', 'spend'] as const

export type AppCommand = (typeof appCommands)[number]

export function isAppCommand(value: unknown): value is AppCommand {
  return typeof value === 'string' && (appCommands as readonly string[]).includes(value)
}
