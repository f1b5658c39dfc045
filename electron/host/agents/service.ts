import { promises as fs } from 'node:fs'
import type { AgentPresetView } from '../../../shared/domain'
import { agentFitsProject, type AgentDefinition } from '../../../shared/agent-definition'
import { transportHost, secretNamesOf } from '../../../shared/transport'
import { agentLogPath } from '../connection/link-run'
import { agentIdFor, agentProgram, changesWhatRuns, checkAgentInput } from './definitions'
import { programToRun } from '../contract/confirmations'
import { readLogTail } from '../connection/agent-log'
import type { UserEnvironment } from '../child-processes/environment'
import type { HandlerSlice } from '../contract/handlers'
import { presetCatalog } from './presets'
import type { Records } from '../storage/records'
import { agentEnvKey, agentHeaderKey, type SecretStore } from '../storage/secrets'
import type { AgentChecks } from './check'
import type { SignIn } from './sign-in'
import { confirmSkippingMode } from './skip-confirm'
import type { AgentSupervisor } from './supervisor'

/** The `agents.*` requests: the agent definitions, their processes, logs and sign-in. */

export interface AgentsServiceOptions {
  records: Records
  secrets: SecretStore
  supervisor: AgentSupervisor
  signIn: SignIn
  checks: AgentChecks
  /** The environment the agents' processes get (their commands are looked up on its PATH). */
  environment: UserEnvironment
  /** What else goes with a removed agent (what was downloaded for it). */
  onRemoved: (definition: AgentDefinition) => Promise<void>
}

