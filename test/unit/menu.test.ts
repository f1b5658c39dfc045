import { describe, expect, it } from 'vitest'
import type { MenuItemConstructorOptions } from 'electron'
import type { AppCommand } from '../../shared/app-commands'
import { buildMenuTemplate } from '../../electron/menu'

/** The native menu's template (built without Electron): the usual roles, and app items that send commands to the window. */

function build(platform: NodeJS.Platform, development = true) {
  const sent: AppCommand[] = []
  const opened: string[] = []
  const template = buildMenuTemplate({
    platform,
    development,
    send: (c) => sent.push(c),
    openDataFolder: () => opened.push('data'),
    openExternal: (u) => opened.push(u)
  })
  return { template, sent, opened }
}

function items(menu: MenuItemConstructorOptions): MenuItemConstructorOptions[] {
  return (menu.submenu as MenuItemConstructorOptions[] | undefined) ?? []
}

function find(template: MenuItemConstructorOptions[], label: string): MenuItemConstructorOptions {
  const item = template.flatMap(items).find((i) => i.label === label)
  if (!item) throw new Error(`no menu item ${label}`)
  return item
}

function click(item: MenuItemConstructorOptions): void {
  ;(item.click as unknown as () => void)()
}

describe('the application menu', () => {
  it('has the app menu on macOS only, then File, Edit, View, Window and Help', () => {
    const mac = build('darwin').template
    expect(mac.map((m) => m.role ?? m.label)).toEqual(['appMenu', 'File', 'editMenu', 'View', 'windowMenu', 'help'])
    const linux = build('linux').template
    expect(linux.map((m) => m.role ?? m.label)).toEqual(['File', 'editMenu', 'View', 'windowMenu', 'help'])
    // Quitting lives in the app menu on macOS, in File elsewhere.
    expect(items(linux[0]).some((i) => i.role === 'quit')).toBe(true)
    expect(items(mac[1]).some((i) => i.role === 'quit')).toBe(false)
    // Undo, redo, cut, copy, paste and select all come with the role, with their native shortcuts.
    expect(linux[1]).toEqual({ role: 'editMenu' })
    expect(
      items(linux[2])
        .map((i) => i.role)
        .filter(Boolean)
    ).toEqual(['reload', 'forceReload', 'toggleDevTools', 'resetZoom', 'zoomIn', 'zoomOut', 'togglefullscreen'])
  })

  it('has no Reload, Force Reload or Developer Tools in the packaged app, on any platform (they stay while developing)', () => {
    const roles = (template: MenuItemConstructorOptions[]): string[] =>
      template.flatMap((menu) => [menu.role ?? '', ...items(menu).map((i) => i.role ?? '')]).filter(Boolean)
    for (const platform of ['darwin', 'linux', 'win32'] as const) {
      const packaged = roles(build(platform, false).template)
      for (const role of ['reload', 'forceReload', 'toggleDevTools']) expect(packaged, `${platform}: ${role}`).not.toContain(role)
      expect(packaged).toContain('resetZoom')
      const development = roles(build(platform, true).template)
      for (const role of ['reload', 'forceReload', 'toggleDevTools']) expect(development, `${platform}: ${role}`).toContain(role)
    }
    expect(
      items(build('linux', false).template[2])
        .map((i) => i.role ?? i.type)
        .filter(Boolean)
    ).toEqual(['resetZoom', 'zoomIn', 'zoomOut', 'separator', 'togglefullscreen'])
  })

  it('sends each app command to the window, showing the shortcut the page handles', () => {
    const { template, sent } = build('linux')
    const expected: [string, AppCommand, string][] = [
      ['New Session', 'new-session', 'CmdOrCtrl+N'],
      ['New Session With…', 'new-session-picker', 'CmdOrCtrl+Shift+N'],
      ['Search…', 'search', 'CmdOrCtrl+K'],
      ['Inbox', 'inbox', 'CmdOrCtrl+I'],
      ['Agents', 'agents', 'CmdOrCtrl+Shift+A'],
      ['MCP Servers', 'mcp', 'CmdOrCtrl+Shift+M'],
      ['Spend', 'spend', 'CmdOrCtrl+Shift+S'],
      ['Keyboard Shortcuts', 'shortcuts', 'CmdOrCtrl+/']
    ]
    for (const [label, command, accelerator] of expected) {
      const item = find(template, label)
      expect(item.accelerator).toBe(accelerator)
      // Shown, not registered: the page's own key handler runs it, once.
      expect(item.registerAccelerator).toBe(false)
      click(item)
      expect(sent.at(-1)).toBe(command)
    }
    expect(sent).toEqual(expected.map(([, command]) => command))
  })

  it('opens the data folder and the protocol site', () => {
    const { template, opened } = build('win32')
    click(find(template, 'Open Data Folder'))
    click(find(template, 'Agent Client Protocol'))
    expect(opened).toEqual(['data', 'https://agentclientprotocol.com'])
  })

  it('offers "Install the switchboard Command…" in File when the shell gives it (the packaged app), and not otherwise', () => {
    let installs = 0
    const packaged = buildMenuTemplate({
      platform: 'darwin',
      development: false,
      send: () => undefined,
      openDataFolder: () => undefined,
      openExternal: () => undefined,
      installCommand: () => void installs++
    })
    click(find(packaged, 'Install the switchboard Command…'))
    expect(installs).toBe(1)
    expect(() => find(build('darwin').template, 'Install the switchboard Command…')).toThrow('no menu item')
  })
})
