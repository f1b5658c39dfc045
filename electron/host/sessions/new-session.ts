import type { Project, SessionRecord } from '../../../shared/domain'
import { agentFitsProject, type AgentDefinition } from '../../../shared/agent-definition'
import { transportHost } from '../../../shared/transport'
import type { SessionPreset } from '../../../shared/presets'
import type { AgentConnection } from '../connection/connection'
import { agentFailure, type Asked } from '../agents/problems'
import { authRequired } from '../agents/sign-in'
import { HostError } from '../contract/errors'
import { assertDirectory } from '../local-files/folders'
import { serversForAgent, type PreparedServer } from '../mcp/acp-servers'
import { SshError } from '../ssh/endpoint'
import { checkRemoteFolder } from '../ssh/remote-files'
import type { SessionDeps } from './connector'
import type { Copied } from './registry'
import { applyPresetSettings, presetMode } from './preset-settings'
import { directoriesFor, sessionStateFrom, systemPromptFor, systemPromptLeftOut } from './session-parts'
import { applyStartingMode } from './starting-mode'

/**
 * A new session in its agent (lifecycle.ts creates, forks and continues
 * sessions through these): the folder checked, `session/new` asked, and the
 * session the agent made registered, linked and saved.
 */

/**
 * The agent can work in the project (where it runs: agentFitsProject), and
 * the folder is there: on this computer, or on the project's host (when the
 * host cannot be reached, starting the agent says why, with what to do).
 */
export async function assertFolder(deps: SessionDeps, project: Project, definition: AgentDefinition, cwd: string): Promise<void> {
  if (!agentFitsProject(definition, project)) {
    const agentAt = `runs on ${transportHost(definition.transport) ?? 'this computer'}`
    throw new Error(
      `${definition.name} ${agentAt}, and ${project.name} is ${project.sshHost ? `on ${project.sshHost}` : 'on this computer'}: choose an agent that runs where the project is`
    )
  }
  if (!project.sshHost) return assertDirectory(cwd)
  await checkRemoteFolder(deps.supervisor.sshEndpoint(definition), cwd, 'Project folder').catch((error: unknown) => {
    if (!(error instanceof SshError)) throw error
  })
}

/**
 * `session/new` in a folder, the agent started if it is not running;
 * auth_required comes back as the error that lists how to sign in.
 */
export async function newSessionIn(
  deps: SessionDeps,
  definition: AgentDefinition,
  cwd: string,
  prepared: PreparedServer[],
  additionalDirectories: string[],
  systemPrompt?: string
) {
  const { supervisor } = deps
  const asked: Asked = {}
  try {
    const connection = await supervisor.ensure(definition)
    asked.connection = connection
    asked.mark = connection.stderrMark()
    const servers = serversForAgent(prepared, connection.capabilities, definition.name)
    const response = await connection.acp
      .newSession({
        cwd,
        mcpServers: servers.mcpServers,
        ...directoriesFor(connection, additionalDirectories),
        ...systemPromptFor(connection, systemPrompt)
      })
      .catch(async (error: unknown) => {
        // An agent that died answering: how it ended is part of what happened.
        await connection.settle()
        throw authRequired(error, connection, asked.mark) ?? error
      })
    supervisor.sessionStarted(definition.id)
    return { connection, servers, response, mark: asked.mark }
  } catch (error) {
    const failure = agentFailure(definition, error, asked)
    if (failure instanceof HostError && failure.problem) supervisor.sessionFailed(failure.problem)
    throw failure
  }
}

/** A session the agent has just created: in memory and linked, its history copied (a fork's), the answer's state kept, saved. */
export async function registerSession(
  deps: SessionDeps,
  record: SessionRecord,
  connection: AgentConnection,
  answer: unknown,
  /** The conversation it starts with (read as it is copied: a long one is never in memory whole). */
  history: Iterable<Copied> | AsyncIterable<Copied>,
  /** Where the agent's stderr was before it was asked for the session. */
  mark?: number,
  preset?: SessionPreset
): Promise<SessionRecord> {
  const { records, registry } = deps
  const live = registry.create(record)
  // Copied before the agent's updates for the new session are routed to it (those that come meanwhile wait, in order).
  await registry.copyIn(live, history)
  registry.attach(live, connection)
  const state = sessionStateFrom(answer)
  if (state) registry.append(live, state)
  const modeNotApplied = preset ? presetMode(live, record, preset, connection.definition.name) : null
  await applyStartingMode(live, connection, { records, registry })
  if (preset) await applyPresetSettings(live, connection, preset, { registry, notApplied: modeNotApplied ? [modeNotApplied] : [] })
  registry.setState(record.id, { status: 'ready', error: undefined })
  await deps.mcpRun?.attached(record.id, record.mcpServers ?? [], connection, records.agent(record.agentId), record.cwd, mark)
  await records.addSessions(record)
  return record
}

/** The project's instructions, then the preset's; undefined when neither has any. */
export function joinedPrompt(...parts: (string | undefined)[]): string | undefined {
  const text = parts
    .map((p) => p?.trim())
    .filter(Boolean)
    .join('\n\n')
  return text || undefined
}

/** What the record keeps of a system prompt: the one sent, or why none was. */
export function systemPromptOf(
  connection: AgentConnection,
  definition: AgentDefinition,
  text: string | undefined
): Pick<SessionRecord, 'systemPrompt' | 'systemPromptLeftOut'> {
  if (!text) return {}
  return connection.capabilities.session.systemPrompt ? { systemPrompt: text } : { systemPromptLeftOut: systemPromptLeftOut(definition.name) }
}
