import { RequestError } from '@agentclientprotocol/sdk'
import type { AgentDefinition } from '../../../shared/agent-definition'
import { commandOf, withCommand } from '../../../shared/transport'
import type { AgentConnection } from '../connection/connection'
import { apiKeyMeta } from '../connection/quirks'
import { programToRun } from '../contract/confirmations'
import type { UserEnvironment } from '../child-processes/environment'
import { describeError, HostError, withoutFullStop } from '../contract/errors'
import type { EventBus } from '../contract/events'
import type { RequestContext } from '../contract/handlers'
import { commandLine, LoginTerminals } from './login-terminals'
import type { Records } from '../storage/records'
import { agentApiKeyKey, agentEnvKey, apiKeyLabel, type SecretStore } from '../storage/secrets'
import { problemOf } from './problems'
import { kindOf } from '../transports/kinds'
import type { AgentSupervisor } from './supervisor'

/**
 * Signing in and out of agents: the methods an agent offers (ACP
 * `authenticate`), environment-variable methods whose values go to the secret
 * store, and terminal methods, which run the agent's own login command in a
 * pseudo-terminal the user types into.
 */

export interface SignInOptions {
  records: Records
  secrets: SecretStore
  events: EventBus
  supervisor: AgentSupervisor
  /** What sign-in programs start with, before the agent's and the method's variables. */
  environment: UserEnvironment
  /** The start of the mark each sign-in program carries (see child-processes/process-tree.ts). */
  markPrefix?: string
}

export class SignIn {
  private readonly logins: LoginTerminals

  constructor(private readonly options: SignInOptions) {
    this.logins = new LoginTerminals(
      {
        output: (loginId, data) => options.events.emit('agent.login.output', { loginId, data }),
        exit: (loginId, spec, exitCode, signal) => void this.loginEnded(loginId, spec.agentId, spec.methodId, exitCode, signal)
      },
      options.markPrefix
    )
  }

  /**
   * Signs in with one of the methods the agent offers. env_var methods take the
   * variables' values, which go to the secret store and into a restarted agent's
   * environment; terminal methods name the command to run.
   */
  async authenticate(agentId: string, methodId: string, values: Record<string, string>): Promise<void> {
    const { records, supervisor } = this.options
    const definition = records.agent(agentId)
    let connection = await supervisor.ensure(definition)
    const method = connection.state.authMethods?.find((m) => m.id === methodId)
    if (!method) throw new Error(`${definition.name} offers no sign-in method '${methodId}'`)
    if (method.type === 'terminal') {
      // The spec: a terminal method is never passed to authenticate; the client runs it (agents.login.start).
      throw new Error(`${method.name} signs in from a terminal: start it with agents.login.start`)
    }
    if (method.type === 'env_var' || method.type === 'env') {
      const names = method.vars ?? []
      const missing = names.filter((name) => !values[name]?.trim())
      if (missing.length) throw new Error(`${method.name} needs ${missing.join(', ')}`)
      // Variables are given to a command the agent runs (here or on its host); a network agent's are set where its server runs.
      const command = commandOf(definition.transport)
      if (!command)
        throw new Error(
          `${method.name} sets variables of ${definition.name}'s command, but ${definition.name} runs over the network: set them where its server runs`
        )
      for (const name of names) await this.options.secrets.set(agentEnvKey(agentId, name), values[name].trim())
      await records.updateAgent(agentId, {
        transport: withCommand(definition.transport, { secretEnv: [...new Set([...(command.secretEnv ?? []), ...names])] })
      })
      // The agent reads its environment at start: restart it with the new variables.
      await supervisor.stop(agentId)
      connection = await supervisor.ensure(definition)
    }
    if (method.apiKey) {
      // Passed the way the agent reads it (authenticate's `_meta["api-key"]`, quirks.ts), and kept to be given again at each start.
      const key = values['api-key']?.trim()
      if (!key) throw new Error(`${method.name} needs an API key`)
      await connection.acp.authenticate({ methodId, _meta: apiKeyMeta(connection.state.agentInfo?.name, key) })
      await this.options.secrets.set(agentApiKeyKey(agentId, methodId), key)
      connection.state.missingSecrets = connection.state.missingSecrets?.filter((name) => name !== apiKeyLabel(method.name))
      await records.updateAgent(agentId, { apiKeySignIn: [...new Set([...(definition.apiKeySignIn ?? []), methodId])] })
      return
    }
    await connection.acp.authenticate({ methodId })
  }

