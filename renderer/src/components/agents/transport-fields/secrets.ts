import { useAgentsStore } from '../../../stores/agents'

/**
 * How an agent's details show a secret (a variable or a header kept in the secret store): set, or lost with a
 * restarted serve (which keeps secrets in memory only) and to be entered again.
 */
export function useSecretMarks(agentId: () => string): {
  mark(name: string): Record<string, string>
  text(name: string): string
} {
  const agents = useAgentsStore()
  const lost = (name: string): boolean => agents.stateOf(agentId())?.missingSecrets?.includes(name) ?? false
  return {
    mark: (name): Record<string, string> => (lost(name) ? { class: 'secret lost', 'data-testid': 'agent-secret-lost' } : { class: 'secret' }),
    text: (name) => (lost(name) ? 'not kept across the restart: enter it again' : '•••• set')
  }
}
