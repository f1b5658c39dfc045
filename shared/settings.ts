import * as z from 'zod/mini'

/**
 * The user's settings of the window (theme, pane layout, each project's agent
 * choice, how diffs show, the sidebar's width), kept by the Host in the data folder
 * (`settings.json`), so they follow the data and not the browser's storage:
 * the same in the Electron app and in every tab of `npm run serve`, whatever
 * port it serves on. Every field is optional: an absent one has its default.
 *
 * Written with `zod/mini` (the same checks as zod's classic API, as functions
 * a bundler can leave out when unused): the window checks its cached copy of
 * these settings in its first script, which the classic API would make
 * ~150 KB bigger.
 */

const id = z.string().check(z.minLength(1), z.maxLength(200))

/** The most panes that fit side by side. */
export const MAX_PANES = 4

export const themeChoices = ['system', 'light', 'dark'] as const
export type ThemeChoice = (typeof themeChoices)[number]

export const diffModes = ['unified', 'split'] as const
export type DiffMode = (typeof diffModes)[number]

/** The panes of the main area, each holding a session or nothing yet; which one has the focus, which is maximised. */
export const paneLayoutSchema = z
  .object({
    panes: z.array(z.object({ id, sessionId: z.nullable(id) })).check(z.minLength(1), z.maxLength(MAX_PANES)),
    focused: id,
    maximised: z.nullable(id)
  })
  .check(z.refine((layout) => new Set(layout.panes.map((p) => p.id)).size === layout.panes.length, { message: 'Each pane needs its own id' }))
export type PaneLayout = z.infer<typeof paneLayoutSchema>

/** The share of a pane the Changes view takes beside (or above) the conversation. */
export const CHANGES_SPLIT = { min: 0.25, max: 0.75, default: 0.5 } as const
const changesSplit = z.number().check(z.gte(CHANGES_SPLIT.min), z.lte(CHANGES_SPLIT.max))
/** How wide the sidebar may be made (px), and how wide it is until the user drags it. */
export const SIDEBAR_WIDTH = { min: 240, max: 560, initial: 300 } as const
const sidebarWidth = z.int().check(z.gte(SIDEBAR_WIDTH.min), z.lte(SIDEBAR_WIDTH.max))

/** projectId → agent id (a null value in a change forgets the project's choice). */
const projectAgents = <T extends z.ZodMiniType>(value: T) =>
  z.record(id, value).check(z.refine((map) => Object.keys(map).length <= 10_000, { message: 'At most 10000 projects' }))

export const userSettingsSchema = z.object({
  theme: z.optional(z.enum(themeChoices)),
  diffMode: z.optional(z.enum(diffModes)),
  panes: z.optional(paneLayoutSchema),
  changesSplit: z.optional(changesSplit),
  /** The agent each project's New session picker was left on. */
  projectAgents: z.optional(projectAgents(id)),
  /** The sidebar's width (px) as the user left it. */
  sidebarWidth: z.optional(sidebarWidth),
  /** The preset each project's New session button was left on (over its agent; absent: the agent). */
  projectPresets: z.optional(projectAgents(id))
})
export type UserSettings = z.infer<typeof userSettingsSchema>

/**
 * A change: each field given replaces the one kept, except `projectAgents`
 * and `projectPresets`, whose entries are merged into the kept ones (null forgets one), so two
 * windows choosing agents for different projects do not undo each other.
 * An unknown field is refused (a typo would otherwise be dropped silently).
 */
export const settingsChangeSchema = z.strictObject({
  theme: z.optional(z.enum(themeChoices)),
  diffMode: z.optional(z.enum(diffModes)),
  panes: z.optional(paneLayoutSchema),
  changesSplit: z.optional(changesSplit),
  projectAgents: z.optional(projectAgents(z.nullable(id))),
  sidebarWidth: z.optional(sidebarWidth),
  projectPresets: z.optional(projectAgents(z.nullable(id)))
})
export type SettingsChange = z.infer<typeof settingsChangeSchema>

/** The settings after a change (the Host keeps them so; a window shows them so before the Host answers). */
export function applySettingsChange(settings: UserSettings, change: SettingsChange): UserSettings {
  const next: UserSettings = { ...settings }
  if (change.theme !== undefined) next.theme = change.theme
  if (change.diffMode !== undefined) next.diffMode = change.diffMode
  if (change.panes !== undefined) next.panes = change.panes
  if (change.changesSplit !== undefined) next.changesSplit = change.changesSplit
  if (change.sidebarWidth !== undefined) next.sidebarWidth = change.sidebarWidth
  if (change.projectAgents !== undefined) next.projectAgents = mergedChoices(next.projectAgents, change.projectAgents)
  if (change.projectPresets !== undefined) next.projectPresets = mergedChoices(next.projectPresets, change.projectPresets)
  return next
}

/** Per-project choices with a change's entries merged in (null forgets one). */
function mergedChoices(kept: Record<string, string> | undefined, change: Record<string, string | null>): Record<string, string> {
  const merged = { ...kept }
  for (const [projectId, choice] of Object.entries(change)) {
    if (choice === null) delete merged[projectId]
    else merged[projectId] = choice
  }
  return merged
}

export const settingsRequestParams = {
  /** The settings kept; `saved` false: none were ever saved in this data folder (a window may bring its own, once). */
  'settings.get': z.object({}),
  /** Changes some settings (see settingsChangeSchema); every window is told (`settings.changed`). */
  'settings.set': settingsChangeSchema
} as const

export interface SettingsRequestResults {
  'settings.get': { settings: UserSettings; saved: boolean }
  'settings.set': UserSettings
}
