import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { AgentDefinition } from '../../shared/agent-definition'
import type { AgentRuntimeState } from '../../shared/domain'
import { AgentSupervisor } from '../../electron/host/agents/supervisor'
import type { ClientHandlers } from '../../electron/host/connection/client-handlers'
import type { AgentConnection, AgentConnectionOptions } from '../../electron/host/connection/connection'
import { UserEnvironment } from '../../electron/host/child-processes/environment'
import { EventBus } from '../../electron/host/contract/events'
import { MemorySecretStore } from '../../electron/host/storage/secrets'

/**
 * The agents' idle sweep (agents/supervisor.ts): an agent quiet for `idleMs` is stopped, and the sweep that
 * finds it runs only while an agent's process does, so that a Host with no agent running wakes for nothing
 * (issue 40: nothing when nothing happens). Stand-in agent processes, fake timers.
 */

const IDLE_MS = 10 * 60_000

const definition: AgentDefinition = { id: 'a1', name: 'Quiet', transport: { kind: 'process', command: 'quiet-agent', args: [], env: {} } }

/** A stand-in for an agent's process: alive until stopped; says so through the supervisor's onState. */
function standIn(options: AgentConnectionOptions, stopped: string[]): AgentConnection {
  let alive = true
  const state: AgentRuntimeState = { agentId: definition.id, status: 'ready', stderrTail: '' }
  const connection = {
    definition,
    state,
    lastActivity: Date.now(),
    get isAlive() {
      return alive
    },
    async stop() {
      if (!alive) return
      alive = false
      stopped.push(definition.id)
      options.onState(connection, { ...state, status: 'stopped' })
    }
  } as unknown as AgentConnection
  return connection
}

let stopped: string[]
let supervisor: AgentSupervisor

beforeEach(() => {
  vi.useFakeTimers()
  stopped = []
  supervisor = new AgentSupervisor({
    dataDir: '/nonexistent/switchboard-test',
    clientVersion: 'test',
    secrets: new MemorySecretStore(),
    environment: UserEnvironment.ofProcess(),
    events: new EventBus(),
    // The stand-in agents ask the client for nothing.
    handlers: new Proxy({}, { get: () => expect.fail('no agent here asks the client anything') }) as ClientHandlers,
    connect: async (_definition, options) => standIn(options, stopped),
    idleMs: IDLE_MS,
    canStop: () => true
  })
})

afterEach(async () => {
  await supervisor.close()
  vi.useRealTimers()
})

describe('the idle sweep', () => {
  it('runs only while an agent runs: an agent left quiet is stopped, and then nothing is left to wake the Host', async () => {
    // No agent running: no timer at all.
    expect(vi.getTimerCount()).toBe(0)

    await supervisor.ensure(definition)
    expect(vi.getTimerCount()).toBe(1)
    // Quiet for less than idleMs: it runs on.
    await vi.advanceTimersByTimeAsync(IDLE_MS / 2)
    expect(stopped).toEqual([])
    // Quiet for idleMs: the next sweep (at most a minute later) stops it, and the sweep stops with it.
    await vi.advanceTimersByTimeAsync(IDLE_MS / 2 + 60_000)
    expect(stopped).toEqual(['a1'])
    expect(vi.getTimerCount()).toBe(0)

    // Started again: swept again, and stopped again when quiet.
    await supervisor.ensure(definition)
    expect(vi.getTimerCount()).toBe(1)
    await vi.advanceTimersByTimeAsync(IDLE_MS + 60_000)
    expect(stopped).toEqual(['a1', 'a1'])
    expect(vi.getTimerCount()).toBe(0)
  })

  it('stops when the Host closes', async () => {
    await supervisor.ensure(definition)
    await supervisor.close()
    expect(stopped).toEqual(['a1'])
    // The agent's last state goes out to the windows (the event bus's next batch); after it, nothing is waiting.
    await vi.advanceTimersByTimeAsync(1000)
    expect(vi.getTimerCount()).toBe(0)
  })
})
