import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { scriptedAgentCommand } from '../agent/spawn'
import { allowCommands, confirmEverything, entriesOf, fold, isProcessRunning, removeDir, tempDir } from '../helpers'
import { Host as HostClass } from '../../electron/host/host'
import { heapPeak, report, retainedHeapMB } from './figures'

/**
 * Agents that misbehave: garbage on stdout, a 10 MB line, no answer to
 * initialize, a flood of updates, a tree of processes that tries to outlive
 * them. Each is bounded, the Host keeps answering, and every process the
 * agent started is gone when it ends or the app quits.
 */

let root: string
let stateDir: string
let projectDir: string
let host: Host
let projectId: string
const messages: { direction: string; message: unknown }[] = []

beforeEach(async () => {
  root = await tempDir('hostile')
  stateDir = join(root, 'agent-state')
  projectDir = join(root, 'project')
  await mkdir(projectDir, { recursive: true })
  await mkdir(stateDir, { recursive: true })
  messages.length = 0
  host = await open()
  projectId = (await host.request('projects.add', { cwd: projectDir })).id
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

function open(options: { initializeTimeoutMs?: number; cancelGraceMs?: number } = {}): Promise<Host> {
  return HostClass.open({
    dataDir: join(root, 'data'),
    version: 'test',
    confirmCommand: confirmEverything,
    presets: [],
    initializeTimeoutMs: options.initializeTimeoutMs ?? 20_000,
    cancelGraceMs: options.cancelGraceMs,
    agentIdleMs: 0,
    // Only what the Host sends: keeping every message of a flood would measure the test, not the Host.
    onAgentMessage: (_agentId, direction, message) => direction === 'out' && messages.push({ direction, message })
  })
}

/** The scripted agent, started through a shell that writes its pid first (exec keeps the pid). */
async function addAgent(env: Record<string, string> = {}, name = 'Hostile'): Promise<{ agentId: string; pidFile: string }> {
  const { command, args } = scriptedAgentCommand()
  const pidFile = join(root, `${name}.pid`)
  const agent = await host.request('agents.add', {
    name,
    transport: {
      kind: 'process',
      command: '/bin/sh',
      args: ['-c', `echo $$ > '${pidFile}'; exec "$0" "$@"`, command, ...args],
      env: { SCRIPTED_AGENT_STATE_DIR: stateDir, ...env }
    }
  })
  return { agentId: agent.id, pidFile }
}

async function pidOf(file: string): Promise<number> {
  return Number((await readFile(file, 'utf8')).trim())
}

/** The Host answers its cheapest requests; returns how long each round took (a figure, not a pass mark). */
async function probe(rounds: number): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    await host.request('app.info', {})
    await host.request('sessions.list', {})
    await host.request('agents.states', {})
    times.push(performance.now() - started)
  }
  return times
}

function lastAssistantText(records: Parameters<typeof fold>[0]): string {
  const entries = entriesOf(fold(records), 'assistant')
  return (entries.at(-1) as { text: string } | undefined)?.text ?? ''
}

