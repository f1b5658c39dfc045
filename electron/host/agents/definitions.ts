import { access, readFile } from 'node:fs/promises'
import { isAbsolute, posix } from 'node:path'
import { isIP } from 'node:net'
import type { ProgramToRun } from '../../../shared/confirmation'
import type { AgentDefinition } from '../../../shared/agent-definition'
import type { AgentInput, TransportInput } from '../../../shared/agent-requests'
import {
  commandOf,
  secretNamesOf,
  sshHostOf,
  unknownTransport,
  type AgentCommand,
  type AgentTransport,
  type NetworkTransport,
  type ProcessTransport,
  type SshTarget,
  type SshTransport
} from '../../../shared/transport'
import { programToRun } from '../contract/confirmations'
import { checkedFolder } from '../local-files/folders'
import { checkDestination } from '../ssh/options'

/**
 * Checks what the user typed for an agent (Agents page: add and edit) and
 * turns it into a definition plus the secret values to store. Secret values
 * never enter the definition (db.json) and never go back to the renderer.
 */

export type { AgentInput }
type CommandInput = Extract<TransportInput, { kind: 'process' }>
type SshAgentInput = Extract<TransportInput, { kind: 'ssh' }>
type NetworkAgentInput = Extract<TransportInput, { kind: 'network' }>

export interface CheckedAgent {
  fields: Pick<AgentDefinition, 'name' | 'protocol' | 'transport'>
  /** Values to write to the secret store, by variable name. */
  secretValues: Record<string, string>
  /** Secret variables the agent had and no longer has. */
  forgottenSecrets: string[]
  /** A network agent's header values to write to the secret store, by header name. */
  headerValues: Record<string, string>
  /** Headers the agent had and no longer has. */
  forgottenHeaders: string[]
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Throws a message the form can show when the input is not usable; `previous` is the agent being edited. */
export async function checkAgentInput(input: AgentInput, previous?: AgentDefinition): Promise<CheckedAgent> {
  const name = input.name.trim()
  if (!name) throw new Error('The agent needs a name')
  const protocol = input.protocol === undefined ? {} : { protocol: input.protocol === 2 ? (2 as const) : undefined }
  const before = previous ? secretNamesOf(previous.transport) : { env: [], headers: [] }
  const transport = input.transport
  switch (transport.kind) {
    case 'network': {
      const checked = await checkNetworkAgent(transport, before.headers)
      return { ...checked, fields: { name, ...protocol, transport: checked.transport }, secretValues: {}, forgottenSecrets: before.env }
    }
    case 'process':
    case 'ssh': {
      const target = transport.kind === 'ssh' ? await checkSshTarget(transport) : null
      // Absent: the folder it had (when it ran a command), as it was; empty: the home folder.
      // A folder on the host cannot be looked at before the agent connects: its form is checked here, its existence when it starts.
      const cwd =
        transport.cwd === undefined
          ? previous && commandOf(previous.transport)?.cwd
          : target
            ? checkRemoteWorkingFolder(transport.cwd)
            : await checkWorkingFolder(transport.cwd)
      const { command, secretValues, forgottenSecrets } = checkCommand(transport, cwd, before.env)
      return {
        fields: { name, ...protocol, transport: target ? { kind: 'ssh', ...target, ...command } : { kind: 'process', ...command } },
        secretValues,
        forgottenSecrets,
        headerValues: {},
        forgottenHeaders: before.headers
      }
    }
    default:
      return unknownTransport(transport)
  }
}

/** The command, arguments, variables and secret variables as typed, checked; `kept`: the secret variables stored before. */
function checkCommand(
  input: Omit<CommandInput, 'kind'>,
  cwd: string | undefined,
  kept: readonly string[]
): { command: AgentCommand; secretValues: Record<string, string>; forgottenSecrets: string[] } {
  const command = input.command.trim()
  if (!command) throw new Error('The agent needs a command to run (a name on PATH, or an absolute path)')
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(input.env)) {
    const variable = key.trim()
    if (!ENV_NAME.test(variable)) throw new Error(badName(key))
    env[variable] = value
  }
  const secretValues: Record<string, string> = {}
  const secretEnv: string[] = []
  for (const [key, value] of Object.entries(input.secretEnv)) {
    const variable = key.trim()
    if (!ENV_NAME.test(variable)) throw new Error(badName(key))
    if (variable in env) throw new Error(`${variable} is given twice, once as a secret; keep one`)
    if (value === null) {
      if (!kept.includes(variable)) throw new Error(`${variable} has no stored value yet: type one`)
    } else {
      if (!value.trim()) throw new Error(`${variable} is marked secret but has no value`)
      secretValues[variable] = value
    }
    secretEnv.push(variable)
  }
  const forgottenSecrets = kept.filter((variable) => !secretEnv.includes(variable))
  return {
    command: { command, args: input.args, env, ...(secretEnv.length ? { secretEnv } : {}), ...(cwd ? { cwd } : {}) },
    secretValues,
    forgottenSecrets
  }
}