  /**
   * A terminal sign-in: the agent's own command, its arguments and the
   * method's, in a pseudo-terminal the user types into. Its exit code says
   * whether it worked (loginEnded).
   */
  async startLogin(
    agentId: string,
    methodId: string,
    cols: number,
    rows: number,
    request: RequestContext
  ): Promise<{ loginId: string; command: string }> {
    const { records, supervisor } = this.options
    const definition = records.agent(agentId)
    const known = supervisor.stateOf(agentId)?.authMethods
    const methods = known ?? (await supervisor.ensure(definition)).state.authMethods ?? []
    const method = methods.find((m) => m.id === methodId)
    if (!method) throw new Error(`${definition.name} offers no sign-in method '${methodId}'`)
    if (method.type !== 'terminal') throw new Error(`${method.name} is not a terminal sign-in`)
    // The agent's own command, here: a kind that has none here says what to do instead.
    const local = kindOf(definition.transport).terminalSignIn(definition.name, definition.transport, method)
    const spec = {
      agentId,
      methodId,
      command: local.command,
      args: [...local.args, ...(method.args ?? [])],
      env: this.options.environment.forChild(local.env, await supervisor.secretEnvOf(definition), method.env),
      // Where the agent's own process starts: its command and arguments may be relative to it.
      cwd: local.cwd,
      cols,
      rows
    }
    // Its command line is the agent's own with the method's arguments, which the agent chose: the user confirms it first.
    const secrets = Object.fromEntries((local.secretEnv ?? []).map((name) => [name, 'kept'] as const))
    const program = programToRun(
      `${definition.name}'s sign-in`,
      { command: spec.command, args: spec.args, cwd: spec.cwd, env: { ...local.env, ...method.env } },
      secrets
    )
    await request.confirm({ action: `Sign in to ${definition.name} (${method.name})`, confirm: 'Start sign-in', programs: [program] })
    const loginId = await this.logins.start(spec)
    return { loginId, command: commandLine(spec) }
  }

  input(loginId: string, data: string): void {
    this.logins.write(loginId, data)
  }

  resize(loginId: string, cols: number, rows: number): void {
    this.logins.resize(loginId, cols, rows)
  }

  stopLogin(loginId: string): void {
    this.logins.stop(loginId)
  }

  async logout(agentId: string): Promise<void> {
    const { records, supervisor, secrets } = this.options
    const definition = records.agent(agentId)
    const connection = await supervisor.ensure(definition)
    if (!connection.capabilities.auth.logout) throw new Error(`${definition.name} does not support logging out (no logout capability)`)
    await connection.acp.logout()
    const command = commandOf(definition.transport)
    for (const name of command?.secretEnv ?? []) await secrets.delete(agentEnvKey(agentId, name))
    for (const methodId of definition.apiKeySignIn ?? []) await secrets.delete(agentApiKeyKey(agentId, methodId))
    if (definition.apiKeySignIn?.length) await records.updateAgent(agentId, { apiKeySignIn: [] })
    if (command?.secretEnv?.length) {
      await records.updateAgent(agentId, { transport: withCommand(definition.transport, { secretEnv: [] }) })
      await connection.stop()
    }
  }

  /** Stops every terminal sign-in (the Host is closing). */
  close(): void {
    this.logins.stopAll()
  }

  /** A terminal sign-in ended: on success the agent restarts, since agents read their credentials at start. */
  private async loginEnded(loginId: string, agentId: string, methodId: string, exitCode: number | null, signal: number | null): Promise<void> {
    const ok = exitCode === 0
    if (ok) {
      this.options.supervisor.forgetProblem(agentId)
      await this.options.supervisor.stopIfQuiet(agentId).catch(() => undefined)
    }
    this.options.events.emit('agent.login.exit', { loginId, agentId, methodId, exitCode, signal, ok })
  }
}

/**
 * ACP's auth_required (-32000), turned into an error that lists how to sign
 * in, with the problem the window shows (`mark`: where the agent's stderr was
 * when the request went out).
 */
export function authRequired(error: unknown, connection: AgentConnection, mark?: number): HostError | null {
  if (!(error instanceof RequestError) || error.code !== -32000) return null
  const methods = connection.state.authMethods ?? []
  const ways = methods.length ? ` Sign in with: ${methods.map((m) => m.name).join(', ')}.` : ''
  const missing = connection.state.missingSecrets ?? []
  const lost = missing.length
    ? `${missing.join(', ')} ${missing.length === 1 ? 'was' : 'were'} not kept across the restart (this Switchboard keeps secrets in memory only): enter ${missing.length === 1 ? 'it' : 'them'} again.`
    : ''
  // The agent's sentence goes inside ours: its full stop is ours to put (Gemini CLI ends with one).
  const reason = withoutFullStop(describeError(error))
  const found = problemOf(connection.definition, error, { connection, mark })
  const problem = found && lost ? { ...found, hint: lost } : (found ?? undefined)
  return new HostError(
    'auth_required',
    `${connection.definition.name} needs you to sign in first (${reason}).${lost ? ` ${lost}` : ''}${ways}`,
    problem
  )
}
