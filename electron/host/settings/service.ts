import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { applySettingsChange, userSettingsSchema, type SettingsChange, type UserSettings } from '../../../shared/settings'
import { AtomicTextFile } from '../storage/atomic-file'
import type { EventBus } from '../contract/events'
import type { HandlerSlice } from '../contract/handlers'

/**
 * The `settings.*` requests: the user's settings of the window (theme, pane
 * layout, each project's agent choice, diff view), kept in `settings.json` in
 * the data folder, written whole and atomically, apart from db.json (a pane
 * focused is a small write, not a rewrite of every session record). Every
 * change is told to every window (`settings.changed`).
 *
 * What cannot be read is not lost: a file that is not JSON is moved aside and
 * said; a field that no longer passes its schema is dropped and said; a field
 * this version does not know (written by a newer one) is kept as it was.
 */

export interface UserSettingsOptions {
  dataDir: string
  events: EventBus
  /** The projects there are: a removed project's agent choice is forgotten. */
  projectIds: () => string[]
}

export const SETTINGS_FILE = 'settings.json'

export class UserSettingsStore {
  private readonly file: AtomicTextFile
  private current: UserSettings
  /** Fields a newer Switchboard wrote, kept through our writes. */
  private readonly unknown: Record<string, unknown>
  private saved: boolean
  private lastWrite: Promise<void> = Promise.resolve()

  /** `read`: what readUserSettings found (read before the Host is put together). */
  constructor(
    private readonly options: UserSettingsOptions,
    read: ReadSettings
  ) {
    this.file = new AtomicTextFile(join(options.dataDir, SETTINGS_FILE))
    this.current = read.settings
    this.unknown = read.unknown
    this.saved = read.saved
  }

  get(): { settings: UserSettings; saved: boolean } {
    return { settings: this.withoutGoneProjects(this.current), saved: this.saved }
  }

  async set(change: SettingsChange): Promise<UserSettings> {
    const next = applySettingsChange(this.current, change)
    this.current = this.withoutGoneProjects(next)
    this.lastWrite = this.file.write(JSON.stringify({ ...this.unknown, ...this.current }, null, 2))
    await this.lastWrite
    this.saved = true
    this.options.events.emit('settings.changed', this.current)
    return this.current
  }

  /** Resolves once the last change is on the disk (the Host waits for it when it closes). */
  async settled(): Promise<void> {
    await this.lastWrite.catch(() => undefined)
  }

  handlers(): HandlerSlice<'settings'> {
    return {
      'settings.get': async () => this.get(),
      'settings.set': (change) => this.set(change)
    }
  }

  private withoutGoneProjects(settings: UserSettings): UserSettings {
    const projects = new Set(this.options.projectIds())
    let result = settings
    for (const key of ['projectAgents', 'projectPresets'] as const) {
      const choices = result[key]
      if (!choices) continue
      const kept = Object.entries(choices).filter(([projectId]) => projects.has(projectId))
      if (kept.length !== Object.keys(choices).length) result = { ...result, [key]: Object.fromEntries(kept) }
    }
    return result
  }
}

export interface ReadSettings {
  settings: UserSettings
  unknown: Record<string, unknown>
  saved: boolean
  warnings: string[]
}

/** Reads settings.json; `warnings` say what could not be used. */
export async function readUserSettings(dataDir: string): Promise<ReadSettings> {
  const file = new AtomicTextFile(join(dataDir, SETTINGS_FILE))
  const empty = { settings: {}, unknown: {}, saved: false }
  let text: string | null
  try {
    text = await file.read()
  } catch (error) {
    return { ...empty, warnings: [`${file.file} could not be read (${(error as Error).message}); the window's settings start from their defaults.`] }
  }
  if (text === null) return { ...empty, warnings: [] }
  let value: unknown
  try {
    value = JSON.parse(text)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object of settings')
  } catch (error) {
    const aside = file.file.replace(/\.json$/, `.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
    await fs.rename(file.file, aside)
    return {
      ...empty,
      warnings: [
        `${file.file} could not be read (${(error as Error).message}); it was moved to ${aside} and the window's settings start from their defaults.`
      ]
    }
  }
  const settings: Record<string, unknown> = {}
  const unknown: Record<string, unknown> = {}
  const dropped: string[] = []
  const shape = userSettingsSchema.shape as Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    const schema = shape[key]
    if (!schema) {
      unknown[key] = field
      continue
    }
    const parsed = schema.safeParse(field)
    if (parsed.success) settings[key] = parsed.data
    else dropped.push(key)
  }
  const warnings = dropped.length
    ? [`${file.file}: ${dropped.join(', ')} could not be read and ${dropped.length === 1 ? 'is' : 'are'} back to the default.`]
    : []
  return { settings: settings as UserSettings, unknown, saved: true, warnings }
}
