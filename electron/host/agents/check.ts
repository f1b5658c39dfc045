import { randomUUID } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { RequestError } from '@agentclientprotocol/sdk'
import type { AgentDefinition } from '../../../shared/agent-definition'
import { commandOf } from '../../../shared/transport'
import type { AgentCheckReport, CheckLine } from '../../../shared/registry'
import type { ClientHandlers } from '../connection/client-handlers'
import type { AgentConnection } from '../connection/connection'
import { AtomicTextFile } from '../storage/atomic-file'
import { remoteScratch, removeRemoteScratch } from '../ssh/remote-files'
import type { AgentSupervisor } from './supervisor'
import { privateFolder } from '../storage/private-files'

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
  /** The Host is closing: no check starts, and one that ends now keeps no report (the data folder is no longer ours). */
  private closed = false
  /** Aborted at close: a check under way stops asking its agent, removes what it made on the host, then stops its run. */
  private readonly closing = new AbortController()

  constructor(private readonly options: AgentChecksOptions) {
    this.dir = join(options.dataDir, 'agent-checks')
  }

  run(definition: AgentDefinition): Promise<AgentCheckReport> {
    if (this.closed) return Promise.reject(new Error('Switchboard is shutting down'))
    let check = this.running.get(definition.id)
    if (!check) {
      check = this.probe(definition).finally(() => this.running.delete(definition.id))
      this.running.set(definition.id, check)
    }
    return check
  }

  /**
   * No check starts after this, and none under way writes its report. Resolves once those under way have ended, each having
   * removed its scratch folder on an SSH host through its connection, still open (the supervisor's close stops them after).
   */
  async close(): Promise<void> {
    this.closed = true
    this.closing.abort(new Error('Switchboard is shutting down'))
    await Promise.allSettled([...this.running.values()])
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
    await privateFolder(scratch)
    const lines: CheckLine[] = []
    let connection: AgentConnection | null = null
    let scratchOnHost: string | null = null
    const { signal } = this.closing
    try {
      // In the agent's own working folder when it has one (its command or arguments may be relative to it), else the scratch folder.
      const cwd = commandOf(definition.transport)?.cwd ?? scratch
      // Not waited for past the close: the supervisor's close stops that run.
      connection = await bounded(this.options.supervisor.connectApart(definition, refusing, cwd, `${definition.id}.check`), signal, false)
      // An agent over SSH makes its sessions on its host: the scratch folder is made there (waited for even at close: its name comes back).
      if (connection.sshHost) scratchOnHost = signal.aborted ? null : await remoteScratch(connection.sshHost)
      await probeConnection(connection, scratchOnHost ?? scratch, lines, signal)
    } catch (error) {
      // A check the close cut short after its start says nothing more (its report is not kept).
      if (!signal.aborted || !lines.length)
        lines.push({ id: 'initialize', label: 'Start and initialize', announced: null, outcome: 'failed', detail: detailOf(error) })
    } finally {
      // Before its run stops: on an SSH host, through its connection. A folder that stays is said, with how to remove it.
      if (connection?.sshHost && scratchOnHost) {
        await removeRemoteScratch(connection.sshHost, scratchOnHost).catch((error: Error) =>
          lines.push({ id: 'scratch', label: 'Scratch folder on the host', announced: null, outcome: 'failed', detail: clip(error.message) })
        )
      }
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
    if (this.closed) return report
    await privateFolder(this.dir)
    await new AtomicTextFile(this.fileOf(definition.id)).write(JSON.stringify(report, null, 2))
    return report
  }
}

