import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage } from '@agentclientprotocol/sdk'
import { afterAll, describe, expect, it } from 'vitest'
import type { AgentRuntimeState } from '../../shared/domain'
import { LinkRun, type LinkRunOptions } from '../../electron/host/connection/link-run'
import type { AgentLink, LinkEnd, LinkOptions, ProcessDiagnostics } from '../../electron/host/transports/link'

/**
 * The lifecycle every link shares (connection/link-run.ts), on a link made
 * in memory: how its end is reported (once), abandon, stop, put away, the
 * tap and the log. Each kind's own link is covered by the integration tests
 * (network-agents, ssh-agents, supervision, protocol).
 */

const logDir = mkdtempSync(join(tmpdir(), 'link-run-'))
afterAll(() => rmSync(logDir, { recursive: true, force: true }))

/** A link whose end the test decides; `stop` ends it as Switchboard closing it would. */
class FakeLink implements AgentLink {
  readonly exited: Promise<LinkEnd>
  readonly toAgent: AnyMessage[] = []
  stops = 0
  options!: LinkOptions
  end!: (end: LinkEnd) => void
  private push!: (message: AnyMessage) => void
  readonly stream = {
    readable: new ReadableStream<AnyMessage>({ start: (controller) => void (this.push = (m) => controller.enqueue(m)) }),
    writable: new WritableStream<AnyMessage>({ write: (m) => void this.toAgent.push(m) })
  }

  constructor(readonly diagnostics?: ProcessDiagnostics) {
    this.exited = new Promise((resolve) => (this.end = resolve))
  }

  send(message: AnyMessage): void {
    this.push(message)
  }

  async stop(): Promise<void> {
    this.stops++
    this.end({ summary: "Agent 'Fake' exited on signal SIGTERM" })
    await this.exited
  }
}

function stderr(text: string): ProcessDiagnostics {
  return {
    pid: 7,
    commandNotFound: false,
    stderrMark: () => 0,
    stderrSince: () => text,
    explanation: () => ({ lines: [text], found: true }),
    stderrQuiet: async () => undefined
  }
}

function start(link: FakeLink, logName: string, own: Partial<LinkRunOptions> = {}) {
  const states: Partial<AgentRuntimeState>[] = []
  const closes: string[] = []
  let status: AgentRuntimeState['status'] = 'ready'
  const run = new LinkRun(
    (options) => {
      link.options = options
      return link
    },
    {
      name: 'Fake',
      logDir,
      logName,
      maxMessageBytes: 1024,
      receive: () => false,
      setState: (patch) => {
        states.push(patch)
        status = patch.status ?? status
      },
      status: () => status,
      closeStream: (error) => void closes.push(error.message),
      ...own
    }
  )
  return { run, states, closes }
}

