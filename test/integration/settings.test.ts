import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { openHost, recordEvents, removeDir, tempDir, waitUntil } from '../helpers'

/**
 * The window's settings (theme, pane layout, each project's agent choice, diff
 * view) are kept by the Host in the data folder: a restarted Host, and so any
 * window on any port, finds them as they were left.
 */

let root: string
let dataDir: string
let host: Host | null = null

beforeEach(async () => {
  root = await tempDir('settings')
  dataDir = join(root, 'data')
})

afterEach(async () => {
  await host?.close()
  host = null
  await removeDir(root)
})

async function restart(): Promise<Host> {
  await host?.close()
  host = await openHost(dataDir)
  return host
}

const layout = {
  panes: [
    { id: 'pane-a', sessionId: null },
    { id: 'pane-b', sessionId: 'session-1' }
  ],
  focused: 'pane-b',
  maximised: null
}

describe('settings', () => {
  it('are kept across a restart of the Host, and every window is told of a change', async () => {
    let h = await restart()
    expect(await h.request('settings.get', {})).toEqual({ settings: {}, saved: false })
    await mkdir(join(root, 'one'))
    await mkdir(join(root, 'two'))
    const one = await h.request('projects.add', { cwd: join(root, 'one') })
    const two = await h.request('projects.add', { cwd: join(root, 'two') })
    const events = recordEvents(h)

    await h.request('settings.set', { theme: 'dark', panes: layout })
    await h.request('settings.set', { projectAgents: { [one.id]: 'gemini' } })
    // Another window chooses for another project: both choices stay.
    const after = await h.request('settings.set', { projectAgents: { [two.id]: 'codex' }, diffMode: 'split' })
    expect(after).toEqual({ theme: 'dark', diffMode: 'split', panes: layout, projectAgents: { [one.id]: 'gemini', [two.id]: 'codex' } })
    await waitUntil('the last change told', () => events.filter((e) => e.type === 'settings.changed').length === 3)
    expect(events.filter((e) => e.type === 'settings.changed').at(-1)?.payload).toEqual(after)

    h = await restart()
    expect(await h.request('settings.get', {})).toEqual({ settings: after, saved: true })

    // null forgets a project's choice; a removed project's choice goes with it.
    await h.request('settings.set', { projectAgents: { [one.id]: null } })
    await h.request('projects.remove', { projectId: two.id })
    expect((await h.request('settings.get', {})).settings.projectAgents).toEqual({})
    h = await restart()
    expect((await h.request('settings.get', {})).settings).toEqual({ theme: 'dark', diffMode: 'split', panes: layout, projectAgents: {} })
  })

  it('keep each project’s preset choice beside its agent, merged per project; a removed project’s goes', async () => {
    const h = await restart()
    await mkdir(join(root, 'one'))
    await mkdir(join(root, 'two'))
    const one = await h.request('projects.add', { cwd: join(root, 'one') })
    const two = await h.request('projects.add', { cwd: join(root, 'two') })
    await h.request('settings.set', { projectAgents: { [one.id]: 'gemini' }, projectPresets: { [one.id]: 'preset-a' } })
    const after = await h.request('settings.set', { projectPresets: { [two.id]: 'preset-b' } })
    expect(after).toEqual({ projectAgents: { [one.id]: 'gemini' }, projectPresets: { [one.id]: 'preset-a', [two.id]: 'preset-b' } })
    // Back to an agent: the preset choice is forgotten, the agent's kept.
    await h.request('settings.set', { projectPresets: { [one.id]: null } })
    await h.request('projects.remove', { projectId: two.id })
    expect((await h.request('settings.get', {})).settings).toEqual({ projectAgents: { [one.id]: 'gemini' }, projectPresets: {} })
  })

  it('refuses a change that does not fit, and keeps what was there', async () => {
    const h = await restart()
    await h.request('settings.set', { theme: 'light' })
    const refused = [
      await h.handle('settings.set', { theme: 'purple' }),
      await h.handle('settings.set', { colour: 'dark' }),
      await h.handle('settings.set', { panes: { ...layout, panes: [] } }),
      await h.handle('settings.set', { panes: { ...layout, panes: [...layout.panes, ...layout.panes] } })
    ]
    for (const response of refused) expect(response).toMatchObject({ ok: false, error: { code: 'invalid_params' } })
    expect(refused[1]).toMatchObject({ error: { message: expect.stringContaining('colour') } })
    expect(await h.request('settings.get', {})).toEqual({ settings: { theme: 'light' }, saved: true })
  })

  it('moves a settings file that is not JSON aside and says so; keeps fields it does not know; drops and names a field it cannot read', async () => {
    await mkdir(dataDir, { recursive: true })
    await writeFile(join(dataDir, 'settings.json'), '{"theme": "dark", "pan')
    let h = await restart()
    expect(await h.request('settings.get', {})).toEqual({ settings: {}, saved: false })
    const { warnings } = await h.request('app.info', {})
    expect(warnings).toEqual([expect.stringMatching(/settings\.json could not be read \(.+\); it was moved to .*settings\.corrupt-.*\.json/)])
    const aside = (await readdir(dataDir)).find((name) => name.startsWith('settings.corrupt-'))
    expect(await readFile(join(dataDir, aside ?? 'missing'), 'utf8')).toBe('{"theme": "dark", "pan')

    await h.close()
    host = null
    await writeFile(join(dataDir, 'settings.json'), JSON.stringify({ theme: 'dark', diffMode: 'sideways', fromTheFuture: { x: 1 } }))
    h = await restart()
    expect(await h.request('settings.get', {})).toEqual({ settings: { theme: 'dark' }, saved: true })
    expect((await h.request('app.info', {})).warnings).toEqual([
      expect.stringMatching(/settings\.json: diffMode could not be read and is back to the default/)
    ])
    await h.request('settings.set', { theme: 'light' })
    expect(JSON.parse(await readFile(join(dataDir, 'settings.json'), 'utf8'))).toEqual({ theme: 'light', fromTheFuture: { x: 1 } })
  })
})
