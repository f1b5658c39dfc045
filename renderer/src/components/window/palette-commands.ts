import type { SessionRecord } from '../../../../shared/domain'
import type { useHandOffStore } from '../../stores/hand-off'

/**
 * Commands the search palette offers on the focused conversation when the
 * words typed ask for one: "continue with" (or "hand off"), then perhaps the
 * start of an agent's or preset's name, lists "Continue with <name>".
 */
export interface PaletteCommand {
  key: string
  label: string
  detail: string
  agentId: string
  run: () => Promise<unknown>
}

const ASKS = /^\s*>?\s*(c(o(n(t(i(n(ue?)?)?)?)?)?)?|hand(\s*off)?|hand-off)(\s+with|\s+to)?\b/i

export function paletteCommands(query: string, session: SessionRecord | null, handOff: ReturnType<typeof useHandOffStore>): PaletteCommand[] {
  const q = query.trim().toLowerCase()
  if (!session || q.length < 4 || !ASKS.test(q)) return []
  const rest = q.replace(ASKS, '').trim()
  return handOff
    .targets(session)
    .filter((t) => !rest || t.label.toLowerCase().includes(rest) || t.detail.toLowerCase().includes(rest))
    .map((t) => ({
      key: `hand-off:${t.key}`,
      label: `Continue with ${t.label}`,
      detail: t.detail === 'agent' ? `“${session.title}” in a new session` : t.detail,
      agentId: t.agentId,
      run: () => handOff.handOff(session.id, t.target)
    }))
}
