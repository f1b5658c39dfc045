import { defineStore } from 'pinia'
import { ref } from 'vue'
import type { RequestParams } from '../../../shared/contract'
import type { AgentLog, AgentPresetView, AgentRuntimeState } from '../../../shared/domain'
import type { AgentDefinition } from '../../../shared/agent-definition'
import { agentPlace } from '../../../shared/transport'
import type { AgentCheckReport } from '../../../shared/registry'
import { host } from '../host/client'

export type OptionalSessionMethod = 'list' | 'fork' | 'close' | 'delete'

/** Agent definitions and the live state of their processes (from `agent.state` events). */
export const useAgentsStore = defineStore('agents', () => {
  const definitions = ref<AgentDefinition[]>([])
  const states = ref<Record<string, AgentRuntimeState>>({})

  function setAll(list: AgentDefinition[], runtime: AgentRuntimeState[]): void {
    definitions.value = list
    states.value = {}
    for (const state of runtime) receiveState(state)
  }

  /** Where the agent runs, in words: on this computer, over the network at its host, or on a host over SSH. */
  function whereRuns(agentId: string): string {
    const definition = definitions.value.find((a) => a.id === agentId)
    const place = definition ? agentPlace(definition.transport) : { remote: false as const }
    if (!place.remote) return 'on this computer'
    return place.transport === 'SSH' ? `on ${place.host} over SSH` : `over the network at ${place.host}`
  }

  function name(agentId: string): string {
    return definitions.value.find((a) => a.id === agentId)?.name ?? 'Unknown agent'
  }

  function stateOf(agentId: string): AgentRuntimeState | undefined {
    return states.value[agentId]
  }

  /**
   * What the agent announced at its last initialize (info, capabilities, sign-in
   * methods), kept while it restarts: a fresh process knows nothing until it answers.
   */
  const announced = ref<Record<string, Pick<AgentRuntimeState, 'agentInfo' | 'capabilities' | 'authMethods'>>>({})

  /** An `agent.state` event (or a state from a request). */
  function receiveState(state: AgentRuntimeState): void {
    states.value[state.agentId] = state
    if (state.capabilities) {
      announced.value[state.agentId] = { agentInfo: state.agentInfo, capabilities: state.capabilities, authMethods: state.authMethods }
    }
  }

  function announcedOf(agentId: string): Pick<AgentRuntimeState, 'agentInfo' | 'capabilities' | 'authMethods'> {
    const state = states.value[agentId]
    return state?.capabilities ? state : (announced.value[agentId] ?? {})
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

  /** Logs out where the agent supports it (and forgets the variables given at sign-in); throws the Host's message. */
  async function logout(agentId: string): Promise<void> {
    await host().request('agents.logout', { agentId })
  }

  // ---- the Agents page ----

  const presets = ref<AgentPresetView[]>([])

  /** The built-in presets, each with whether it is set up and installed. */
  async function loadPresets(): Promise<void> {
    presets.value = await host().request('agents.presets', {})
  }

  function upsert(definition: AgentDefinition): void {
    const index = definitions.value.findIndex((a) => a.id === definition.id)
    if (index >= 0) definitions.value[index] = definition
    else definitions.value.push(definition)
    for (const preset of presets.value) if (preset.id === definition.id) preset.added = true
  }

  /** An `agents.changed` event: the whole list, after any window changed it. */
  function receiveDefinitions(list: AgentDefinition[]): void {
    definitions.value = list
    for (const preset of presets.value) preset.added = list.some((a) => a.id === preset.id)
  }

  /** Adds a custom agent; throws the Host's message for the form. */
  async function add(params: RequestParams<'agents.add'>): Promise<AgentDefinition> {
    const definition = await host().request('agents.add', params)
    upsert(definition)
    return definition
  }

  async function addPreset(presetId: string): Promise<AgentDefinition> {
    const definition = await host().request('agents.addPreset', { presetId })
    upsert(definition)
    return definition
  }

  /** Saves an edited agent (secret values: a new value, or null to keep the stored one); throws the Host's message. */
  async function update(params: RequestParams<'agents.update'>): Promise<AgentDefinition> {
    const definition = await host().request('agents.update', params)
    upsert(definition)
    return definition
  }

  async function remove(agentId: string): Promise<void> {
    await host().request('agents.remove', { agentId })
    receiveDefinitions(definitions.value.filter((a) => a.id !== agentId))
    delete states.value[agentId]
    delete announced.value[agentId]
    delete checks.value[agentId]
  }

  /** Starts the agent, or stops and starts it; its state arrives as events meanwhile. Throws why it could not start. */
  async function restart(agentId: string): Promise<void> {
    receiveState(await host().request('agents.restart', { agentId }))
  }

  function log(agentId: string): Promise<AgentLog> {
    return host().request('agents.log', { agentId })
  }

  /** The ACP protocol version to ask the agent for (applies when it next starts); throws the Host's message. */
  async function setProtocol(agentId: string, protocol: 1 | 2): Promise<void> {
    const updated = await host().request('agents.setProtocol', { agentId, protocol })
    definitions.value = definitions.value.map((a) => (a.id === agentId ? updated : a))
  }

  /** The mode the agent's new sessions start in (null: its mode that asks); throws the Host's message. */
  async function setStartingMode(agentId: string, modeId: string | null): Promise<void> {
    const updated = await host().request('agents.setStartingMode', { agentId, modeId })
    definitions.value = definitions.value.map((a) => (a.id === agentId ? updated : a))
  }

  function definitionOf(agentId: string): AgentDefinition | undefined {
    return definitions.value.find((a) => a.id === agentId)
  }

  // ---- what each agent really does (the Check action) ----

  /** The last check report of each agent that has one. */
  const checks = ref<Record<string, AgentCheckReport>>({})
  /** Agents whose check is under way. */
  const checking = ref<Record<string, boolean>>({})

  function setChecks(reports: AgentCheckReport[]): void {
    checks.value = Object.fromEntries(reports.map((r) => [r.agentId, r]))
  }

  /** A finished check (this window's, or one run by the Host after an update). */
  function receiveCheck(report: AgentCheckReport): void {
    checks.value[report.agentId] = report
  }

  /** Starts the agent apart and probes it; throws the Host's message. */
  async function check(agentId: string): Promise<AgentCheckReport> {
    checking.value[agentId] = true
    try {
      const report = await host().request('agents.check', { agentId })
      receiveCheck(report)
      return report
    } finally {
      delete checking.value[agentId]
    }
  }

  return {
    definitions,
    states,
    presets,
    setAll,
    name,
    whereRuns,
    stateOf,
    receiveState,
    announcedOf,
    unsupported,
    authenticate,
    logout,
    loadPresets,
    receiveDefinitions,
    add,
    addPreset,
    update,
    remove,
    restart,
    log,
    setProtocol,
    setStartingMode,
    definitionOf,
    checks,
    checking,
    setChecks,
    receiveCheck,
    check
  }
})
