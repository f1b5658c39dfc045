import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import type { ParsedParams, RequestResult } from '../../../shared/contract'
import type { CommandChange } from '../../../shared/confirmation'
import { mcpRequestParams, type McpState } from '../../../shared/mcp'
import { programToRun } from '../contract/confirmations'
import type { UserEnvironment } from '../child-processes/environment'
import { explainingLines, lastLines } from '../../../shared/stderr-lines'
import type { RequestContext } from '../contract/handlers'
import type { SecretStore } from '../storage/secrets'
import type { Records } from '../storage/records'
import { prepareServers, type PreparedServer } from './acp-servers'
import { exportTarget, exportToMcpJson } from './export'
import { importInputs, knownImportSources, previewImport, readMcpConfig, type Places } from './import'
import { McpProfiles, type McpProfileChange } from './profiles'

/**
 * Everything the Host does for MCP server profiles, behind the `mcp.*`
 * requests: the profiles and their per-project switches, Test connection,
 * import from other apps and export to `.mcp.json`; and, for sessions, the
 * servers a project's session starts with.
 */

type McpMethod = keyof typeof mcpRequestParams
export type McpHandlers = { [M in McpMethod]: (params: ParsedParams<M>, request: RequestContext) => Promise<RequestResult<M>> }

export interface McpServiceOptions {
  records: Records
  secrets: SecretStore
  /** What stdio servers start with (Test connection), and whose PATH finds their commands. */
  environment: UserEnvironment
  /** The start of the mark a tested server's process carries (see child-processes/process-tree.ts). */
  markPrefix?: string
  clientVersion: string
  onChange: (state: McpState) => void
  /** Where other apps keep their files; defaults to this machine's. */
  places?: Places
}

export class McpService {
  readonly profiles: McpProfiles

  constructor(private readonly options: McpServiceOptions) {
    this.profiles = new McpProfiles(options.records, options.secrets, options.onChange)
  }

  /**
   * The servers a project's session starts with, prepared before the agent is
   * asked: secrets filled in, commands resolved (a command that cannot be found
   * throws, naming the server).
   */
  async prepareForProject(projectId: string, presetProfileIds: readonly string[] = []): Promise<PreparedServer[]> {
    const unlocked = await Promise.all(this.profiles.forProject(projectId, presetProfileIds).map((p) => this.profiles.unlock(p)))
    return prepareServers(unlocked, this.options.environment, undefined, this.options.records.findProject(projectId)?.sshHost)
  }

