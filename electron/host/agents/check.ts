import { randomUUID } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { RequestError } from '@agentclientprotocol/sdk'
import type { AgentDefinition } from '../../../shared/domain'
import type { AgentCheckReport, CheckLine, CheckOutcome } from '../../../shared/registry'
import type { ClientHandlers } from '../agent/client-handlers'
import type { AgentConnection } from '../agent/connection'
import { AtomicTextFile } from '../atomic-file'
import type { AgentSupervisor } from './supervisor'

/**
 * What an agent really does, found by asking it: a run of its own (apart from
 * the one sessions use) in a scratch folder, no prompt sent, so no tokens
 * spent. Each optional method is tried whether or not it was announced: the
 * registry's own matrix shows agents that answer what they do not announce,
 * and the reverse. `logout` is only read from the announcement (running it
 * would sign the user out). The report is kept per agent in the data folder
 * (`agent-checks/<agentId>.json`).
 */

const CALL_TIMEOUT_MS = 20_000
const DETAIL_LIMIT = 600

/** The client side of a check: it answers nothing an agent might ask mid-probe, and says why. */
const refusing: ClientHandlers = {
  sessionUpdate: () => undefined,
  readTextFile: async () => refuse(),
  writeTextFile: async () => refuse(),
  requestPermission: async () => ({ outcome: { outcome: 'cancelled' } }),
  elicit: async () => ({ action: 'cancel' }),
  createTerminal: async () => refuse(),
  terminalOutput: async () => refuse(),
  waitForTerminalExit: async () => refuse(),
  killTerminal: async () => refuse(),
  releaseTerminal: async () => refuse()
}

function refuse(): never {
  throw new RequestError(-32603, 'Switchboard is only checking what this agent announces; it shares no files or terminals during a check')
}

export interface AgentChecksOptions {
  dataDir: string
  supervisor: AgentSupervisor
}

export class AgentChecks {
  private readonly dir: string
  /** One check per agent at a time: a second caller gets the first's report. */
  private readonly running = new Map<string, Promise<AgentCheckReport>>()

  constructor(private readonly options: AgentChecksOptions) {
    this.dir = join(options.dataDir, 'agent-checks')
  }

  run(definition: AgentDefinition): Promise<AgentCheckReport> {
    let check = this.running.get(definition.id)
    if (!check) {
      check = this.probe(definition).finally(() => this.running.delete(definition.id))
      this.running.set(definition.id, check)
    }
    return check
  }

  /** Every report kept. */
  async all(agentIds: string[]): Promise<AgentCheckReport[]> {
    const reports = await Promise.all(agentIds.map((id) => this.read(id)))
    return reports.filter((r): r is AgentCheckReport => r !== null)
  }

  async forget(agentId: string): Promise<void> {
    await fs.rm(this.fileOf(agentId), { force: true })
  }

  private async read(agentId: string): Promise<AgentCheckReport | null> {
    try {
      return JSON.parse(await fs.readFile(this.fileOf(agentId), 'utf8')) as AgentCheckReport
    } catch {
      return null
    }
  }

  private fileOf(agentId: string): string {
    return join(this.dir, `${agentId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`)
  }

  private async probe(definition: AgentDefinition): Promise<AgentCheckReport> {
    const started = Date.now()
    const scratch = join(this.options.dataDir, 'tmp', `check-${randomUUID()}`)
    await fs.mkdir(scratch, { recursive: true })
    const lines: CheckLine[] = []
    let connection: AgentConnection | null = null
    try {
      connection = await this.options.supervisor.connectApart(definition, refusing, scratch, `${definition.id}.check`)
      await probeConnection(connection, scratch, lines)
    } catch (error) {
      lines.push({ id: 'initialize', label: 'Start and initialize', announced: null, outcome: 'failed', detail: detailOf(error) })
    } finally {
      if (connection) await this.options.supervisor.stopApart(connection)
      await fs.rm(scratch, { recursive: true, force: true }).catch(() => undefined)
    }
    const state = connection?.state
    const report: AgentCheckReport = {
      agentId: definition.id,
      agentName: definition.name,
      agentVersion: state?.agentInfo?.version ?? definition.origin?.version ?? null,
      ...(definition.origin ? { registryVersion: definition.origin.version } : {}),
      ...(state?.protocolVersion !== undefined ? { protocolVersion: state.protocolVersion } : {}),
      checkedAt: new Date().toISOString(),
      durationMs: Date.now() - started,
      lines
    }
    await fs.mkdir(this.dir, { recursive: true })
    await new AtomicTextFile(this.fileOf(definition.id)).write(JSON.stringify(report, null, 2))
    return report
  }
}

