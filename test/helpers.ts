import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach } from 'vitest'
import type { RequestParams } from '../shared/contract'
import type { HostEvent } from '../shared/contract'
import { applyRecord } from '../shared/thread-fold'
import { createThread, type Thread, type ThreadEntry } from '../shared/thread'
import type { TranscriptRecord } from '../shared/transcript'
import type { AgentDefinition } from '../shared/agent-definition'
import type { SessionState } from '../shared/domain'
import { commandOf, type AgentCommand } from '../shared/transport'
import type { ConfirmCommand } from '../electron/host/contract/confirmations'
import { LAYOUT_KEY } from '../electron/host/storage/db-file'
import { Host } from '../electron/host/host'
import { scriptedTransport, type ProcessTransportInput } from './agent/spawn'

/** A temporary folder removed by the returned cleanup. */
export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `switchboard-${prefix}-`))
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}

/**
 * Says yes to every change that would run a program. A test's own set-up, in
 * process, is not the page: tests opt into it explicitly, since a Host opened
 * without a way to confirm refuses every such change (confirmations.ts).
 */
export const confirmEverything: ConfirmCommand = async () => ({ confirmed: true })

export function openHost(dataDir: string): Promise<Host> {
  return Host.open({ dataDir, version: 'test', presets: [], initializeTimeoutMs: 20_000, confirmCommand: confirmEverything })
}

/** One test's Host (see hostWithProjectPerTest); a test that reopens the Host assigns the new one here. */
export interface HostWithProject {
  /** The test's temporary folder: the data folder (`data`) and the project (`project`) are in it. */
  root: string
  host: Host
  /** The project at `<root>/project`. */
  projectId: string
}

/**
 * The set-up many integration suites share, made fresh for each test of the file that calls this (at its top
 * level): a temporary folder with a project folder, a Host on `<root>/data` (openHost) and the project added. After
 * each test the Host is closed and the folder removed. Returns one object whose fields are the running test's.
 */
export function hostWithProjectPerTest(prefix: string): HostWithProject {
  const run: Partial<HostWithProject> = {}
  beforeEach(async () => {
    const root = await tempDir(prefix)
    run.root = root
    await mkdir(join(root, 'project'))
    const host = await openHost(join(root, 'data'))
    run.host = host
    run.projectId = (await host.request('projects.add', { cwd: join(root, 'project') })).id
  })
  afterEach(async () => {
    try {
      await run.host?.close()
    } finally {
      if (run.root) await removeDir(run.root)
      for (const key of Object.keys(run)) delete run[key as keyof HostWithProject]
    }
  })
  return run as HostWithProject
}

/** An `agents.add` request for the scripted test agent, keeping its state in `stateDir` (see scriptedTransport). */
export function scriptedAgent(
  stateDir: string,
  env: Record<string, string> = {},
  name = 'Scripted',
  more: Partial<Omit<ProcessTransportInput, 'kind'>> = {}
): { name: string; transport: ProcessTransportInput } {
  return { name, transport: scriptedTransport({ SCRIPTED_AGENT_STATE_DIR: stateDir, ...env }, more) }
}

export function fold(records: TranscriptRecord[]): Thread {
  const thread = createThread()
  for (const record of records) applyRecord(thread, record)
  return thread
}

export function entriesOf(thread: Thread, kind: ThreadEntry['kind']): ThreadEntry[] {
  return thread.entries.filter((e) => e.kind === kind)
}

/** Collects every event the host pushes. */
export function recordEvents(host: Host): HostEvent[] {
  const events: HostEvent[] = []
  host.events.subscribe((batch) => events.push(...batch))
  return events
}

/** The ACP methods that made or reopened the scripted agent's sessions, in order (its `mcp-received.jsonl`, see test/agent/README.md). */
export async function sessionMethodsReceived(stateDir: string): Promise<string[]> {
  const received = await readFile(join(stateDir, 'mcp-received.jsonl'), 'utf8')
  return received
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { method: string }).method)
}

