import type { MenuItemConstructorOptions } from 'electron'
import type { AppCommand } from '../shared/app-commands'

/**
 * The native application menu as a template: the usual roles (app menu on
 * macOS, File, Edit, View, Window, Help) plus Switchboard's own items, which
 * send an app command to the renderer (the `app.command` event). Building the
 * template needs no Electron at run time, so it is unit-tested.
 *
 * The app items show their shortcut but do not register it
 * (`registerAccelerator: false`): the page handles those keys itself
 * (renderer/src/shortcuts.ts), the same in Electron and in a browser, so a key
 * press runs its command once.
 */

export interface MenuActions {
  platform: NodeJS.Platform
  /** Not the packaged app: the View menu has Reload, Force Reload and Toggle Developer Tools (and their shortcuts). */
  development: boolean
  /** Runs an app command in the window. */
  send: (command: AppCommand) => void
  openDataFolder: () => void
  openExternal: (url: string) => void
  /** The packaged app: puts the `switchboard` command where a terminal finds it (electron/install-command.ts). */
  installCommand?: () => void
}

export function buildMenuTemplate(actions: MenuActions): MenuItemConstructorOptions[] {
  const isMac = actions.platform === 'darwin'
  const command = (label: string, name: AppCommand, accelerator?: string): MenuItemConstructorOptions => ({
    label,
    ...(accelerator ? { accelerator, registerAccelerator: false } : {}),
    click: () => actions.send(name)
  })
  return [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        command('New Session', 'new-session', 'CmdOrCtrl+N'),
        command('New Session With…', 'new-session-picker', 'CmdOrCtrl+Shift+N'),
        command('Search…', 'search', 'CmdOrCtrl+K'),
        command('Inbox', 'inbox', 'CmdOrCtrl+I'),
        { type: 'separator' },
        command('Agents', 'agents', 'CmdOrCtrl+Shift+A'),
        command('MCP Servers', 'mcp', 'CmdOrCtrl+Shift+M'),
        command('Spend', 'spend', 'CmdOrCtrl+Shift+S'),
        { type: 'separator' },
        { label: 'Open Data Folder', click: () => actions.openDataFolder() },
        ...(actions.installCommand ? [{ label: 'Install the switchboard Command…', click: actions.installCommand }] : []),
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' }
      ]
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        ...(actions.development
          ? [{ role: 'reload' as const }, { role: 'forceReload' as const }, { role: 'toggleDevTools' as const }, { type: 'separator' as const }]
          : []),
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' }
      ]
    },
    { role: 'windowMenu' },
    {
      role: 'help',
      submenu: [
        command('Keyboard Shortcuts', 'shortcuts', 'CmdOrCtrl+/'),
        { type: 'separator' },
        { label: 'Agent Client Protocol', click: () => actions.openExternal('https://agentclientprotocol.com') }
      ]
    }
  ]
}
