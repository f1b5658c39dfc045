import { defineStore } from 'pinia'
import { ref } from 'vue'
import {
  applySettingsChange,
  diffModes,
  paneLayoutSchema,
  themeChoices,
  userSettingsSchema,
  type SettingsChange,
  type UserSettings
} from '../../../shared/settings'
import type { RequestResult } from '../../../shared/contract'
import { host, HostRequestError, messageOf } from '../host/client'
import { useNoticesStore } from './notices'

/**
 * The user's settings of the window (theme, pane layout, each project's agent
 * choice, diff view), kept by the Host in the data folder (`settings.*`), so
 * they survive a restart of `npm run serve` on another port and are the same
 * in every window.
 *
 * Before the Host has answered, the window starts from a hint, so the first
 * paint is already right: the theme the page was served with (`npm run serve`
 * puts the Host's on <html>), else this window's copy of the last settings it
 * had (localStorage, only a hint: the Host's replace it as they arrive).
 * Settings this window kept itself before the Host kept them (the old
 * localStorage keys) are given to the Host once, when it has none.
 */

const HINT_KEY = 'switchboard.settings'
/** Where earlier versions kept these settings in the window's own storage. */
const LEGACY_KEYS = { theme: 'switchboard.theme', panes: 'switchboard.panes', diffMode: 'switchboard.diffMode' } as const

export const useSettingsStore = defineStore('settings', () => {
  const values = ref<UserSettings>(firstPaintSettings())
  /** True once the Host's settings are in. */
  const loaded = ref(false)
  /** Changes made while the link to the Host was down, sent when it is back. */
  let unsent: SettingsChange | null = null
  /** Changes on their way: an event older than their answer would undo them for a moment, so it waits. */
  let inFlight = 0
  let refusalShown = false

  /**
   * The Host's settings (again after a reconnect), or `answer`, its answer to `settings.get` in the first load;
   * the first time, this window's old ones if the Host has none.
   */
  async function load(answer?: RequestResult<'settings.get'>): Promise<void> {
    const client = host()
    if (unsent) {
      const change = unsent
      unsent = null
      await send(change)
      // The answer given was asked before this change was kept.
      answer = undefined
    }
    let { settings, saved } = answer ?? (await client.request('settings.get', {}))
    if (!saved) {
      const legacy = readLegacySettings()
      if (Object.keys(legacy).length > 0) settings = await client.request('settings.set', legacy)
    }
    forgetLegacySettings()
    receive(settings)
    loaded.value = true
  }

  /** The settings as the Host has them now (`settings.changed`, from this window or another). */
  function receive(settings: UserSettings): void {
    if (inFlight > 0) return
    values.value = settings
    writeHint(settings)
  }

  /** Applies a change at once and asks the Host to keep it. */
  function change(change: SettingsChange): void {
    values.value = applySettingsChange(values.value, change)
    writeHint(values.value)
    void send(change)
  }

  async function send(change: SettingsChange): Promise<void> {
    inFlight++
    try {
      const settings = await host().request('settings.set', change)
      inFlight--
      receive(settings)
    } catch (error) {
      inFlight--
      if (error instanceof HostRequestError) {
        // Said once: a window changing its layout would otherwise repeat it at every click.
        if (!refusalShown) useNoticesStore().report(`Could not keep this setting: ${messageOf(error)}`)
        refusalShown = true
      } else {
        unsent = applyChangeToChange(unsent, change)
      }
    }
  }

  return { values, loaded, load, receive, change }
})

function applyChangeToChange(earlier: SettingsChange | null, later: SettingsChange): SettingsChange {
  if (!earlier) return later
  const merged: SettingsChange = { ...earlier, ...later }
  if (earlier.projectAgents && later.projectAgents) merged.projectAgents = { ...earlier.projectAgents, ...later.projectAgents }
  if (earlier.projectPresets && later.projectPresets) merged.projectPresets = { ...earlier.projectPresets, ...later.projectPresets }
  return merged
}

function storage(): Storage | undefined {
  try {
    return typeof localStorage === 'undefined' ? undefined : localStorage
  } catch {
    return undefined
  }
}

/** What the first paint uses: the theme the page came with, this window's hint, else its old settings. */
function firstPaintSettings(): UserSettings {
  const settings = readHint() ?? readLegacySettings()
  const served = typeof document === 'undefined' ? undefined : document.documentElement.dataset.themeChoice
  if (served && (themeChoices as readonly string[]).includes(served)) settings.theme = served as UserSettings['theme']
  return settings
}

function readHint(): UserSettings | null {
  try {
    const text = storage()?.getItem(HINT_KEY)
    if (!text) return null
    const parsed = userSettingsSchema.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}

function writeHint(settings: UserSettings): void {
  try {
    storage()?.setItem(HINT_KEY, JSON.stringify(settings))
  } catch {
    // storage refused (private mode, full): the next start only paints with the defaults a moment longer
  }
}

type LegacySettings = Pick<UserSettings, 'theme' | 'diffMode' | 'panes'>

/** The settings earlier versions kept in the window's storage, those that still read. */
function readLegacySettings(): LegacySettings {
  const found: LegacySettings = {}
  try {
    const store = storage()
    const theme = store?.getItem(LEGACY_KEYS.theme)
    if (theme === 'light' || theme === 'dark') found.theme = theme
    const diffMode = store?.getItem(LEGACY_KEYS.diffMode)
    if (diffMode && (diffModes as readonly string[]).includes(diffMode)) found.diffMode = diffMode as LegacySettings['diffMode']
    const panes = paneLayoutSchema.safeParse(JSON.parse(store?.getItem(LEGACY_KEYS.panes) ?? 'null'))
    if (panes.success) found.panes = panes.data
  } catch {
    // unreadable: nothing to bring
  }
  return found
}

function forgetLegacySettings(): void {
  try {
    for (const key of Object.values(LEGACY_KEYS)) storage()?.removeItem(key)
  } catch {
    // nothing to forget
  }
}
