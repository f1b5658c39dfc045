import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionRecord } from '../../shared/domain'
import { openHost, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'
import { jsonLines, runCli, runCliOnTerminal } from './run-cli'

/**
 * `switchboard run` with no Switchboard running: the command opens the Host
 * on the data folder itself, runs one turn against the scripted agent, and
 * the session is an ordinary one afterwards (listed, searchable, in the inbox
 * when it failed). Permissions follow --allow; the exit code says how the
 * turn ended; bad input is a message and exit 2, nothing written.
 */

let root: string
let dataDir: string
let project: string
let env: Record<string, string>

beforeAll(async () => {
  root = await tempDir('cli-run')
  dataDir = join(root, 'data')
  project = join(root, 'project')
  await mkdir(project)
  const host = await openHost(dataDir)
  await host.request('agents.add', scriptedAgent(join(root, 'state')))
  await host.close()
  env = { SWITCHBOARD_DATA_DIR: dataDir }
})

afterAll(() => removeDir(root))

describe('switchboard run, without a running Switchboard', () => {
  it('streams the reply to stdout, exits 0, and the session is listed and found by search', async () => {
    const run = await runCli(['run', '--agent', 'scripted', '--project', project, 'hello from a script'], { env })
    expect(run.stderr).toMatch(/^Session [\w-]+; go on with: switchboard run --continue /)
    expect(run.stdout).toBe('You said: hello from a script\n')
    expect(run.code).toBe(0)
    const id = /^Session ([\w-]+);/.exec(run.stderr)?.[1]

    const listed = await runCli(['ls', '--json', '--project', project], { env })
    expect(listed.code).toBe(0)
    const rows = JSON.parse(listed.stdout) as { id: string; agent: string; title: string; lastStopReason: string }[]
    expect(rows).toEqual([expect.objectContaining({ id, agent: 'Scripted', title: 'hello from a script', lastStopReason: 'end_turn' })])

    const found = await runCli(['search', 'from a script', '--json'], { env })
    expect(found.code).toBe(0)
    expect((JSON.parse(found.stdout) as { sessionId?: string }[]).some((hit) => hit.sessionId === id)).toBe(true)
  })

  it('--json writes the transcript records, one a line, and --continue goes on in the same session', async () => {
    const first = await runCli(['run', '--json', '--agent', 'Scripted', '--project', project, '/say first'], { env })
    expect(first.code).toBe(0)
    const records = jsonLines(first.stdout)
    expect(records.map((record) => record.t)).toContain('prompt')
    expect(records.at(-1)).toMatchObject({ t: 'stop', stopReason: 'end_turn' })
    expect(records.some((r) => r.t === 'update' && JSON.stringify(r).includes('"text":"first"'))).toBe(true)
    // Each record once, in the transcript's order.
    const seqs = records.map((record) => record.seq as number)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    expect(new Set(seqs).size).toBe(seqs.length)

    const id = /^Session ([\w-]+);/.exec(first.stderr)?.[1] ?? ''
    const second = await runCli(['run', '--continue', id, '/say second'], { env })
    expect(second.stdout).toBe('second\n')
    expect(second.code).toBe(0)
  })

  it('--allow never denies what the agent asks (exit 5), and never allows it', async () => {
    const run = await runCli(['run', '--allow', 'never', '--agent', 'Scripted', '--project', project, '/permission'], { env })
    expect(run.stderr).toContain('denied "Run dangerous command" (--allow never)')
    expect(run.stdout).toContain('permission: reject')
    expect(run.code).toBe(5)
  })

  it('a turn that fails exits 1 with the agent’s words, waits in the inbox, and what it spent is counted', async () => {
    const run = await runCli(['run', '--agent', 'Scripted', '--project', project, '/cost 0.25 USD\n/fail the build server is down'], { env })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('the build server is down')
    const id = /^Session ([\w-]+);/.exec(run.stderr)?.[1]
    const host = await openHost(dataDir)
    try {
      const inbox = await host.request('inbox.list', {})
      expect(inbox).toContainEqual(expect.objectContaining({ kind: 'error', session: expect.objectContaining({ id }) }))
      // Once past conversations are read for what they spent (a first spend report starts that).
      const spend = await waitUntil('the spend report whole', async () => {
        const report = await host.request('spend.report', {})
        return report.backfill ? null : report
      })
      expect(spend.sessions).toContainEqual(expect.objectContaining({ id, cost: { USD: 0.25 } }))
    } finally {
      await host.close()
    }
  })

  it('bad input: a message a user can act on, exit 2 (7 when no Switchboard can be reached), nothing written', async () => {
    const fresh = join(root, 'fresh-data')
    const missing = await runCli(['run', '--agent', 'Scripted', '--project', join(root, 'nope'), 'hi'], { env: { SWITCHBOARD_DATA_DIR: fresh } })
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining(`The project folder ${join(root, 'nope')} does not exist`) })
    const empty = await runCli(['run', '--agent', 'Scripted', '--project', project], { env: { SWITCHBOARD_DATA_DIR: fresh }, stdin: '  \n' })
    expect(empty).toMatchObject({ code: 2, stderr: expect.stringContaining('The prompt is empty') })
    const noAgent = await runCli(['run', '--project', project, 'hi'], { env: { SWITCHBOARD_DATA_DIR: fresh } })
    expect(noAgent).toMatchObject({ code: 2, stderr: expect.stringContaining('--agent NAME or --preset NAME') })
    expect(existsSync(fresh)).toBe(false)

    const unknown = await runCli(['run', '--agent', 'gpt-9', '--project', project, 'hi'], { env })
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining("No agent 'gpt-9'. Agents: Scripted") })
    const noSession = await runCli(['run', '--continue', 'no-such-session', 'hi'], { env })
    expect(noSession).toMatchObject({ code: 2, stderr: expect.stringContaining("No session 'no-such-session'") })
    const noApp = await runCli(['open', 'some-session'], { env })
    expect(noApp).toMatchObject({ code: 7, stderr: expect.stringContaining('Switchboard is not running') })
    // A Switchboard without a door (here: a Host in the test's process) holds the folder: the command cannot reach it.
    const holder = await openHost(dataDir)
    try {
      const held = await runCli(['run', '--agent', 'Scripted', '--project', project, 'hi'], { env })
      expect(held).toMatchObject({ code: 7, stderr: expect.stringContaining(`Another Switchboard (process ${process.pid}`) })
    } finally {
      await holder.close()
    }
    const sessions = await runCli(['ls', '--json'], { env })
    expect((JSON.parse(sessions.stdout) as SessionRecord[]).length).toBe(4)
  })

  it('an agent whose secret the app keeps in the keychain: exit 8 with what to do, nothing written; given as a variable, the turn runs with it', async () => {
    const host = await openHost(dataDir)
    let agentId: string
    try {
      agentId = (await host.request('agents.add', scriptedAgent(join(root, 'state'), {}, 'Locked', { secretEnv: { LOCKED_TOKEN: 'from-the-app' } })))
        .id
    } finally {
      await host.close()
    }
    // What the app wrote: the value encrypted by the OS keychain (safeStorage), which Node cannot decrypt.
    await writeFile(join(dataDir, 'secrets.json'), JSON.stringify({ [`agent:${agentId}:env:LOCKED_TOKEN`]: 'djEwAAAAencrypted' }))
    const before = (JSON.parse((await runCli(['ls', '--json'], { env })).stdout) as SessionRecord[]).length
    const elsewhere = join(root, 'not-a-project-yet')
    await mkdir(elsewhere)

    const locked = await runCli(['run', '--agent', 'Locked', '--project', elsewhere, '/env LOCKED_TOKEN'], { env })
    expect(locked.code).toBe(8)
    expect(locked.stdout).toBe('')
    expect(locked.stderr).toContain('Locked needs the variable LOCKED_TOKEN (kept in the keychain by the app), which this command cannot unlock')
    expect(locked.stderr).toContain('Start Switchboard and run this again')
    expect(locked.stderr).toContain('LOCKED_TOKEN=… switchboard run')
    const after = JSON.parse((await runCli(['ls', '--json'], { env })).stdout) as SessionRecord[]
    expect(after.length).toBe(before)
    const check = await openHost(dataDir)
    try {
      expect((await check.request('projects.list', {})).some((p) => p.cwd === elsewhere)).toBe(false)
    } finally {
      await check.close()
    }

    const given = await runCli(['run', '--agent', 'Locked', '--project', project, '/env LOCKED_TOKEN'], {
      env: { ...env, LOCKED_TOKEN: 'from-the-shell' }
    })
    expect(given).toMatchObject({ code: 0, stdout: 'LOCKED_TOKEN=from-the-shell\n' })
    // --continue names the agent through its session: the same check.
    const id = /^Session ([\w-]+);/.exec(given.stderr)?.[1] ?? ''
    expect(await runCli(['run', '--continue', id, '/env LOCKED_TOKEN'], { env })).toMatchObject({ code: 8 })
  })

  it('an MCP server whose secret the app keeps in the keychain is said to be left out, with why; the turn runs without it', async () => {
    const ownData = join(root, 'mcp-data')
    const host = await openHost(ownData)
    try {
      await host.request('agents.add', scriptedAgent(join(root, 'state')))
      await host.request('mcp.save', {
        name: 'tracker',
        transport: 'stdio',
        command: 'true',
        args: [],
        env: [{ name: 'TRACKER_TOKEN', value: 't-1', secret: true }]
      })
    } finally {
      await host.close()
    }
    const run = await runCli(['run', '--agent', 'Scripted', '--project', project, '/say done'], { env: { SWITCHBOARD_DATA_DIR: ownData } })
    expect(run).toMatchObject({ code: 0, stdout: 'done\n' })
    expect(run.stderr).toMatch(
      /switchboard: the MCP server tracker was left out: the secret value of TRACKER_TOKEN is not in the secret store any more.* \(with Switchboard running, the command goes through it, and it can unlock secrets\)/
    )
  })

  it('a relative --project is the folder under the current one, and the prompt can come from stdin', async () => {
    const run = await runCli(['run', '--agent', 'Scripted', '--project', 'project', '-'], { env, cwd: root, stdin: '/cwd\n' })
    expect(run.stdout).toBe(`cwd=${project}\n`)
    expect(run.code).toBe(0)
  })

  it('--allow rules lets the saved "always" rules answer and denies the rest; --allow never sets the rules aside', async () => {
    const bash = (command: string): string =>
      `/permission-call ${JSON.stringify({ tool: 'Bash', kind: 'execute', title: command, rawInput: { command } })}`
    // Once, in the window, the user said "always allow" to running `npm test` in this project.
    const host = await openHost(dataDir)
    try {
      const projectId = (await host.request('projects.add', { cwd: project })).id
      const [agent] = await host.request('agents.list', {})
      const { id } = await host.request('sessions.new', { projectId, agentId: agent!.id })
      const turn = host.request('sessions.prompt', { id, text: bash('npm test') })
      const asked = await waitUntil('the request', async () => (await host.request('sessions.open', { id, tail: 1 })).state.permissions?.[0])
      await host.request('sessions.respondPermission', { id, requestId: asked.requestId, optionId: 'allow_always' })
      await turn
    } finally {
      await host.close()
    }
    const byRule = await runCli(['run', '--allow', 'rules', '--agent', 'Scripted', '--project', project, bash('npm test')], { env })
    expect(byRule).toMatchObject({ code: 0, stdout: 'permission: allow\n' })
    const noRule = await runCli(['run', '--allow', 'rules', '--agent', 'Scripted', '--project', project, bash('rm -rf build')], { env })
    expect(noRule).toMatchObject({ code: 5, stdout: 'permission: reject\n' })
    const never = await runCli(['run', '--allow', 'never', '--agent', 'Scripted', '--project', project, bash('npm test')], { env })
    expect(never).toMatchObject({ code: 5, stdout: 'permission: reject\n' })
  })

  it.runIf(existsSync('/usr/bin/script'))(
    '--allow ask (the default on a terminal) asks there: allowed, the agent goes on; denied, exit 5',
    async () => {
      const asked = /Choose 1-2 \(Enter denies it\)/
      const allowed = await runCliOnTerminal(['run', '--agent', 'Scripted', '--project', project, '/permission'], { env, asked, answers: ['1'] })
      expect(allowed.output).toContain('The agent asks: Run dangerous command')
      expect(allowed.output).toContain('permission: allow')
      expect(allowed.code).toBe(0)
      const denied = await runCliOnTerminal(['run', '--agent', 'Scripted', '--project', project, '/permission'], { env, asked, answers: [''] })
      expect(denied.output).toContain('permission: reject')
      expect(denied.code).toBe(5)
    }
  )
})
