import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '../../electron/host/host'
import { checkReportMarkdown, checkSummary, type AgentCheckReport, type CheckLine } from '../../shared/registry'
import { openHost, processesWithEnv, removeDir, scriptedAgent, tempDir, waitUntil } from '../helpers'

/**
 * The Check action: the agent started apart in a scratch folder and probed
 * method by method, no prompt sent. The scripted agent in several
 * configurations shows each outcome (worked, failed, needs sign-in, not tried, not offered,
 * and a start that fails).
 */

let root: string
let host: Host

beforeEach(async () => {
  root = await tempDir('check')
  host = await openHost(join(root, 'data'))
})

afterEach(async () => {
  await host.close()
  await removeDir(root)
})

async function check(env: Record<string, string>, name = 'Scripted'): Promise<AgentCheckReport> {
  const agent = await host.request('agents.add', scriptedAgent(join(root, `state-${name}`), env, name))
  return host.request('agents.check', { agentId: agent.id })
}

function line(report: AgentCheckReport, id: string): Pick<CheckLine, 'announced' | 'outcome'> & { detail: string } {
  const found = report.lines.find((l) => l.id === id)
  if (!found) throw new Error(`no line ${id} in ${JSON.stringify(report.lines.map((l) => l.id))}`)
  return found
}

