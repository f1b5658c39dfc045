// @vitest-environment happy-dom
import { flushPromises } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { beforeEach, describe, expect, it } from 'vitest'
import { applySettingsChange, type SettingsChange, type UserSettings } from '../../shared/settings'
import { routeEvents } from '../../renderer/src/event-router'
import { LOST_CONNECTION } from '../../renderer/src/host/transport'
import { useNoticesStore } from '../../renderer/src/stores/notices'
import { usePanesStore } from '../../renderer/src/stores/panes'
import { useSettingsStore } from '../../renderer/src/stores/settings'
import { useThemeStore } from '../../renderer/src/stores/theme'
import { FakeHost } from './fake-host'

/**
 * The window's settings against a fake Host that keeps them as the real one
 * does: the first paint from the page's hint, the Host's settings replacing
 * it, the old localStorage settings given to a Host that has none (once),
 * changes kept through a lost connection, and other windows followed.
 */

let kept: UserSettings
let saved: boolean
let fake: FakeHost

function keepingHost(): FakeHost {
  return new FakeHost({
    'settings.get': () => ({ settings: kept, saved }),
    'settings.set': (change: SettingsChange) => {
      kept = applySettingsChange(kept, change)
      saved = true
      return kept
    }
  }).install()
}

beforeEach(() => {
  localStorage.clear()
  delete document.documentElement.dataset.themeChoice
  delete document.documentElement.dataset.theme
  kept = {}
  saved = false
  fake = keepingHost()
  setActivePinia(createPinia())
})

/** A new window (a reload, another tab): its stores start afresh from what the page has. */
function newWindow(): void {
  setActivePinia(createPinia())
}

describe('the settings of the window', () => {
  it('puts the chosen theme on the page, has the Host keep it, and starts the next window with it before the Host answers', async () => {
    const theme = useThemeStore()
    expect(theme.choice).toBe('system')
    theme.choose('dark')
    await flushPromises()
    expect(document.documentElement.dataset.theme).toBe('dark')
    expect(fake.sent('settings.set')).toEqual([{ theme: 'dark' }])
    expect(kept).toEqual({ theme: 'dark' })

    // The next window paints dark at once, from its hint, with no answer from the Host yet.
    newWindow()
    delete document.documentElement.dataset.theme
    useThemeStore()
    await flushPromises()
    expect(document.documentElement.dataset.theme).toBe('dark')

    // The Host's settings win over the hint (another window, another origin, chose light meanwhile).
    kept = { theme: 'light' }
    await useSettingsStore().load()
    await flushPromises()
    expect(document.documentElement.dataset.theme).toBe('light')
  })

  it('paints with the theme the page was served with before its own hint', async () => {
    localStorage.setItem('switchboard.settings', JSON.stringify({ theme: 'light' }))
    document.documentElement.dataset.themeChoice = 'dark'
    expect(useThemeStore().choice).toBe('dark')
    await flushPromises()
    expect(document.documentElement.dataset.theme).toBe('dark')
  })

  it('gives the Host the settings this window kept itself before, once, when the Host has none', async () => {
    const layout = {
      panes: [
        { id: 'p1', sessionId: 's1' },
        { id: 'p2', sessionId: null }
      ],
      focused: 'p2',
      maximised: null
    }
    localStorage.setItem('switchboard.theme', 'dark')
    localStorage.setItem('switchboard.diffMode', 'split')
    localStorage.setItem('switchboard.panes', JSON.stringify(layout))
    // Before the Host answers, the window already shows them.
    expect(useThemeStore().choice).toBe('dark')
    expect(useSettingsStore().values.panes).toEqual(layout)

    await useSettingsStore().load()
    expect(fake.sent('settings.set')).toEqual([{ theme: 'dark', diffMode: 'split', panes: layout }])
    expect(kept).toEqual({ theme: 'dark', diffMode: 'split', panes: layout })
    expect(['switchboard.theme', 'switchboard.diffMode', 'switchboard.panes'].map((k) => localStorage.getItem(k))).toEqual([null, null, null])

    // A Host that has settings is not given a window's old ones: they are dropped.
    newWindow()
    localStorage.setItem('switchboard.theme', 'light')
    fake = keepingHost()
    await useSettingsStore().load()
    expect(fake.sent('settings.set')).toEqual([])
    expect(useThemeStore().choice).toBe('dark')
    expect(localStorage.getItem('switchboard.theme')).toBeNull()
  })

  it('keeps a change made while the Host is out of reach and sends it when the link is back', async () => {
    const settings = useSettingsStore()
    await settings.load()
    const request = fake.request.bind(fake)
    fake.request = async () => {
      throw new Error(LOST_CONNECTION)
    }
    settings.change({ theme: 'dark' })
    settings.change({ projectAgents: { p1: 'gemini' } })
    settings.change({ projectAgents: { p2: 'codex' } })
    await flushPromises()
    expect(settings.values).toMatchObject({ theme: 'dark', projectAgents: { p1: 'gemini', p2: 'codex' } })
    expect(kept).toEqual({})
    expect(useNoticesStore().errors).toEqual([])

    fake.request = request
    await settings.load()
    expect(kept).toEqual({ theme: 'dark', projectAgents: { p1: 'gemini', p2: 'codex' } })
    expect(settings.values).toEqual(kept)
  })

  it('follows a change made in another window, but not one older than its own change on the way', async () => {
    const settings = useSettingsStore()
    await settings.load()
    routeEvents([{ type: 'settings.changed', payload: { theme: 'dark', projectAgents: { p1: 'codex' } } }])
    expect(useThemeStore().choice).toBe('dark')

    let answer: (value: UserSettings) => void = () => undefined
    fake.answer('settings.set', () => new Promise<UserSettings>((resolve) => (answer = resolve)))
    settings.change({ theme: 'light' })
    await flushPromises()
    // The echo of an earlier change arrives while this one is on its way: the window stays light.
    routeEvents([{ type: 'settings.changed', payload: { theme: 'dark', projectAgents: { p1: 'codex' } } }])
    expect(useThemeStore().choice).toBe('light')
    answer({ theme: 'light', projectAgents: { p1: 'gemini' } })
    await flushPromises()
    expect(settings.values).toEqual({ theme: 'light', projectAgents: { p1: 'gemini' } })
  })

  it('says once that a setting could not be kept', async () => {
    fake.answer('settings.set', () => {
      throw new Error('settings.json: permission denied')
    })
    const panes = usePanesStore()
    panes.split()
    await flushPromises()
    panes.focusIndex(0)
    await flushPromises()
    expect(fake.sent('settings.set')).toHaveLength(2)
    expect(useNoticesStore().errors).toEqual(['Could not keep this setting: settings.json: permission denied'])
  })
})
