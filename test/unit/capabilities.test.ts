import { describe, expect, it } from 'vitest'
import { normaliseInitialize } from '../../electron/host/connection/capabilities'

describe('capability normalisation', () => {
  it('reads sessionCapabilities.systemPrompt (unstable): an object means the agent takes a system prompt; null or absence, not', () => {
    const of = (systemPrompt: unknown) =>
      normaliseInitialize({ protocolVersion: 1, agentCapabilities: { sessionCapabilities: { systemPrompt } } }).capabilities.session.systemPrompt
    expect([of({}), of({ mode: { override: {} } }), of(null), of(undefined)]).toEqual([true, true, false, false])
  })

  it('reads the protocol version 1 shape (as Claude Code’s adapter announces it)', () => {
    const { capabilities, agentInfo, authMethods } = normaliseInitialize({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, resume: {}, close: {}, fork: {}, additionalDirectories: {}, delete: null },
        auth: { logout: {} }
      },
      agentInfo: { name: 'claude-agent-acp', title: 'Claude Agent', version: '0.101.0' },
      authMethods: [
        { id: 'claude-login', name: 'Log in with Claude', type: 'terminal' },
        { id: 'key', name: 'API key', description: 'Set ANTHROPIC_API_KEY', type: 'env' }
      ]
    })
    expect(capabilities).toEqual({
      protocolVersion: 1,
      loadSession: true,
      prompt: { image: true, audio: false, embeddedContext: true },
      mcp: { stdio: true, http: true, sse: true },
      session: { list: true, resume: true, close: true, delete: false, fork: true, additionalDirectories: true, systemPrompt: false },
      auth: { logout: true }
    })
    expect(agentInfo).toEqual({ name: 'claude-agent-acp', title: 'Claude Agent', version: '0.101.0' })
    expect(authMethods.map((m) => [m.id, m.type])).toEqual([
      ['claude-login', 'terminal'],
      ['key', 'env']
    ])
  })

  it('reads the version 2 draft shape, where a capability is an object', () => {
    const { capabilities, agentInfo } = normaliseInitialize({
      protocolVersion: 2,
      capabilities: {
        session: {
          prompt: { image: {}, audio: {}, embeddedContext: {} },
          mcp: { stdio: {}, http: {} },
          load: {},
          delete: {},
          additionalDirectories: {}
        },
        auth: { logout: {} }
      },
      info: { name: 'my-agent', title: 'My Agent', version: '1.0.0' },
      authMethods: []
    })
    expect(capabilities).toEqual({
      protocolVersion: 2,
      loadSession: true,
      prompt: { image: true, audio: true, embeddedContext: true },
      mcp: { stdio: true, http: true, sse: false },
      // The SDK's version 2 counts list, resume and close in the baseline of `session`.
      session: { list: true, resume: true, close: true, delete: true, fork: false, additionalDirectories: true, systemPrompt: false },
      auth: { logout: true }
    })
    expect(agentInfo?.title).toBe('My Agent')
  })

  it('reads version 2 as the SDK speaks it: methodId, logout with any auth method, nothing without `session`', () => {
    const announced = normaliseInitialize({
      protocolVersion: 2,
      info: { name: 'v2-agent', version: '2.0.0' },
      capabilities: { session: { fork: {} } },
      authMethods: [
        { type: 'agent', methodId: 'browser', name: 'Browser' },
        { type: 'terminal', methodId: 'cli', name: 'CLI', args: ['--login'] }
      ]
    })
    expect(announced.capabilities).toMatchObject({
      loadSession: true,
      session: { list: true, resume: true, close: true, delete: false, fork: false, additionalDirectories: false, systemPrompt: false },
      auth: { logout: true }
    })
    expect(announced.authMethods).toEqual([
      { id: 'browser', name: 'Browser', description: undefined, type: 'agent' },
      { id: 'cli', name: 'CLI', description: undefined, type: 'terminal', args: ['--login'] }
    ])
    const noSessions = normaliseInitialize({ protocolVersion: 2, info: { name: 'x', version: '1' }, capabilities: {} })
    expect(noSessions.capabilities).toMatchObject({
      loadSession: false,
      session: { list: false, resume: false, close: false },
      auth: { logout: false }
    })
  })

  it('treats absent, null and false as unsupported, and tolerates garbage', () => {
    const bare = normaliseInitialize({ protocolVersion: 1 })
    expect(bare.capabilities.loadSession).toBe(false)
    expect(bare.capabilities.session).toEqual({
      list: false,
      resume: false,
      close: false,
      delete: false,
      fork: false,
      additionalDirectories: false,
      systemPrompt: false
    })
    expect(bare.agentInfo).toBeUndefined()
    const v2Empty = normaliseInitialize({ protocolVersion: 2, capabilities: { session: {} } })
    expect(v2Empty.capabilities.mcp).toEqual({ stdio: false, http: false, sse: false })
    expect(normaliseInitialize('nonsense').capabilities.protocolVersion).toBe(0)
    expect(normaliseInitialize({ agentCapabilities: { loadSession: 'yes' }, authMethods: [42, { name: 'x' }] })).toMatchObject({
      capabilities: { loadSession: false },
      authMethods: []
    })
  })

  it("reads that an agent takes prompts mid-turn from Claude Code's _meta, and that it steers from the steering _meta, and nothing else", () => {
    const claude = normaliseInitialize({
      protocolVersion: 1,
      agentCapabilities: { loadSession: true, _meta: { claudeCode: { promptQueueing: true } } }
    })
    expect(claude.capabilities.promptQueueing).toBe(true)
    expect(claude.capabilities.steering).toBeUndefined()
    // claude-agent-acp 0.101: the steering extension in the answer's top-level _meta; steering is not a second session/prompt.
    const steering = normaliseInitialize({ protocolVersion: 1, agentCapabilities: {}, _meta: { steering: { supported: true } } })
    expect(steering.capabilities.steering).toBe(true)
    expect(steering.capabilities.promptQueueing).toBeUndefined()
    for (const meta of [undefined, { claudeCode: { promptQueueing: 'yes' } }, { claudeCode: true }, { promptQueueing: true }, { steering: {} }]) {
      const { capabilities } = normaliseInitialize({ protocolVersion: 1, agentCapabilities: { _meta: meta } })
      expect(capabilities.promptQueueing).toBeUndefined()
      expect(capabilities.steering).toBeUndefined()
    }
  })
})