describe('the capability check', () => {
  it('an agent with only session/load: load works, what it does not announce is not offered (with the agent’s answer), not failed', async () => {
    const report = await check({})
    expect(report).toMatchObject({ agentName: 'Scripted', agentVersion: '1.0.0', protocolVersion: 1 })
    expect(line(report, 'initialize')).toMatchObject({ outcome: 'worked', detail: expect.stringContaining('agent scripted-agent 1.0.0') })
    expect(line(report, 'session/new')).toMatchObject({ announced: null, outcome: 'worked' })
    expect(line(report, 'session/load')).toMatchObject({ announced: true, outcome: 'worked' })
    for (const id of ['session/list', 'session/resume', 'session/fork', 'session/close', 'session/delete']) {
      expect(line(report, id), id).toMatchObject({ announced: false, outcome: 'not offered', detail: expect.stringContaining('(-32601)') })
    }
    expect(line(report, 'logout')).toMatchObject({ announced: false, outcome: 'not offered' })
    expect(checkSummary(report)).toBe('supports: load')
    // No prompt went out: the scratch session's history holds nothing the user said.
    const histories = readdirSync(join(root, 'state-Scripted')).filter((f) => f.startsWith('sess-'))
    for (const file of histories) expect(readFileSync(join(root, 'state-Scripted', file), 'utf8')).not.toContain('user_message_chunk')
    // The scratch folder is gone, and the run apart wrote its own log.
    expect(readdirSync(join(root, 'data', 'tmp')).filter((f) => f.startsWith('check-'))).toEqual([])
    expect(existsSync(join(root, 'data', 'logs', 'scripted.check.log'))).toBe(true)
  })

  it('an agent with every session method, modes and models: each worked, listed as announced', async () => {
    const report = await check({ SCRIPTED_AGENT_SESSIONS: 'list,resume,close,delete,fork', SCRIPTED_AGENT_SESSION_STATE: '1' })
    for (const id of ['session/list', 'session/resume', 'session/load', 'session/fork', 'session/close', 'session/delete']) {
      expect(line(report, id), id).toMatchObject({ announced: true, outcome: 'worked' })
    }
    expect(line(report, 'session/list').detail).toContain('the new one among them')
    expect(line(report, 'modes')).toMatchObject({ announced: true, outcome: 'worked' })
    expect(line(report, 'models')).toMatchObject({ announced: true, outcome: 'worked' })
    expect(line(report, 'configOptions')).toMatchObject({ announced: true, outcome: 'worked' })
    expect(line(report, 'session/set_model').outcome).toBe('worked')
    expect(checkSummary(report)).toBe('supports: list, resume, load, fork, close')
  })

  it('an agent that needs signing in: session/new answers auth_required, the rest is not tried, logout is announced', async () => {
    const report = await check({ SCRIPTED_AGENT_AUTH: '1' })
    expect(line(report, 'authMethods')).toMatchObject({ announced: true, outcome: 'worked' })
    expect(line(report, 'session/new')).toMatchObject({ outcome: 'needs sign-in', detail: expect.stringContaining('(-32000)') })
    expect(line(report, 'session/load')).toMatchObject({ outcome: 'not tried', detail: 'needs a session: sign in first' })
    expect(line(report, 'logout')).toMatchObject({ announced: true, outcome: 'not tried', detail: expect.stringContaining('would sign you out') })
    expect(checkSummary(report)).toBe('needs sign-in')
  })

  it('an agent signed in with a key held in the app is checked signed in, as its sessions run', async () => {
    const agent = await host.request(
      'agents.add',
      scriptedAgent(join(root, 'state-keyed'), { SCRIPTED_AGENT_AUTH: '1', SCRIPTED_AGENT_KEY_META: '1' }, 'Keyed')
    )
    // The key is given to the agent in authenticate and kept in its process only (as Gemini CLI does).
    await host.request('agents.authenticate', { agentId: agent.id, methodId: 'pasted-key', values: { 'api-key': 'sekret' } })
    const report = await host.request('agents.check', { agentId: agent.id })
    expect(line(report, 'session/new')).toMatchObject({ outcome: 'worked' })
    expect(line(report, 'session/load')).toMatchObject({ announced: true, outcome: 'worked' })
    expect(checkSummary(report)).toBe('supports: load')
  })

  it('an agent that cannot start: the report says how it ended, with its stderr', async () => {
    const report = await check({ SCRIPTED_AGENT_INIT: 'exit' })
    expect(report.lines).toHaveLength(1)
    expect(line(report, 'initialize')).toMatchObject({ outcome: 'failed', detail: expect.stringContaining('missing credentials') })
    expect(checkSummary(report)).toBe('cannot start a session')
  })

  it('a check under way when Switchboard closes: its agent is stopped even before it answered, and nothing is written after', async () => {
    // An agent that never answers initialize: the check waits on it when the Host closes (a registry update starts one).
    const mark = `check-close-${Date.now()}`
    const agent = await host.request(
      'agents.add',
      scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_INIT: 'hang', SWITCHBOARD_TEST_MARK: mark }, 'Mute')
    )
    const check = host.request('agents.check', { agentId: agent.id })
    check.catch(() => undefined)
    await waitUntil('the checked agent to run', () => processesWithEnv(`SWITCHBOARD_TEST_MARK=${mark}`).length > 0)
    await host.close()
    // Closed means its agents are gone and its data folder is left alone (another Switchboard may open it now).
    expect(processesWithEnv(`SWITCHBOARD_TEST_MARK=${mark}`)).toEqual([])
    const reports = join(root, 'data', 'agent-checks')
    expect(existsSync(reports) ? readdirSync(reports) : []).toEqual([])
    // The request itself is answered (its report says the start failed; the window that asked is closing too).
    expect(
      await check.then(
        () => 'answered',
        () => 'answered'
      )
    ).toBe('answered')
  })

  it('reports are kept across a restart and exported as markdown; the check runs apart from the sessions’ agent', async () => {
    const agent = await host.request('agents.add', scriptedAgent(join(root, 'state'), { SCRIPTED_AGENT_SESSIONS: 'list' }, 'Kept'))
    const project = await host.request('projects.add', { cwd: root })
    await host.request('sessions.new', { projectId: project.id, agentId: agent.id })
    const pid = (await host.request('agents.states', {})).find((s) => s.agentId === agent.id)?.pid
    const report = await host.request('agents.check', { agentId: agent.id })
    // The agent the session uses was not restarted by the check.
    expect((await host.request('agents.states', {})).find((s) => s.agentId === agent.id)).toMatchObject({ status: 'ready', pid })
    await host.close()
    host = await openHost(join(root, 'data'))
    const kept = await host.request('agents.checks', {})
    expect(kept).toEqual([report])
    const markdown = checkReportMarkdown(report)
    expect(markdown).toContain('# Kept 1.0.0: what it does')
    expect(markdown).toContain('| List sessions | yes | worked |')
    expect(markdown).toContain('| Fork a session | no | not offered |')
  })
})
