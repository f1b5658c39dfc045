import { spawn } from 'node:child_process'
import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { HostLink } from './link'
import { CliError, EXIT } from './exit-codes'
import { HostRefusal } from './link'
import { findAgent, findPreset, projectFor, type ProjectAdder } from './resolve'
import { findDoor } from '../web/door'
import { connectDoor } from './ws-link'
import type { Streams } from './output'
import { APP_COMMAND_ENV, RELAY_ENV } from './launch-env'

/**
 * `switchboard [FOLDER]`, `switchboard open ID`, `switchboard --new …`: the
 * window is told where to go (`app.navigate`), through the running app's Host
 * (its door), after the app is started when it is not running. What changes
 * data (a project added, a session started, its prompt queued) is asked of the
 * Host like any window's request; the app's own dialog confirms a new project.
 */

/** How long a starting app may take to open its data folder. */
const START_WAIT_MS = 60_000

export async function openFolder(dataDir: string, folder: string, adder: ProjectAdder, streams: Streams): Promise<number> {
  const path = existingFolder(folder)
  const link = await runningApp(dataDir)
  try {
    await projectFor(link, path, adder)
    await navigate(link, { kind: 'project', path })
    streams.err(`Switchboard shows ${path}.\n`)
    return EXIT.ok
  } finally {
    await link.close()
  }
}

export async function openSession(dataDir: string, id: string, streams: Streams): Promise<number> {
  const link = await runningApp(dataDir)
  try {
    await navigate(link, { kind: 'session', id })
    streams.err(`Switchboard shows session ${id}.\n`)
    return EXIT.ok
  } finally {
    await link.close()
  }
}

export interface NewSession {
  dataDir: string
  folder: string
  agent?: string
  preset?: string
  worktree: boolean
  prompt: string
}

/** A new session in the app, its prompt sent (queued: the command does not wait for the turn), and shown. */
export async function newSession(request: NewSession, adder: ProjectAdder, streams: Streams): Promise<number> {
  const path = existingFolder(request.folder)
  const link = await runningApp(request.dataDir)
  try {
    const project = await projectFor(link, path, adder)
    const isolation = request.worktree ? 'worktree' : undefined
    let session
    if (request.preset) {
      const preset = await findPreset(link, request.preset)
      session = await link.request('presets.start', { presetId: preset.id, projectId: project.id, isolation })
    } else {
      const agent = request.agent ? await findAgent(link, request.agent) : (await link.request('agents.list', {}))[0]
      if (!agent) throw new CliError('No agent in Switchboard yet: add one on its Agents page.', EXIT.usage)
      session = await link.request('sessions.new', { projectId: project.id, agentId: agent.id, isolation })
    }
    await navigate(link, { kind: 'session', id: session.id })
    await link.request('sessions.queue', { id: session.id, text: request.prompt })
    streams.err(`Session ${session.id} started in Switchboard.\n`)
    return EXIT.ok
  } finally {
    await link.close()
  }
}

async function navigate(link: HostLink, target: { kind: 'session'; id: string } | { kind: 'project'; path: string }): Promise<void> {
  try {
    await link.request('app.navigate', { target })
  } catch (error) {
    if (error instanceof HostRefusal) throw new CliError(error.message, EXIT.usage)
    throw error
  }
}

function existingFolder(folder: string): string {
  const path = resolve(folder)
  let isFolder: boolean
  try {
    isFolder = statSync(path).isDirectory()
  } catch {
    throw new CliError(`The folder ${path} does not exist.`, EXIT.usage)
  }
  if (!isFolder) throw new CliError(`${path} is a file, not a folder.`, EXIT.usage)
  return path
}

/** The running app's Host; the app is started first when none runs on the data folder. */
export async function runningApp(dataDir: string): Promise<HostLink> {
  const door = await findDoor(dataDir).catch((error: Error) => {
    throw new CliError(error.message, EXIT.unavailable)
  })
  if (door) return connectDoor(door, dataDir)
  const command = appCommand()
  // Not as Node: the packaged command runs in the app's Electron with ELECTRON_RUN_AS_NODE, which the app must not inherit.
  const { ELECTRON_RUN_AS_NODE: _asNode, [RELAY_ENV]: _relay, ...env } = process.env
  const child = spawn(command[0] as string, command.slice(1), {
    detached: true,
    stdio: 'ignore',
    env: { ...env, SWITCHBOARD_DATA_DIR: dataDir }
  })
  let exited: string | null = null
  child.once('exit', (code, signal) => (exited = `it exited with ${code ?? signal}`))
  child.once('error', (error) => (exited = error.message))
  child.unref()
  const deadline = Date.now() + START_WAIT_MS
  for (;;) {
    const started = await findDoor(dataDir).catch(() => null)
    if (started) return connectDoor(started, dataDir)
    if (exited) throw new CliError(`Switchboard could not be started (${command.join(' ')}): ${exited}.`, EXIT.unavailable)
    if (Date.now() > deadline) throw new CliError(`Switchboard was started but did not open ${dataDir} within a minute.`, EXIT.unavailable)
    await new Promise((resolveWait) => setTimeout(resolveWait, 200))
  }
}

function appCommand(): string[] {
  const given =
    process.env[APP_COMMAND_ENV] ?? (process.versions.electron && process.env.ELECTRON_RUN_AS_NODE ? JSON.stringify([process.execPath]) : undefined)
  let command: unknown
  try {
    command = given ? JSON.parse(given) : null
  } catch {
    command = null
  }
  if (!Array.isArray(command) || command.length === 0 || !command.every((part) => typeof part === 'string')) {
    throw new CliError(
      'Switchboard is not running, and this command does not know how to start it: start the app (npm start in a checkout), then try again.',
      EXIT.unavailable
    )
  }
  return command as string[]
}
