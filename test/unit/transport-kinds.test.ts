import { describe, expect, it } from 'vitest'
import {
  agentPlace,
  commandOf,
  localCommandOf,
  secretNamesOf,
  sshTargetOf,
  transportHost,
  withCommand,
  type AgentTransport
} from '../../shared/transport'

/** What each transport kind says of itself through shared/transport.ts's one table (what the window shows, what the Host asks). */

const local: AgentTransport = { kind: 'process', command: 'claude-acp', args: ['--acp'], env: {}, secretEnv: ['API_KEY'] }
const ssh: AgentTransport = { kind: 'ssh', destination: 'me@build', port: 2222, command: 'gemini', args: [], env: {}, secretEnv: ['GEMINI_KEY'] }
const network: AgentTransport = { kind: 'network', url: 'wss://agents.example.com:8443/acp', secretHeaders: ['Authorization'] }

describe('transport kinds', () => {
  it('say where the agent runs, as the window shows it', () => {
    expect(agentPlace(local)).toEqual({ remote: false })
    expect(agentPlace(ssh)).toEqual({ remote: true, host: 'me@build:2222', transport: 'SSH' })
    expect(agentPlace(network)).toEqual({ remote: true, host: 'agents.example.com:8443', transport: 'WebSocket' })
    expect(agentPlace({ kind: 'network', url: 'https://agents.example.com/acp' })).toMatchObject({ transport: 'HTTP' })
    expect(agentPlace({ kind: 'network', url: 'not a url' })).toMatchObject({ host: 'not a url' })
  })

  it('give the command each runs (here, on its host, or none) and change it only where there is one', () => {
    expect(commandOf(local)?.command).toBe('claude-acp')
    expect(commandOf(ssh)?.command).toBe('gemini')
    expect(commandOf(network)).toBeNull()
    expect(localCommandOf(local)?.command).toBe('claude-acp')
    expect(localCommandOf(ssh)).toBeNull()
    expect(localCommandOf(network)).toBeNull()
    expect(withCommand(ssh, { args: ['--acp'] })).toEqual({ ...ssh, args: ['--acp'] })
    expect(withCommand(network, { args: ['--acp'] })).toBe(network)
  })

  it('name their secrets and the SSH host they run on', () => {
    expect(secretNamesOf(local)).toEqual({ env: ['API_KEY'], headers: [] })
    expect(secretNamesOf(ssh)).toEqual({ env: ['GEMINI_KEY'], headers: [] })
    expect(secretNamesOf(network)).toEqual({ env: [], headers: ['Authorization'] })
    expect(transportHost(ssh)).toBe('me@build:2222')
    expect(sshTargetOf(ssh)).toMatchObject({ destination: 'me@build', port: 2222 })
    expect([transportHost(local), transportHost(network), sshTargetOf(network)]).toEqual([undefined, undefined, null])
  })

  it('refuse a kind they do not know with a sentence (a db.json written by a newer Switchboard)', () => {
    expect(() => agentPlace({ kind: 'socket', path: '/tmp/a.sock' } as unknown as AgentTransport)).toThrow("Unknown agent transport 'socket'")
  })
})