export function agentsHandlers({
  records,
  secrets,
  supervisor,
  signIn,
  checks,
  environment,
  onRemoved
}: AgentsServiceOptions): HandlerSlice<'agents'> {
  return {
    'agents.list': async () => [...records.data.agents],
    // Adding an agent, or changing what it runs, is confirmed outside the page first (confirmations.ts).
    'agents.add': async (input, request) => {
      const checked = await checkAgentInput(input)
      await request.confirm({ action: `Add the agent “${checked.fields.name}”`, confirm: 'Add agent', programs: [agentProgram(checked)] })
      const id = agentIdFor(checked.fields.name, (taken) => Boolean(records.findAgent(taken)))
      for (const [name, value] of Object.entries(checked.secretValues)) await secrets.set(agentEnvKey(id, name), value)
      for (const [name, value] of Object.entries(checked.headerValues)) await secrets.set(agentHeaderKey(id, name), value)
      const { protocol, ...fields } = checked.fields
      const definition: AgentDefinition = { id, ...fields, ...(protocol ? { protocol } : {}) }
      await records.addAgent(definition)
      return definition
    },
    // The new definition applies the next time the agent starts (the Agents page offers a restart).
    'agents.update': async ({ agentId, ...input }, request) => {
      const previous = records.agent(agentId)
      const checked = await checkAgentInput(input, previous)
      // Its sessions' folders are where it runs: it cannot move to another host under them.
      const stranded = records.data.sessions.filter(
        (s) => s.agentId === agentId && !agentFitsProject(checked.fields, records.findProject(s.projectId) ?? {})
      )
      if (stranded.length > 0) {
        const host = transportHost(checked.fields.transport)
        const where = host ? `on ${host}` : 'on this computer'
        throw new Error(
          `${previous.name} has ${stranded.length} session${stranded.length === 1 ? '' : 's'} in projects it could not work in once it runs ${where}: add another agent for that instead`
        )
      }
      if (changesWhatRuns(previous, checked)) {
        const program = agentProgram(checked)
        await request.confirm({ action: `Change what the agent “${previous.name}” runs`, confirm: 'Save changes', programs: [program] })
      }
      for (const [name, value] of Object.entries(checked.secretValues)) await secrets.set(agentEnvKey(agentId, name), value)
      for (const name of checked.forgottenSecrets) await secrets.delete(agentEnvKey(agentId, name))
      for (const [name, value] of Object.entries(checked.headerValues)) await secrets.set(agentHeaderKey(agentId, name), value)
      for (const name of checked.forgottenHeaders) await secrets.delete(agentHeaderKey(agentId, name))
      const definition: AgentDefinition = { ...previous, ...checked.fields }
      if (definition.protocol === undefined) delete definition.protocol
      await records.replaceAgent(definition)
      supervisor.forgetProblem(agentId)
      return definition
    },
    // Refused while sessions use the agent: they would lose the way to continue.
    'agents.remove': async ({ agentId }) => {
      const definition = records.agent(agentId)
      const used = records.data.sessions.filter((s) => s.agentId === agentId).length
      if (used > 0) {
        throw new Error(
          `${definition.name} has ${used} session${used === 1 ? '' : 's'}; delete ${used === 1 ? 'it' : 'them'} first to remove the agent`
        )
      }
      await supervisor.forget(agentId)
      const secretNames = secretNamesOf(definition.transport)
      for (const name of secretNames.env) await secrets.delete(agentEnvKey(agentId, name))
      for (const name of secretNames.headers) await secrets.delete(agentHeaderKey(agentId, name))
      await records.removeAgent(agentId)
      await checks.forget(agentId)
      // Its logs go too: logs are named by the agent's id, which a new agent of the same name gets again.
      for (const name of [agentId, `${agentId}.check`]) await fs.rm(agentLogPath(supervisor.logDir, name), { force: true })
      await onRemoved(definition)
      return {}
    },
    // Stops the agent if it runs (its sessions become idle, to be continued), then starts it with its current definition.
    'agents.restart': async ({ agentId }) => {
      const definition = records.agent(agentId)
      await supervisor.stop(agentId)
      supervisor.forgetProblem(agentId)
      const connection = await supervisor.ensure(definition)
      return supervisor.stateOf(agentId) ?? connection.state
    },
    'agents.log': async ({ agentId }) => {
      records.agent(agentId)
      await supervisor.flushLog(agentId)
      const path = agentLogPath(supervisor.logDir, agentId)
      return { agentId, path, ...(await readLogTail(path)) }
    },
    'agents.presets': async () =>
      (await presetCatalog(environment)).map(({ definition, installed }): AgentPresetView => ({
        id: definition.id,
        name: definition.name,
        command: definition.transport.command,
        args: definition.transport.args,
        installed,
        installHint: definition.installHint ?? '',
        added: Boolean(records.findAgent(definition.id))
      })),
    'agents.addPreset': async ({ presetId }, request) => {
      const preset = (await presetCatalog(environment)).find((p) => p.definition.id === presetId)
      if (!preset) throw new Error(`No preset '${presetId}'`)
      const existing = records.findAgent(presetId)
      if (existing) return existing
      const { name } = preset.definition
      await request.confirm({
        action: `Add the agent “${name}”`,
        confirm: 'Add agent',
        programs: [programToRun(`Agent “${name}”`, preset.definition.transport)]
      })
      await records.addAgent(preset.definition)
      return preset.definition
    },
    /**
     * The protocol version to ask an agent for. It applies when the agent next
     * starts: a running agent is stopped for it where nothing is lost (as when it
     * is idle); else it keeps its version until it stops.
     */
    'agents.setProtocol': async ({ agentId, protocol }) => {
      const changes = protocol !== (records.agent(agentId).protocol ?? 1)
      const definition = await records.updateAgent(agentId, changes ? { protocol: protocol === 2 ? 2 : undefined } : {})
      if (changes) await supervisor.stopIfQuiet(agentId)
      return definition
    },
    'agents.setStartingMode': async ({ agentId, modeId, confirmSkip }) => {
      if (modeId !== null) await confirmSkippingMode(records, records.agent(agentId), modeId, confirmSkip)
      return records.updateAgent(agentId, { startingMode: modeId ?? undefined })
    },
    'agents.states': () => supervisor.runtimeStates(records.data.agents),
    'agents.check': ({ agentId }) => checks.run(records.agent(agentId)),
    'agents.checks': () => checks.all(records.data.agents.map((a) => a.id)),
    'agents.authenticate': async ({ agentId, methodId, values }) => {
      await signIn.authenticate(agentId, methodId, values)
      supervisor.forgetProblem(agentId)
      return {}
    },
    'agents.logout': async ({ agentId }) => {
      await signIn.logout(agentId)
      return {}
    },
    'agents.login.start': ({ agentId, methodId, cols, rows }, request) => signIn.startLogin(agentId, methodId, cols, rows, request),
    'agents.login.input': async ({ loginId, data }) => {
      signIn.input(loginId, data)
      return {}
    },
    'agents.login.resize': async ({ loginId, cols, rows }) => {
      signIn.resize(loginId, cols, rows)
      return {}
    },
    'agents.login.stop': async ({ loginId }) => {
      signIn.stopLogin(loginId)
      return {}
    }
  }
}