describe('a link run', () => {
  it('reports the end of its link once: the state says how (with the stderr lines that explain it), the protocol closes, every later message says so', async () => {
    const link = new FakeLink(stderr('Error: out of credits'))
    const { run, states, closes } = start(link, 'ends')
    link.end({ summary: "Agent 'Fake' exited with code 3" })
    await expect(run.exited).rejects.toThrow("Agent 'Fake' exited with code 3; stderr: Error: out of credits")
    expect(run.ended).toBe(true)
    expect(states).toEqual([{ status: 'exited', message: "Agent 'Fake' exited with code 3; stderr: Error: out of credits", pid: undefined }])
    expect(closes).toEqual(["Agent 'Fake' exited with code 3; stderr: Error: out of credits"])
    // Stopping what has ended stops nothing more and reports nothing more.
    await run.stop()
    link.end({ summary: 'said twice' })
    await run.closed
    expect(states).toHaveLength(1)
    expect(closes).toHaveLength(1)
    expect(run.stopping).toBe(false)
    expect(run.exitSummary()).toBe("Agent 'Fake' exited with code 3")
  })

  it('abandons a link once: the state says why, the link is stopped, and every later error says that message', async () => {
    const link = new FakeLink()
    const { run, states, closes } = start(link, 'abandon')
    const why = "Agent 'Fake' sent a message longer than 1 KB on stdout, which Switchboard does not accept; it was stopped."
    // The link asks for it (its stdout guard), and the connection does too (a stream that ended): one abandon.
    link.options.fail(why)
    await run.abandon('a second reason')
    await run.closed
    expect(link.stops).toBe(1)
    expect(states).toEqual([{ status: 'error', message: why }, { pid: undefined }])
    expect(closes).toEqual([why, why])
    expect(run.exitMessage()).toBe(why)
    await expect(run.exited).rejects.toThrow(why)
    // A connection that ended because Switchboard stopped it was not lost.
    expect(run.connectionLost).toBe(false)
    await expect.poll(() => readFileSync(join(logDir, 'abandon.log'), 'utf8')).toBe(`--- ${why}\n`)
  })

  it('says an agent stopped by Switchboard stopped, and a lost connection lost', async () => {
    const stopped = start(new FakeLink(), 'stopped')
    await stopped.run.stop()
    expect(stopped.states).toEqual([{ status: 'stopped', message: undefined, pid: undefined }])
    expect(stopped.run.connectionLost).toBe(false)

    const link = new FakeLink()
    const lost = start(link, 'lost')
    link.end({ summary: "The connection to agent 'Fake' at wss://example.test/acp was lost: the connection was reset", connectionLost: true })
    await lost.run.closed
    expect(lost.run.connectionLost).toBe(true)
    expect(lost.states.at(-1)).toMatchObject({ status: 'exited' })
  })

  it('reports nothing of a run put away (a version 2 attempt replaced by version 1), but logs it', async () => {
    const { run, states } = start(new FakeLink(), 'put-away')
    run.putAway = true
    await run.stop()
    expect(states).toEqual([])
    await expect.poll(() => readFileSync(join(logDir, 'put-away.log'), 'utf8')).toContain('the agent answered 1: starting it again in version 1')
  })

  it('says a link that could not start at all is an error, and whether its command is missing', async () => {
    const link = new FakeLink({ ...stderr(''), commandNotFound: true, explanation: () => ({ lines: [], found: false }) })
    const { run, states } = start(link, 'unstarted')
    const sentence = "Agent 'Fake' could not be started: command 'fake-acp' was not found. Install it or fix the agent's command."
    link.end({ summary: sentence, failedToStart: true })
    await expect(run.exited).rejects.toThrow(sentence)
    expect(states).toEqual([{ status: 'error', message: sentence, installed: false }])
  })

  it('taps every message: what the protocol takes whole goes no further, the rest reaches the SDK, activity is noted both ways', async () => {
    const seen: string[] = []
    const link = new FakeLink()
    const { run } = start(link, 'tap', {
      receive: (message) => 'method' in message && message.method === 'session/update',
      onMessage: (direction, message) => void seen.push(`${direction} ${'method' in message ? message.method : 'answer'}`)
    })
    const before = run.lastActivity
    await new Promise((resolve) => setTimeout(resolve, 5))
    link.send({ jsonrpc: '2.0', method: 'session/update', params: {} })
    link.send({ jsonrpc: '2.0', id: 1, method: 'fs/read_text_file', params: {} })
    const reader = run.stream.readable.getReader()
    expect(await reader.read()).toMatchObject({ value: { method: 'fs/read_text_file' } })
    const writer = run.stream.writable.getWriter()
    await writer.write({ jsonrpc: '2.0', id: 1, result: {} })
    await expect.poll(() => link.toAgent).toHaveLength(1)
    expect(seen).toEqual(['in session/update', 'in fs/read_text_file', 'out answer'])
    expect(run.lastActivity).toBeGreaterThan(before)
    await run.stop()
  })
})
