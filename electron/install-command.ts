import { dialog, type BrowserWindow, type MessageBoxOptions } from 'electron'
import { installCommand, runAsAdminOnMac, windowsUserPath } from './shell-command'

/** The menu's "Install the switchboard Command…": installs it (shell-command.ts) and says how it went in a dialog. */
export async function installCommandFromMenu(window: BrowserWindow | null): Promise<void> {
  const result = await installCommand({
    platform: process.platform,
    resourcesPath: process.resourcesPath,
    appImage: process.platform === 'linux' ? process.env.APPIMAGE : undefined,
    runAsAdmin: process.platform === 'darwin' ? runAsAdminOnMac : undefined,
    userPath: process.platform === 'win32' ? windowsUserPath : undefined
  })
  const options: MessageBoxOptions = {
    type: result.ok ? 'info' : 'error',
    title: 'The switchboard command',
    message: result.message,
    detail: result.detail,
    buttons: ['OK']
  }
  if (window) await dialog.showMessageBox(window, options)
  else await dialog.showMessageBox(options)
}