/** A data folder's db.json as any JSON reader takes it, without the layout of its sessions (db-file.ts), which is not data. */
export async function readDbJson(dataDir: string): Promise<Record<string, unknown>> {
  const { [LAYOUT_KEY]: layout, ...data } = JSON.parse(await readFile(join(dataDir, 'db.json'), 'utf8')) as Record<string, unknown>
  void layout
  return data
}

export async function readText(file: string): Promise<string> {
  return readFile(file, 'utf8')
}

/** Alive and not a zombie waiting to be reaped. */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return true
  }
}

/**
 * Waits until `check` returns something truthy, and returns it; fails after
 * `timeoutMs` naming what was awaited (a poll without a deadline would hang
 * the suite instead of failing it).
 */
export async function waitUntil<T>(what: string, check: () => T | Promise<T>, { timeoutMs = 20_000, everyMs = 20 } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/** pids of live processes (not zombies) whose environment holds `entry` (`NAME=value`); on Linux only, elsewhere none can be checked. */
export function processesWithEnv(entry: string): number[] {
  if (process.platform !== 'linux') return []
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const environ = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0')
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (environ.includes(entry) && !/^\d+ \(.*\) Z/.test(stat)) found.push(Number(name))
    } catch {
      // gone, or not ours to read
    }
  }
  return found
}

/** A port on 127.0.0.1 that nothing listened on a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * The user allowing, once each, every command an agent runs through
 * `terminal/create` that nothing approved before (each is asked:
 * asks/command-approvals.ts): for tests about what a command does, not
 * about whether it may run. Returns the commands' questions answered.
 */
export function allowCommands(host: Host): string[] {
  const answered: string[] = []
  const seen = new Set<string>()
  host.events.subscribe((batch) => {
    for (const event of batch) {
      if (event.type !== 'session.state') continue
      for (const permission of event.payload.permissions ?? []) {
        if (seen.has(permission.requestId) || !permission.title.startsWith('Run the command ')) continue
        seen.add(permission.requestId)
        answered.push(permission.title)
        host
          .request('sessions.respondPermission', { id: event.payload.id, requestId: permission.requestId, optionId: 'allow' })
          .catch((error: unknown) => console.error(`Could not allow ${permission.title}: ${(error as Error).message}`))
      }
    }
  })
  return answered
}

/** Runs git in `cwd` as a person would (author and committer set), its output trimmed. */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@x' }
  }).trim()
}

/** The command an agent runs (a process here, or over SSH); fails the test for an agent over the network. */
export function runOf(agent: Pick<AgentDefinition, 'transport' | 'name'>): AgentCommand {
  const command = commandOf(agent.transport)
  if (!command) throw new Error(`${agent.name} runs no command (its transport is ${agent.transport.kind})`)
  return command
}

/**
 * Waits until `pick` finds something in session `id`'s state (its pending permission requests, its questions: what a
 * window is sent), and returns it, or what `or` resolves to if it settles first (a turn that ended without asking);
 * fails after `timeoutMs` naming what was awaited. Read from the Host's `session.state` events (each carries the whole
 * state), after one `sessions.open` for the state as it already is: not by polling `sessions.open`, which writes the
 * transcript out and reads it whole on every call (a 20 ms poll through a turn slowed by a loaded machine was most of
 * integration/permissions' CPU).
 */
export async function waitForState<T, R = never>(
  host: Host,
  id: string,
  what: string,
  pick: (state: SessionState) => T | null | undefined | false,
  { timeoutMs = 20_000, or }: { timeoutMs?: number; or?: Promise<R> } = {}
): Promise<NonNullable<T> | R> {
  let stop = (): void => undefined
  try {
    return await new Promise<NonNullable<T> | R>((resolve, reject) => {
      const found = (state: SessionState): void => {
        const value = pick(state)
        if (value) resolve(value as NonNullable<T>)
      }
      const unsubscribe = host.events.subscribe((batch) => {
        for (const event of batch) if (event.type === 'session.state' && event.payload.id === id) found(event.payload)
      })
      const timer = setTimeout(() => reject(new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what}`)), timeoutMs)
      stop = () => {
        clearTimeout(timer)
        unsubscribe()
      }
      host.request('sessions.open', { id }).then(({ state }) => found(state), reject)
      or?.then(resolve, reject)
    })
  } finally {
    stop()
  }
}
