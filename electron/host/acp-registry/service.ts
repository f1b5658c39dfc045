import type { AgentDefinition, DistributionKind } from '../../../shared/agent-definition'
import {
  DEFAULT_REGISTRY_URL,
  type RegistryAgent,
  type RegistryEntryView,
  type RegistryListing,
  type PresetVersionView,
  type RegistryProgress,
  type RegistrySnapshot
} from '../../../shared/registry'
import { agentIdFor } from '../agents/definitions'
import type { AgentChecks } from '../agents/check'
import type { AgentSupervisor } from '../agents/supervisor'
import type { UserEnvironment } from '../child-processes/environment'
import type { EventBus } from '../contract/events'
import { programToRun } from '../contract/confirmations'
import type { HandlerSlice, RequestContext } from '../contract/handlers'
import type { Records } from '../storage/records'
import { checkRegistryUrl, RegistryFeed } from './feed'
import { registryLimits, type RegistryLimits } from './limits'
import { commandOf, withCommand } from '../../../shared/transport'
import { installDistribution, withRunnable, plannedRun, platformKey, removeInstalled, requireTool, usableKinds } from './install'
import { presetRunOf, withPresetVersion } from '../agents/presets'
import { compareVersions, configuredAs, splitPackage } from './configured'

/**
 * The `registry.*` requests: the ACP Registry's agents listed beside the ones
 * set up, installed, updated, pinned; uninstalling is `agents.remove`, which
 * calls `forget` here to take away what was downloaded.
 */

export interface RegistryServiceOptions {
  records: Records
  events: EventBus
  supervisor: AgentSupervisor
  checks: AgentChecks
  /** Where npx and uvx are looked up: the PATH agents start with. */
  environment: UserEnvironment
  dataDir: string
  /** The snapshot bundled with the app (served when the feed and the cache fail). */
  snapshot: RegistrySnapshot
  /** The feed's URL when the user has not set one (tests serve their own). */
  defaultUrl?: string
  /** This machine's platform key (tests may pretend another). */
  platform?: ReturnType<typeof platformKey>
  feedTimeoutMs?: number
  /** How much a download, an archive, the feed and an icon may be (limits.ts; tests lower them). */
  limits?: Partial<RegistryLimits>
}

export class RegistryService {
  private readonly feed: RegistryFeed
  private readonly platform: ReturnType<typeof platformKey>
  /** Installs and updates under way, by registry id: one at a time each. */
  private readonly busy = new Set<string>()

  constructor(private readonly options: RegistryServiceOptions) {
    this.feed = new RegistryFeed({ dataDir: options.dataDir, snapshot: options.snapshot, timeoutMs: options.feedTimeoutMs, limits: options.limits })
    this.platform = options.platform === undefined ? platformKey() : options.platform
  }

  get url(): string {
    return this.options.records.data.settings?.registryUrl || this.options.defaultUrl || DEFAULT_REGISTRY_URL
  }

  handlers(): HandlerSlice<'registry'> {
    const { records } = this.options
    return {
      'registry.list': ({ refresh }) => this.list(refresh),
      // Where agents are installed from decides what runs: another address is confirmed outside the page (going back to the default is not).
      'registry.setUrl': async ({ url }, request) => {
        const trimmed = url.trim()
        if (trimmed) checkRegistryUrl(trimmed)
        if (trimmed && trimmed !== this.url) {
          await request.confirm({
            action: `Install agents from the registry at ${trimmed}`,
            confirm: 'Use this registry',
            programs: [],
            reach: [`Agents you install or update from the registry will be the programs ${trimmed} lists, downloaded from where it says.`]
          })
        }
        const settings = { ...records.data.settings }
        if (trimmed) settings.registryUrl = trimmed
        else delete settings.registryUrl
        await records.setSettings(settings)
        return { url: this.url }
      },
      'registry.install': ({ registryId, kind }, request) => this.install(registryId, kind, request),
      'registry.update': ({ agentId }, request) => this.update(agentId, request),
      'registry.presetVersions': ({ refresh }) => this.presetVersions(refresh),
      'registry.updatePreset': ({ agentId, version }, request) => this.updatePreset(agentId, version, request),
      'registry.pin': async ({ agentId, pinned }) => {
        const definition = records.agent(agentId)
        if (!definition.origin) throw new Error(`${definition.name} was not installed from the registry`)
        const { pinned: _was, ...origin } = definition.origin
        return records.updateAgent(agentId, { origin: pinned ? { ...origin, pinned: true } : origin })
      }
    }
  }

  /** An agent is being removed: what was downloaded for it goes too. */
  async forget(definition: AgentDefinition): Promise<void> {
    if (definition.origin?.kind === 'binary') await removeInstalled(this.options.dataDir, definition.id)
  }

