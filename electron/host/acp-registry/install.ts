import { randomUUID } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { AgentDefinition, AgentOrigin, DistributionKind } from '../../../shared/agent-definition'
import { commandOf, withCommand, type AgentCommand, type AgentTransport } from '../../../shared/transport'
import type { PlatformKey, RegistryAgent } from '../../../shared/registry'
import { HostError } from '../contract/errors'
import type { UserEnvironment } from '../child-processes/environment'
import { archiveFormat, download, unpack } from './archive'
import { makeTreePrivate, privateFolder } from '../storage/private-files'
import { REGISTRY_LIMITS, type RegistryLimits } from './limits'

/**
 * Turns a registry entry into what an agent definition runs: `npx` and `uvx`
 * distributions run the pinned package through those tools; a `binary` is
 * downloaded and unpacked into `<data>/agents/<agentId>/<version>/` (through
 * a staging folder renamed into place only once everything checked out, so a
 * failure leaves the version installed before untouched).
 */

/** What an installed distribution runs (a process's command, arguments and variables), and where it came from. */
export interface Runnable extends Pick<AgentCommand, 'command' | 'args' | 'env'> {
  installHint: string
  origin: AgentOrigin
}

/** The definition with what an installed distribution runs: its command, arguments and variables (its folder and secrets kept). */
export function withRunnable<D extends Pick<AgentDefinition, 'transport'>>(definition: D, { command, args, env, installHint, origin }: Runnable): D {
  const transport: AgentTransport = commandOf(definition.transport)
    ? withCommand(definition.transport, { command, args, env })
    : { kind: 'process', command, args, env }
  return { ...definition, transport, installHint, origin }
}

export interface InstallerOptions {
  dataDir: string
  /** Where npx and uvx are looked up: the PATH agents start with. */
  environment: UserEnvironment
  platform: PlatformKey | null
  /** How much a download and its archive may be (limits.ts). */
  limits?: RegistryLimits
  onProgress: (phase: 'downloading' | 'extracting', received: number, total: number | null) => void
}

/** This machine's key in a binary distribution, or null on a platform the registry does not list. */
export function platformKey(platform: string = process.platform, arch: string = process.arch): PlatformKey | null {
  const os = platform === 'darwin' ? 'darwin' : platform === 'linux' ? 'linux' : platform === 'win32' ? 'windows' : null
  const cpu = arch === 'arm64' ? 'aarch64' : arch === 'x64' ? 'x86_64' : null
  return os && cpu ? `${os}-${cpu}` : null
}

/** The distributions usable on this platform, best first: a binary needs nothing else, npx needs Node, uvx needs uv. */
export function usableKinds(agent: RegistryAgent, platform: PlatformKey | null): DistributionKind[] {
  const kinds: DistributionKind[] = []
  if (platform && agent.distribution.binary?.[platform]) kinds.push('binary')
  if (agent.distribution.npx) kinds.push('npx')
  if (agent.distribution.uvx) kinds.push('uvx')
  return kinds
}

const NPM_NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/
const PYPI_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** What an installed distribution will run, known before anything is downloaded (for the confirmation). */
export interface PlannedRun {
  command: string
  args: string[]
  env: Record<string, string>
  installHint: string
  /** binary: the archive downloaded first. */
  download?: string
}

/**
 * What installing `agent`'s `kind` distribution as `agentId` will run, worked
 * out from the registry's entry alone: npx and uvx run the pinned package, a
 * binary the command in the folder its archive is unpacked into.
 */
export function plannedRun(
  agent: RegistryAgent,
  kind: DistributionKind,
  agentId: string,
  options: Pick<InstallerOptions, 'dataDir' | 'platform'>
): PlannedRun {
  if (kind === 'npx') {
    const dist = agent.distribution.npx
    if (!dist) throw new Error(`${agent.name} has no npx distribution`)
    // A bare package name is pinned to the registry's version (the registry's own entries already name it).
    const pkg = NPM_NAME.test(dist.package) ? `${dist.package}@${agent.version}` : dist.package
    const args = dist.cmd ? ['-y', '--package', pkg, dist.cmd, ...dist.args] : ['-y', pkg, ...dist.args]
    return { command: 'npx', args, env: { ...dist.env }, installHint: `npx -y ${pkg}` }
  }
  if (kind === 'uvx') {
    const dist = agent.distribution.uvx
    if (!dist) throw new Error(`${agent.name} has no uvx distribution`)
    const pkg = PYPI_NAME.test(dist.package) ? `${dist.package}==${agent.version}` : dist.package
    const args = dist.cmd ? ['--from', pkg, dist.cmd, ...dist.args] : [pkg, ...dist.args]
    return { command: 'uvx', args, env: { ...dist.env }, installHint: `uvx ${pkg}` }
  }
  const target = options.platform ? agent.distribution.binary?.[options.platform] : undefined
  if (!target) throw new Error(`${agent.name} has no download for this platform (${options.platform ?? process.platform})`)
  const format = archiveFormat(target.archive)
  const installDir = join(options.dataDir, 'agents', agentId, safeName(agent.version))
  return {
    command: resolve(installDir, format === 'raw' ? commandName(agent, target.cmd) : target.cmd),
    args: [...target.args],
    env: { ...target.env },
    installHint: `reinstall ${agent.name} from the ACP Registry`,
    download: target.archive
  }
}

/** The file name of a binary's command (what a raw download is saved as). */
function commandName(agent: RegistryAgent, cmd: string): string {
  return cmd.replace(/\\/g, '/').split('/').pop() || agent.id
}

