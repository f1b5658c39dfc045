import { statSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DOOR_FILE } from '../../electron/host/web/door'
import { startServing, type Serving } from '../../electron/host/web/serving'
import { confirmEverything, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'
import { runCli } from './run-cli'

/**
 * `switchboard` while a Switchboard runs on the data folder (`serve` here; the
 * app's Host writes the same door): the command goes through that Host, over
 * its loopback WebSocket with the token of its door, and never opens the folder
 * a second time. The session is the running Host's, seen by its windows.
 */

let root: string
let dataDir: string
let project: string
let serving: Serving
let env: Record<string, string>
const navigations: unknown[] = []

beforeAll(async () => {
  root = await tempDir('cli-serve')
  dataDir = join(root, 'data')
  project = join(root, 'project')
  await mkdir(project)
  const rendererDir = join(root, 'renderer')
  await mkdir(rendererDir)
  await writeFile(join(rendererDir, 'index.html'), '<!doctype html><title>Switchboard</title>')
  serving = await startServing({ dataDir, rendererDir, version: 'test', host: { presets: [], initializeTimeoutMs: 20_000 }, print: () => undefined })
  // The test's own set-up, in process, confirms what it adds (a page would type serve's code).
  const via = { confirmCommand: confirmEverything }
  await serving.host.handle('agents.add', scriptedAgent(join(root, 'state')), via)
  await serving.host.handle('projects.add', { cwd: project }, via)
  env = { SWITCHBOARD_DATA_DIR: dataDir }
  serving.host.events.subscribe((events) => {
    for (const event of events) if (event.type === 'app.navigate') navigations.push(event.payload)
  })
})

afterAll(async () => {
  await serving?.close()
  await removeDir(root)
})

describe('switchboard through the running Host', () => {
  it('runs the turn in the running Host: its session, its transcript, listed by ls', async () => {
    expect(statSync(join(dataDir, DOOR_FILE)).mode & 0o777).toBe(0o600)
    const run = await runCli(['run', '--agent', 'Scripted', '--project', project, '/say through serve'], { env })
    expect(run.stdout).toBe('through serve\n')
    expect(run.code).toBe(0)
    const id = /^Session ([\w-]+);/.exec(run.stderr)?.[1]
    expect((await serving.host.request('sessions.list', {})).map((session) => session.id)).toContain(id)
    const listed = await runCli(['ls', '--json'], { env })
    expect(JSON.parse(listed.stdout)).toContainEqual(expect.objectContaining({ id, title: '/say through serve' }))
  })

  it('a turn cancelled from a window exits 4', async () => {
    let id = ''
    const running = runCli(['run', '--agent', 'Scripted', '--project', project, '/sleep 60000'], {
      env,
      onStderr: (stderr) => (id = /^Session ([\w-]+);/.exec(stderr)?.[1] ?? '')
    })
    await waitUntil('the turn to run', async () => id && (await serving.host.request('sessions.open', { id, tail: 1 })).state.status === 'running')
    await serving.host.request('sessions.cancel', { id })
    const run = await running
    expect(run.stderr).toContain('switchboard: Cancelled')
    expect(run.code).toBe(4)
  })

  it('a folder the running serve does not know is not added without its code (no terminal here to type it)', async () => {
    const other = join(root, 'other')
    await mkdir(other)
    const run = await runCli(['run', '--agent', 'Scripted', '--project', other, 'hi'], { env })
    expect(run.stderr).toContain('is not a project of the running Switchboard yet')
    expect(run.code).toBe(1)
    expect((await serving.host.request('projects.list', {})).map((p) => p.cwd)).toEqual([project])
  })

  it('open, a folder and --new tell the app’s windows where to go; --new queues its prompt in a new session', async () => {
    const [session] = await serving.host.request('sessions.list', {})
    const opened = await runCli(['open', session!.id], { env })
    expect(opened.code).toBe(0)
    expect(navigations).toContainEqual({ kind: 'session', id: session!.id })

    const [known] = await serving.host.request('projects.list', {})
    const folder = await runCli([project], { env })
    expect(folder.code).toBe(0)
    expect(navigations).toContainEqual({ kind: 'project', id: known!.id })

    const started = await runCli(['--new', '--agent', 'Scripted', '--project', project, '/say started from the terminal'], { env })
    expect(started.code).toBe(0)
    const id = /^Session ([\w-]+) started/.exec(started.stderr)?.[1] ?? ''
    expect(navigations.at(-1)).toEqual({ kind: 'session', id })
    await waitUntil('the queued prompt’s turn to end', async () => (await serving.host.request('sessions.get', { ids: [id] }))[0]?.lastStopReason)
    expect(JSON.stringify((await serving.host.request('sessions.open', { id })).records)).toContain('started from the terminal')
  })

  it('bad input: a session or folder that does not exist is a message and exit 2, and the windows go nowhere', async () => {
    const before = navigations.length
    const noSession = await runCli(['open', 'no-such-session'], { env })
    expect(noSession).toMatchObject({ code: 2, stderr: expect.stringContaining("No session 'no-such-session'") })
    const noFolder = await runCli([join(root, 'missing')], { env })
    expect(noFolder).toMatchObject({ code: 2, stderr: expect.stringContaining(`The folder ${join(root, 'missing')} does not exist`) })
    expect(navigations.length).toBe(before)
  })
})
