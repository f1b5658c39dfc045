import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { CommandChange } from '../../shared/confirmation'
import type { HostEvent } from '../../shared/contract'
import { EventBus } from '../../electron/host/contract/events'
import { HostError } from '../../electron/host/contract/errors'
import { turnsUnderWay, UpdateService, type TurnUnderWay } from '../../electron/host/updates/service'
import { openHost, removeDir, tempDir } from '../helpers'

/**
 * The Host's side of "Restart to update" (electron/host/updates/service.ts): the shell's state passed on to the
 * windows, and a restart that would stop agents mid-turn confirmed outside the window first. The shell's updater
 * itself is test/shell/updates.test.ts.
 */

function service(turns: TurnUnderWay[]) {
  const events = new EventBus()
  const heard: HostEvent[] = []
  events.subscribe((batch) => heard.push(...batch))
  const installs: string[] = []
  const updates = new UpdateService({ events, turnsUnderWay: () => turns, install: async (when) => void installs.push(when) })
  const asked: CommandChange[] = []
  const context = (answer: boolean) => ({
    confirm: async (change: CommandChange) => {
      asked.push(change)
      if (!answer) throw new HostError('confirmation_refused', 'Cancelled in the confirmation dialog: nothing was changed.')
    }
  })
  const install = (when: 'restart' | 'quit', answer = true) => updates.handlers()['updates.install']({ when }, context(answer))
  return { events, heard, installs, updates, asked, install }
}

describe('updates in the Host', () => {
  it('passes the shell updater state on to the windows, and answers it when asked', async () => {
    const { events, heard, updates } = service([])
    updates.note({ status: 'downloading', version: '0.2.0', transferred: 10, total: 100 })
    events.flush()
    expect(heard).toEqual([{ type: 'updates.changed', payload: { status: 'downloading', version: '0.2.0', transferred: 10, total: 100 } }])
    expect(await updates.handlers()['updates.get']({}, { confirm: async () => undefined })).toMatchObject({ status: 'downloading' })
  })

  it('installs nothing before an update is downloaded', async () => {
    const { installs, install } = service([])
    await expect(install('restart')).rejects.toThrow('No update has been downloaded yet: there is nothing to install.')
    expect(installs).toEqual([])
  })

  it('restarts at once when no agent is mid-turn, without asking', async () => {
    const { updates, installs, asked, install } = service([])
    updates.note({ status: 'ready', version: '0.2.0', installOnQuit: false })
    expect(await install('restart')).toEqual({ restarting: true })
    expect(asked).toEqual([])
    expect(installs).toEqual(['restart'])
  })

  it('asks outside the window before a restart stops turns under way; a no leaves the update waiting', async () => {
    const turns = [{ title: 'Fix the build', agent: 'Claude Code' }]
    const { updates, installs, asked, install } = service(turns)
    updates.note({ status: 'ready', version: '0.2.0', installOnQuit: false })
    await expect(install('restart', false)).rejects.toThrow('Cancelled in the confirmation dialog')
    expect(installs).toEqual([])
    expect(asked[0]).toEqual({
      action: 'Restart to update Switchboard to 0.2.0 while an agent is mid-turn',
      confirm: 'Stop and restart',
      programs: [],
      reach: ['“Fix the build” (Claude Code) is mid-turn: its turn stops when Switchboard restarts.'],
      note: 'Cancel to let the turns end first; the update waits.'
    })
    // Once the turn is over, the yes restarts without asking again.
    turns.length = 0
    expect(await install('restart')).toEqual({ restarting: true })
    expect(asked).toHaveLength(1)
    expect(installs).toEqual(['restart'])
  })

  it('a yes for the next quit needs no confirmation: quitting stops the turns anyway, as it always does', async () => {
    const { events, heard, updates, installs, asked, install } = service([{ title: 'A', agent: 'Gemini' }])
    updates.note({ status: 'ready', version: '0.2.0', installOnQuit: false })
    expect(await install('quit')).toEqual({ restarting: false })
    expect(asked).toEqual([])
    expect(installs).toEqual(['quit'])
    events.flush()
    expect(heard.at(-1)).toEqual({ type: 'updates.changed', payload: { status: 'ready', version: '0.2.0', installOnQuit: true } })
  })

  it('names the sessions whose turn runs, by title and agent', () => {
    const data = {
      sessions: [
        { id: 's1', title: 'Fix the build', agentId: 'claude' },
        { id: 's2', title: 'Idle one', agentId: 'claude' }
      ],
      agents: [{ id: 'claude', name: 'Claude Code' }]
    } as unknown as Parameters<typeof turnsUnderWay>[0]
    expect(
      turnsUnderWay(data, [
        { id: 's1', status: 'running' },
        { id: 's2', status: 'idle' }
      ] as Parameters<typeof turnsUnderWay>[1])
    ).toEqual([{ title: 'Fix the build', agent: 'Claude Code' }])
  })

  it('is off without a shell to install (npm run serve)', async () => {
    const updates = new UpdateService({ events: new EventBus(), turnsUnderWay: () => [] })
    expect(await updates.handlers()['updates.get']({}, { confirm: async () => undefined })).toEqual({ status: 'off', reason: 'serve' })
  })

  it('keeps the updateFeed setting (the shell reads it; no window can set it) when a window changes its settings', async () => {
    const dir = await tempDir('updates-feed')
    try {
      await writeFile(join(dir, 'settings.json'), JSON.stringify({ updateFeed: 'https://updates.example/switchboard/' }))
      const host = await openHost(dir)
      await host.request('settings.set', { theme: 'dark' })
      // As a page would send it: the contract's checks, not its types, refuse it.
      expect(await host.handle('settings.set', { updateFeed: 'https://evil.example/' })).toMatchObject({
        ok: false,
        error: { code: 'invalid_params' }
      })
      await host.close()
      expect(JSON.parse(await readFile(join(dir, 'settings.json'), 'utf8'))).toEqual({
        updateFeed: 'https://updates.example/switchboard/',
        theme: 'dark'
      })
    } finally {
      await removeDir(dir)
    }
  })
})
