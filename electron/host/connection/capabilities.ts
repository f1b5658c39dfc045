import type { AgentCapabilities, AgentInfo, AuthMethodView } from '../../../shared/domain'

/**
 * The one place that reads what an agent announced in `initialize`. Two shapes
 * exist: protocol version 1 (`agentCapabilities.loadSession`,
 * `promptCapabilities`, `mcpCapabilities`, `sessionCapabilities.*`, `auth`)
 * and the version 2 draft (`capabilities.session.{prompt,mcp,load,...}`,
 * `capabilities.auth`, `info`), where a capability is an object when supported.
 * Both become one AgentCapabilities; anything absent is unsupported.
 *
 * In version 2 as the SDK (2.4) has it, announcing `session` at all means the
 * baseline methods, which include session/list, session/resume and
 * session/close; there is no session/load, and a resume that replays from the
 * start does its work, so `loadSession` follows `session` too. Auth methods
 * are named by `methodId`, and a non-empty list means auth/login and
 * auth/logout both exist.
 */

export interface NormalisedInitialize {
  capabilities: AgentCapabilities
  agentInfo?: AgentInfo
  authMethods: AuthMethodView[]
}

type Json = Record<string, unknown>

export function normaliseInitialize(response: unknown): NormalisedInitialize {
  const r = asObject(response)
  return withV2Logout(readInitialize(r), r)
}

function readInitialize(r: Json): NormalisedInitialize {
  const protocolVersion = typeof r.protocolVersion === 'number' ? r.protocolVersion : 0
  const capabilities = 'capabilities' in r && !('agentCapabilities' in r) ? fromV2(asObject(r.capabilities)) : fromV1(asObject(r.agentCapabilities))
  return {
    capabilities: {
      protocolVersion,
      ...capabilities,
      ...(takesPromptsMidTurn(r) ? { promptQueueing: true } : {}),
      ...(steers(r) ? { steering: true } : {})
    },
    agentInfo: info(r.agentInfo ?? r.info),
    authMethods: Array.isArray(r.authMethods) ? r.authMethods.flatMap(authMethod) : []
  }
}

/**
 * Whether the agent takes a second `session/prompt` while a turn runs. Claude
 * Code announced it in its capabilities' `_meta` (`claudeCode.promptQueueing:
 * true`). The protocol itself has no such capability yet.
 */
function takesPromptsMidTurn(r: Json): boolean {
  return metasOf(r).some((meta) => asObject(meta.claudeCode).promptQueueing === true)
}

/** Whether the agent takes `_session/steering` (`_meta.steering.supported`, in the answer or its capabilities). */
function steers(r: Json): boolean {
  return metasOf(r).some((meta) => asObject(meta.steering).supported === true)
}

function metasOf(r: Json): Json[] {
  const capabilities = asObject(r.agentCapabilities ?? r.capabilities)
  return [asObject(capabilities._meta), asObject(r._meta)]
}

/** Version 2: a non-empty authMethods list means auth/logout exists (see above). */
function withV2Logout(normalised: NormalisedInitialize, response: Json): NormalisedInitialize {
  if ('capabilities' in response && !('agentCapabilities' in response) && normalised.authMethods.length > 0) {
    normalised.capabilities.auth.logout = true
  }
  return normalised
}

function fromV1(c: Json): Omit<AgentCapabilities, 'protocolVersion'> {
  const prompt = asObject(c.promptCapabilities)
  const mcp = asObject(c.mcpCapabilities)
  const session = asObject(c.sessionCapabilities)
  return {
    loadSession: c.loadSession === true,
    prompt: { image: prompt.image === true, audio: prompt.audio === true, embeddedContext: prompt.embeddedContext === true },
    // Every ACP agent must accept stdio MCP servers in version 1.
    mcp: { stdio: true, http: mcp.http === true, sse: mcp.sse === true },
    session: sessionMethods(session),
    auth: { logout: present(asObject(c.auth).logout) }
  }
}

function fromV2(c: Json): Omit<AgentCapabilities, 'protocolVersion'> {
  const sessions = present(c.session)
  const session = asObject(c.session)
  const prompt = asObject(session.prompt)
  const mcp = asObject(session.mcp)
  const methods = sessionMethods(session)
  return {
    loadSession: present(session.load) || sessions,
    prompt: { image: present(prompt.image), audio: present(prompt.audio), embeddedContext: present(prompt.embeddedContext) },
    mcp: { stdio: present(mcp.stdio), http: present(mcp.http), sse: present(mcp.sse) },
    // The baseline of the session surface: list, resume and close. session/fork is only in the SDK's
    // unstable version 2 set, which Switchboard does not speak: an agent announcing it cannot be asked.
    // The system prompt is only in version 1's unstable set, which the version 2 translation does not carry.
    session: {
      ...methods,
      list: methods.list || sessions,
      resume: methods.resume || sessions,
      close: methods.close || sessions,
      fork: false,
      systemPrompt: false
    },
    auth: { logout: present(asObject(c.auth).logout) }
  }
}

/** The optional session methods: the same names in both shapes. */
function sessionMethods(session: Json): AgentCapabilities['session'] {
  return {
    list: present(session.list),
    resume: present(session.resume),
    close: present(session.close),
    delete: present(session.delete),
    fork: present(session.fork),
    additionalDirectories: present(session.additionalDirectories),
    systemPrompt: present(session.systemPrompt)
  }
}

/** A capability is announced by `true` or by an object (`{}` counts); null, false or absence mean no. */
function present(value: unknown): boolean {
  return value === true || (typeof value === 'object' && value !== null)
}

function asObject(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {}
}

function info(value: unknown): AgentInfo | undefined {
  const v = asObject(value)
  if (typeof v.name !== 'string') return undefined
  return {
    name: v.name,
    title: typeof v.title === 'string' ? v.title : undefined,
    version: typeof v.version === 'string' ? v.version : undefined
  }
}

function authMethod(value: unknown): AuthMethodView[] {
  const m = asObject(value)
  // Version 1 names a method `id`, the version 2 draft `methodId`.
  const id = typeof m.id === 'string' ? m.id : typeof m.methodId === 'string' ? m.methodId : null
  if (id === null) return []
  const view: AuthMethodView = {
    id,
    name: typeof m.name === 'string' ? m.name : id,
    description: typeof m.description === 'string' ? m.description : undefined,
    type: typeof m.type === 'string' ? m.type : 'agent'
  }
  if (Array.isArray(m.vars)) view.vars = m.vars.flatMap((v) => (typeof asObject(v).name === 'string' ? [asObject(v).name as string] : []))
  if (Array.isArray(m.args)) view.args = m.args.filter((a): a is string => typeof a === 'string')
  const env = asObject(m.env)
  const envEntries = Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string')
  if (envEntries.length) view.env = Object.fromEntries(envEntries)
  const meta = asObject(m._meta)
  if (Object.keys(meta).length) {
    view.meta = meta
    const apiKey = meta['api-key']
    if (apiKey && typeof apiKey === 'object') {
      const provider = asObject(apiKey).provider
      view.apiKey = typeof provider === 'string' ? { provider } : {}
    }
  }
  return [view]
}
