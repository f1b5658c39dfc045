import { agentPlace } from '../../../../shared/transport'
import type { AgentDefinition } from '../../../../shared/agent-definition'
import { agentHue, agentMonogram } from '../../agent-look'

/** An agent's icon as drawn (AgentIcon.vue, and the search palette's rows, which draw it without a component each). */
export interface AgentIconLook {
  /** The agent's name. */
  name: string
  /** What the icon says: the agent's name, and where it runs when that is not this computer. */
  label: string
  monogram: string
  /** An agent over the network or on a host over SSH carries a mark saying so; null for one on this computer. */
  over: 'network' | 'ssh' | null
  /** The icon's attributes: its class, its colours and size, its label (title and aria-label), role and test id. */
  attrs: Record<string, string | Record<string, string>>
}

/** What of the agents store the look reads. */
interface Agents {
  definitions: AgentDefinition[]
  name(agentId: string): string
  whereRuns(agentId: string): string
}

/** How `agentId`'s icon looks at `size` px: its monogram in its own colour, a mark for where it runs. */
export function agentIconLook(agents: Agents, agentId: string, size: number): AgentIconLook {
  const name = agents.name(agentId)
  const definition = agents.definitions.find((a) => a.id === agentId)
  const place = definition ? agentPlace(definition.transport) : { remote: false as const }
  const label = place.remote ? `${name}, ${agents.whereRuns(agentId)}` : name
  const style = {
    '--agent-hue': String(agentHue(agentId, name)),
    width: `${size}px`,
    height: `${size}px`,
    fontSize: `${Math.round(size * 0.5)}px`,
    '--mark-size': `${Math.max(8, Math.round(size * 0.55))}px`
  }
  return {
    name,
    label,
    monogram: agentMonogram(name),
    over: place.remote ? (place.transport === 'SSH' ? 'ssh' : 'network') : null,
    attrs: {
      class: place.remote ? 'agent-icon remote' : 'agent-icon',
      style,
      title: label,
      role: 'img',
      'aria-label': label,
      'data-testid': 'agent-icon'
    }
  }
}