async function probeConnection(connection: AgentConnection, scratch: string, lines: CheckLine[]): Promise<void> {
  const { state, capabilities: caps, acp } = connection
  const info = state.agentInfo
  const auth = state.authMethods ?? []
  lines.push({
    id: 'initialize',
    label: 'Start and initialize',
    announced: null,
    outcome: 'worked',
    detail: [
      `protocol version ${caps.protocolVersion}`,
      info ? `agent ${info.title ?? info.name}${info.version ? ` ${info.version}` : ''}` : 'no agentInfo',
      `prompt content: text${caps.prompt.image ? ', image' : ''}${caps.prompt.audio ? ', audio' : ''}${caps.prompt.embeddedContext ? ', embedded context' : ''}`,
      `MCP: stdio${caps.mcp.http ? ', http' : ''}${caps.mcp.sse ? ', sse' : ''}`,
      state.protocolNote ?? ''
    ]
      .filter(Boolean)
      .join('; ')
  })
  lines.push({
    id: 'authMethods',
    label: 'Sign-in methods',
    announced: auth.length > 0,
    outcome: auth.length > 0 ? 'worked' : 'not tried',
    detail: auth.length ? auth.map((m) => `${m.name} (${m.type})`).join(', ') : 'none announced'
  })

  const tried = async (id: string, label: string, announced: boolean | null, call: () => Promise<string>): Promise<boolean> => {
    try {
      lines.push({ id, label, announced, outcome: 'worked', detail: clip(await withTimeout(call())) })
      return true
    } catch (error) {
      const outcome: CheckOutcome = isAuthRequired(error) ? 'needs sign-in' : 'failed'
      lines.push({ id, label, announced, outcome, detail: detailOf(error) })
      return false
    }
  }

  let sessionId: string | null = null
  let listed: Awaited<ReturnType<typeof acp.newSession>> | null = null
  await tried('session/new', 'New session', null, async () => {
    listed = await acp.newSession({ cwd: scratch, mcpServers: [] })
    sessionId = listed.sessionId
    return `session ${sessionId}`
  })
  const optional: [string, string, boolean][] = [
    ['session/list', 'List sessions', caps.session.list],
    ['session/resume', 'Resume a session', caps.session.resume],
    ['session/load', 'Load a session (replay)', caps.loadSession],
    ['session/fork', 'Fork a session', caps.session.fork],
    ['session/set_model', 'Set the model (session/set_model)', false],
    ['session/close', 'Close a session', caps.session.close],
    ['session/delete', 'Delete a session', caps.session.delete]
  ]
  if (!sessionId || !listed) {
    const why = lines.at(-1)?.outcome === 'needs sign-in' ? 'needs a session: sign in first' : 'needs a session, and none could be made'
    for (const [id, label, announced] of optional) lines.push({ id, label, announced, outcome: 'not tried', detail: why })
  } else {
    const id: string = sessionId
    const answer: Awaited<ReturnType<typeof acp.newSession>> = listed
    await tried('session/list', 'List sessions', caps.session.list, async () => {
      const { sessions } = await acp.listSessions({ cwd: scratch })
      return `${sessions.length} listed for the scratch folder${sessions.some((s) => s.sessionId === id) ? ', the new one among them' : ', the new one not among them'}`
    })
    await tried('session/resume', 'Resume a session', caps.session.resume, async () => {
      await acp.resumeSession({ sessionId: id, cwd: scratch, mcpServers: [] })
      return 'resumed the new session'
    })
    await tried('session/load', 'Load a session (replay)', caps.loadSession, async () => {
      await acp.loadSession({ sessionId: id, cwd: scratch, mcpServers: [] })
      return 'loaded the new session'
    })
    await tried('session/fork', 'Fork a session', caps.session.fork, async () => {
      const fork = await acp.forkSession({ sessionId: id, cwd: scratch, mcpServers: [] })
      if (caps.session.close) await acp.closeSession({ sessionId: fork.sessionId }).catch(() => undefined)
      return `forked as ${fork.sessionId}`
    })
    const { models, modes } = listedIn(answer)
    const options = answer.configOptions ?? []
    lines.push({
      id: 'configOptions',
      label: 'Configuration options',
      announced: options.length > 0,
      outcome: options.length > 0 ? 'worked' : 'not tried',
      detail: options.length
        ? clip(options.map((o) => `${o.name}${'currentValue' in o ? ` = ${String(o.currentValue)}` : ''}`).join('; '))
        : 'none listed'
    })
    lines.push({
      id: 'modes',
      label: 'Modes',
      announced: Boolean(modes?.availableModes.length),
      outcome: modes?.availableModes.length ? 'worked' : 'not tried',
      detail: modes?.availableModes.length
        ? clip(`${modes.availableModes.map((m) => m.name).join(', ')} (current: ${modes.currentModeId})`)
        : 'none listed'
    })
    lines.push({
      id: 'models',
      label: 'Models (the older session/set_model way)',
      announced: Boolean(models?.availableModels.length),
      outcome: models?.availableModels.length ? 'worked' : 'not tried',
      detail: models?.availableModels.length
        ? clip(`${models.availableModels.map((m) => m.name).join(', ')} (current: ${models.currentModelId})`)
        : 'none listed'
    })
    if (models?.availableModels.length) {
      await tried('session/set_model', 'Set the model (session/set_model)', true, async () => {
        await acp.setModel({ sessionId: id, modelId: models.currentModelId })
        return `set to ${models.currentModelId} (unchanged)`
      })
    } else {
      lines.push({
        id: 'session/set_model',
        label: 'Set the model (session/set_model)',
        announced: false,
        outcome: 'not tried',
        detail: 'no models listed'
      })
    }
    await tried('session/close', 'Close a session', caps.session.close, async () => {
      await acp.closeSession({ sessionId: id })
      return 'closed the new session'
    })
    await tried('session/delete', 'Delete a session', caps.session.delete, async () => {
      await acp.deleteSession({ sessionId: id })
      return 'deleted the new session'
    })
  }
  lines.push({
    id: 'logout',
    label: 'Log out',
    announced: caps.auth.logout,
    outcome: 'not tried',
    detail: caps.auth.logout ? 'announced; not run, as it would sign you out' : 'not announced'
  })
}