  readonly handlers: McpHandlers = {
    'mcp.list': () => this.profiles.state(),
    // A stdio server that is new, or whose command, arguments, folder or variables change, is confirmed outside the page first.
    'mcp.save': (p, request) =>
      this.profiles.save(p, (change) => (runsDifferently(change) ? request.confirm(stdioChange(change)) : Promise.resolve())),
    'mcp.delete': async (p) => {
      await this.profiles.remove(p.id)
      return {}
    },
    'mcp.setProjectEnabled': async (p) => {
      await this.profiles.setProjectEnabled(p.projectId, p.profileId, p.enabled)
      return {}
    },
    'mcp.test': async (p) => {
      // The MCP SDK's client is loaded on the first test, not with the Host (about 9 MB and a third of a second at start).
      const { testMcpConnection } = await import('./test-connection')
      const result = await testMcpConnection(await this.profiles.unlock(this.profiles.profile(p.id)), {
        timeoutMs: p.timeoutMs,
        clientVersion: this.options.clientVersion,
        environment: this.options.environment,
        markPrefix: this.options.markPrefix
      })
      // Kept with the profile: the MCP page and sessions show it, and a server that fails is not given to new sessions.
      // The session's note has no stderr box: the line of it that explains the failure goes with the reason.
      const error = result.ok ? undefined : withExplainingLine(result.error, result.stderrTail)
      await this.profiles.recordTest(p.id, { ok: result.ok, at: new Date().toISOString(), ...(error ? { error } : {}) })
      return result
    },
    'mcp.importSources': async (p) => {
      const project = p.projectId ? this.options.records.findProject(p.projectId) : undefined
      if (p.projectId && !project) throw new Error(`No project with id '${p.projectId}'`)
      return knownImportSources(this.options.places ?? thisMachine(), project?.cwd).map((s) => ({ ...s, exists: existsSync(s.path) }))
    },
    'mcp.importPreview': async (p) => previewImport(p.path, await readMcpConfig(p.path, p.format), this.profiles.profiles),
    'mcp.importApply': async (p, request) => {
      const config = await readMcpConfig(p.path, p.format)
      const unknownProject = p.projectIds.find((id) => !this.options.records.findProject(id))
      if (unknownProject) throw new Error(`No project with id '${unknownProject}'`)
      const inputs = importInputs(
        config,
        p.items,
        p.scope,
        p.projectIds,
        this.profiles.profiles.map((x) => x.name)
      )
      // Every stdio server among them is confirmed at once, before any is saved.
      const stdio = inputs.filter((input) => input.transport === 'stdio')
      if (stdio.length) {
        await request.confirm({
          action: `Import ${inputs.length === 1 ? 'an MCP server' : `${inputs.length} MCP servers`} from ${p.path}`,
          confirm: 'Import',
          programs: stdio.map((input) =>
            programToRun(
              `MCP server “${input.name.trim()}”`,
              { command: input.command.trim(), args: input.args, cwd: input.cwd?.trim(), env: plainEnv(input.env) },
              Object.fromEntries(input.env.filter((e) => e.secret).map((e) => [e.name.trim(), 'new'] as const))
            )
          )
        })
      }
      const imported = []
      for (const input of inputs) imported.push(await this.profiles.save(input))
      return { imported }
    },
    // Into another tool's file, whose servers that tool starts: only its known file, confirmed outside the page like a server added here.
    'mcp.export': async (p, request) => {
      const local = this.options.records.data.projects.filter((project) => !project.sshHost).map((project) => project.cwd)
      const path = await exportTarget(p.path, local)
      const profiles = p.profileIds.map((id) => this.profiles.profile(id))
      const stdio = profiles.filter((profile) => profile.transport === 'stdio')
      await request.confirm({
        action: `Write ${profiles.length === 1 ? 'an MCP server' : `${profiles.length} MCP servers`} into ${path}`,
        confirm: 'Export',
        reach: [
          `Claude Code, and other tools that read ${path}, will start ${profiles.length === 1 ? 'this server' : 'these servers'} for agents in that project.`,
          `The servers already in the file are kept (one of the same name is replaced), and the file is copied beside itself first.`,
          ...profiles.filter((profile) => profile.transport !== 'stdio').map((profile) => `MCP server “${profile.name}” at ${profile.url}`)
        ],
        programs: stdio.map((profile) => programToRun(`MCP server “${profile.name}”`, { ...profile, env: plainEnv(profile.env) }))
      })
      return exportToMcpJson(path, profiles)
    }
  }
}

/**
 * Whether saving changes what runs: a stdio server that is new (or was not
 * stdio), or whose command, arguments, folder or variables (names, values,
 * which are secret, a secret's new value) change. A rename, its projects, its
 * switch or an http server's address do not run anything.
 */
function runsDifferently({ existing, profile, newSecretEnv }: McpProfileChange): boolean {
  if (profile.transport !== 'stdio') return false
  if (!existing || existing.transport !== 'stdio' || newSecretEnv.length > 0) return true
  const runs = (p: typeof profile) => JSON.stringify([p.command, p.args, p.cwd ?? '', [...p.env].sort((a, b) => a.name.localeCompare(b.name))])
  return runs(existing) !== runs(profile)
}

function stdioChange({ existing, profile, newSecretEnv }: McpProfileChange): CommandChange {
  const secrets = Object.fromEntries(
    profile.env.filter((e) => e.secret).map((e) => [e.name, newSecretEnv.includes(e.name) ? 'new' : 'kept'] as const)
  )
  const program = programToRun(`MCP server “${profile.name}”`, { ...profile, env: plainEnv(profile.env) }, secrets)
  return existing
    ? { action: `Change what the MCP server “${existing.name}” runs`, confirm: 'Save server', programs: [program] }
    : { action: `Add the MCP server “${profile.name}”`, confirm: 'Add server', programs: [program] }
}

/** The variables that are not secret, by name. */
function plainEnv(env: { name: string; value?: string; secret: boolean }[]): Record<string, string> {
  return Object.fromEntries(env.filter((e) => !e.secret).map((e) => [e.name.trim(), e.value ?? '']))
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
      (params: never, request: RequestContext) => (service().handlers[method] as (p: never, r: RequestContext) => unknown)(params, request)
    ])
  ) as unknown as McpHandlers
}

/** "The server exited with code 2 before it answered: tiny-mcp: TINY_TOKEN is missing" — the reason and what the server said of it. */
function withExplainingLine(error: string, stderr: string | undefined): string {
  const said = stderr ? (explainingLines(stderr, 1)[0] ?? lastLines(stderr, 1)[0]) : undefined
  return said && !error.includes(said) ? `${error.replace(/[.\s]+$/, '')}: ${said}` : error
}
