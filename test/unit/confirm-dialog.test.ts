import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { BrowserWindow, MessageBoxOptions } from 'electron'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Host } from '../../electron/host/host'
import type { WireResponse } from '../../shared/contract'
import { removeDir, tempDir } from '../helpers'

/**
 * The desktop app's confirmations (electron/confirm-dialog.ts) as the window's
 * requests reach the Host: Electron's dialog is a stand-in (no test launches
 * Electron), the Host is real. (In the app the Host asks the main process for
 * the dialog over its channel: test/shell/desktop-shell.test.ts; a page that
 * is not our window's gets no port to the Host at all, the same test.)
 */

const electron = vi.hoisted(() => ({
  showMessageBox: vi.fn<(...args: unknown[]) => Promise<{ response: number; checkboxChecked: boolean }>>()
}))

vi.mock('electron', () => ({
  dialog: { showMessageBox: electron.showMessageBox }
}))

const { confirmationBox, dialogConfirmation, CANCEL, CONFIRM } = await import('../../electron/confirm-dialog')
const { restartWhileInTurn } = await import('../../electron/host/updates/service')

let root: string
let host: Host
const window = { isDestroyed: () => false } as unknown as BrowserWindow
const fromWindow = (method: string, params: unknown): Promise<WireResponse> => host.handle(method, params)

/** The options of the nth message box shown (0: the first). */
function box(n = 0): MessageBoxOptions {
  const call = electron.showMessageBox.mock.calls[n]
  expect(call?.[0]).toBe(window) // parented to our window, as a sheet or modal
  return call?.[1] as MessageBoxOptions
}