async function probeConnection(connection: AgentConnection, scratch: string, lines: CheckLine[], signal: AbortSignal): Promise<void> {
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
  lines.push(
    listing(
      'authMethods',
      'Sign-in methods',
      auth.map((m) => `${m.name} (${m.type})`),
      'none announced'
    )
  )

  /**
   * Runs one probe into a line; the call's result, or null when it failed. A failure of a method the agent
   * does not announce is "not offered"; one of a method that needs a conversation with history (`needsHistory`) says so.
   */
  const attempt = async <T>(
    probe: Pick<CheckLine, 'id' | 'label' | 'announced'> & { needsHistory?: boolean },
    call: () => Promise<T>,
    said: (result: T) => string
  ): Promise<T | null> => {
    const { needsHistory, ...shown } = probe
    try {
      const result = await bounded(call(), signal)
      lines.push({ ...shown, outcome: 'worked', detail: clip(said(result)) })
      return result
    } catch (error) {
      if (signal.aborted) throw error
      if (isAuthRequired(error)) lines.push({ ...shown, outcome: 'needs sign-in', detail: detailOf(error) })
      else if (shown.announced === false) lines.push({ ...shown, outcome: 'not offered', detail: `not announced; calling it: ${detailOf(error)}` })
      else if (needsHistory) {
        lines.push({
          ...shown,
          outcome: 'needs history',
          detail: clip(`works on a conversation with history, and the check sends no prompt; the agent answered: ${detailOf(error)}`)
        })
      } else lines.push({ ...shown, outcome: 'failed', detail: detailOf(error) })
      return null
    }
  }

  const created = await attempt(
    { id: 'session/new', label: 'New session', announced: null },
    () => acp.newSession({ cwd: scratch, mcpServers: [] }),
    (answer) => `session ${answer.sessionId}`
  )
  const { models, modes } = created ? listedIn(created) : {}
  const probes = sessionProbes(connection, scratch, models)
  if (!created) {
    const why = lines.at(-1)?.outcome === 'needs sign-in' ? 'needs a session: sign in first' : 'needs a session, and none could be made'
    for (const { id, label, announced } of probes) lines.push({ id, label, announced, outcome: 'not tried', detail: why })
  } else {
    for (const probe of probes) {
      // What the session lists is read from its answer, before the probes that change the model or end it.
      if (probe.id === 'session/set_model') {
        lines.push(
          listing(
            'configOptions',
            'Configuration options',
            (created.configOptions ?? []).map((o) => `${o.name}${'currentValue' in o ? ` = ${String(o.currentValue)}` : ''}`),
            'none listed',
            '; '
          ),
          listing('modes', 'Modes', modes ? [`${modes.availableModes.map((m) => m.name).join(', ')} (current: ${modes.currentModeId})`] : []),
          listing(
            'models',
            'Models (the older session/set_model way)',
            models ? [`${models.availableModels.map((m) => m.name).join(', ')} (current: ${models.currentModelId})`] : []
          )
        )
      }
      const { id, label, announced, skip, run, needsHistory } = probe
      if (skip) lines.push({ id, label, announced, outcome: 'not tried', detail: skip })
      else
        await attempt(
          { id, label, announced, needsHistory },
          () => run(created.sessionId),
          (said) => said
        )
    }
  }
  lines.push({
    id: 'logout',
    label: 'Log out',
    announced: caps.auth.logout,
    outcome: caps.auth.logout ? 'not tried' : 'not offered',
    detail: caps.auth.logout ? 'announced; not run, as it would sign you out' : 'not announced'
  })
}

interface SessionProbe extends Pick<CheckLine, 'id' | 'label' | 'announced'> {
  /** Why it is not tried even with a session (set_model when no models are listed). */
  skip?: string
  /** It works on a conversation with a prompt in it (the check's session has none): a failure says so. */
  needsHistory?: boolean
  /** Calls it on the probe's session; what it found. */
  run(sessionId: string): Promise<string>
}