  private async list(refresh: boolean): Promise<RegistryListing> {
    const url = this.url
    const { snapshot, source, problem, skipped } = await this.feed.get(url, refresh)
    const installed = new Map<string, AgentDefinition>()
    for (const agent of this.options.records.data.agents) if (agent.origin) installed.set(agent.origin.registryId, agent)
    const uvx = Boolean(await this.options.environment.find('uvx'))
    return {
      url,
      source,
      fetchedAt: snapshot.fetchedAt,
      ...(problem ? { problem } : {}),
      skipped,
      platform: this.platform,
      uvx,
      agents: snapshot.agents.map((agent) => {
        const view = this.view(agent, snapshot.icons[agent.id], installed.get(agent.id))
        const configured = view.installed ? undefined : configuredAs(agent, this.options.records.data.agents)
        return configured ? { ...view, configured } : view
      })
    }
  }

  private view(agent: RegistryAgent, icon: string | undefined, definition: AgentDefinition | undefined): RegistryEntryView {
    const kinds = usableKinds(agent, this.platform)
    const origin = definition?.origin
    return {
      id: agent.id,
      name: agent.name,
      version: agent.version,
      description: agent.description,
      ...(agent.repository ? { repository: agent.repository } : {}),
      ...(agent.website ? { website: agent.website } : {}),
      authors: agent.authors,
      ...(agent.license ? { license: agent.license } : {}),
      ...(icon ? { icon } : {}),
      kinds,
      ...(kinds.length === 0 ? { unavailable: `No download for this platform (${this.platform ?? `${process.platform}-${process.arch}`})` } : {}),
      ...(definition && origin
        ? { installed: { agentId: definition.id, version: origin.version, kind: origin.kind, pinned: Boolean(origin.pinned) } }
        : {}),
      ...(origin && !origin.pinned && origin.version !== agent.version ? { update: { from: origin.version, to: agent.version } } : {})
    }
  }

  private async entry(registryId: string): Promise<RegistryAgent> {
    const { snapshot } = await this.feed.get(this.url, false)
    const agent = snapshot.agents.find((a) => a.id === registryId)
    if (!agent) throw new Error(`The registry does not list '${registryId}' (any more); refresh the list`)
    return agent
  }

  private async install(registryId: string, kind: DistributionKind | undefined, request: RequestContext): Promise<AgentDefinition> {
    const { records } = this.options
    const agent = await this.entry(registryId)
    const existing = records.data.agents.find((a) => a.origin?.registryId === registryId)
    if (existing) throw new Error(`${agent.name} is already installed (as ${existing.name})`)
    const kinds = usableKinds(agent, this.platform)
    const chosen = kind ?? kinds[0]
    if (!chosen || !kinds.includes(chosen)) {
      throw new Error(`${agent.name} has no ${kind ?? ''} distribution for this platform (${this.platform ?? process.platform})`.replace('  ', ' '))
    }
    const agentId = agentIdFor(agent.id, (taken) => Boolean(records.findAgent(taken)))
    // What it will run is shown and confirmed before anything is downloaded (a missing npx or uvx is said first).
    const planned = plannedRun(agent, chosen, agentId, { dataDir: this.options.dataDir, platform: this.platform })
    await requireTool(agent, chosen, this.options.environment)
    await request.confirm({
      action: `Install “${agent.name}” ${agent.version} from the ACP Registry`,
      confirm: 'Install',
      programs: [programToRun(`Agent “${agent.name}”`, planned)]
    })
    const runnable = await this.guarded(agent.id, () => installDistribution(agent, chosen, agentId, this.installerOptions(agent.id)))
    const definition: AgentDefinition = withRunnable(
      { id: agentId, name: agent.name, transport: { kind: 'process', command: '', args: [], env: {} } },
      runnable
    )
    await records.addAgent(definition)
    return definition
  }

  /**
   * Moves an agent to the registry's version. Its process is stopped first
   * where nothing is lost; one at work is not touched (the user is told to
   * wait). The new version is installed beside the old, which is removed only
   * once the definition points at the new one. Afterwards the check runs again.
   */
  private async update(agentId: string, request: RequestContext): Promise<AgentDefinition> {
    const { records, supervisor, checks, events } = this.options
    const definition = records.agent(agentId)
    const origin = definition.origin
    if (!origin) throw new Error(`${definition.name} was not installed from the registry`)
    if (origin.pinned) throw new Error(`${definition.name} is pinned at ${origin.version}; unpin it to update`)
    const agent = await this.entry(origin.registryId)
    if (agent.version === origin.version) return definition
    await request.confirm({
      action: `Update “${definition.name}” from ${origin.version} to ${agent.version}`,
      confirm: 'Update',
      programs: [
        programToRun(`Agent “${definition.name}”`, {
          ...plannedRun(agent, origin.kind, agentId, { dataDir: this.options.dataDir, platform: this.platform }),
          cwd: commandOf(definition.transport)?.cwd
        })
      ]
    })
    await supervisor.stopIfQuiet(agentId)
    if (supervisor.get(agentId)?.isAlive) {
      throw new Error(`${definition.name} is at work (a turn is running or a question is waiting); update it once that is done`)
    }
    const runnable = await this.guarded(agent.id, () => installDistribution(agent, origin.kind, agentId, this.installerOptions(agent.id)))
    const updated: AgentDefinition = withRunnable(definition, runnable)
    await records.replaceAgent(updated)
    if (origin.installDir && origin.installDir !== runnable.origin.installDir) {
      await removeInstalled(this.options.dataDir, agentId, origin.installDir).catch(() => undefined)
    }
    void checks.run(updated).then(
      (report) => events.emit('agents.checked', report),
      () => undefined
    )
    return updated
  }

