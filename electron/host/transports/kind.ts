import type { AgentDefinition } from '../../../shared/agent-definition'
import type { TransportInput } from '../../../shared/agent-requests'
import type { ProgramToRun } from '../../../shared/confirmation'
import type { AgentRuntimeState, AuthMethodView } from '../../../shared/domain'
import type { AgentCommand, AgentTransport } from '../../../shared/transport'
import type { UserEnvironment } from '../child-processes/environment'
import type { SshEndpoint } from '../ssh/endpoint'
import type { SshHosts, SshSettings } from '../ssh/options'
import type { OpenLink } from './link'

/**
 * What one transport kind owns in the Host, the whole of it: the check of
 * what the user typed, what the confirmation shows, what counts as a change
 * of what runs, the command a terminal sign-in runs, whether its command can
 * be found, and how a run of it is reached (its link). One module per kind
 * (process.ts, ssh.ts, network.ts) implements it; kinds.ts is the table the
 * rest of the Host looks a kind up in. What the window needs as well is
 * `TRANSPORT_KINDS` in shared/transport.ts.
 */
export interface TransportKindModule<T extends AgentTransport> {
  /** What the user typed for this kind, checked (throws a sentence the form shows); `previous` is the agent's transport before an edit. */
  check(input: Extract<TransportInput, { kind: T['kind'] }>, previous: AgentTransport | undefined): Promise<CheckedTransport<T>>
  /** What the confirmation shows of an agent (`name`) that runs this way. */
  program(name: string, transport: T, checked: CheckedTransport<T>): ProgramToRun
  /** Whether the checked transport changes what runs, from `before` (of the same kind). */
  changesWhatRuns(next: T, before: T, checked: CheckedTransport<T>): boolean
  /** The command a terminal sign-in runs on this computer, with the method's arguments; throws what to do instead where there is none here. */
  terminalSignIn(name: string, transport: T, method: AuthMethodView): AgentCommand
  /** For an agent that is not running: whether its command can be found (nothing where that shows only when it connects). */
  installed(definition: AgentDefinition, transport: T, environment: UserEnvironment): Promise<Pick<AgentRuntimeState, 'installed' | 'message'>>
  /** How one connection reaches the agent: what it needs of the Host, bound into its link factory. */
  plan(definition: AgentDefinition, transport: T, host: LinkHost): LinkPlan
}

/** What the user typed for a transport, checked: the transport for db.json, and the secret values for the secret store. */
export interface CheckedTransport<T extends AgentTransport = AgentTransport> {
  transport: T
  /** Secret variables' values to store, by name (those sent as null are kept as they are). */
  secretValues: Record<string, string>
  /** Secret headers' values to store, by name. */
  headerValues: Record<string, string>
}

/** What a run of an agent may need of the Host; each kind takes what it uses. */
export interface LinkHost {
  /** What agents' environments are made from, and where their commands are looked up. */
  environment: UserEnvironment
  /** The agent's secret variables, from the secret store. */
  secretEnv: Record<string, string>
  /** Its secret headers, from the secret store. */
  headers: Record<string, string>
  /** The SSH connections' sockets (and what lost ones left running), and their keep-alive. */
  ssh: { hosts: SshHosts; settings: SshSettings }
  /** Start of the mark of every process a run starts (see child-processes/process-tree.ts). */
  markPrefix?: string
}

/** How one connection reaches an agent: a new link per protocol attempt, and the host it runs on when that is another. */
export interface LinkPlan {
  open: OpenLink
  /** The host its sessions' files and terminals are on, through the last link opened (over SSH). */
  readonly sshHost?: SshEndpoint
}
