import { spawn } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { FromHost, ToHost } from '../../electron/host/host-process/host-channel'
import {
  cleanUpAfterHost,
  DEFAULT_DEAD_AFTER_MS,
  DEFAULT_PING_EVERY_MS,
  HostSupervisor,
  START_GRACE_MS,
  MAX_RESTARTS,
  READY_WITHIN_MS,
  type HostFailure,
  type HostProcess
} from '../../electron/host/host-process/host-supervisor'
import { markPrefixFor, newProcessMark, PROCESS_MARK_ENV } from '../../electron/host/child-processes/process-tree'
import { SshHosts } from '../../electron/host/ssh/options'
import { isProcessRunning, removeDir, tempDir, waitUntil } from '../helpers'

/**
 * The Host's supervisor (electron/host/host-process/host-supervisor.ts) with stand-in Host processes: how often a Host
 * that keeps dying is started again before it gives up, and what it cleans up after a Host that died
 * (the processes its agents left, its SSH socket folder). The real processes: test/shell/desktop-shell.test.ts
 * and test/integration/serve-supervised.test.ts.
 */

let root: string
beforeEach(async () => {
  root = await tempDir('host-supervisor')
})
afterEach(async () => {
  await removeDir(root)
})

/** A Host process that says it is open, and dies when the test says. */
class FakeHost implements HostProcess {
  readonly pid = undefined
  private readonly messageListeners: ((message: FromHost) => void)[] = []
  private readonly exitListeners: ((code: number | null, signal: string | null) => void)[] = []
  /** Pings it answered (until it hangs). */
  pings = 0
  hung = false
  /** It answers pings but its open never ends. */
  stuckOpening = false
  send(message: ToHost): void {
    if (message.type === 'ping' && !this.hung) {
      this.pings++
      setImmediate(() => this.messageListeners.forEach((l) => l({ type: 'pong', id: message.id })))
    }
    if (message.type === 'open' && !this.hung && !this.stuckOpening)
      setImmediate(() => this.messageListeners.forEach((l) => l({ type: 'ready', warnings: [] })))
    if (message.type === 'close') setImmediate(() => this.messageListeners.forEach((l) => l({ type: 'closed' })))
  }
  onMessage(listener: (message: FromHost) => void): void {
    this.messageListeners.push(listener)
  }
  onExit(listener: (code: number | null, signal: string | null) => void): void {
    this.exitListeners.push(listener)
  }
  onOutput(): void {}
  kill(): void {
    this.die(null, 'SIGKILL')
  }
  die(code: number | null, signal: string | null): void {
    const listeners = this.exitListeners.splice(0)
    listeners.forEach((l) => l(code, signal))
  }
}

/** A supervisor of FakeHosts (`each` sets one up as it starts, given how many started before), and what it said. */
function supervise(each: (host: FakeHost, before: number) => void = () => {}) {
  const said = { started: [] as FakeHost[], downs: [] as string[], failure: null as HostFailure | null }
  const supervisor = new HostSupervisor({
    open: { dataDir: join(root, 'data'), version: 'test', loginShell: false, shell: 'desktop' },
    start: () => {
      const host = new FakeHost()
      each(host, said.started.length)
      said.started.push(host)
      return host
    },
    onDown: (reason) => said.downs.push(reason),
    onGaveUp: (gaveUp) => (said.failure = gaveUp),
    cleanUp: () => 0
  })
  return { supervisor, said }
}

