/**
 * Session modes and what they ask the user. Agents name their modes freely;
 * these are the ones the three presets announce (claude-agent-acp, codex-acp,
 * Gemini CLI), matched by id. A session starts in the mode that asks before
 * edits and commands unless the user chose otherwise (see `startingModeOf`), and
 * a mode that skips permissions is marked wherever the session is shown.
 */

import type { SessionConfigOption, SessionModeState } from '@agentclientprotocol/sdk'

export interface ModeLike {
  id: string
  name?: string
}

/** What a mode lets through without asking: nothing (null), file edits, or everything. */
export type PermissionSkip = 'edits' | 'all'

/** Modes that let the agent act without asking, by the ids the known agents use. */
const SKIPS = new Map<string, PermissionSkip>(
  Object.entries({
    // Claude Code
    auto: 'all',
    bypassPermissions: 'all',
    dontAsk: 'all',
    acceptEdits: 'edits',
    // Codex (codex-acp 2.x; 0.x called its full-access preset `full-access`)
    agent: 'all',
    'agent-full-access': 'all',
    'full-access': 'all',
    'workspace-write': 'edits',
    // Gemini CLI
    yolo: 'all',
    autoEdit: 'edits',
    auto_edit: 'edits'
  } satisfies Record<string, PermissionSkip>)
)

/**
 * The modes that ask before edits and commands, most preferred first: Claude
 * Code's "default" (Manual), Gemini CLI's "default", Codex's "read-only"
 * (it asks before editing and before anything outside its read-only sandbox).
 */
const ASKING = ['default', 'manual', 'ask', 'read-only']

/** What the mode lets through without asking, or null when it asks (or is not one we know). */
export function permissionSkipOf(mode: ModeLike | string | undefined | null): PermissionSkip | null {
  if (!mode) return null
  const id = typeof mode === 'string' ? mode : mode.id
  return SKIPS.get(id) ?? null
}

/** The words shown beside a mode that skips permissions. */
export function permissionSkipWords(skip: PermissionSkip): string {
  return skip === 'all' ? 'acts without asking' : 'edits without asking'
}

/**
 * The mode a session is to be put in right after it is created or reopened,
 * or null to leave it as the agent started it: the user's choice when the
 * agent offers it (`preferred`), else the agent's current mode when it asks,
 * else the first offered mode that asks. An agent whose modes are all unknown
 * here is left as it started (nothing is known to ask).
 */
export function startingModeOf(offered: readonly ModeLike[], currentModeId: string | undefined, preferred?: string | null): string | null {
  if (!offered.length) return null
  const choose = (id: string): string | null => (id === currentModeId ? null : id)
  if (preferred && offered.some((m) => m.id === preferred)) return choose(preferred)
  // The agent's own start asks (or is one not known to skip): kept.
  if (currentModeId && permissionSkipOf(currentModeId) === null && offered.some((m) => m.id === currentModeId)) return null
  for (const id of ASKING) {
    const found = offered.find((m) => m.id === id || m.id.toLowerCase() === id || m.name?.toLowerCase() === id)
    if (found) return choose(found.id)
  }
  return null
}

/** The session's current mode as the header shows it: the config option of category `mode` where there is one, else `modes`. */
export function currentModeOf(thread: { modes?: SessionModeState; configOptions?: SessionConfigOption[] }): ModeLike | null {
  const option = thread.configOptions?.find((o) => o.category === 'mode' && o.type === 'select')
  if (option && option.type === 'select') {
    const value = String(option.currentValue)
    const choice = option.options.flatMap((o) => ('options' in o ? o.options : [o])).find((o) => o.value === value)
    return { id: value, name: choice?.name ?? value }
  }
  const modes = thread.modes
  if (!modes?.currentModeId) return null
  return { id: modes.currentModeId, name: modes.availableModes.find((m) => m.id === modes.currentModeId)?.name ?? modes.currentModeId }
}