/** Throws, saying how to get it, when the tool an npx or uvx distribution runs through is not installed (before anything is asked or done). */
export async function requireTool(agent: RegistryAgent, kind: DistributionKind, environment: UserEnvironment): Promise<void> {
  if (kind === 'npx' && !(await environment.find('npx'))) {
    throw new Error(
      `${agent.name} runs through npx, which is not installed here. Install Node.js (https://nodejs.org), which brings npx, then try again.`
    )
  }
  if (kind === 'uvx' && !(await environment.find('uvx'))) {
    throw new HostError(
      'uv_missing',
      `${agent.name} runs through uv's uvx, which is not installed here. Install uv (https://docs.astral.sh/uv/getting-started/installation/: ` +
        '`curl -LsSf https://astral.sh/uv/install.sh | sh` on macOS and Linux, `winget install astral-sh.uv` on Windows), then install the agent again.'
    )
  }
}

export async function installDistribution(
  agent: RegistryAgent,
  kind: DistributionKind,
  agentId: string,
  options: InstallerOptions
): Promise<Runnable> {
  const origin: AgentOrigin = { registryId: agent.id, version: agent.version, kind }
  if (kind === 'npx' || kind === 'uvx') {
    const { download: _none, ...run } = plannedRun(agent, kind, agentId, options)
    await requireTool(agent, kind, options.environment)
    return { ...run, origin }
  }
  const target = options.platform ? agent.distribution.binary?.[options.platform] : undefined
  if (!target) throw new Error(`${agent.name} has no download for this platform (${options.platform ?? process.platform})`)
  const folder = join(options.dataDir, 'agents', agentId)
  const installDir = join(folder, safeName(agent.version))
  const staging = join(folder, `.staging-${randomUUID()}`)
  const archive = join(folder, `.download-${randomUUID()}`)
  await privateFolder(staging)
  try {
    const format = archiveFormat(target.archive)
    const limits = options.limits ?? REGISTRY_LIMITS
    await download(target.archive, archive, (received, total) => options.onProgress('downloading', received, total), limits.downloadBytes)
    options.onProgress('extracting', 0, null)
    const cmdName = commandName(agent, target.cmd)
    await unpack(archive, format, staging, cmdName, limits)
    const relativeCmd = format === 'raw' ? cmdName : target.cmd
    const executable = await stagedCommand(staging, relativeCmd, agent.name, target.cmd)
    // Runnable by the user alone: the data folder is private, so is what the archive unpacked.
    if (process.platform !== 'win32') await fs.chmod(executable.path, (executable.mode & 0o700) | 0o700)
    const inFolder = relative(await fs.realpath(staging), executable.path)
    await makeTreePrivate(staging)
    await fs.rm(installDir, { recursive: true, force: true })
    await fs.rename(staging, installDir)
    return {
      // The file checked and marked executable, not a path that passes through links to it.
      command: join(installDir, inFolder),
      args: [...target.args],
      env: { ...target.env },
      installHint: `reinstall ${agent.name} from the ACP Registry`,
      origin: { ...origin, installDir }
    }
  } finally {
    // A refused tar may still have a write or two of node-tar's under way: a folder that fills again while it is
    // removed (ENOTEMPTY) is removed again.
    await fs.rm(staging, { recursive: true, force: true, maxRetries: 10, retryDelay: 20 }).catch(() => undefined)
    await fs.rm(archive, { force: true }).catch(() => undefined)
  }
}

/**
 * The file `relativeCmd` names in `staging`, where it really is: after every link (realpath), it must be a regular
 * file inside the folder, or nothing is marked executable and the archive is refused.
 */
export async function stagedCommand(
  staging: string,
  relativeCmd: string,
  agentName: string,
  cmd = relativeCmd
): Promise<{ path: string; mode: number }> {
  const outside = () => new HostError('archive_refused', `${agentName}'s command '${cmd}' points outside its folder. Nothing was installed.`)
  if (!isInside(staging, resolve(staging, relativeCmd))) throw outside()
  const missing = () =>
    new HostError('archive_refused', `${agentName}'s archive has no '${cmd}' in it (the command the registry names). Nothing was installed.`)
  // Not normalised first: `link/..` is where the link leads, then up, as the system will take it.
  const real = await fs.realpath(`${staging}${sep}${relativeCmd}`).catch(() => null)
  if (real === null) throw missing()
  if (!isInside(await fs.realpath(staging), real)) throw outside()
  const stat = await fs.lstat(real)
  if (!stat.isFile()) throw missing()
  return { path: real, mode: stat.mode }
}

function isInside(folder: string, path: string): boolean {
  const rel = relative(folder, path)
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel)
}

/** Removes what was downloaded for an agent (all its versions); only ever inside `<data>/agents/`. */
export async function removeInstalled(dataDir: string, agentId: string, installDir?: string): Promise<void> {
  const root = join(dataDir, 'agents')
  const target = installDir ?? join(root, agentId)
  const rel = relative(root, target)
  if (!rel || rel.startsWith('..')) return
  await fs.rm(target, { recursive: true, force: true })
  // The agent's folder goes too once no version is left in it.
  const folder = join(root, agentId)
  if ((await fs.readdir(folder).catch(() => ['?'])).length === 0) await fs.rmdir(folder).catch(() => undefined)
}

function safeName(version: string): string {
  return version.replace(/[^A-Za-z0-9._+-]/g, '_').replace(/^\.+/, '_') || 'version'
}