/** A query parameter named as a credential is: `token`, `api_key`, `access_token`, `sig`, `password`… */
const SECRET_PARAM = /(token|key|secret|passw|pwd|auth|sig|credential|session|bearer|jwt)/i
/** A value that looks like one whatever its name: a long run of token characters with letters and digits. */
const CREDENTIAL_LIKE = /^(?=.*\d)(?=.*[A-Za-z])[\w\-.~+/=]{24,}$/

/** An HTTP header's name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * A network agent: a ws(s):// or http(s):// URL, headers kept as secrets, an optional CA file (absolute, holding a
 * PEM certificate). `stored`: the secret headers it had.
 */
async function checkNetworkAgent(
  input: NetworkAgentInput,
  stored: readonly string[]
): Promise<Pick<CheckedAgent, 'headerValues' | 'forgottenHeaders'> & { transport: NetworkTransport }> {
  const typed = input.url.trim()
  let url: URL
  try {
    url = new URL(typed)
  } catch {
    throw new Error(`The agent's address must be a URL like wss://agents.example.com/acp (got '${typed}')`)
  }
  if (!['ws:', 'wss:', 'http:', 'https:'].includes(url.protocol)) {
    throw new Error(`The agent's address must start with ws://, wss://, http:// or https:// (got ${url.protocol}//)`)
  }
  if (url.username || url.password) throw new Error("Put the agent's credentials in a header (Authorization), not in its address")
  // The address is kept in db.json and shown in logs, states and check reports: a secret in it would be too.
  for (const [name, value] of url.searchParams) {
    if (SECRET_PARAM.test(name) || CREDENTIAL_LIKE.test(value)) {
      throw new Error(
        `The agent's address carries what looks like a credential in its query ('${name}'): put it in a header (Authorization), which is kept in the secret store, not in the address`
      )
    }
  }
  url.hash = ''
  const kept = new Set(stored.map((h) => h.toLowerCase()))
  const headerValues: Record<string, string> = {}
  const secretHeaders: string[] = []
  for (const [key, value] of Object.entries(input.headers)) {
    const header = key.trim()
    if (!HEADER_NAME.test(header)) throw new Error(`'${key}' is not a valid HTTP header name`)
    if (secretHeaders.some((h) => h.toLowerCase() === header.toLowerCase())) throw new Error(`The header ${header} is given twice`)
    if (value === null) {
      if (!kept.has(header.toLowerCase())) throw new Error(`The header ${header} has no stored value yet: type one`)
    } else {
      if (!value.trim()) throw new Error(`The header ${header} has no value`)
      if (/[\r\n\0]/.test(value)) throw new Error(`The header ${header} has a line break in its value`)
      headerValues[header] = value.trim()
    }
    secretHeaders.push(header)
  }
  const forgottenHeaders = stored.filter((h) => !secretHeaders.some((n) => n.toLowerCase() === h.toLowerCase()))
  const caFile = input.caFile?.trim() ? await checkCaFile(input.caFile.trim()) : undefined
  return {
    transport: { kind: 'network', url: url.href, ...(secretHeaders.length ? { secretHeaders } : {}), ...(caFile ? { caFile } : {}) },
    headerValues,
    forgottenHeaders
  }
}

