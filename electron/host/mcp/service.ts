import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import type { ParsedParams, RequestResult } from '../../../shared/contract'
import { mcpRequestParams, type McpState } from '../../../shared/mcp'
import type { UserEnvironment } from '../environment'
import type { SecretStore } from '../secrets'
import type { Store } from '../store'
import { prepareServers, type PreparedServer } from './acp-servers'
import { exportToMcpJson } from './export'
import { importInputs, knownImportSources, previewImport, readMcpConfig, type Places } from './import'
import { McpProfiles } from './profiles'
import { testMcpConnection } from './test-connection'

/**
 * Everything the Host does for MCP server profiles, behind the `mcp.*`
 * requests: the profiles and their per-project switches, Test connection,
 * import from other apps and export to `.mcp.json`; and, for sessions, the
 * servers a project's session starts with.
 */

type McpMethod = keyof typeof mcpRequestParams
export type McpHandlers = { [M in McpMethod]: (params: ParsedParams<M>) => Promise<RequestResult<M>> }

export interface McpServiceOptions {
  store: Store
  secrets: SecretStore
  /** What stdio servers start with (Test connection), and whose PATH finds their commands. */
  environment: UserEnvironment
  /** The start of the mark a tested server's process carries (see processes.ts). */
  markPrefix?: string
  clientVersion: string
  onChange: (state: McpState) => void
  /** Where other apps keep their files; defaults to this machine's. */
  places?: Places
}

export class McpService {
  readonly profiles: McpProfiles

  constructor(private readonly options: McpServiceOptions) {
    this.profiles = new McpProfiles(options.store, options.secrets, options.onChange)
  }

  /**
   * The servers a project's session starts with, prepared before the agent is
   * asked: secrets filled in, commands resolved (a command that cannot be found
   * throws, naming the server).
   */
  async prepareForProject(projectId: string): Promise<PreparedServer[]> {
    const unlocked = await Promise.all(this.profiles.forProject(projectId).map((p) => this.profiles.unlock(p)))
    return prepareServers(unlocked, this.options.environment)
  }

  readonly handlers: McpHandlers = {
    'mcp.list': () => this.profiles.state(),
    'mcp.save': (p) => this.profiles.save(p),
    'mcp.delete': async (p) => {
      await this.profiles.remove(p.id)
      return {}
    },
    'mcp.setProjectEnabled': async (p) => {
      await this.profiles.setProjectEnabled(p.projectId, p.profileId, p.enabled)
      return {}
    },
    'mcp.test': async (p) => {
      const result = await testMcpConnection(await this.profiles.unlock(this.profiles.profile(p.id)), {
        timeoutMs: p.timeoutMs,
        clientVersion: this.options.clientVersion,
        environment: this.options.environment,
        markPrefix: this.options.markPrefix
      })
      // Kept with the profile: the MCP page and sessions show it, and a server that fails is not given to new sessions.
      await this.profiles.recordTest(p.id, { ok: result.ok, at: new Date().toISOString(), ...(result.ok ? {} : { error: result.error }) })
      return result
    },
    'mcp.importSources': async (p) => {
      const project = p.projectId ? this.options.store.project(p.projectId) : undefined
      if (p.projectId && !project) throw new Error(`No project with id '${p.projectId}'`)
      return knownImportSources(this.options.places ?? thisMachine(), project?.cwd).map((s) => ({ ...s, exists: existsSync(s.path) }))
    },
    'mcp.importPreview': async (p) => previewImport(p.path, await readMcpConfig(p.path, p.format), this.profiles.profiles),
    'mcp.importApply': async (p) => {
      const config = await readMcpConfig(p.path, p.format)
      const unknownProject = p.projectIds.find((id) => !this.options.store.project(id))
      if (unknownProject) throw new Error(`No project with id '${unknownProject}'`)
      const inputs = importInputs(
        config,
        p.items,
        p.scope,
        p.projectIds,
        this.profiles.profiles.map((x) => x.name)
      )
      const imported = []
      for (const input of inputs) imported.push(await this.profiles.save(input))
      return { imported }
    },
    'mcp.export': async (p) =>
      exportToMcpJson(
        p.path,
        p.profileIds.map((id) => this.profiles.profile(id))
      )
  }
}

function thisMachine(): Places {
  return { platform: process.platform, home: homedir(), appData: process.env.APPDATA, xdgConfigHome: process.env.XDG_CONFIG_HOME }
}

/**
 * The `mcp.*` handlers for the Host's handler map, each looking the service up
 * when called (the map is built before the Host's constructor has made it).
 */
export function lazyMcpHandlers(service: () => McpService): McpHandlers {
  return Object.fromEntries(
    (Object.keys(mcpRequestParams) as McpMethod[]).map((method) => [
      method,
      (params: never) => (service().handlers[method] as (p: never) => unknown)(params)
    ])
  ) as unknown as McpHandlers
}