describe('the Host supervisor', () => {
  it(`starts a Host that dies again, at most ${MAX_RESTARTS} times a minute, then gives up with the cause and the log`, async () => {
    // Its restart waits (0.5, 2 and 5 s) pass on fake timers, not in real time; the Host's answers come on real immediates.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
    try {
      const { supervisor, said } = supervise()
      const { started, downs } = said
      /** Moves the clock on a tenth of a second at a time (up to a minute) until `done`. */
      const until = async (what: string, done: () => unknown): Promise<void> => {
        for (let ms = 0; !done(); ms += 100) {
          if (ms > 60_000) throw new Error(`not within a minute: ${what}`)
          await vi.advanceTimersByTimeAsync(100)
        }
      }
      await supervisor.start()
      for (let round = 1; round <= MAX_RESTARTS + 1; round++) {
        await until(`Host ${round} open`, () => supervisor.current === started[round - 1])
        started[round - 1].die(1, null)
      }
      await until('the supervisor to give up', () => said.failure)
      expect(started).toHaveLength(MAX_RESTARTS + 1)
      expect(downs).toHaveLength(MAX_RESTARTS)
      expect(said.failure).toEqual({
        cause: `The Switchboard host stopped ${MAX_RESTARTS + 1} times within a minute; the last time it exited with code 1`,
        logFile: join(root, 'data', 'logs', 'host.log')
      })
      expect(supervisor.current).toBeNull()
      await supervisor.stop()
    } finally {
      vi.useRealTimers()
    }
  })

  it('pings an open Host no more than every 10 s, and still stops one that hangs within the dead time and a ping', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
    try {
      const host = new FakeHost()
      const downs: string[] = []
      const supervisor = new HostSupervisor({
        open: { dataDir: join(root, 'data'), version: 'test', loginShell: false, shell: 'desktop' },
        start: () => host,
        onDown: (reason) => downs.push(reason),
        cleanUp: () => 0
      })
      await supervisor.start()
      // (Its timers are fake: the Host's answers come on real immediates.)
      while (supervisor.current !== host) await new Promise((resolve) => setImmediate(resolve))
      // An idle minute: a Host that answers is woken by at most six pings.
      await vi.advanceTimersByTimeAsync(60_000)
      expect(host.pings).toBeGreaterThanOrEqual(5)
      expect(host.pings).toBeLessThanOrEqual(6)
      // It hangs: stopped (and started again) once it has not answered for the dead time, a ping's interval at most later.
      host.hung = true
      await vi.advanceTimersByTimeAsync(DEFAULT_DEAD_AFTER_MS + DEFAULT_PING_EVERY_MS)
      expect(downs).toEqual([
        `The Switchboard host stopped (it did not answer for ${DEFAULT_DEAD_AFTER_MS / 1000} s and was stopped); starting it again…`
      ])
      await supervisor.stop()
    } finally {
      vi.useRealTimers()
    }
  })

  it('stops a Host that never answers after it started once the grace of its start is over, says so, and starts it again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
    try {
      // The first hangs as it starts: no answer to its opening nor to any ping.
      const { supervisor, said } = supervise((host, before) => (host.hung = before === 0))
      const { started, downs } = said
      await supervisor.start()
      await vi.advanceTimersByTimeAsync(START_GRACE_MS - DEFAULT_PING_EVERY_MS)
      expect(downs).toEqual([])
      await vi.advanceTimersByTimeAsync(2 * DEFAULT_PING_EVERY_MS + 5_000)
      expect(downs).toEqual([
        `The Switchboard host stopped (it did not answer for ${START_GRACE_MS / 1000} s after it started and was stopped); starting it again…`
      ])
      while (supervisor.current !== started[1]) await vi.advanceTimersByTimeAsync(100)
      await supervisor.stop()
    } finally {
      vi.useRealTimers()
    }
  })

  it('stops a Host that answers but never opens, starts it again, and gives up with the cause on the second', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
    try {
      const { supervisor, said } = supervise((host) => (host.stuckOpening = true))
      const { started, downs } = said
      await supervisor.start()
      // Answering its pings all along, it is not taken for hung: the window waits while it opens.
      await vi.advanceTimersByTimeAsync(READY_WITHIN_MS - 1_000)
      expect(started[0].pings).toBeGreaterThan(5)
      expect(downs).toEqual([])
      await vi.advanceTimersByTimeAsync(1_000)
      const how = `it had not opened the data folder ${READY_WITHIN_MS / 1000} s after it started and was stopped`
      expect(downs).toEqual([`The Switchboard host stopped (${how}); starting it again…`])
      // The second start sticks the same way: no third, and the cause is said (the window shows it with the log).
      await vi.advanceTimersByTimeAsync(READY_WITHIN_MS + 5_000)
      expect(started).toHaveLength(2)
      expect(said.failure).toEqual({
        cause: `The Switchboard host stopped as it started, 2 times running (${how})`,
        logFile: join(root, 'data', 'logs', 'host.log')
      })
      await supervisor.stop()
    } finally {
      vi.useRealTimers()
    }
  })

  it.runIf(process.platform === 'linux')(
    'cleans up after a dead Host: the processes its agents left and its SSH socket folder, not another Host’s',
    async () => {
      const dataDir = join(root, 'data')
      const deadHost = 999_999
      // What a Host's agent started, marked with the Host's prefix (child-processes/process-tree.ts), still running after the Host died.
      const left = spawn('sleep', ['60'], {
        env: { ...process.env, [PROCESS_MARK_ENV]: newProcessMark(markPrefixFor(dataDir, deadHost)) },
        detached: true,
        stdio: 'ignore'
      })
      const exited = new Promise((resolve) => left.once('exit', resolve))
      // The Host's SSH socket folder is named after its pid (this process stands for the dead Host here).
      const socket = new SshHosts().nextSocket()
      const folder = join(socket, '..')
      expect(folder.startsWith(join(tmpdir(), `sb-ssh-${process.pid}-`))).toBe(true)
      const another = join(tmpdir(), `sb-ssh-${process.pid}9-other`)
      mkdirSync(another)
      try {
        await waitUntil('the left process to run', () => isProcessRunning(left.pid!))
        expect(cleanUpAfterHost(dataDir, process.pid)).toBeGreaterThanOrEqual(1)
        await exited
        expect(existsSync(folder)).toBe(false)
        expect(existsSync(another)).toBe(true)
      } finally {
        await removeDir(another)
        if (isProcessRunning(left.pid!)) left.kill('SIGKILL')
      }
    }
  )
})