/** Where an agent over SSH runs: a destination ssh takes, a port, key and known_hosts files that can be read here. */
async function checkSshTarget(input: SshAgentInput): Promise<SshTarget> {
  const destination = checkDestination(input.destination)
  const identityFile = input.identityFile?.trim() ? await checkLocalFile(input.identityFile.trim(), 'identity file') : undefined
  const knownHostsFile = input.knownHostsFile?.trim() ? await checkLocalFile(input.knownHostsFile.trim(), 'known_hosts file') : undefined
  return {
    destination,
    ...(input.port ? { port: input.port } : {}),
    ...(identityFile ? { identityFile } : {}),
    ...(knownHostsFile ? { knownHostsFile } : {})
  }
}

async function checkLocalFile(typed: string, what: string): Promise<string> {
  if (!isAbsolute(typed)) throw new Error(`The ${what} must be an absolute path on this computer (got '${typed}')`)
  if (typed.includes('"')) throw new Error(`The ${what}'s path has a double quote in it, which ssh cannot take (got '${typed}')`)
  try {
    await access(typed)
  } catch (error) {
    throw new Error(`The ${what} ${typed} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  return typed
}

/** An agent's working folder on its host: empty for the login's home folder, else an absolute path there. */
function checkRemoteWorkingFolder(typed: string): string | undefined {
  if (!typed.trim()) return undefined
  if (!posix.isAbsolute(typed.trim()))
    throw new Error(`The working folder on the host must be an absolute path, like /home/you/code (got '${typed.trim()}')`)
  return posix.resolve(typed.trim())
}

/** The CA file as typed: an absolute path to a readable file holding a PEM certificate. */
async function checkCaFile(typed: string): Promise<string> {
  if (!isAbsolute(typed)) throw new Error(`The CA file must be an absolute path (got '${typed}')`)
  let text: string
  try {
    text = await readFile(typed, 'utf8')
  } catch (error) {
    throw new Error(`The CA file ${typed} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`)
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`The CA file ${typed} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
  return typed
}

/**
 * What the agent would run once the checked input is saved, for the
 * confirmation: its command line, folder and variables (a secret with a value
 * typed is new, one sent as null kept). `previous` is the agent being edited.
 */
export function agentProgram(checked: CheckedAgent): ProgramToRun {
  const { name, transport } = checked.fields
  switch (transport.kind) {
    case 'network': {
      // Nothing runs here, but the agent will: it reads and writes files and runs commands through Switchboard.
      const secretHeaders = transport.secretHeaders ?? []
      const headers = Object.fromEntries(secretHeaders.map((h) => [h, h in checked.headerValues ? 'new' : 'kept'] as const))
      return programToRun(
        `Agent “${name}” over the network (it can read and write files in its sessions' folders and run commands here)${sentInClear(transport.url, secretHeaders)}`,
        { command: transport.url, args: [], env: transport.caFile ? { 'CA file': transport.caFile } : {} },
        headers
      )
    }
    case 'process':
    case 'ssh': {
      const { command, args, cwd, env } = transport
      const secrets = Object.fromEntries((transport.secretEnv ?? []).map((n) => [n, n in checked.secretValues ? 'new' : 'kept'] as const))
      // Over SSH the command runs there; it reads and writes files and runs commands there through Switchboard.
      const label = transport.kind === 'ssh' ? `Agent “${name}” on ${sshHostOf(transport)} over SSH${sshDetails(transport)}` : `Agent “${name}”`
      return programToRun(label, { command, args, cwd, env }, secrets)
    }
    default:
      return unknownTransport(transport)
  }
}

/**
 * What the confirmation must say when secret headers would travel unencrypted (ws:// or http://) to a host other
 * than this computer: confirming is then confirming that too. Empty otherwise.
 */
export function sentInClear(address: string, secretHeaders: readonly string[]): string {
  if (secretHeaders.length === 0) return ''
  const url = new URL(address)
  if (url.protocol !== 'ws:' && url.protocol !== 'http:') return ''
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const loopback = host === 'localhost' || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1'
  if (loopback) return ''
  return `. UNENCRYPTED: its secret headers (${secretHeaders.join(', ')}) are sent in the clear over ${url.protocol}// to ${url.host}, where anyone on the network between can read them; confirm only if that network is yours, else use ${url.protocol === 'ws:' ? 'wss' : 'https'}://`
}

/**
 * Whether saving the checked input changes what the agent runs: its command,
 * arguments, folder, variables (names or values, plain or secret). A new name
 * or protocol version alone does not, nor a secret kept as it is.
 */
export function changesWhatRuns(previous: AgentDefinition, checked: CheckedAgent): boolean {
  const next = checked.fields.transport
  const before = previous.transport
  if (next.kind !== before.kind) return true
  const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x) => b.includes(x))
  switch (next.kind) {
    case 'network': {
      const was = before as NetworkTransport
      return (
        next.url !== was.url ||
        (next.caFile ?? '') !== (was.caFile ?? '') ||
        !sameSet(next.secretHeaders ?? [], was.secretHeaders ?? []) ||
        Object.keys(checked.headerValues).length > 0
      )
    }
    case 'process':
    case 'ssh': {
      const was = before as ProcessTransport | SshTransport
      const target = (t: AgentTransport): string =>
        t.kind === 'ssh' ? JSON.stringify([t.destination, t.port, t.identityFile, t.knownHostsFile]) : ''
      const envOf = (env: Record<string, string>): string[] => Object.entries(env).map(([k, v]) => JSON.stringify([k, v]))
      return (
        target(next) !== target(was) ||
        next.command !== was.command ||
        JSON.stringify(next.args) !== JSON.stringify(was.args) ||
        (next.cwd ?? '') !== (was.cwd ?? '') ||
        !sameSet(envOf(next.env), envOf(was.env ?? {})) ||
        !sameSet(next.secretEnv ?? [], was.secretEnv ?? []) ||
        Object.keys(checked.secretValues).length > 0
      )
    }
    default:
      return unknownTransport(next)
  }
}

/** How ssh is told to reach the host, for the confirmation (files on this computer). */
function sshDetails(ssh: SshTarget): string {
  const parts = [ssh.identityFile && `key ${ssh.identityFile}`, ssh.knownHostsFile && `host keys from ${ssh.knownHostsFile}`].filter(Boolean)
  return parts.length ? ` (${parts.join(', ')})` : ''
}

/** The agent's working folder as typed: empty means the home folder (undefined); else an absolute path to a folder that exists. */
export async function checkWorkingFolder(typed: string): Promise<string | undefined> {
  if (!typed.trim()) return undefined
  return checkedFolder(
    typed,
    (got) =>
      `The working folder must be an absolute path, like ${process.platform === 'win32' ? 'C:\\Users\\you\\code' : '/home/you/code'} (got '${got}')`,
    'Working folder'
  )
}

/** A new agent's id: its name made safe, unique among the ids given. */
export function agentIdFor(name: string, taken: (id: string) => boolean): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'agent'
  let id = base
  for (let n = 2; taken(id); n++) id = `${base}-${n}`
  return id
}

function badName(name: string): string {
  return `'${name}' is not a valid environment variable name (letters, digits and _, not starting with a digit)`
}