beforeEach(async () => {
  root = await tempDir('confirm-dialog')
  electron.showMessageBox.mockReset()
  host = await Host.open({ dataDir: join(root, 'data'), version: 'test', presets: [], confirmCommand: dialogConfirmation(() => window) })
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

describe('the confirmation dialog of the desktop app', () => {
  it('an agent added from the window is shown with its exact command line; Cancel (the default) saves nothing', async () => {
    electron.showMessageBox.mockResolvedValueOnce({ response: CANCEL, checkboxChecked: false })
    const refused = await fromWindow('agents.add', {
      name: 'Mine',
      transport: { kind: 'process', command: '/opt/mine', args: ['--acp', 'two words', 'x\u202Eyz'], env: { MODE: 'fast' } }
    })
    expect(refused).toEqual({
      ok: false,
      error: { code: 'confirmation_refused', message: 'Cancelled in the confirmation dialog: nothing was changed.' }
    })
    expect(electron.showMessageBox).toHaveBeenCalledTimes(1)
    expect(box()).toEqual({
      type: 'warning',
      title: 'Confirm a command',
      message: 'Add the agent “Mine”?',
      detail: [
        'Agent “Mine” will run:',
        "  /opt/mine --acp 'two words' $'x\\u202Eyz'",
        '  with',
        '    MODE=fast',
        '',
        'Switchboard will run this with your rights. Cancel if you did not ask for it.'
      ].join('\n'),
      buttons: ['Cancel', 'Add agent'],
      defaultId: CANCEL,
      cancelId: CANCEL,
      noLink: true
    })
    expect(await fromWindow('agents.list', {})).toEqual({ ok: true, result: [] })
  })

  it('a project folder added from the window is asked, with what agents get (Cancel adds nothing); one chosen in the native picker is not asked again', async () => {
    const folder = join(root, 'project')
    await mkdir(folder)
    electron.showMessageBox.mockResolvedValueOnce({ response: CANCEL, checkboxChecked: false })
    expect(await fromWindow('projects.add', { cwd: folder })).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    expect(box()).toMatchObject({
      title: 'Confirm a change',
      message: `Add the project folder ${folder}?`,
      buttons: ['Cancel', 'Add project'],
      defaultId: CANCEL
    })
    expect(box().detail).toContain(`may read and write files in ${folder}`)
    expect(box().detail).toContain('Agents get this with your rights. Cancel if you did not ask for it.')
    expect(await fromWindow('projects.list', {})).toEqual({ ok: true, result: [] })

    const picking = await Host.open({
      dataDir: join(root, 'picking'),
      version: 'test',
      presets: [],
      confirmCommand: dialogConfirmation(() => window),
      pickFolder: async () => folder
    })
    try {
      expect(await picking.handle('projects.pickFolder', {})).toEqual({ ok: true, result: { path: folder } })
      expect(await picking.handle('projects.add', { cwd: folder })).toMatchObject({ ok: true, result: { cwd: folder } })
      expect(electron.showMessageBox).toHaveBeenCalledTimes(1)
      // The choice stands for one add of that folder: another is asked.
      const other = join(root, 'other')
      await mkdir(other)
      electron.showMessageBox.mockResolvedValueOnce({ response: CANCEL, checkboxChecked: false })
      expect(await picking.handle('projects.add', { cwd: other })).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
      expect(electron.showMessageBox).toHaveBeenCalledTimes(2)
    } finally {
      await picking.close()
    }
  })

  it('the confirming button adds it; a code the page sends does not stand in for the dialog', async () => {
    electron.showMessageBox.mockResolvedValueOnce({ response: CANCEL, checkboxChecked: false })
    const withCode = await fromWindow('agents.add', { name: 'Mine', transport: { kind: 'process', command: 'mine' }, confirmationCode: 'ABC-DEF' })
    expect(withCode).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    electron.showMessageBox.mockResolvedValueOnce({ response: CONFIRM, checkboxChecked: false })
    expect(await fromWindow('agents.add', { name: 'Mine', transport: { kind: 'process', command: 'mine' } })).toMatchObject({
      ok: true,
      result: { id: 'mine', transport: { kind: 'process', command: 'mine' } }
    })
    expect(electron.showMessageBox).toHaveBeenCalledTimes(2)
  })

  it('a change of what an agent runs asks, a rename does not; an MCP stdio server asks with its command line', async () => {
    electron.showMessageBox.mockResolvedValue({ response: CONFIRM, checkboxChecked: false })
    await fromWindow('agents.add', { name: 'Mine', transport: { kind: 'process', command: 'mine' } })
    electron.showMessageBox.mockClear()
    expect(await fromWindow('agents.update', { agentId: 'mine', name: 'Renamed', transport: { kind: 'process', command: 'mine' } })).toMatchObject({
      ok: true
    })
    expect(electron.showMessageBox).not.toHaveBeenCalled()

    electron.showMessageBox.mockResolvedValueOnce({ response: CANCEL, checkboxChecked: false })
    const changed = await fromWindow('agents.update', {
      agentId: 'mine',
      name: 'Renamed',
      transport: { kind: 'process', command: 'curl', args: ['-s', 'https://x.example/i.sh'] }
    })
    expect(changed).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    expect(box(0)).toMatchObject({ message: 'Change what the agent “Renamed” runs?', buttons: ['Cancel', 'Save changes'] })
    expect(box(0).detail).toContain('  curl -s https://x.example/i.sh')
    expect(await fromWindow('agents.list', {})).toMatchObject({
      ok: true,
      result: [{ name: 'Renamed', transport: { kind: 'process', command: 'mine', args: [] } }]
    })

    electron.showMessageBox.mockResolvedValueOnce({ response: CANCEL, checkboxChecked: false })
    const server = await fromWindow('mcp.save', { name: 'files', transport: 'stdio', command: 'npx', args: ['-y', 'files-server'] })
    expect(server).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    expect(box(1)).toMatchObject({ message: 'Add the MCP server “files”?', buttons: ['Cancel', 'Add server'] })
    expect(box(1).detail).toContain('MCP server “files” will run:\n  npx -y files-server')
    expect(await fromWindow('mcp.list', {})).toMatchObject({ ok: true, result: { profiles: [] } })
  })

  it('one dialog at a time: a second change waits for the answer to the first', async () => {
    let answerFirst: (value: { response: number; checkboxChecked: boolean }) => void = () => undefined
    electron.showMessageBox.mockReturnValueOnce(new Promise((resolve) => (answerFirst = resolve)))
    electron.showMessageBox.mockResolvedValueOnce({ response: CONFIRM, checkboxChecked: false })
    const first = fromWindow('agents.add', { name: 'First', transport: { kind: 'process', command: 'first' } })
    const second = fromWindow('agents.add', { name: 'Second', transport: { kind: 'process', command: 'second' } })
    await vi.waitFor(() => expect(electron.showMessageBox).toHaveBeenCalledTimes(1))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(electron.showMessageBox).toHaveBeenCalledTimes(1)
    answerFirst({ response: CANCEL, checkboxChecked: false })
    expect(await first).toMatchObject({ ok: false, error: { code: 'confirmation_refused' } })
    expect(await second).toMatchObject({ ok: true, result: { name: 'Second' } })
    expect(box(1).message).toBe('Add the agent “Second”?')
  })

  it('a restart to update while agents are mid-turn names them, and says the update waits on Cancel', () => {
    const options = confirmationBox(restartWhileInTurn('0.2.0', [{ title: 'Fix the build', agent: 'Claude Code' }]))
    expect(options).toMatchObject({
      message: 'Restart to update Switchboard to 0.2.0 while an agent is mid-turn?',
      detail:
        '“Fix the build” (Claude Code) is mid-turn: its turn stops when Switchboard restarts.\n\nCancel to let the turns end first; the update waits.',
      buttons: ['Cancel', 'Stop and restart'],
      defaultId: CANCEL
    })
  })
})