describe.skipIf(process.platform === 'win32')('hostile agents', () => {
  it('garbage on stdout is logged and dropped, even a line that never ends, and the turn goes on', async () => {
    const { agentId } = await addAgent()
    const record = await host.request('sessions.new', { projectId, agentId })
    const heapBefore = retainedHeapMB()
    const peak = heapPeak()
    const garbage = Array.from({ length: 300 }, () => '/garbage').join('\n')
    // 300 garbage lines, then 100 MB of garbage in one line: nothing of it is kept or answered.
    const result = await host.request('sessions.prompt', { id: record.id, text: `${garbage}\n/endless-garbage 104857600\n/say still here` })
    expect(result.stopReason).toBe('end_turn')
    const peakAboveStart = peak.stop()
    const heapAfter = retainedHeapMB()
    const snapshot = await host.request('sessions.open', { id: record.id })
    expect(lastAssistantText(snapshot.records)).toBe('after the garbagestill here')
    // Nothing was answered to the agent for its garbage (no parse-error replies to fill its stdin).
    const parseErrors = messages.filter((m) => m.direction === 'out' && (m.message as { error?: { code?: number } }).error?.code === -32700)
    expect(parseErrors).toHaveLength(0)
    const log = await readFile(join(root, 'data', 'logs', `${agentId}.log`), 'utf8')
    expect(log).toContain('ignored a line on stdout that is not JSON-RPC: this is not json\n')
    expect(log.match(/ignored a line on stdout/g)).toHaveLength(100)
    report('hostile.garbage', {
      garbageLines: 301,
      garbageBytes: 104857600 + 300 * 17,
      peakHeapAboveStartMB: peakAboveStart,
      retainedHeapGrowthMB: Math.round((heapAfter - heapBefore) * 10) / 10
    })
  })

  it('a 10 MB line stops the agent with a clear message; the session continues with a fresh agent', async () => {
    const { agentId, pidFile } = await addAgent()
    const record = await host.request('sessions.new', { projectId, agentId })
    const pid = await pidOf(pidFile)
    await expect(host.request('sessions.prompt', { id: record.id, text: '/say before\n/hugeline 10485760' })).rejects.toThrow(
      /Agent 'Hostile' sent a message longer than 8 MB \(\d+ bytes and counting\) on stdout, which Switchboard does not accept; it was stopped/
    )
    await expect.poll(() => isProcessRunning(pid)).toBe(false)
    const state = (await host.request('agents.states', {})).find((s) => s.agentId === agentId)
    expect(state).toMatchObject({ status: 'error', message: expect.stringContaining('longer than 8 MB') })
    const snapshot = await host.request('sessions.open', { id: record.id })
    expect(entriesOf(fold(snapshot.records), 'error').map((e) => (e as { message: string }).message)).toEqual([
      expect.stringContaining('longer than 8 MB')
    ])
    expect(lastAssistantText(snapshot.records)).toBe('before')
    // The next message starts the agent again and loads the session.
    expect((await host.request('sessions.prompt', { id: record.id, text: 'again' })).stopReason).toBe('end_turn')
    expect(lastAssistantText((await host.request('sessions.open', { id: record.id })).records)).toBe('You said: again')
  })

  it('an agent that never answers initialize is given up after the timeout, with a message, and is gone', async () => {
    await host.close()
    host = await open({ initializeTimeoutMs: 1500 })
    const { agentId, pidFile } = await addAgent({ SCRIPTED_AGENT_INIT: 'hang' }, 'Silent')
    await expect(host.request('sessions.new', { projectId, agentId })).rejects.toThrow("Agent 'Silent' did not answer initialize within 1.5 s")
    const pid = await pidOf(pidFile)
    await expect.poll(() => isProcessRunning(pid)).toBe(false)
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agentId)).toMatchObject({ status: 'error' })
  })

  it('an agent that ignores a cancel is stopped after the grace period, and the session is free again', async () => {
    await host.close()
    host = await open({ cancelGraceMs: 800 })
    const { agentId, pidFile } = await addAgent({}, 'Stubborn')
    const record = await host.request('sessions.new', { projectId, agentId })
    const pid = await pidOf(pidFile)
    const turn = host.request('sessions.prompt', { id: record.id, text: '/say working\n/ignore-cancel 600000' })
    await expect.poll(async () => lastAssistantText((await host.request('sessions.open', { id: record.id })).records)).toBe('working')
    await host.request('sessions.cancel', { id: record.id })
    await expect(turn).rejects.toThrow(
      'Stubborn did not end the turn within 0.8 s of being asked to cancel, so it was stopped. The conversation so far is kept; send again to restart the agent and continue.'
    )
    await expect.poll(() => isProcessRunning(pid)).toBe(false)
    expect((await host.request('sessions.open', { id: record.id })).state.status).not.toBe('running')
    expect((await host.request('sessions.prompt', { id: record.id, text: 'hello again' })).stopReason).toBe('end_turn')
  })

  /**
   * Floods at `rate` updates a second until `total` have arrived, asking the
   * Host its cheapest questions all along; then checks every update was kept,
   * in order, and delivered to the window.
   */
  async function flood(rate: number, total: number, name: string): Promise<void> {
    const { agentId } = await addAgent()
    const record = await host.request('sessions.new', { projectId, agentId })
    let received = 0
    let batches = 0
    host.events.subscribe((events) => {
      batches++
      for (const event of events) if (event.type === 'session.records' && event.payload.id === record.id) received += event.payload.records.length
    })
    const stopFile = join(root, 'stop-flood')
    const heapBefore = retainedHeapMB()
    const peak = heapPeak()
    const lag = monitorEventLoopDelay({ resolution: 5 })
    lag.enable()
    const turn = host.request('sessions.prompt', { id: record.id, text: `/flood ${rate} ${stopFile}` })
    await expect.poll(() => received, { timeout: 30_000 }).toBeGreaterThan(100)
    // While it floods: the cheap requests, and opening the conversation as the window would.
    const latencies: number[] = []
    let opens = 0
    while (received < total) {
      latencies.push(...(await probe(1)))
      if (latencies.length % 20 === 0) {
        expect((await host.request('sessions.open', { id: record.id, tail: 400 })).records.length).toBeGreaterThan(0)
        opens++
      }
    }
    const receivedWhileProbing = received
    lag.disable()
    await writeFile(stopFile, '')
    expect((await turn).stopReason).toBe('end_turn')
    const peakAboveStart = peak.stop()
    const heapAfter = retainedHeapMB()

    const snapshot = await host.request('sessions.open', { id: record.id })
    const summary = lastAssistantText(snapshot.records)
    const [, sent, seconds] = /^flooded (\d+) updates in ([\d.]+) s$/.exec(summary) ?? []
    expect(Number(sent)).toBeGreaterThanOrEqual(total)
    const flooded = snapshot.records.flatMap((r) =>
      r.t === 'update' && r.update.sessionUpdate === 'agent_message_chunk' && r.update.messageId === 'flood' && r.update.content.type === 'text'
        ? [r.update.content.text]
        : []
    )
    expect(flooded.length).toBe(Number(sent))
    expect(flooded.every((text, i) => text === `f${i} `)).toBe(true)
    host.events.flush()
    expect(received).toBeGreaterThanOrEqual(Number(sent))
    report(name, {
      askedPerSecond: rate,
      updatesSent: Number(sent),
      seconds: Number(seconds),
      achievedPerSecond: Math.round(Number(sent) / Number(seconds)),
      hostRequestRoundsDuringFlood: latencies.length,
      conversationOpensDuringFlood: opens,
      updatesReceivedWhileProbing: receivedWhileProbing,
      eventBatchesToWindow: batches,
      probeRoundMs: { median: median(latencies), p95: percentile(latencies, 0.95), max: Math.round(Math.max(...latencies)) },
      // How late the Host's event loop ran timers while flooded: what every request and the window waited at most.
      eventLoopDelayMs: { p50: ms(lag.percentile(50)), p99: ms(lag.percentile(99)), max: ms(lag.max) },
      peakHeapAboveStartMB: peakAboveStart,
      retainedHeapGrowthMB: Math.round((heapAfter - heapBefore) * 10) / 10
    })
  }

  // Long enough to fill every pipe and batch on the way many times over; longer floods only made the suite slower.
  it('a flood of 10,000 updates a second for 1.5 s: the Host keeps answering, and every update is kept in order', async () => {
    await flood(10_000, 15_000, 'hostile.flood-10k')
  })

  it('a flood as fast as the agent can write: backpressure slows the agent, nothing is lost', async () => {
    await flood(1_000_000, 40_000, 'hostile.flood-max')
  })

  it('a tree of processes (some leaving the group) is gone when the agent exits mid-turn, and when the app quits', async () => {
    const { agentId, pidFile } = await addAgent()
    const record = await host.request('sessions.new', { projectId, agentId })
    const agentPid = await pidOf(pidFile)
    // Depth 3, width 3 in the agent's group (40 processes), and depth 2 (13) in a session of their own.
    await host.request('sessions.prompt', { id: record.id, text: '/forkbomb 3 3' })
    const first = await forkbombPids()
    expect(first).toHaveLength(53)
    expect(first.every(isProcessRunning)).toBe(true)
    expect((await probe(3)).length).toBe(3)
    await expect(host.request('sessions.prompt', { id: record.id, text: '/exit 4' })).rejects.toThrow(/exited with code 4/)
    await expect.poll(() => first.filter(isProcessRunning)).toEqual([])
    expect(isProcessRunning(agentPid)).toBe(false)

    // Again, and this time the app quits.
    await host.request('sessions.prompt', { id: record.id, text: '/forkbomb 3 3' })
    const second = await forkbombPids()
    expect(second).toHaveLength(53)
    expect(second.every(isProcessRunning)).toBe(true)
    await host.close()
    await expect.poll(() => second.filter(isProcessRunning)).toEqual([])
    host = await open()
    report('hostile.forkbomb', { processesPerTree: 53, leftAfterAgentExit: 0, leftAfterQuit: 0 })
  })

  it('a grandchild holding stdout open does not hide the agent exiting, and dies with it', async () => {
    const { agentId } = await addAgent()
    const record = await host.request('sessions.new', { projectId, agentId })
    await expect(host.request('sessions.prompt', { id: record.id, text: '/orphan-stdout\n/exit 9' })).rejects.toThrow(/exited with code 9/)
    const orphan = Number((await readFile(join(stateDir, 'orphan.pid'), 'utf8')).trim())
    await expect.poll(() => isProcessRunning(orphan)).toBe(false)
  })

  it("a terminal's command tree, left running, is gone when the session is closed", async () => {
    const { agentId } = await addAgent()
    const record = await host.request('sessions.new', { projectId, agentId })
    const pidList = join(root, 'terminal.pids')
    await writeFile(join(root, 'tree.sh'), TREE)
    allowCommands(host)
    await host.request('sessions.prompt', { id: record.id, text: `/terminal-leave sh ${join(root, 'tree.sh')} 2 3 ${pidList}` })
    await expect.poll(async () => (existsSync(pidList) ? (await readFile(pidList, 'utf8')).split('\n').filter(Boolean).length : 0)).toBe(13)
    const pids = (await readFile(pidList, 'utf8')).split('\n').filter(Boolean).map(Number)
    expect(pids.every(isProcessRunning)).toBe(true)
    await host.request('sessions.close', { id: record.id })
    await expect.poll(() => pids.filter(isProcessRunning)).toEqual([])
  })
})

const TREE = `#!/bin/sh
echo $$ >> "$3"
if [ "$1" -gt 0 ]; then
  i=0
  while [ $i -lt "$2" ]; do
    sh "$0" $(($1 - 1)) "$2" "$3" &
    i=$((i + 1))
  done
fi
exec sleep 600
`

async function forkbombPids(): Promise<number[]> {
  return (await readFile(join(stateDir, 'forkbomb.pids'), 'utf8')).split('\n').filter(Boolean).map(Number)
}

function ms(nanoseconds: number): number {
  return Math.round(nanoseconds / 1e5) / 10
}

function median(values: number[]): number {
  return percentile(values, 0.5)
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] * 10) / 10
}