  /**
   * The agents set up from a preset that run through npx: the version each runs, the tested one, and a newer
   * one to offer: the newest the ACP Registry lists for the same npm package (when newer than the one it runs),
   * else the tested one (when the agent runs an older one, or none named).
   */
  private async presetVersions(refresh: boolean): Promise<PresetVersionView[]> {
    const runs = this.options.records.data.agents.flatMap((a) => {
      const command = commandOf(a.transport)
      const run = command && presetRunOf(command)
      return run ? [{ agentId: a.id, ...run }] : []
    })
    if (!runs.length) return []
    const { snapshot } = await this.feed.get(this.url, refresh)
    return runs.map(({ agentId, npxPackage, version, tested, testedPackage }) => {
      const listed = snapshot.agents
        .map((agent) => splitPackage(agent.distribution.npx?.package ?? ''))
        .flatMap((p) => (p.name === npxPackage && p.version ? [p.version] : []))
        .sort(compareVersions)
        .at(-1)
      const from = version ?? '0.0.0'
      // An agent that runs a package the preset ran as before is offered the tested version of the preset's.
      const renamed = npxPackage !== testedPackage
      const newer =
        !renamed && listed && compareVersions(listed, from) > 0 && compareVersions(listed, tested) >= 0
          ? { newer: listed, newerFrom: 'registry' as const }
          : renamed || version === null || compareVersions(tested, version) > 0
            ? { newer: tested, newerFrom: 'tested' as const }
            : { newer: null }
      return { agentId, npxPackage, runs: version, tested, ...newer }
    })
  }

  /** Moves a preset agent to another version of its package: confirmed, its process stopped where nothing is lost, the check run after. */
  private async updatePreset(agentId: string, version: string, request: RequestContext): Promise<AgentDefinition> {
    const { records, supervisor, checks, events } = this.options
    const definition = records.agent(agentId)
    const command = commandOf(definition.transport)
    const run = command && presetRunOf(command)
    if (!run) throw new Error(`${definition.name} does not run a preset's package through npx, so it has no version to change`)
    if (run.version === version && run.npxPackage === run.testedPackage) return definition
    const offered = (await this.presetVersions(false)).find((v) => v.agentId === agentId)
    if (version !== run.tested && version !== offered?.newer) {
      throw new Error(`${version} is neither the tested version of ${run.testedPackage} (${run.tested}) nor one the registry lists`)
    }
    const args = withPresetVersion(command, run.testedPackage, version)
    const was = run.npxPackage === run.testedPackage ? run.version : `${run.npxPackage}${run.version ? `@${run.version}` : ''}`
    await request.confirm({
      action: `Run “${definition.name}” at ${run.testedPackage}@${version}${was ? ` (instead of ${was})` : ''}`,
      confirm: 'Update',
      programs: [programToRun(`Agent “${definition.name}”`, { command: command.command, args, cwd: command.cwd, env: command.env })]
    })
    await supervisor.stopIfQuiet(agentId)
    if (supervisor.get(agentId)?.isAlive) {
      throw new Error(`${definition.name} is at work (a turn is running or a question is waiting); update it once that is done`)
    }
    const updated: AgentDefinition = { ...definition, transport: withCommand(definition.transport, { args }) }
    await records.replaceAgent(updated)
    void checks.run(updated).then(
      (report) => events.emit('agents.checked', report),
      () => undefined
    )
    return updated
  }

  private async guarded<T>(registryId: string, work: () => Promise<T>): Promise<T> {
    if (this.busy.has(registryId)) throw new Error(`${registryId} is already being installed`)
    this.busy.add(registryId)
    const progress = (p: Omit<RegistryProgress, 'registryId'>) => this.options.events.emit('registry.progress', { registryId, ...p })
    try {
      const result = await work()
      progress({ phase: 'done', received: 0, total: null })
      return result
    } catch (error) {
      progress({ phase: 'failed', received: 0, total: null })
      throw error
    } finally {
      this.busy.delete(registryId)
    }
  }

  private installerOptions(registryId: string) {
    return {
      dataDir: this.options.dataDir,
      environment: this.options.environment,
      platform: this.platform,
      limits: registryLimits(this.options.limits),
      onProgress: (phase: 'downloading' | 'extracting', received: number, total: number | null) =>
        this.options.events.emit('registry.progress', { registryId, phase, received, total })
    }
  }
}