/** The optional session methods, in the report's order, each tried on the probe's session whether announced or not. */
function sessionProbes({ acp, capabilities: caps }: AgentConnection, cwd: string, models: Listed['models']): SessionProbe[] {
  const mcpServers: [] = []
  return [
    {
      id: 'session/list',
      label: 'List sessions',
      announced: caps.session.list,
      run: async (sessionId) => {
        const { sessions } = await acp.listSessions({ cwd })
        const among = sessions.some((s) => s.sessionId === sessionId) ? 'the new one among them' : 'the new one not among them'
        return `${sessions.length} listed for the scratch folder, ${among}`
      }
    },
    {
      id: 'session/resume',
      label: 'Resume a session',
      announced: caps.session.resume,
      run: async (sessionId) => {
        await acp.resumeSession({ sessionId, cwd, mcpServers })
        return 'resumed the new session'
      }
    },
    {
      id: 'session/load',
      needsHistory: true,
      label: 'Load a session (replay)',
      announced: caps.loadSession,
      run: async (sessionId) => {
        await acp.loadSession({ sessionId, cwd, mcpServers })
        return 'loaded the new session'
      }
    },
    {
      id: 'session/fork',
      needsHistory: true,
      label: 'Fork a session',
      announced: caps.session.fork,
      run: async (sessionId) => {
        const fork = await acp.forkSession({ sessionId, cwd, mcpServers })
        if (caps.session.close) await acp.closeSession({ sessionId: fork.sessionId }).catch(() => undefined)
        return `forked as ${fork.sessionId}`
      }
    },
    {
      id: 'session/set_model',
      label: 'Set the model (session/set_model)',
      announced: Boolean(models),
      ...(models ? {} : { skip: 'no models listed' }),
      run: async (sessionId) => {
        const modelId = models?.currentModelId ?? ''
        await acp.setModel({ sessionId, modelId })
        return `set to ${modelId} (unchanged)`
      }
    },
    {
      id: 'session/close',
      label: 'Close a session',
      announced: caps.session.close,
      run: async (sessionId) => {
        await acp.closeSession({ sessionId })
        return 'closed the new session'
      }
    },
    {
      id: 'session/delete',
      needsHistory: true,
      label: 'Delete a session',
      announced: caps.session.delete,
      run: async (sessionId) => {
        await acp.deleteSession({ sessionId })
        return 'deleted the new session'
      }
    }
  ]
}

/** A line for what an answer lists: worked with the items, or not tried when there are none. */
function listing(id: string, label: string, items: string[], none = 'none listed', separator = ', '): CheckLine {
  return items.length
    ? { id, label, announced: true, outcome: 'worked', detail: clip(items.join(separator)) }
    : { id, label, announced: false, outcome: 'not offered', detail: none }
}

interface Listed {
  models?: { currentModelId: string; availableModels: { name: string }[] }
  modes?: { currentModeId: string; availableModes: { name: string }[] }
}

/** The modes and the older-style models a session/new answer lists, when it lists any (models are not in the stable schema). */
function listedIn(answer: object): Listed {
  const { models, modes } = answer as { models?: unknown; modes?: unknown }
  const listed: Listed = {}
  const m = models as Listed['models']
  if (m && typeof m.currentModelId === 'string' && Array.isArray(m.availableModels) && m.availableModels.length) listed.models = m
  const d = modes as Listed['modes']
  if (d && typeof d.currentModeId === 'string' && Array.isArray(d.availableModes) && d.availableModes.length) listed.modes = d
  return listed
}

/** `promise`, or a rejection once `signal` aborts, or after CALL_TIMEOUT_MS when `timed` (a later failure of `promise` is nobody's). */
function bounded<T>(promise: Promise<T>, signal: AbortSignal, timed = true): Promise<T> {
  promise.catch(() => undefined)
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(signal.reason)
    const timer = timed ? setTimeout(() => reject(new Error(`no answer within ${CALL_TIMEOUT_MS / 1000} s`)), CALL_TIMEOUT_MS) : undefined
    if (signal.aborted) abort()
    signal.addEventListener('abort', abort, { once: true })
    void promise.then(resolve, reject).finally(() => (clearTimeout(timer), signal.removeEventListener('abort', abort)))
  })
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
