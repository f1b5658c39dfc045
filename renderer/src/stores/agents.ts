import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { AgentDefinition, AgentRuntimeState } from '../../../shared/domain'
import { host } from '../host/client'

export type OptionalSessionMethod = 'list' | 'fork' | 'close' | 'delete'

/** Agent definitions and the live state of their processes (from `agent.state` events). */
export const useAgentsStore = defineStore('agents', () => {
  const definitions = ref<AgentDefinition[]>([])
  const states = ref<Record<string, AgentRuntimeState>>({})

  function setAll(list: AgentDefinition[], runtime: AgentRuntimeState[]): void {
    definitions.value = list
    states.value = Object.fromEntries(runtime.map((s) => [s.agentId, s]))
  }

  function name(agentId: string): string {
    return definitions.value.find((a) => a.id === agentId)?.name ?? 'Unknown agent'
  }

  function stateOf(agentId: string): AgentRuntimeState | undefined {
    return states.value[agentId]
  }

  /**
   * Why an agent cannot do an optional session method, once its capabilities
   * are known; undefined while it can, or before it has started (the Host then answers).
   */
  function unsupported(agentId: string, method: OptionalSessionMethod): string | undefined {
    const capabilities = states.value[agentId]?.capabilities
    if (!capabilities || capabilities.session[method]) return undefined
    return `${name(agentId)} does not support session/${method}`
  }

  /** Signs in to an agent; throws the Host's message for the form to show. */
  async function authenticate(agentId: string, methodId: string, values: Record<string, string> = {}): Promise<void> {
    await host().request('agents.authenticate', { agentId, methodId, values })
  }

  /** The ACP protocol version to ask the agent for (applies when it next starts); throws the Host's message. */
  async function setProtocol(agentId: string, protocol: 1 | 2): Promise<void> {
    const updated = await host().request('agents.update', { agentId, patch: { protocol } })
    definitions.value = definitions.value.map((a) => (a.id === agentId ? updated : a))
  }

  function definitionOf(agentId: string): AgentDefinition | undefined {
    return definitions.value.find((a) => a.id === agentId)
  }

  return { definitions, states, setAll, name, stateOf, unsupported, authenticate, setProtocol, definitionOf }
})