interface Listed {
  models?: { currentModelId: string; availableModels: { name: string }[] }
  modes?: { currentModeId: string; availableModes: { name: string }[] }
}

/** The modes and the older-style models a session/new answer lists (models are not in the stable schema). */
function listedIn(answer: object): Listed {
  const { models, modes } = answer as { models?: unknown; modes?: unknown }
  const listed: Listed = {}
  const m = models as Listed['models']
  if (m && typeof m.currentModelId === 'string' && Array.isArray(m.availableModels)) listed.models = m
  const d = modes as Listed['modes']
  if (d && typeof d.currentModeId === 'string' && Array.isArray(d.availableModes)) listed.modes = d
  return listed
}

function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CALL_TIMEOUT_MS / 1000} s`)), CALL_TIMEOUT_MS)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

function isAuthRequired(error: unknown): boolean {
  return (error as { code?: unknown })?.code === -32000
}

/** An error as the report shows it: the message, the JSON-RPC code, and the data the agent sent. */
function detailOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown })?.code
  const data = (error as { data?: unknown })?.data
  let text = typeof code === 'number' ? `${message} (${code})` : message
  if (data !== undefined && data !== null) {
    const shown = typeof data === 'string' ? data : JSON.stringify(data)
    if (shown && !message.includes(shown)) text += `: ${shown}`
  }
  return clip(text)
}

function clip(text: string): string {
  return text.length > DETAIL_LIMIT ? `${text.slice(0, DETAIL_LIMIT)}…` : text
}
